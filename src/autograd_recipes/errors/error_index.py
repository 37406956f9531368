"""The errors page's messages: every error and warning message the site's code and claims
print, with the pages and sections that show it, and its wording on the torch releases
where it differs, each under its family (error_families: the page's ``.. error-family::``
sections, their prose the page's own).

Nothing on the list is typed by hand. When the page is written, the doctrees of the
recipes, the notebooks and the claims page are read for their run's output
(sphinx-gallery's output blocks, myst-nb's cell outputs, the claims' evidence), and each
``SomeError: message`` or ``SomeWarning: message`` in it is one sighting, under the
section it appears in. Sightings of one message are grouped by ``message_key``: the
message with what changes from run to run or release to release (shapes and dtypes in
brackets, numbers, the ``Backward0`` that node names lose from torch 2.13) made alike, so
the same error in two recipes is one entry; a message a claim's evidence cut short joins
the one whole message it starts. An entry shows its message as the first page it links
printed it (its shapes and numbers are that run's: another page's may differ), never a
text merged from several runs.

The wordings come from the torch matrix (docs/matrix/): each expected error of a recipe or
notebook belongs to the entry of the message it gives on the release this build runs, and
the message it gave on each release is a wording of that entry (shapes and numbers aside);
so is each message of a claim's evidence on each release. Only the runs whose evidence
the versions page shows count (``matrix_html.evidence_entries``, the function that page's
evidence is made from): a run of code that changed since the matrix ran it is "not
checked" there, with no evidence, and gives no wording here. An entry lists its wordings
where there is more than one, each as one run printed it: the run of a page the entry
links where one gave that wording, on the oldest release it did, named (a claim by its
sentence, shortened, as the versions page names its row; never by its id) and linked after
the wording (its evidence on the versions page, which shows that text); a wording whose
text no shown evidence prints whole (the versions page cuts long evidence) is not listed.
The wording's releases are those on which some run gave it, shapes and numbers aside. A
message that only other releases gave is an entry of its own, placed on the versions page's
evidence of the run that printed it.

The page is written again whenever a recipe, a notebook or the claims page changed (its
sightings may have) and when the matrix data changes. When it is written, the same entries
go to ``_static/error-index.js`` (each entry's wordings and the pages that show it, each
family's situations), which the search page loads: ranked-search.js puts first the pages
that explain the entry a pasted message is a copy of, whatever its shapes, node names and
traceback, ordered by the situation its node names.
"""

import html
import re

from docutils import nodes
from sphinx.locale import _  # Korean for these strings: locales/ko/LC_MESSAGES/sphinx.po

from autograd_recipes import upstream
from autograd_recipes.claims.claims import CLAIMS_DOC
from autograd_recipes.errors import error_families
from autograd_recipes.matrix import matrix_html, torch_matrix
from autograd_recipes.matrix.matrix_html import VERSIONS_DOC, evidence_id
from autograd_recipes.pages.page_summary import shorten
from autograd_recipes.project import PROJECT
from autograd_recipes.search import ranked

ERRORS_DOC = "errors"
# an exception or a warning shown in output: its class, then its message, to the end of the
# line or to the " | " between the results of one claim's evidence
SIGHTING = re.compile(r"(?:^|(?<=[\s(]))([A-Za-z_][\w.]*(?:Error|Warning|Exception)): (.+?)(?= \| |$)", re.M)
# sphinx-gallery's output, myst-nb's cell output, and a claim's evidence (claims/claims.py)
OUTPUT_CLASSES = {upstream.GALLERY_OUTPUT_CLASS, "output"}
_BRACKETS = re.compile(r"\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]")  # [torch.FloatTensor [2, 4]]
_NODE = re.compile(r"\b([A-Z][A-Za-z]*?)(?:Backward\d*)?\b")
_NUMBER = re.compile(r"\d+")
CLAIM_LABEL_WIDTH = 72  # columns of a claim's sentence where it names the run that printed a wording


