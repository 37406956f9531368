"""The ``claim`` role: link a sentence of a page to the ledger entry that checks it.

``{claim}`no-grad-faster-inference``` (MyST) or ``:claim:`...``` (reST, recipes)
renders a small "(checked)" link to that claim's box on the claims page. An id
that is not in docs/claims.toml is a warning (so ``-W`` fails the build), as is
a "site" claim of the ledger that its page never links: the site's own
statements are checked only if a reader can get from the sentence to its check.
"""

from docutils import nodes
from sphinx.locale import _  # Korean: locales/ko/LC_MESSAGES/sphinx.po
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole

from autograd_recipes.evidence import claims_ledger

logger = logging.getLogger(__name__)
CLAIMS_DOC = "claims"


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
            reftitle=claim_id,
        )
        ref["claim_id"] = claim_id
        self.env.claim_links.setdefault(self.env.docname, set()).add(claim_id)
        return [ref], []


def _reset(app, env, docname):
    if not hasattr(env, "claim_links"):
        env.claim_links = {}
    env.claim_links.pop(docname, None)


def _merge(app, env, docnames, other):
    for docname in docnames:
        env.claim_links[docname] = other.claim_links.get(docname, set())


def _resolve(app, doctree, docname):
    for ref in doctree.findall(nodes.reference):
        claim_id = ref.get("claim_id")
        if claim_id:
            ref["refuri"] = app.builder.get_relative_uri(docname, CLAIMS_DOC) + "#claim-" + claim_id


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
    app.add_role("claim", ClaimRole())
    app.connect("env-purge-doc", _reset)
    app.connect("env-merge-info", _merge)
    app.connect("env-check-consistency", _check)
    app.connect("doctree-resolved", _resolve)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
