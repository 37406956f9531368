"""The recipe cards: the caption as text, the description as text on the card, not in a ``tooltip``.

sphinx-gallery (0.22) writes each card of a gallery (the gallery index, and the
mini-galleries of other pages) as a raw HTML block that opens it with the recipe's first
paragraph in ``tooltip="..."``, then the link to the recipe, then a raw block with its
caption. ``tooltip`` is no HTML attribute, and its text shows only while a mouse hovers
(never on a touch screen, never to a screen reader). Here the attribute comes off and its
text, already escaped, becomes a line of the card under the caption.

The caption is the recipe's title as sphinx-gallery read it from the docstring, put into
the raw block unescaped: ``backreferences._thumbnail_div`` formats ``title=title`` beside
``intro=escape(intro)`` (the tooltip is escaped since its pull request #249; the caption's
block came with #906, unescaped, and is so on its main branch at 520ca2e, 2026-08-18;
#1002 and #1108 strip reST markup from the title, not HTML; a search of its tracker finds
no report of this). A title such as ``Tensor<float>`` would be markup on the gallery page, and
``<img src=x onerror=...>`` would run. So every caption is written again from the title of
the page the card links to (the page's own heading, in the page's language), escaped once.
"""

import html
import posixpath
import re
from pathlib import Path

from docutils import nodes
from sphinx.util import logging

from autograd_recipes import upstream

logger = logging.getLogger(__name__)

TOOLTIP = re.compile(r'\stooltip="([^"]*)"')
# the caption block: its title (any text, even "</div>"), then the ends of the caption and the card
CAPTION = re.compile(rf'(<div class="{upstream.GALLERY_CARD_TITLE_CLASS}">)(.*)(</div>\s*</div>\s*)\Z', re.S)
# after ui_strings (500), which puts the translated paragraph into the attribute on
# pages of other languages
PRIORITY = 600


def cards(app, doctree, docname):
    """Each recipe card of a page: (the raw block that opens it, the document its link points
    to, or None, the raw block with its caption), in the page's order."""
    opened = None  # [the raw block that opened the card being read, its recipe]
    for node in list(doctree.findall(lambda n: isinstance(n, (nodes.raw, nodes.reference)))):
        if isinstance(node, nodes.raw) and upstream.GALLERY_CARD_CLASS in node.astext():
            opened = [node, None]
        elif isinstance(node, nodes.reference) and opened and opened[1] is None:
            opened[1] = _linked_doc(app, docname, node.get("refuri", ""))
        elif isinstance(node, nodes.raw) and upstream.GALLERY_CARD_TITLE_CLASS in node.astext() and opened:
            yield opened[0], opened[1], node
            opened = None


def _linked_doc(app, docname, refuri):
    """The document a link on ``docname``'s page points to (its refuri is relative to the page)."""
    path = posixpath.normpath(posixpath.join(posixpath.dirname(docname), refuri.split("#")[0]))
    return path.removesuffix(app.builder.out_suffix)


def _describe_cards(app, doctree, docname):
    if app.builder.format != "html":
        return
    for opening, doc, caption in cards(app, doctree, docname):
        match = TOOLTIP.search(opening.astext())
        _replace(opening, TOOLTIP.sub("", opening.astext()))
        found = CAPTION.search(caption.astext())
        if not found:  # an upgrade changed the block: its title would be markup again
            logger.warning(
                "sphinx-gallery's card caption block no longer matches gallery_cards.CAPTION: "
                "the card's title is not escaped (%r)",
                caption.astext()[:200],
                location=docname,
            )
            continue
        # the linked page's title as text; else sphinx-gallery's, as a browser read it
        title = app.env.titles[doc].astext() if doc in app.env.titles else html.unescape(found.group(2))
        text = found.group(1) + html.escape(title) + "</div>"
        if match:
            text += f'\n      <div class="{upstream.GALLERY_CARD_DESCRIPTION_CLASS}">{match.group(1)}</div>'
        text += found.group(3)[len("</div>") :]
        _replace(caption, caption.astext()[: found.start()] + text)


def _replace(raw, text):
    raw.children = [nodes.Text(text)]


def setup(app):
    app.connect("doctree-resolved", _describe_cards, priority=PRIORITY)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


def minigallery_order(path):
    """sphinx-gallery's ``minigallery_sort_order``: a mini-gallery's cards in the gallery's
    order, by file name (the recipes are numbered across sections), not by folder."""
    return Path(path).name