def message_key(kind, message):
    """What stays the same in a message across shapes, versions and node names."""
    text = _BRACKETS.sub("[…]", message)
    text = _NODE.sub(lambda m: m.group(1), text)  # before the numbers: ReluBackward0
    text = _NUMBER.sub("N", text)
    return kind, " ".join(text.split())


def sightings(env, doctree_of):
    """[(kind, message, docname, ids, section title)]: every exception or warning an output
    block of a watched page (``watched_docnames``) shows, page by page (the claims page last,
    after the pages that explain) and in each page's order; ``ids``: those of the nearest
    element that has any. ``doctree_of(doc)``: its doctree."""
    found = []
    for doc in sorted(env.found_docs & watched_docnames(), key=lambda d: (d == CLAIMS_DOC, d)):
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


def _add(wordings, key, message, releases, source, visible=True):
    """Record ``message``, printed by the run of ``source`` (a matrix row: ``(kind, name)``,
    kind "recipes", "notebooks" or "claims") on ``releases``, as a wording of entry ``key``;
    ``visible``: whether the versions page shows it in that run's evidence (which it cuts
    after ``matrix_html.EVIDENCE_CHARS``). Each source keeps the text it printed on its
    oldest release, the one the versions page shows if any: a text is shown as one run
    printed it, never one run's shapes beside another run's releases."""
    by_source = wordings.setdefault(key, {}).setdefault(wording_key(message), {})
    on = min(releases, key=_release_order)
    kept_message, kept, kept_visible, kept_on = by_source.get(source, (message, [], visible, on))
    if (not kept_visible, _release_order(kept_on)) > (not visible, _release_order(on)):
        kept_message, kept_visible, kept_on = message, visible, on
    by_source[source] = (kept_message, kept + [r for r in releases if r not in kept], kept_visible, kept_on)


def _shown_evidence(shown, kind, name, release, result):
    """The text the versions page shows as the evidence of the run of row ``(kind, name)``
    on ``release``, or None where it shows none (a release not run; code changed since the
    matrix ran it: "not checked"). ``shown(kind, name)``: the row's evidence as that page
    shows it (matrix_html.evidence_entries); None: a test's records, each run shown as
    recorded, or True for a record without what the versions page prints (not cut)."""
    if shown is None:
        try:
            return matrix_html._evidence(kind, result)
        except KeyError:
            return True
    return next((text for text, releases in shown(kind, name) if release in releases), None)


def _shows(evidence, text):
    return evidence is True or text in evidence


def release_wordings(records, pinned, wordings=None, shown=None):
    """{(kind, message_key): {wording_key: {source: (message, [release, ...], visible,
    release)}}}, ``source`` the ``(kind, name)`` of the recipe or notebook whose run printed
    it. Each expected error of a recipe or notebook (by its ordinal) belongs to the entry of
    the message it gives on the ``pinned`` release, the one this build runs; on every
    release the matrix ran, its message is one wording of that entry. Only runs whose
    evidence the versions page shows count (``shown``: see ``_shown_evidence``).
    ``wordings``: a table to add to."""
    wordings = {} if wordings is None else wordings
    ok = [r for r in records if r.get("status") == "ok"]
    reference = next((r for r in ok if r["release"] == pinned), None)
    if reference is None:
        return wordings
    entry_of = {}
    for kind in ("recipes", "notebooks"):
        for name, result in reference.get(kind, {}).items():
            if _shown_evidence(shown, kind, name, pinned, result) is None:  # not checked: old ordinals
                continue
            for error in result.get("expected_errors", []):
                if error.get("message"):
                    entry_of[kind, name, error["ordinal"]] = message_key(error["type"], error["message"])
    for record in ok:
        for kind in ("recipes", "notebooks"):
            for name, result in record.get(kind, {}).items():
                evidence = _shown_evidence(shown, kind, name, record["release"], result)
                if evidence is None:  # the versions page shows nothing of this run
                    continue
                for error in result.get("expected_errors", []):
                    key = entry_of.get((kind, name, error.get("ordinal")))
                    if key is not None and error.get("message"):
                        visible = _shows(evidence, f"{error['type']}: {error['message']}")
                        _add(wordings, key, error["message"], [record["release"]], (kind, name), visible)
    return wordings


