"""On a translated page, a term's English gloss shows at its first use only.

The Korean text glosses a term in parentheses, ``역전파(backward pass)``, and each
translated unit (a paragraph, a claim's sentence, a recipe card's description) does so on
its own, because a catalog entry cannot know what the page has said before it. A page that
puts several units together (the recipe index's cards, the claims page, the versions page)
would repeat the same gloss. Here, in document order, a gloss whose English was already
given on the page, or is a shorter or longer form of one that was (``in-place`` after
``in-place operation``), is taken off.

A gloss is lower-case English words in parentheses right after Hangul. Capitalised words
are left alone: they quote the source articles' own section titles (``중간값(Intermediate
Values)``). Code stays as written: literals, code blocks and maths are not read, nor, in the
HTML that extensions write as raw blocks (the recipe cards' descriptions, the versions
page's matrix), what is inside ``code``, ``pre``, ``script``, ``style`` or ``svg``.
"""

import re

from docutils import nodes

from autograd_recipes.i18n.site_languages import source_language

# a gloss: English in parentheses right after a translated term, e.g. 역전파(backward pass),
# also after reST emphasis (*뷰*(view)); the catalog tests' rule too
GLOSS = re.compile(r"(?<=[\uac00-\ud7a3*])\s?\(([a-z][a-z -]*[a-z])\)")
TAG = re.compile(r"(<[^>]*>)")
TAG_NAME = re.compile(r"<(/?)([a-zA-Z][\w-]*)")
CODE_TAGS = {"code", "pre", "script", "style", "svg", "math", "textarea"}
CODE = (nodes.literal, nodes.FixedTextElement, nodes.math, nodes.comment)
# after gallery_cards (600), which writes the cards' descriptions
PRIORITY = 700


def _covered(english, seen):
    """True when ``english`` or a word-prefix of it, or a longer form, was glossed before."""
    words = english.split()
    for other in seen:
        shorter, longer = sorted((words, other.split()), key=len)
        if longer[: len(shorter)] == shorter:
            return True
    return False


def drop_repeats(text, seen):
    """``text`` with the glosses already in ``seen`` taken off; adds the new ones to ``seen``."""

    def keep_first(match):
        english = " ".join(match.group(1).split())
        if _covered(english, seen):
            return ""
        seen.add(english)
        return match.group(0)

    return GLOSS.sub(keep_first, text)


def drop_repeats_in_html(markup, seen):
    """``drop_repeats`` on the text of ``markup`` between its tags, outside code."""
    pieces, inside = TAG.split(markup), 0
    for i, piece in enumerate(pieces):
        if i % 2:  # a tag
            name = TAG_NAME.match(piece)
            if name and name.group(2).lower() in CODE_TAGS and not piece.endswith("/>"):
                inside += -1 if name.group(1) else 1
        elif not inside:
            pieces[i] = drop_repeats(piece, seen)
    return "".join(pieces)


def _texts(element, in_code=False):
    """(element, index, text, inside code) for every text under ``element``, in document order.
    Read from the children, not from ``text.parent``, which extensions replacing a raw
    node's text do not always set."""
    for index, child in enumerate(element.children):
        if isinstance(child, nodes.Text):
            yield element, index, child, in_code
        else:
            yield from _texts(child, in_code or isinstance(child, CODE))


def _first_glosses(app, doctree, docname):
    if app.builder.format != "html" or app.config.language == source_language(app.config):
        return
    seen = set()
    for element, index, text, in_code in list(_texts(doctree)):
        if isinstance(element, nodes.raw):
            if element.get("format") != "html":
                continue
            new = drop_repeats_in_html(str(text), seen)
        elif in_code:
            continue
        else:
            new = drop_repeats(str(text), seen)
        if new != text:
            element[index] = nodes.Text(new)


def setup(app):
    app.connect("doctree-resolved", _first_glosses, priority=PRIORITY)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
