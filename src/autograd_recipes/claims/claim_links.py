"""The ``claim`` role: link a sentence of a page to the ledger entry that checks it.

``{claim}`no-grad-faster-inference``` (MyST) or ``:claim:`...``` (reST, recipes)
renders a small "(checked)" link. After the paragraph that holds it comes a
disclosure (``<details>``: a tap opens it on a phone, where a tooltip never shows)
saying what the check tried, in the page's language (claim_scope); the link opens
it, and it links the claim's box on the claims page. An id that is not in
docs/claims.toml is a warning (so ``-W`` fails the build), as is a "site" claim of
the ledger that its page never links: the site's own statements are checked only if
a reader can get from the sentence to its check.

A sentence that links a claim says what the claim says, with its conditions: where
the claim lists ``conditions``, the paragraph holding the link, and the claim's own
sentence and scope on the claims page, must name each by one of its phrases in the page's
language, or the build warns at that paragraph. The ambient runs
(ambient_conditions) decide which conditions a claim must list, so a flip found by
machine reaches every sentence that states the claim.
"""

import html
from pathlib import Path

from docutils import nodes
from sphinx.locale import _  # Korean: locales/ko/LC_MESSAGES/sphinx.po
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole

from autograd_recipes.claims import claim_scope, claims_ledger
from autograd_recipes.project import PROJECT

logger = logging.getLogger(__name__)
CLAIMS_DOC = "claims"


class claim_disclosure(nodes.General, nodes.Element):
    """What a claim's check tried, as HTML made at resolve time (attribute ``html``). It has
    no text children: the search index and the page summary do not read it."""


def _visit_disclosure(self, node):
    self.body.append(node["html"])
    raise nodes.SkipNode


def _skip(self, node):
    raise nodes.SkipNode


class ClaimRole(SphinxRole):
    def run(self):
        claim_id = self.text.strip()
        ref = nodes.reference(
            "",
            "",
            nodes.inline("", _("(checked)")),
            internal=True,
            refuri="",
            classes=["claim-link"],
        )
        ref["claim_id"] = claim_id
        # the sentence is checked against the claim's conditions, and its disclosure shows the
        # claim and its ambient record: a change to either reads the page again
        self.env.note_dependency(self.config.claims_ledger)
        self.env.note_dependency(str(claim_scope.record_file(self.config.claims_ledger)))
        self.env.claim_links.setdefault(self.env.docname, set()).add(claim_id)
        return [ref], []


def _reset(app, env, docname):
    if not hasattr(env, "claim_links"):
        env.claim_links = {}
    env.claim_links.pop(docname, None)


def _merge(app, env, docnames, other):
    for docname in docnames:
        env.claim_links[docname] = other.claim_links.get(docname, set())


def _ledger(app):
    try:
        claims = {c["id"]: c for c in claims_ledger.load(app.config.claims_ledger)}
        return claims, claims_ledger.load_vocabulary(app.config.claims_ledger)
    except claims_ledger.LedgerError:
        return None, None  # the claims page reports a malformed ledger


def _warn_missing(app, location, text, claim, vocabulary, what):
    for name, phrases in claim_scope.missing_conditions(text, claim, vocabulary):
        logger.warning(
            "%s claim %s does not name its condition %r (language %s): say one of %s",
            what,
            claim["id"],
            name,
            app.config.language,
            " / ".join(f"“{p}”" for p in phrases),
            location=location,
        )


def _role_location(docname, node, claim_id, nth):
    """Where the n-th ``:claim:`id``` of a page is written: a recipe's line in its script
    (its page is generated), else the node's own source and line."""
    script = {PROJECT.recipe_docname(p): p for p in PROJECT.recipes()}.get(docname)
    if script is None:
        return node
    seen = 0
    for number, line in enumerate(script.read_text(encoding="utf-8").splitlines(), 1):
        seen += line.count(f":claim:`{claim_id}`")
        if seen >= nth:
            return f"{script}:{number}"
    return str(script)