def claim_wordings(records, wordings=None, shown=None):
    """The same table for the messages in the claims' evidence on each release the matrix
    ran, each under its own message's entry: of the runs whose evidence the versions page
    shows (``shown``: see ``_shown_evidence``)."""
    wordings = {} if wordings is None else wordings
    for record in records:
        if record.get("status") != "ok":
            continue
        for name, result in record.get("claims", {}).items():
            evidence = _shown_evidence(shown, "claims", name, record["release"], result)
            if evidence is None:  # not checked since the claim's code changed: no evidence shown
                continue
            for match in SIGHTING.finditer(result.get("evidence") or ""):
                kind, message = match.group(1), match.group(2).strip()
                key, visible = message_key(kind, message), _shows(evidence, f"{kind}: {message}")
                _add(wordings, key, message, [record["release"]], ("claims", name), visible)
    return wordings


def _release_order(release):
    return tuple(int(part) for part in re.findall(r"\d+", release))


def _whole(key, keys):
    """The one key of ``keys`` that a message cut short (a claim's evidence) starts, or
    ``key``: cut before the node's name, it could start several, and stays apart."""
    longer = [k for k in keys if k != key and k[0] == key[0] and k[1].startswith(key[1])]
    return longer[0] if len(longer) == 1 else key


def _printed_by(by_source, places):
    """The source whose text a wording shows: one whose text the versions page shows; of
    those, one whose page the entry links, the first in the entry's order, else the one
    that gave the wording on the oldest release; ``(source, message, the release on which
    that source printed that text)``, or None where the versions page shows no source's
    text whole (then nothing the entry links would print it)."""

    def shows(source, doc, ids):  # the matrix names a recipe by its script's stem
        kind, name = source
        if kind == "claims":
            return doc == CLAIMS_DOC and "claim-" + name in ids
        return doc != CLAIMS_DOC and doc.rsplit("/", 1)[-1] == name.rsplit("/", 1)[-1]

    def rank(item):
        source, (_message, releases, visible, _on) = item
        linked = [n for n, (doc, ids, _title) in enumerate(places) if shows(source, doc, ids)]
        return (not visible, linked[0] if linked else len(places), min(map(_release_order, releases)), source)

    source, (message, _releases, visible, on) = min(by_source.items(), key=rank)
    return (source, message, on) if visible else None


