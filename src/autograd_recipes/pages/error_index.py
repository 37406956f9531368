"""``.. error-index::``: every error and warning message the site's pages show, with the
pages and sections that show it, and its wording on the torch releases where it differs.

Nothing on the list is typed by hand. When the page is written, every other page's
doctree is read for its run's output (sphinx-gallery's output blocks, myst-nb's cell
outputs, the claims page's evidence), and each ``SomeError: message`` or ``SomeWarning:
message`` in it is one sighting, under the section it appears in. Sightings of one message are grouped by
``message_key``: the message with what changes from run to run or release to release
(shapes and dtypes in brackets, numbers, autograd node names such as ``ReluBackward0``
or ``Relu``) made alike, so the same error in two recipes is one entry. The wordings come
from the torch matrix (docs/matrix/): each expected error of a recipe or notebook belongs
to the entry of the message it gives on the release this build runs, and the message it
gave on each release is a wording of that entry (shapes and numbers aside); an entry lists
its wordings where there is more than one.

The page is written again whenever a recipe, a notebook or the claims page changed (its
sightings may have) and when the matrix data changes.
"""

import html
import re
from pathlib import Path

from docutils import nodes
from sphinx.locale import _  # Korean for these strings: locales/ko/LC_MESSAGES/sphinx.po
from sphinx.util.docutils import SphinxDirective

from autograd_recipes import upstream
from autograd_recipes.evidence import matrix_data
from autograd_recipes.evidence.claims import CLAIMS_DOC
from autograd_recipes.evidence.matrix_html import VERSIONS_DOC
from autograd_recipes.project import PROJECT, torch_version

ERRORS_DOC = "errors"
# an exception or a warning shown in output: its class, then its message, to the end of the
# line or to the " | " between the results of one claim's evidence
SIGHTING = re.compile(r"(?:^|(?<=[\s(]))([A-Za-z_][\w.]*(?:Error|Warning|Exception)): (.+?)(?= \| |$)", re.M)
# sphinx-gallery's output, myst-nb's cell output, and a claim's evidence (evidence/claims.py)
OUTPUT_CLASSES = {upstream.GALLERY_OUTPUT_CLASS, "output"}
_BRACKETS = re.compile(r"\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]")  # [torch.FloatTensor [2, 4]]
_NODE = re.compile(r"\b([A-Z][A-Za-z]*?)(?:Backward\d*)?\b")
_NUMBER = re.compile(r"\d+")


def message_key(kind, message):
    """What stays the same in a message across shapes, versions and node names."""
    text = _BRACKETS.sub("[…]", message)
    text = _NODE.sub(lambda m: m.group(1), text)  # before the numbers: ReluBackward0
    text = _NUMBER.sub("N", text)
    return kind, " ".join(text.split())


class error_index(nodes.General, nodes.Element):
    """Where the list goes; filled in when the page is written."""


class ErrorIndex(SphinxDirective):
    def run(self):
        for path in sorted(Path(self.config.torch_matrix_dir).glob("*.json")):
            self.env.note_dependency(str(path))
        return [error_index()]


def sightings(env, doctree_of):
    """[(kind, message, docname, ids, section title)] in page order: every exception or
    warning an output block shows; ``ids``: those of the nearest element that has any.
    ``doctree_of(doc)``: its doctree."""
    found = []
    for doc in sorted(env.found_docs - {ERRORS_DOC}):
        for block in doctree_of(doc).findall(nodes.literal_block):
            if not OUTPUT_CLASSES & set(block.get("classes", [])):
                continue
            section = block.parent
            while section is not None and not isinstance(section, nodes.section):
                section = section.parent
            anchor = block  # the nearest element with an id: a claim's own, else the section's
            while anchor is not None and not anchor.get("ids"):
                anchor = anchor.parent
            ids = anchor["ids"] if anchor is not None else []
            title = section[0].astext() if section is not None and len(section) else ""
            for match in SIGHTING.finditer(block.astext()):
                found.append((match.group(1), match.group(2).strip(), doc, ids, title))
    return found


def wording_key(message):
    """A wording of a message: shapes and numbers made alike (they are the run's, not the
    release's), node names and hints kept."""
    return " ".join(_NUMBER.sub("N", _BRACKETS.sub("[…]", message)).split())


