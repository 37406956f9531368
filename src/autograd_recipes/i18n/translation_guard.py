"""Fail a translated build when a page would show English where it should not.

Two ways, both silent in Sphinx, found by this transform, which runs right after
Locale in every non-English build over the messages Locale has just looked up (the
build runs with ``-W``, so the site is not published):

- drift: English edited or added since the catalog was refreshed (``nox -s i18n``)
  is a message with no entry in the page's catalog, which Locale leaves in English.
  The warning names the English's file and line (a recipe's script, for a gallery
  page), the catalog, and the message. This is the check_catalogs drift check made
  cheap: that one compares the catalogs with .pot templates, a gettext build of
  the whole English source away; here the build's own reading has the messages,
  and each is one lookup in the catalog the transform reads anyway;
- a dropped translation: Locale parses each msgstr and uses it only if it parses
  as the same kind of node as the English (a paragraph for a paragraph); otherwise
  it keeps the English without a word: a msgstr that starts with "- " is a list,
  "1. " a numbered list, "# " a MyST heading. The warning names the catalog, line
  and msgid.

A page that warned is read again on the next build, so a rebuild cannot pass by
skipping it. Missing catalogs, and untranslated, fuzzy or obsolete entries or
translations that change code or markup, are refused before the build starts, by
``src/autograd_recipes/i18n/check_catalogs.py``.
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


def _front_matter(document):
    """The page's leading field list (``:nosearch:``, a notebook's front matter), or None:
    docutils makes it the docinfo after this transform, and Sphinx then drops it from the page."""
    index = document.first_child_not_matching_class(nodes.PreBibliographic)
    first = document[index] if index is not None else None
    if isinstance(first, nodes.section):  # the fields that follow the title of the page's one section
        index = first.first_child_not_matching_class((nodes.title, nodes.PreBibliographic))
        first = first[index] if index is not None else None
    return first if isinstance(first, nodes.field_list) else None


def _never_in_a_catalog(node, front):
    """Text the gettext build does not extract, so no catalog has it: the front matter
    (``front``), and what ``.. only::`` keeps for other builders than gettext (sphinx-gallery's
    "Go to the end" note, which first_screen removes)."""
    parent = node
    while parent is not None:
        if parent is front or isinstance(parent, addnodes.only):
            return True
        parent = parent.parent
    return False


def english_source(node, msgid, docname):
    """(file, line) of a message's English: for a gallery page, its recipe's script and the
    line where the message's first words are (the page's .rst is made from it), else the
    node's own source."""
    source, line = get_source_line(node)
    recipe = {PROJECT.recipe_docname(p): p for p in PROJECT.recipes()}.get(docname)
    if recipe is not None:
        words = " ".join(msgid.split()[:4])
        for number, text in enumerate(recipe.read_text(encoding="utf-8").splitlines(), 1):
            if words in " ".join(text.split()):
                return recipe, number
    return source, line


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
        # what Locale put in place: it leaves 'translated' False on image alt texts it translated
        translations = {e.msgstr for e in entries.values()}
        front = _front_matter(self.document)
        for node, msgid in extract_messages(self.document):
            if (
                msgid not in entries
                and msgid not in translations
                and not node.get("translated")
                and not _never_in_a_catalog(node, front)
            ):
                source, line = english_source(node, msgid, docname)
                logger.warning(
                    "English changed or added since %s was refreshed: no %s for %r, so the %s page "
                    "shows it in English; run nox -s i18n, then translate it",
                    PROJECT.named(po_path),
                    self.config.language,
                    msgid[:70],
                    self.config.language,
                    location=f"{PROJECT.named(source)}:{line}" if line else docname,
                    type="i18n",
                    subtype="drift",
                )
                read_again.mark(self.env, "translation dropped", docname)
                continue
            # Locale sets node['translated']; it leaves it False on toctree captions and
            # image alt texts that it did translate, so those are not judged here.
            if isinstance(node, (addnodes.translatable, nodes.image)) or node.get("translated", True):
                continue
            entry = entries.get(msgid)
            if entry is None:  # Locale's own translation (a Korean msgid now), or never in a catalog
                continue
            if not entry.msgstr.strip() or entry.msgstr == msgid:
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