def entries(found, wordings, elsewhere=None):
    """[{key, kind, message, places: [(doc, ids, title)], wordings: {message: releases},
    printed_by: {message: (source, release)}}], one per message key, sorted by kind and
    message. ``message``: as the first place printed it (the first sighting in page order
    that no other one of the entry continues: a claim's evidence may cut a message short),
    the place of that sighting first, then the others in page order. ``wordings``: each
    wording's text as the run of ``printed_by``'s source printed it on ``printed_by``'s
    release (the run of a place the entry links where one gave it), with the releases on
    which any run gave that wording. ``elsewhere``: (docname, title) of the page that
    shows the matrix's messages; a message of ``wordings`` that no page's output shows
    becomes an entry placed there, at the evidence of the run that printed it, its wordings
    listed even when there is one."""
    keys = {message_key(kind, message) for kind, message, *_ in found}
    shown = {_whole(key, keys) for key in keys}
    moved = {}
    for key, variants in wordings.items():
        for by_source in variants.values():
            for source, kept in by_source.items():
                moved.setdefault(_whole(key, shown), {}).setdefault(wording_key(kept[0]), {})[source] = kept
    grouped = {}
    for kind, message, doc, ids, title in found:
        key = _whole(message_key(kind, message), keys)
        entry = grouped.setdefault(key, {"key": key, "kind": kind, "seen": [], "places": []})
        entry["seen"].append((message, (doc, ids, title)))
        if (doc, ids[:1], title) not in [(d, i[:1], t) for d, i, t in entry["places"]]:
            entry["places"].append((doc, ids, title))
    for entry in grouped.values():
        seen = [(message_key(entry["kind"], m)[1], m, place) for m, place in entry.pop("seen")]
        whole = [(m, place) for k, m, place in seen if not any(o != k and o.startswith(k) for o, *_ in seen)]
        entry["message"], place = whole[0]
        same = [p for p in entry["places"] if (p[0], p[1][:1], p[2]) == (place[0], place[1][:1], place[2])]
        entry["places"] = same + [p for p in entry["places"] if p not in same]
    if elsewhere is not None:
        for key, variants in moved.items():
            by_release = [_printed_by(by_source, []) for by_source in variants.values()]
            by_release = [smo for smo in by_release if smo is not None]
            if key not in grouped and by_release:
                source, message, _on = min(by_release, key=lambda smo: _release_order(smo[2]))
                place = (elsewhere[0], [evidence_id(*source)], elsewhere[1])
                grouped[key] = {"key": key, "kind": key[0], "message": message, "places": [place]}
    for key, entry in grouped.items():
        listed, printed_by = {}, {}
        for by_source in moved.get(key, {}).values():
            printed = _printed_by(by_source, entry["places"])
            if printed is None:  # no page the entry could link prints this text
                continue
            source, message, on = printed
            given = {r for _m, rs, _v, _o in by_source.values() for r in rs}
            listed[message] = sorted(given, key=_release_order)
            printed_by[message] = (source, on)
        for message in list(listed):  # cut short (a claim's evidence) where a whole one was given
            start = wording_key(message)
            if any(
                other != message and wording_key(other).startswith(start) and set(listed[message]) <= set(rs)
                for other, rs in listed.items()
            ):
                del listed[message], printed_by[message]
        only_elsewhere = key not in shown
        keep = len(listed) > 1 or only_elsewhere
        entry["wordings"] = listed if keep else {}
        entry["printed_by"] = printed_by if keep else {}
    return [grouped[k] for k in sorted(grouped)]


def _code(message):
    """A message as one ``<code>`` element: Sphinx writes a literal as a ``<span>`` per word,
    hundreds per long message, which made this page the slowest for a browser's checks."""
    return nodes.raw("", f'<code class="error-message">{html.escape(message)}</code>', format="html")


def _fill(app, doctree, docname):
    families = list(doctree.findall(error_families.error_family))
    if not families:
        return
    if app.builder.format != "html":  # e.g. gettext: the messages are no text to translate
        return
    env = app.env
    state = torch_matrix._state(app)  # what the versions page is made from, in this language
    rows = {}

    def shown(kind, name):  # a row's evidence as the versions page shows it
        if (kind, name) not in rows:
            rows[kind, name] = matrix_html.evidence_entries(state, kind, name)
        return rows[kind, name]

    wordings = release_wordings(state.records, state.pinned, shown=shown)
    wordings = claim_wordings(state.records, wordings, shown)
    elsewhere = (VERSIONS_DOC, "") if VERSIONS_DOC in env.found_docs else None
    listed = entries(sightings(env, env.get_doctree), wordings, elsewhere)
    members = error_families.assign(families, listed)
    grouped = []
    for family in families:
        situations = error_families.situations(family, members[id(family)])
        grouped.append((members[id(family)], situations))
        _fill_family(app, docname, family, members[id(family)], situations, state, shown, elsewhere)
    ranked.write_data(app.outdir, *_search_args(listed, grouped))


def _uri(app, docname, doc, ids):
    return app.builder.get_relative_uri(docname, doc) + (f"#{ids[0]}" if ids else "")


