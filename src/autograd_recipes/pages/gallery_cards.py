"""The recipe cards' descriptions as text on the card, not in a ``tooltip`` attribute.

sphinx-gallery (0.22) writes each card of a gallery (the gallery index, and the
mini-galleries of other pages) as a raw HTML block that opens it with the recipe's first
paragraph in ``tooltip="..."``, then the link to the recipe, then a raw block with its
caption. ``tooltip`` is no HTML attribute, and its text shows only while a mouse hovers
(never on a touch screen, never to a screen reader). Here the attribute comes off and its
text, already escaped, becomes a line of the card under the caption.
"""

import re
from pathlib import Path

from docutils import nodes

from autograd_recipes import upstream

TOOLTIP = re.compile(r'\stooltip="([^"]*)"')
CAPTION = re.compile(rf'<div class="{upstream.GALLERY_CARD_TITLE_CLASS}">.*?</div>', re.S)
# after ui_strings (500), which puts the translated paragraph into the attribute on
# pages of other languages
PRIORITY = 600


def _describe_cards(app, doctree, docname):
    if app.builder.format != "html":
        return
    description = None  # of the card being read, from the block that opened it
    for node in list(doctree.findall(nodes.raw)):
        text = node.astext()
        if upstream.GALLERY_CARD_CLASS in text:
            match = TOOLTIP.search(text)
            description = match.group(1) if match else None
            _replace(node, TOOLTIP.sub("", text))
        elif description and (caption := CAPTION.search(text)):
            line = f'\n      <div class="{upstream.GALLERY_CARD_DESCRIPTION_CLASS}">{description}</div>'
            _replace(node, text[: caption.end()] + line + text[caption.end() :])
            description = None


def _replace(raw, text):
    raw.children = [nodes.Text(text)]


def setup(app):
    app.connect("doctree-resolved", _describe_cards, priority=PRIORITY)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


def minigallery_order(path):
    """sphinx-gallery's ``minigallery_sort_order``: a mini-gallery's cards in the gallery's
    order, by file name (the recipes are numbered across sections), not by folder."""
    return Path(path).name
