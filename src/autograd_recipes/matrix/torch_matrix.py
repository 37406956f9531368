"""The torch-versions matrix on the site, from the recorded data in docs/matrix/ (matrix_data).

- ``.. torch-matrix:: summary | news | table | evidence`` on the versions page:
  which releases were checked, what changed from which release (news for
  readers), the table (claims and recipes as rows, releases as columns, each
  cell its state in words with a symbol drawn by the stylesheet), and the
  evidence: per row, each distinct evidence text once, numbered, with the
  releases that printed it; where a row has more than one, each cell shows its
  entry's number (matrix_html writes it all).
- ``.. torch-releases::`` on the landing page: one line naming the releases.
- Every recipe page and every notebook page get one generated line after
  their title, from the runs of the page's own code and of its claims:
  "Behaves as shown on torch A–B; on C–D: <what differs>", linking to the
  versions page.
- The build never installs another torch: it reads the data. The pinned
  release's record is compared, entry by entry, with the build's own run
  (matrix_verify.pinned_differences): each claim's verdict and evidence at the start
  of every build (the claims extension's results), each recipe's and notebook's
  expected errors, checks and errors once the pages are read (what their runs
  printed). A difference is a warning naming the record, the entry and the
  difference, so ``-W`` fails the build.
- A record no run of ``nox -s matrix`` made (a release the session does not run, or
  a file name, ``release`` and ``torch`` that disagree) is a warning naming the file,
  and the pages leave it out (matrix_verify.refused_records).

Text goes through ``sphinx.locale._`` (Korean in locales/ko/LC_MESSAGES/sphinx.po);
a claim's row is named by the claim's sentence as the claims page shows it (its
translation in claims.po), never by its id; evidence is shown as recorded.
"""

import hashlib
import importlib.util
import re
from pathlib import Path

import polib
from docutils import nodes
from docutils.parsers.rst import directives
from docutils.utils import smartquotes
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from autograd_recipes.claims import claims, claims_ledger
from autograd_recipes.i18n import translation_guard
from autograd_recipes.matrix import matrix_data, matrix_verify
from autograd_recipes.matrix.matrix_html import (
    VERSIONS_DOC,
    evidence_html,
    news,
    page_line,
    page_of,
    page_rows,
    summary,
    table_html,
)
from autograd_recipes.pages import first_screen
from autograd_recipes.project import PROJECT, source_file, torch_version

logger = logging.getLogger(__name__)


class _State:
    """What the pages are made from, read once per build (and again when the files change)."""

    def __init__(self, app):
        ledger = Path(app.config.claims_ledger)
        self.refused = matrix_verify.refused_records(app.config.torch_matrix_dir)
        self.records = matrix_data.load_all(app.config.torch_matrix_dir, skip={p for p, _ in self.refused})
        self.hashes = matrix_data.current_hashes(ledger)
        self.claims = claims_ledger.load(ledger)
        self.verdicts = {c["id"]: c["verdict"] for c in self.claims}
        self.sentences = claim_sentences(self.claims, claims_catalog(app), _smartquotes(app.config))
        self.measured = {c["id"] for c in self.claims if c.get("measured")}  # figures differ per run
        self.checked = [r["release"] for r in self.records if r.get("status") == "ok"]
        self.pinned = torch_version().split("+")[0]  # what the pages show (read without importing torch)
        self.reference = next(
            (r for r in self.records if r["release"] == self.pinned and r.get("status") == "ok"), None
        )
        # where each expected error and check of a recipe or notebook is today (results name an ordinal)
        self.lines = {
            (kind, name): matrix_data.block_lines(kind, matrix_data.source_path(kind, name))
            for kind in ("recipes", "notebooks")
            for name in self.hashes[kind]
        }


def claims_catalog(app):
    """The claims page's catalog in the build's language (None in English, or where missing)."""
    if app.config.language == PROJECT.source_language:
        return None
    return translation_guard.catalog_path(app.env, app.config, claims.CLAIMS_DOC)


def _smartquotes(config):
    """(action, language) of Sphinx's smart quotes for this build's pages, or None when off."""
    if not config.smartquotes or config.language in config.smartquotes_excludes.get("languages", ()):
        return None
    return config.smartquotes_action, config.language


def claim_sentences(ledger, catalog=None, smart=None):
    """{claim id: its sentence as the claims page shows it}: the ledger's English, or its
    translation in ``catalog`` (claims.po; the msgstr is reST, so its escapes are undone:
    ``sub\\_`` shows as ``sub_``). An untranslated or fuzzy sentence stays English, as on the
    claims page. ``smart`` (action, language): the quotes, dashes and ellipses Sphinx's smart
    quotes give the claims page's text ("..." as …)."""
    translated = {}
    if catalog is not None:
        translated = {e.msgid: e.msgstr for e in polib.pofile(str(catalog)).translated_entries()}
    sentences = {}
    for c in ledger:
        text = re.sub(r"\\(.)", r"\1", translated[c["claim"]]) if c["claim"] in translated else c["claim"]
        sentences[c["id"]] = smartquotes.smartyPants(text, *smart) if smart else text
    return sentences


def _state(app):
    if getattr(app, "_torch_matrix", None) is None:
        app._torch_matrix = _State(app)
    return app._torch_matrix


def digest(app):
    """Changes when the data, the ledger, a recipe or this code changes: pages are rebuilt."""
    code = [Path(__file__), source_file("autograd_recipes.matrix.matrix_html")]
    parts = [*(p.read_bytes() for p in code), Path(app.config.claims_ledger).read_bytes()]
    catalog = claims_catalog(app)  # the claims' sentences, which name their rows
    parts += [catalog.read_bytes()] if catalog else []
    parts += [p.read_bytes() for p in sorted(Path(app.config.torch_matrix_dir).glob("*.json"))]
    parts += [p.read_bytes() for p in [*matrix_data.recipe_paths(), *matrix_data.notebook_paths()]]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