def _page_links(app, docname, places, label=None):
    """Inline nodes: a link to each page of ``places`` once (its first place's anchor), the
    explaining pages before the claims page and the versions page."""
    first = {}
    for doc, ids, title in places:
        first.setdefault(doc, (ids, title))
    docs = sorted(first, key=lambda d: d in (CLAIMS_DOC, VERSIONS_DOC, ERRORS_DOC))
    out = []
    for number, doc in enumerate(docs):
        ids, title = first[doc]
        if number:
            out.append(nodes.Text("; "))
        text = label(doc, title) if label else app.env.titles[doc].astext()
        out.append(nodes.reference("", text, internal=True, refuri=_uri(app, docname, doc, ids)))
    return out


def _fill_family(app, docname, family, members, situations, state, shown, elsewhere):
    """A family as a reader uses it: its commonest message (a copy button's block), its
    prose as written, each situation folded under its nodes (its sentence and pages
    inside), the pages that explain it, then every message of the family with its
    wordings, folded."""
    env = app.env
    if not members:
        return
    # the places of the messages most pages show first: a page's link goes to its commonest one
    by_reach = sorted(members, key=lambda e: -len({d for d, _i, _t in e["places"] if d != CLAIMS_DOC}))
    places = [p for e in by_reach for p in e["places"]]
    top = by_reach[0]
    text = f"{top['kind']}: {top['message']}"
    block = nodes.literal_block(text, text, language="text", classes=["error-message-block"])
    family.insert(0, block)
    for situation, docs in situations:
        names = [error_families.NO_NODE] if situation["no_node"] else situation["nodes"]
        lead = error_families.situation_nodes()
        if situation["no_node"]:
            lead += nodes.Text(_("No node named:"))
        else:
            lead += nodes.Text(_("Node") + " ")
            for number, name in enumerate(names):
                if number:
                    lead += nodes.Text(", ")
                lead += nodes.literal(name, name)
            lead += nodes.Text(":")
        situation.insert(0, lead)
        links = nodes.paragraph("", _("Explained in:") + " ", classes=["error-pages"])
        # each page's link goes to where it shows one of the situation's nodes, if it does
        own = [
            p
            for e in by_reach
            if (ranked.node_of(e["message"]) or "").lower()
            in ([""] if situation["no_node"] else [n.lower() for n in situation["nodes"]])
            for p in e["places"]
        ]
        first = {doc: (ids, title) for doc, ids, title in reversed(own + places)}
        for number, doc in enumerate(d for d in _explaining_first(docs) if d in first):
            if number:
                links += nodes.Text("; ")
            links += nodes.reference(
                "", env.titles[doc].astext(), internal=True, refuri=_uri(app, docname, doc, first[doc][0])
            )
        situation += links
    if not situations:
        family += nodes.paragraph(
            "", _("Explained in:") + " ", *_page_links(app, docname, places), classes=["error-pages"]
        )
    count = len(members)
    summary = _("Its messages as printed ({count})").format(count=count)
    family += nodes.raw(
        "", f'<details class="error-wordings"><summary>{html.escape(summary)}</summary>', format="html"
    )
    items = nodes.bullet_list(classes=["error-index"])
    for entry in members:
        items += _entry_item(app, docname, entry, state, shown, elsewhere)
    family += items
    family += nodes.raw("", "</details>", format="html")


def _entry_item(app, docname, entry, state, shown, elsewhere):
    env = app.env
    item = nodes.list_item()
    item += nodes.paragraph("", "", _code(f"{entry['kind']}: {entry['message']}"))
    where = nodes.paragraph("", _("Explained in:") + " ")
    for number, (doc, ids, title) in enumerate(entry["places"]):
        if number:
            where += nodes.Text("; ")
        label = env.titles[doc].astext() + (f" › {title}" if title else "")
        where += nodes.reference("", label, internal=True, refuri=_uri(app, docname, doc, ids))
    item += where
    if entry["wordings"]:
        item += nodes.paragraph("", _("Its wording on the torch releases the matrix ran:"))
        wordings = nodes.bullet_list()
        for message, releases in sorted(entry["wordings"].items(), key=lambda mr: _release_order(mr[1][0])):
            source, release = entry["printed_by"][message]
            run = nodes.Text(_source_label(env, source, state.sentences))
            if elsewhere is not None and shown(*source):  # its evidence there shows the text
                uri = app.builder.get_relative_uri(docname, VERSIONS_DOC) + "#" + evidence_id(*source)
                run = nodes.reference("", run.astext(), internal=True, refuri=uri)
            wordings += nodes.list_item(
                "",
                nodes.paragraph(
                    "",
                    "",
                    nodes.Text(f"{', '.join(releases)}: "),
                    _code(f"{entry['kind']}: {message}"),
                    nodes.Text(" ("),  # the run that printed this text, on the versions page
                    run,
                    nodes.Text(f", torch {release})"),
                ),
            )
        item += wordings
    return item