def _resolve(app, doctree, docname):
    refs = [ref for ref in doctree.findall(nodes.reference) if ref.get("claim_id")]
    claims, vocabulary = _ledger(app) if refs or docname == CLAIMS_DOC else (None, None)
    if claims is None:
        return
    if docname == CLAIMS_DOC:  # each claim's own sentence and scope name its conditions too
        ledger = app.config.claims_ledger
        ledger_text = Path(ledger).read_text(encoding="utf-8")
        for box in doctree.findall(nodes.container):
            claim = next(
                (claims[i[6:]] for i in box["ids"] if i[6:] in claims and i.startswith("claim-")), None
            )
            text = next((p for p in box.findall(nodes.paragraph) if "claim-text" in p["classes"]), None)
            scope = next(iter(box.findall(nodes.field_body)), None)  # the box's first field
            if claim is None or text is None or scope is None:
                continue
            where = f"{ledger}:{claims_ledger.line_of(ledger_text, claim['id'])}"
            _warn_missing(app, where, text.astext(), claim, vocabulary, "the sentence of")
            _warn_missing(app, where, scope.astext(), claim, vocabulary, "the scope of")
    record = claim_scope.record(app.config.claims_ledger) or {}
    claims_page = app.builder.get_relative_uri(docname, CLAIMS_DOC)
    seen = {}
    for ref in refs:
        claim = claims.get(ref["claim_id"])
        if claim is None:
            ref["refuri"] = claims_page
            continue
        paragraph = next((a for a in _ancestors(ref) if isinstance(a, nodes.paragraph)), ref.parent)
        seen[claim["id"]] = seen.get(claim["id"], 0) + 1
        where = _role_location(docname, paragraph, claim["id"], seen[claim["id"]])
        _warn_missing(app, where, paragraph.astext(), claim, vocabulary, "the sentence linking")
        _attach_to_previous_word(app, ref)
        anchor = f"checked-{claim['id']}" + (f"-{seen[claim['id']]}" if seen[claim["id"]] > 1 else "")
        ref["refuri"] = "#" + anchor
        entry = record.get("claims", {}).get(claim["id"])
        box = claim_disclosure(html=_disclosure_html(app, claim, vocabulary, entry, anchor, claims_page))
        # after the paragraph and after the disclosures of the claims linked before this one
        index = paragraph.parent.index(paragraph) + 1
        while index < len(paragraph.parent) and isinstance(paragraph.parent[index], claim_disclosure):
            index += 1
        paragraph.parent.insert(index, box)


# languages whose typography attaches a bracket to the word before it: …못합니다(검증됨).
ATTACHED_BRACKETS = {"ko", "ja", "zh"}


def _attach_to_previous_word(app, ref):
    """The space before "(checked)" goes where the page's language sets no space before a
    bracket: the translation keeps the source's space, which the role's markup needs."""
    if app.config.language not in ATTACHED_BRACKETS or ref.parent is None:
        return
    index = ref.parent.index(ref)
    before = ref.parent[index - 1] if index else None
    if isinstance(before, nodes.Text) and before.endswith(" ") and before.strip():
        ref.parent.replace(before, nodes.Text(before.rstrip(" ")))


def _ancestors(node):
    while node.parent is not None:
        node = node.parent
        yield node


def _disclosure_html(app, claim, vocabulary, entry, anchor, claims_page):
    esc = html.escape

    def text(english):
        return claim_scope.without_glosses(claim_scope.in_language(english, app.config))

    rows = [(_("Checked over:"), text(claim["scope"]))]
    named = claim_scope.named_conditions(claim, vocabulary)
    if named:
        rows.append((_("Conditions:"), _(", ").join(named) + "."))
    rows += claim_scope.tried(claim, entry, vocabulary)
    body = "".join(
        f"<p><strong>{esc(label)}</strong> {esc(text)}</p>"
        if text
        else f"<p><strong>{esc(label)}</strong></p>"
        for label, text in rows
    )
    return (
        f'<details class="claim-scope"><summary>{esc(_("What this check tried"))}</summary>'
        f'<div id="{esc(anchor)}"><p class="claim-scope-claim">'
        f"{esc(text(claim['claim']))}</p>{body}"
        f'<p><a href="{esc(claims_page)}#claim-{esc(claim["id"])}">'
        f"{esc(_('The claim with its evidence and its control'))}</a></p></div></details>"
    )


def _check(app, env):
    try:
        claims = {c["id"]: c for c in claims_ledger.load(app.config.claims_ledger)}
    except claims_ledger.LedgerError:
        return  # the claims page reports a malformed ledger
    for docname, ids in sorted(env.claim_links.items()):
        for claim_id in sorted(ids - claims.keys()):
            logger.warning("{claim}`%s`: no such claim in the ledger", claim_id, location=docname)
    for claim in claims.values():
        if claim["article"] == "site" and claim["id"] not in env.claim_links.get(claim["page"], ()):
            logger.warning(
                "site claim %s is not linked from its page %s",
                claim["id"],
                claim["page"],
                location=app.config.claims_ledger,
            )


def setup(app):
    app.add_node(
        claim_disclosure,
        html=(_visit_disclosure, None),
        latex=(_skip, None),
        text=(_skip, None),
        man=(_skip, None),
        texinfo=(_skip, None),
    )
    app.add_role("claim", ClaimRole())
    app.connect("env-purge-doc", _reset)
    app.connect("env-merge-info", _merge)
    app.connect("env-check-consistency", _check)
    app.connect("doctree-resolved", _resolve)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