class placeholder(nodes.General, nodes.Element):
    """Filled in at doctree-resolved, when titles and links are known."""


def _skip(self, node):
    raise nodes.SkipNode


class TorchMatrix(SphinxDirective):
    required_arguments = 1  # summary, news, table or evidence

    def run(self):
        part = directives.choice(self.arguments[0], ("summary", "news", "table", "evidence"))
        return [placeholder(part=part)]


class TorchReleases(SphinxDirective):
    def run(self):
        return [placeholder(part="releases")]


def _fill(app, doctree, docname):
    if app.builder.format != "html":
        for node in list(doctree.findall(placeholder)):
            node.parent.remove(node)
        return
    state = _state(app)
    builder, env = app.builder, app.env
    for node in list(doctree.findall(placeholder)):
        part = node["part"]
        if part == "table":
            node.replace_self(nodes.raw("", table_html(state, builder, docname, env), format="html"))
        elif part == "evidence":
            node.replace_self(nodes.raw("", evidence_html(state, env), format="html"))
        elif part == "news":
            node.replace_self(news(state, builder, docname, env))
        elif part == "summary":
            node.replace_self(summary(state))
        else:  # releases, on the landing page
            para = summary(state)
            para += nodes.Text(" ")
            para += nodes.reference(
                "",
                _("What differs between releases"),
                refuri=builder.get_relative_uri(docname, VERSIONS_DOC),
                internal=True,
            )
            node.replace_self(para)
    rows = page_rows(state, docname)
    if rows:
        section = next(iter(doctree.findall(nodes.section)), None)
        if section is not None:
            first_screen.add_under_lede(section, page_line(state, rows, builder, docname))


def torch_release():
    """The release of the torch that runs the pages (``torch.__version__`` without its local
    part), read from its ``version.py``: importing torch here took 3 s of every build, most
    of a rebuild that runs nothing."""
    folder = importlib.util.find_spec("torch").submodule_search_locations[0]
    found = re.search(r"^__version__ = ['\"]([^'\"]+)['\"]", (Path(folder) / "version.py").read_text(), re.M)
    if found is None:  # a torch that writes its version otherwise
        import torch

        return torch.__version__.split("+")[0]
    return found.group(1).split("+")[0]


def _check_pinned(app):
    """The records must be runs of ``nox -s matrix``, and the pinned release's recorded claims
    what the build's live run observes.

    Run at the start of every build (env-get-outdated), changed pages or not, so a
    rebuild fails the same way; the live results are the claims extension's (cached)."""
    state = _state(app)
    for path, why in state.refused:
        where = f"{path}:{matrix_verify.entry_line(path)}"  # with a colon: a path, not a docname
        logger.warning("%s is not a record of a matrix run: %s", path.name, why, location=where)
    release, record, where = _pinned_record(app)
    if record is None:
        logger.warning(
            "no recorded results for the pinned torch %s: run nox -s matrix -- %s (%s)",
            release,
            release,
            where,
        )
        return
    _warn_differences(record, where, claims.results(app), {}, state)


def _pinned_record(app):
    """(the release this build runs, its record or None, the record's file)."""
    release = torch_release()
    ok = (r for r in _state(app).records if r["release"] == release and r.get("status") == "ok")
    return release, next(ok, None), matrix_data.data_file(release, app.config.torch_matrix_dir)


def _warn_differences(record, where, observed, outputs, state):
    kinds = {"claims": "claim", "recipes": "recipe", "notebooks": "notebook"}
    found = matrix_verify.pinned_differences(
        record, observed, outputs, state.hashes, state.measured, state.lines, where.name
    )
    for kind, name, what in found:
        logger.warning(
            "%s %s on the pinned torch %s: %s",
            kinds[kind],
            name,
            record["release"],
            what,
            location=f"{where}:{matrix_verify.entry_line(where, kind, name)}",  # a colon: a path, not a docname
        )


def _check_pinned_pages(app, env):
    """The pinned release's recorded recipes and notebooks must be what this build's runs of
    them printed (execution_report's records: every page run, this build or before)."""
    _release, record, where = _pinned_record(app)
    if record is None:
        return
    runs, state = getattr(env, "execution_records", {}), _state(app)
    outputs = {
        (kind, name): runs[page_of(kind, name)]["output"]
        for kind in ("recipes", "notebooks")
        for name in record.get(kind, {})
        if name in state.hashes[kind]  # a page the checkout no longer has is not compared
        and "output" in runs.get(page_of(kind, name), {})
    }
    _warn_differences(record, where, {}, outputs, state)


def _outdated(app, env, added, changed, removed):
    app._torch_matrix = None  # read the data again
    _check_pinned(app)
    key = digest(app)
    if getattr(env, "torch_matrix_digest", None) == key:
        return []
    env.torch_matrix_digest = key
    state = _state(app)
    pages = {"index", VERSIONS_DOC} | {
        page_of(k, n) for k in ("recipes", "notebooks") for n in state.hashes[k]
    }
    return sorted(pages & set(env.all_docs))


def setup(app):
    app.add_config_value("torch_matrix_dir", str(matrix_data.MATRIX_DIR), "env", types=(str,))
    app.add_node(placeholder, **{f: (_skip, None) for f in ("html", "latex", "text", "man", "texinfo")})
    app.add_directive("torch-matrix", TorchMatrix)
    app.add_directive("torch-releases", TorchReleases)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-updated", _check_pinned_pages)
    app.connect("doctree-resolved", _fill)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