def _source_label(env, source, sentences):
    """A matrix row for readers: its page's title; a claim's, with the claim's sentence as
    the versions page names its row (``sentences``: {id: sentence in the page's language},
    torch_matrix.claim_sentences), shortened; never a claim's id, which is no reader text."""
    kind, name = source
    if kind == "claims":
        title = env.titles[CLAIMS_DOC].astext() if CLAIMS_DOC in env.titles else ""
        sentence = shorten(sentences[name], CLAIM_LABEL_WIDTH) if name in sentences else ""
        return " › ".join(part for part in (title, sentence) if part)
    if kind == "recipes":
        doc = next((d for d in PROJECT.recipe_docnames() if d.rsplit("/", 1)[-1] == name), None)
    else:
        doc = name
    if doc not in env.titles:
        return name
    return env.titles[doc].astext()


# the pages that list messages rather than explain them: a pasted message lands on one of
# these only where no recipe or notebook shows it
LISTING_DOCS = (CLAIMS_DOC, ERRORS_DOC)


def _explaining_first(docs):
    """``docs`` without the listing pages where another page is among them."""
    explaining = [d for d in docs if d not in LISTING_DOCS]
    return explaining or list(docs)


def situation_sentence(situation):
    """A situation's sentence as the reader reads it, without what the build adds to it."""
    return " ".join(
        " ".join(p.astext().split())
        for p in situation.findall(nodes.paragraph)
        if "error-pages" not in p.get("classes", [])
    )


def _search_args(listed, grouped):
    """search/ranked.py's arguments for the entries and their families (``grouped``:
    [(entries, error_families.situations)]): the claims page and this page list messages,
    and this page stands for the versions page, whose matrix the search does not index."""
    families = [
        (
            members,
            [(None if s["no_node"] else s["nodes"], docs, situation_sentence(s)) for s, docs in situations],
        )
        for members, situations in grouped
    ]
    return listed, families, LISTING_DOCS, {VERSIONS_DOC: ERRORS_DOC}


def search_data(listed, grouped=()):
    """What the search page reads of the entries (search/ranked.py's data)."""
    return ranked.data(*_search_args(listed, grouped))


def watched_docnames():
    """The pages whose run prints output (the recipes and the notebooks) and the claims
    page, whose evidence shows what the claims' code raised."""
    notebooks = {p.relative_to(PROJECT.docs).with_suffix("").as_posix() for p in PROJECT.notebooks()}
    return set(PROJECT.recipe_docnames()) | notebooks | {CLAIMS_DOC}


def _when_watched_pages_change(app, env, added, changed, removed):
    """The list is made from the watched pages' outputs and titles: it is written again
    when one of them was added, changed (a new run, a new translation) or removed."""
    if (added | changed | removed) & watched_docnames() and ERRORS_DOC in env.all_docs:
        return [ERRORS_DOC]
    return []


def _search_page(app, pagename, templatename, context, doctree):
    """The search page loads the entries where the project has the errors page (it writes them)."""
    if pagename == "search" and ERRORS_DOC in app.env.found_docs:
        app.add_js_file(ranked.SCRIPT)  # on this page only


def setup(app):
    app.connect("html-page-context", _search_page)
    app.connect("env-get-outdated", _when_watched_pages_change)
    app.connect("doctree-resolved", _fill)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