def release_wordings(records, pinned):
    """{(kind, message_key): {wording_key: (message, [release, ...])}}. Each expected error
    of a recipe or notebook (by its ordinal) belongs to the entry of the message it gives on
    the ``pinned`` release, the one this build runs; on every release the matrix ran, its
    message is one wording of that entry."""
    ok = [r for r in records if r.get("status") == "ok"]
    reference = next((r for r in ok if r["release"] == pinned), None)
    if reference is None:
        return {}
    entry_of = {}
    for kind in ("recipes", "notebooks"):
        for name, result in reference.get(kind, {}).items():
            for error in result.get("expected_errors", []):
                if error.get("message"):
                    entry_of[kind, name, error["ordinal"]] = message_key(error["type"], error["message"])
    wordings = {}
    for record in ok:
        for kind in ("recipes", "notebooks"):
            for name, result in record.get(kind, {}).items():
                for error in result.get("expected_errors", []):
                    key = entry_of.get((kind, name, error.get("ordinal")))
                    if key is None or not error.get("message"):
                        continue
                    variants = wordings.setdefault(key, {})
                    message, releases = variants.setdefault(
                        wording_key(error["message"]), (error["message"], [])
                    )
                    if record["release"] not in releases:
                        releases.append(record["release"])
    return wordings


def claim_wordings(records):
    """{(kind, message_key): {wording_key: (message, [release, ...])}} of the messages in the
    claims' evidence on each release the matrix ran (the versions page shows them)."""
    wordings = {}
    for record in records:
        if record.get("status") != "ok":
            continue
        for result in record.get("claims", {}).values():
            for match in SIGHTING.finditer(result.get("evidence") or ""):
                kind, message = match.group(1), match.group(2).strip()
                variants = wordings.setdefault(message_key(kind, message), {})
                _, releases = variants.setdefault(wording_key(message), (message, []))
                if record["release"] not in releases:
                    releases.append(record["release"])
    return wordings


def merged(*tables):
    """The wordings of several tables (release_wordings, claim_wordings), releases joined."""
    out = {}
    for table in tables:
        for key, variants in table.items():
            for wording, (message, releases) in variants.items():
                _, kept = out.setdefault(key, {}).setdefault(wording, (message, []))
                kept.extend(r for r in releases if r not in kept)
    return out


def _release_order(release):
    return tuple(int(part) for part in re.findall(r"\d+", release))


def _onto(wordings, shown):
    """``wordings`` with each key that a shown key starts with, or that starts a shown key,
    moved onto that key: a claim's evidence cuts a long message short, and where it is cut
    depends on the release's node names."""
    out = {}
    for key, variants in wordings.items():
        target = key
        if key not in shown:
            target = next(
                (
                    k
                    for k in sorted(shown)
                    if k[0] == key[0] and (k[1].startswith(key[1]) or key[1].startswith(k[1]))
                ),
                key,
            )
        for wording, (message, releases) in variants.items():
            _, kept = out.setdefault(target, {}).setdefault(wording, (message, []))
            kept.extend(r for r in releases if r not in kept)
    return out


