"""Check the source articles' claims at build time, and show the evidence.

``.. claims-ledger::`` runs every claim of ``docs/claims.toml`` (see
claims_ledger.py) against the installed torch and renders claim, source,
verdict and evidence. A claim whose observed verdict differs from the recorded
one is a warning at the claim's line of the ledger, so ``-W`` fails the build
and names it: this is what tells a maintainer upgrading torch which pages went
stale. Pages that a claim points to get links to the claims they settle.

The claims run in a process of their own (claims_runner), each with a time
limit, started when the builder is ready so that they run beside the recipes
(LedgerRun); the versions check and this page share that one run. Their results
are cached in ``build/claims/`` per ledger, runner code, torch and Python
(``_key``), so the Korean build reuses the English build's run; results with an
error are never cached.
"""

import hashlib
import json
import os
import platform
import sys
import threading
import tomllib
from collections import Counter
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.locale import _  # Korean for these strings: locales/ko/LC_MESSAGES/sphinx.po
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from autograd_recipes.claims import ambient_conditions, claim_scope, claims_ledger, claims_runner
from autograd_recipes.execution import output_cap
from autograd_recipes.project import PROJECT, source_file, torch_version

logger = logging.getLogger(__name__)
CLAIMS_DOC = "claims"
# the code a claim runs in
RUNNER_SOURCES = tuple(
    f"autograd_recipes.{name}" for name in ("claims.claims_ledger", "claims.claims_runner", "forked")
)


def _labels():
    return {
        "holds": _("holds"),
        "does not hold": _("does not hold"),
        "holds in part": _("holds in part"),
        # the two Korean articles the site started from, by their titles
        "inplace": _("the article “Inplace 연산 add_ 사용 시 주의해야 할 3가지 이유와 해결 방법”"),
        "no_grad": _("the article “기울기 추적 중지하기: torch.no_grad()”"),
        "site": _("This site"),
    }


