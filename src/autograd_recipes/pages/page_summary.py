"""What a search result or a link preview shows of a page: its summary, and OpenGraph tags.

Every page gets ``<meta name="description">``: its own summary, in its language.
That is the text of the page's ``.. meta:: :description:`` where it has one (for a
page whose first paragraph does not sum it up; Sphinx translates it from the page's
catalog), else the page's first paragraph
(``recipe_list.lede``: a recipe's lede, a notebook's first paragraph), taken from the
translated doctree, without markup, cut after the last whole sentence that fits in
``DESCRIPTION_WIDTH`` columns (a Hangul syllable takes two), or after the last whole
word with "…" when those sentences would fill less than half of it. The pages Sphinx generates without a
source (search, index) have a sentence of their own, translated in sphinx.po. A page
with no paragraph and no description fails the build, naming its file.

With conf.py's ``site_url`` set, the OpenGraph tags of a link preview follow: og:title,
og:description (the same summary), og:url (this language's page), og:type,
og:site_name, og:locale and an og:locale:alternate for each other language.
"""

import re
import unicodedata
from html import escape

from docutils import nodes
from markupsafe import Markup  # a Jinja dependency
from sphinx.locale import _
from sphinx.util import logging

from autograd_recipes.pages.recipe_list import lede

logger = logging.getLogger(__name__)

DESCRIPTION_WIDTH = 160  # columns: what a search result shows on one or two lines
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def og_locale(code):
    """OpenGraph's language_TERRITORY for a language code: ko -> ko_KR, en -> en_US."""
    from babel import Locale  # a Sphinx dependency
    from babel.core import get_global

    locale = Locale.parse(get_global("likely_subtags").get(code, code))  # ko -> ko_Kore_KR
    return f"{locale.language}_{locale.territory}" if locale.territory else locale.language


def width(text):
    """Columns ``text`` takes: two for a wide character (Hangul, CJK), one for the others."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def shorten(text, limit=DESCRIPTION_WIDTH):
    """``text`` on one line, cut to ``limit`` columns: whole sentences, else whole words and "…"."""
    text = " ".join(text.split())
    if width(text) <= limit:
        return text
    kept = ""
    for sentence in SENTENCE_END.split(text):
        if width(f"{kept} {sentence}".strip()) > limit:
            break
        kept = f"{kept} {sentence}".strip()
    if width(kept) >= limit // 2:  # else a short first sentence would say too little
        return kept
    kept = ""
    for word in text.split(" "):
        if width(f"{kept} {word}".strip()) + 1 > limit:  # and the ellipsis
            break
        kept = f"{kept} {word}".strip()
    return (kept.rstrip(",;:—–") or text[: limit - 1]) + "…"


def _take_explicit(app, doctree, docname):
    """A page's ``.. meta:: :description:`` (translated by now) becomes its summary: it is
    taken out of the page, so that its tag is written once, here, like every other page's
    (Sphinx would also write the attribute its translation left on it)."""
    if app.builder.format != "html":
        return
    for meta in list(doctree.findall(nodes.meta)):
        if meta.get("name") == "description":
            doctree["description"] = " ".join(meta["content"].split())
            meta.parent.remove(meta)


def summary_and_title(app, pagename, context, doctree):
    """The page's summary and its title as text."""
    if doctree is None:  # a page Sphinx generates
        if pagename == "genindex":
            return _("Index of %s.") % app.config.project, _("Index")
        if pagename == "search":
            return _("Search the pages of %s.") % app.config.project, _("Search")
        return None, app.config.project
    title = Markup(context.get("title") or app.config.project).striptags()  # HTML in the context
    if "description" in doctree:
        return doctree["description"], title
    return shorten(lede(app.env, pagename, doctree).astext()), title


def _page_context(app, pagename, templatename, context, doctree):
    config = app.config
    try:
        summary, title = summary_and_title(app, pagename, context, doctree)
    except ValueError as err:  # no paragraph, no description
        logger.warning("%s: give the page a '.. meta:: :description:'", err, location=pagename)
        return
    tags = ""
    if summary:
        tags += f'<meta name="description" content="{escape(summary, quote=True)}" />\n'
    if config.site_url:
        suffix = app.builder.out_suffix
        og = {
            "og:title": f"{title} - {config.project}" if pagename != config.root_doc else config.project,
            "og:type": "website" if pagename == config.root_doc else "article",
            "og:url": f"{config.site_url.rstrip('/')}/{config.language}/{pagename}{suffix}",
            "og:site_name": config.project,
            "og:locale": og_locale(config.language),
        }
        if summary:
            og["og:description"] = summary
        tags += "".join(f'<meta property="{k}" content="{escape(v, quote=True)}" />\n' for k, v in og.items())
        tags += "".join(
            f'<meta property="og:locale:alternate" content="{og_locale(code)}" />\n'
            for code in config.site_languages
            if code != config.language
        )
    context["metatags"] = context.get("metatags", "") + tags


def setup(app):
    app.setup_extension("autograd_recipes.i18n.site_languages")  # site_languages and site_url
    app.connect("doctree-resolved", _take_explicit)
    app.connect("html-page-context", _page_context)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