def entries(found, wordings, elsewhere=None):
    """[{key, kind, message, places: [(doc, ids, title)], wordings: {message: releases}}],
    one per message key, sorted by kind and message. ``elsewhere``: (docname, title) of the
    page that shows the matrix's messages; a message of ``wordings`` that no page's output
    shows becomes an entry placed there, its wordings listed even when there is one."""
    grouped = {}
    keys = {message_key(kind, message) for kind, message, *_ in found}
    # a message cut short (a claim's evidence) joins the whole message it starts, where exactly
    # one shown message starts so (cut before the node's name, it could be any of several)
    whole = {}
    for key in keys:
        longer = [k for k in keys if k != key and k[0] == key[0] and k[1].startswith(key[1])]
        whole[key] = longer[0] if len(longer) == 1 else key
    found = sorted(found, key=lambda sighting: -len(sighting[1]))  # an entry shows the whole message
    shown = set(whole.values())
    wordings = _onto(wordings, shown)
    if elsewhere is not None:
        for key, variants in wordings.items():
            if key not in shown:
                message = min(variants.values(), key=lambda mr: min(map(_release_order, mr[1])))[0]
                grouped[key] = {
                    "key": key,
                    "kind": key[0],
                    "message": message,
                    "places": [(elsewhere[0], [], elsewhere[1])],
                }
    for kind, message, doc, ids, title in found:
        key = whole[message_key(kind, message)]
        entry = grouped.setdefault(key, {"key": key, "kind": kind, "message": message, "places": []})
        if (doc, ids[:1], title) not in [(d, i[:1], t) for d, i, t in entry["places"]]:
            entry["places"].append((doc, ids, title))
    for key, entry in grouped.items():
        others = {m: sorted(r, key=_release_order) for m, r in wordings.get(key, {}).values()}
        only_elsewhere = elsewhere is not None and entry["places"] == [(elsewhere[0], [], elsewhere[1])]
        entry["wordings"] = others if len(others) > 1 or only_elsewhere else {}
    return [grouped[k] for k in sorted(grouped)]


def _code(message):
    """A message as one ``<code>`` element: Sphinx writes a literal as a ``<span>`` per word,
    hundreds per long message, which made this page the slowest for a browser's checks."""
    return nodes.raw("", f'<code class="error-message">{html.escape(message)}</code>', format="html")


def _fill(app, doctree, docname):
    placeholders = list(doctree.findall(error_index))
    if not placeholders:
        return
    env = app.env
    records = matrix_data.load_all(app.config.torch_matrix_dir)
    pinned = torch_version().split("+")[0]
    wordings = merged(release_wordings(records, pinned), claim_wordings(records))
    elsewhere = (VERSIONS_DOC, "") if VERSIONS_DOC in env.found_docs else None
    listed = entries(sightings(env, env.get_doctree), wordings, elsewhere)
    for placeholder in placeholders:
        if app.builder.format != "html":
            placeholder.parent.remove(placeholder)
            continue
        items = nodes.bullet_list(classes=["error-index"])
        for entry in listed:
            item = nodes.list_item()
            item += nodes.paragraph("", "", _code(f"{entry['kind']}: {entry['message']}"))
            where = nodes.paragraph("", _("Explained in:") + " ")
            for number, (doc, ids, title) in enumerate(entry["places"]):
                uri = app.builder.get_relative_uri(docname, doc) + (f"#{ids[0]}" if ids else "")
                if number:
                    where += nodes.Text("; ")
                label = env.titles[doc].astext() + (f" › {title}" if title else "")
                where += nodes.reference("", label, internal=True, refuri=uri)
            item += where
            if entry["wordings"]:
                item += nodes.paragraph("", _("Its wording on the torch releases the matrix ran:"))
                wordings = nodes.bullet_list()
                for message, releases in sorted(
                    entry["wordings"].items(), key=lambda mr: _release_order(mr[1][0])
                ):
                    wordings += nodes.list_item(
                        "",
                        nodes.paragraph(
                            "",
                            "",
                            nodes.Text(f"{', '.join(releases)}: "),
                            _code(f"{entry['kind']}: {message}"),
                        ),
                    )
                item += wordings
            items += item
        placeholder.replace_self(items)


def _executed_docnames():
    """The pages whose run prints output: the recipes and the notebooks."""
    notebooks = {p.relative_to(PROJECT.docs).with_suffix("").as_posix() for p in PROJECT.notebooks()}
    return set(PROJECT.recipe_docnames()) | notebooks


def _when_executed_pages_change(app, env, added, changed, removed):
    """The list is made from the executed pages' outputs and titles and the claims'
    evidence: it is written again when one of them was added, changed (a new run, a new
    translation) or removed."""
    watched = _executed_docnames() | {CLAIMS_DOC}
    if (added | changed | removed) & watched and ERRORS_DOC in env.all_docs:
        return [ERRORS_DOC]
    return []


def setup(app):
    app.add_node(error_index)
    app.add_directive("error-index", ErrorIndex)
    app.connect("env-get-outdated", _when_executed_pages_change)
    app.connect("doctree-resolved", _fill)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
