"""Fail a translated build when Sphinx silently keeps the English of a translated message.

Sphinx's Locale transform parses each msgstr and uses it only if it parses as
the same kind of node as the English (a paragraph for a paragraph); otherwise it
keeps the English without a word: a msgstr that starts with "- " is a list,
"1. " a numbered list, "# " a MyST heading. This transform runs right after
Locale in every non-English build and warns, naming the catalog, line and
msgid, for each message whose catalog has a translation that the page does not
show; the build runs with ``-W``, so the site is not published. A page that
warned is read again on the next build, so a rebuild cannot pass by skipping it.

Missing catalogs, and translations that change code or markup, are refused
before the build starts, by ``src/autograd_recipes/i18n/check_catalogs.py``.
"""

from pathlib import Path

import polib
from docutils import nodes
from docutils.utils import get_source_line
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.transforms.i18n import Locale  # internal: only its priority, to run right after it
from sphinx.util import logging
from sphinx.util.i18n import docname_to_domain  # internal: how Locale names a document's catalog
from sphinx.util.nodes import extract_messages  # the messages Locale translates, as it finds them

from autograd_recipes import read_again
from autograd_recipes.project import PROJECT

logger = logging.getLogger(__name__)


def catalog_path(env, config, docname):
    """The .po file that Locale's .mo for this document is compiled from, or None."""
    domain = docname_to_domain(docname, config.gettext_compact)
    for folder in config.locale_dirs:
        path = Path(env.srcdir, folder, config.language, "LC_MESSAGES", f"{domain}.po")
        if path.is_file():
            return path
    return None


class DroppedTranslations(SphinxTransform):
    default_priority = Locale.default_priority + 1

    def apply(self, **kwargs):
        if self.config.language == PROJECT.source_language:
            return
        docname = self.env.current_document.docname
        po_path = catalog_path(self.env, self.config, docname)
        if po_path is None:
            return
        entries = {e.msgid: e for e in polib.pofile(str(po_path)).translated_entries()}
        for node, msgid in extract_messages(self.document):
            # Locale sets node['translated']; it leaves it False on toctree captions and
            # image alt texts that it did translate, so those are not judged here.
            if isinstance(node, (addnodes.translatable, nodes.image)) or node.get("translated", True):
                continue
            entry = entries.get(msgid)
            if entry is None or not entry.msgstr.strip() or entry.msgstr == msgid:
                continue
            source, line = get_source_line(node)
            logger.warning(
                "translation dropped (Sphinx reads the msgstr as other markup than the msgid, "
                "e.g. a leading '- ' makes a list; %s:%s shows English): %r",
                source,
                line,
                msgid[:70],
                location=f"{po_path}:{entry.linenum}",
                type="i18n",
                subtype="dropped",
            )
            read_again.mark(self.env, "translation dropped", docname)


def setup(app):
    app.add_transform(DroppedTranslations)
    read_again.keep(app, "translation dropped")  # else an unchanged rebuild skips it, exit 0
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