def _key(config):
    """Everything a claim's result depends on: the ledger, the code that runs it, torch
    (its version, read without importing torch: no-change rebuilds stay fast) and Python."""
    ledger = Path(config.claims_ledger)
    parts = [ledger.read_bytes()]
    parts += [source_file(module).read_bytes() for module in RUNNER_SOURCES]
    # pages whose tagged cells claims run first ("uses"): the guide's timing rule, say
    parts += [(ledger.parent / page).read_bytes() for page in _used_pages(ledger)]
    parts += [torch_version().encode(), sys.version.encode(), platform.platform().encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


def _page_key(config):
    """What the claims page is made from: the results' key and this module, which renders it
    (a change here re-reads the page; the cached results stay)."""
    own = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
    return f"{_key(config)}-{own}"


def _used_pages(ledger):
    try:
        claims = tomllib.loads(ledger.read_text(encoding="utf-8")).get("claim", [])
    except (OSError, ValueError):
        return []
    return sorted({ref.split("#")[0] for claim in claims for ref in claim.get("uses", [])})


def cache_file(config, srcdir):
    """Under the project's build/ (beside docs/), whatever the builder and output folder."""
    return Path(srcdir).parent / "build" / "claims" / f"results-{_key(config)}.json"


def read_cache(path):
    """The cached results, or None when missing or unreadable (say, cut short by a kill)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_cache(path, observed):
    """Written whole or not at all: a temporary file, then an atomic rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(observed, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)


class LedgerRun:
    """The ledger's results for this build: read from the cache, or run once.

    The run starts when the builder is ready, in a thread that waits on the claims' own
    process (claims_runner), so it goes on beside the recipes sphinx-gallery runs then and
    the notebooks read next; the versions check and the claims page both wait for this one
    run. Results with an error are not cached: the next build runs the ledger again."""

    def __init__(self, config, srcdir):
        self.cache = cache_file(config, srcdir)
        self.observed = read_cache(self.cache)
        self.failure = None
        self.pid = os.getpid()  # a thread does not survive a fork (sphinx -j): a child runs its own
        self.thread = None
        self.args = (config.claims_ledger, config.claims_timeout)
        if self.observed is None:
            self.thread = threading.Thread(target=self._run, args=self.args, daemon=True)
            self.thread.start()

    def _run(self, ledger, timeout):
        try:
            self.observed = claims_runner.run_all(ledger, timeout)
        except Exception as err:  # raised where the results are read, in Sphinx's thread
            self.failure = err
        if self.observed and all(verdict is not None for verdict, _ in self.observed.values()):
            write_cache(self.cache, self.observed)

    def results(self):
        """{claim id: (observed verdict, evidence)}."""
        if self.thread is not None and os.getpid() == self.pid:
            self.thread.join()
        elif self.observed is None:  # a forked reader
            self._run(*self.args)
        if self.failure is not None:
            raise self.failure
        return self.observed


def _start_run(app):
    app.ledger_run = LedgerRun(app.config, app.srcdir)


def results(app):
    """{claim id: (observed verdict, evidence)}, run once per build and _key in a clean process."""
    if getattr(app, "ledger_run", None) is None:
        _start_run(app)
    return app.ledger_run.results()


class ClaimsLedger(SphinxDirective):
    option_spec = {"articles": directives.unchanged}  # e.g. "inplace no_grad", or "site"

    def run(self):

        ledger_path = Path(self.config.claims_ledger)
        self.env.note_dependency(str(ledger_path))
        self.env.claims_key = _page_key(self.config)
        try:
            claims = claims_ledger.load(ledger_path)
        except claims_ledger.LedgerError as err:
            logger.warning("%s", err, location=self.get_location())
            return []
        observed = results(self.env.app)
        vocabulary = claims_ledger.load_vocabulary(ledger_path)
        # the ambient runs' record (nox -s conditions): a flip no condition or reason explains
        # fails the build at the claim's line; a claim not yet tried says so in its box
        self.env.note_dependency(str(claim_scope.record_file(ledger_path)))
        record = claim_scope.record(ledger_path)
        if "articles" in self.options:
            claims = [c for c in claims if c["article"] in self.options["articles"].split()]
        ledger_text = ledger_path.read_text(encoding="utf-8")
        labels = _labels()
        out = []
        summary = nodes.paragraph(translatable=False)
        counts = {v: sum(c["verdict"] == v for c in claims) for v in claims_ledger.VERDICTS}
        summary += nodes.Text(
            _("Checked on torch %s: %d claims; %d hold, %d do not hold, %d hold in part.")
            % (
                torch_version(),
                len(claims),
                counts["holds"],
                counts["does not hold"],
                counts["holds in part"],
            )
        )
        out.append(summary)
        for claim in claims:
            verdict, evidence = observed[claim["id"]]
            if verdict != claim["verdict"]:
                line = claims_ledger.line_of(ledger_text, claim["id"])
                logger.warning(
                    "claim %s no longer matches the ledger on torch %s: recorded %r, observed %r (page %s)%s",
                    claim["id"],
                    torch_version(),
                    claim["verdict"],
                    verdict or "an error",
                    claim["page"],
                    "" if verdict else ": " + evidence.strip().splitlines()[-1],
                    location=f"{ledger_path}:{line}",
                )
            entry = (record or {}).get("claims", {}).get(claim["id"])
            if entry is not None and entry["code"] == claims_ledger.code_digest(claim):
                for kind, detail in ambient_conditions.explain(claim, entry["runs"], vocabulary).values():
                    if kind == "unexplained":
                        logger.warning(
                            "claim %s flips under an ambient condition: %s",
                            claim["id"],
                            detail,
                            location=f"{ledger_path}:{claims_ledger.line_of(ledger_text, claim['id'])}",
                        )
            out.append(self._claim(claim, verdict, evidence, labels, vocabulary, entry))
        return out

    def _claim(self, claim, verdict, evidence, labels, vocabulary, entry):
        box = nodes.container(
            classes=["claim", "verdict-" + claim["verdict"].replace(" ", "-")], ids=["claim-" + claim["id"]]
        )
        text = nodes.paragraph(claim["claim"], claim["claim"], classes=["claim-text"])
        self.set_source_info(text)  # translatable: the Korean is in claims.po
        box += text
        # the labels are ours (sphinx.po); the scope and the control case are the claim's (claims.po)
        fields = nodes.field_list(classes=["claim-fields"])
        control = _("Control, where the check must answer “%s”") % labels[claim["control_verdict"]]
        for label, value in ((_("Checked over"), claim["scope"]), (control, claim["control_case"])):
            body = nodes.paragraph(value, value)
            self.set_source_info(body)
            name = nodes.field_name(label, label, translatable=False)  # already in the page's language
            fields += nodes.field("", name, nodes.field_body("", body))
        box += fields
        # the conditions it names and how it fared under the others: in the page's language
        tried = nodes.paragraph(translatable=False, classes=["claim-tried"])
        named = claim_scope.named_conditions(claim, vocabulary)
        rows = [(_("Conditions:"), _(", ").join(named) + ".")] if named else []
        rows += claim_scope.tried(claim, entry, vocabulary)
        for label, text in rows:
            tried += nodes.strong("", label)
            tried += nodes.Text(" " + text + " " if text else " ")
        box += tried
        meta = nodes.paragraph(translatable=False, classes=["claim-meta"])
        meta += nodes.strong("", _("Verdict:") + " " + labels[claim["verdict"]])
        meta += nodes.Text(" · " + _("Source:") + " " + labels[claim["article"]] + ", ")
        # the site's own sections are this site's headings: in the page's language (sphinx.po)
        section = claim["section"]
        if claim["article"] == "site":  # its page's heading, as that page's catalog has it
            section = claim_scope.in_language(section, self.config, claim["page"])
            if section == claim["section"]:  # or this site's interface catalog (sphinx.po)
                section = _(section)
        meta += nodes.inline(section, section, classes=["claim-section"])
        meta += nodes.Text(" · " + _("Covered in:") + " ")
        meta += nodes.reference(
            "",
            "",
            nodes.inline(claim["page"], claim["page"]),
            internal=True,
            refuri="",
            classes=["claim-page"],
            reftarget=claim["page"],
        )
        box += meta
        classes = ["claim-evidence", "output"] + (["measured"] if claim.get("measured") else [])
        block = nodes.literal_block(
            evidence, evidence.rstrip() or _("(no output)"), classes=classes, language="none"
        )
        box += block
        return box


def _resolve_page_links(app, doctree, docname):
    """Turn the 'Covered in' references into links, and link pages to their claims."""
    builder = app.builder
    for ref in doctree.findall(nodes.reference):
        target = ref.get("reftarget")
        if "claim-page" in ref["classes"] and target:
            ref["refuri"] = builder.get_relative_uri(docname, target)
            title = app.env.titles.get(target)
            if title is not None:
                ref.children = [nodes.inline("", title.astext())]
    settled = [c for c in app.env.claims_by_page.get(docname, [])]
    if settled and docname != CLAIMS_DOC:
        labels = _labels()
        counts = Counter(verdict for _claim_id, verdict in settled)
        para = nodes.paragraph(classes=["claims-settled"], translatable=False)
        para += nodes.strong("", _("Claims of the source articles settled on this page:"))
        said = _(", ").join(
            _("%(verdict)s %(count)d") % {"verdict": labels[verdict], "count": count}
            for verdict, count in counts.items()
        )
        para += nodes.Text(
            " " + _("%(count)d (%(verdicts)s).") % {"count": len(settled), "verdicts": said} + " "
        )
        uri = builder.get_relative_uri(docname, CLAIMS_DOC) + "#claims-of-the-source-articles"
        para += nodes.reference("", _("Each with its check"), refuri=uri)
        doctree.children[-1] += para


def _index_claims(app, env, docnames):
    try:
        claims = claims_ledger.load(app.config.claims_ledger)
    except claims_ledger.LedgerError:
        claims = []
    env.claims_by_page = {}
    for claim in claims:
        if claim["article"] != "site":  # the site's own claims are linked where the page makes them
            env.claims_by_page.setdefault(claim["page"], []).append((claim["id"], claim["verdict"]))


def _outdated_when_torch_changes(app, env, added, changed, removed):
    if CLAIMS_DOC in env.all_docs and getattr(env, "claims_key", None) != _page_key(app.config):
        return [CLAIMS_DOC]
    return []


def claim_outputs(app, doctree, docname):
    """(location, what, output nodes) for each claim's evidence on a claims page, located at
    the claim's ``id`` line in the ledger."""
    boxes = [n for n in doctree.findall(nodes.container) if "claim" in n["classes"] and n["ids"]]
    if not boxes:
        return
    ledger = Path(app.config.claims_ledger)
    text = ledger.read_text(encoding="utf-8")
    for box in boxes:
        claim_id = box["ids"][0].removeprefix("claim-")
        line = claims_ledger.line_of(text, claim_id)
        evidence = [n for n in box.findall(nodes.literal_block) if "claim-evidence" in n["classes"]]
        yield (f"{ledger}:{line}" if line else docname), f"claim {claim_id}", evidence


def _cap_claim_outputs(app, doctree):
    output_cap.cap(app, app.env.docname, claim_outputs(app, doctree, app.env.docname))


def setup(app):
    default = str(PROJECT.root / "docs" / "claims.toml")
    app.add_config_value("claims_ledger", default, "env", types=(str,))
    app.add_config_value("claims_timeout", 60, "env", types=(int, float))
    app.add_directive("claims-ledger", ClaimsLedger)
    # before sphinx-gallery (500) runs the recipes at builder-inited: the claims run beside them
    app.connect("builder-inited", _start_run, priority=100)
    app.connect("env-before-read-docs", _index_claims)
    app.connect("env-get-outdated", _outdated_when_torch_changes)
    app.connect("doctree-resolved", _resolve_page_links)
    app.connect("doctree-read", _cap_claim_outputs, priority=300)  # before anything reads the evidence
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
