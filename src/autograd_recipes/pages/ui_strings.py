"""Interface text that the theme and other extensions write in English, in the page's language.

conf.py loads this extension; every string goes through ``sphinx.locale._``, so
the Korean is in locales/ko/LC_MESSAGES/sphinx.po with the rest of the interface
and an English build is unchanged. These places need it:

* furo hard-codes screen-reader labels and SVG titles in its templates
  (``FURO_STRINGS``). Rather than fork the templates, each finished page has
  those exact attributes replaced. If furo changes one, the build warns (an
  error under -W) naming the string, and tests/test_korean_ui.py fails.
* sphinx-copybutton keeps its strings in a ``messages`` table keyed by ``<html
  lang>``, with no Korean: the page language's strings are added to the copied
  ``_static/copybutton.js`` (its buttons and their icons' titles are made from it).
* Sphinx's JS catalog (``_static/translations.js``) has an empty Korean plural
  for the search result count: the messages our sphinx.po has fill it.
* conf.py's ``copyright`` names the holders in English (furo's footer).
* sphinx-gallery writes the recipe cards' tooltips as raw HTML in English (the gallery
  index's, and the mini-galleries' on other pages): they are replaced by the recipe's
  translated first paragraph (which gallery_cards then shows on the card, under the
  caption it writes from the recipe page's translated title).
"""

import json
import re
from html import escape
from pathlib import Path

from docutils import nodes
from sphinx.locale import _
from sphinx.util import logging

from autograd_recipes.i18n.site_languages import source_language
from autograd_recipes.pages import gallery_cards
from autograd_recipes.pages.recipe_list import lede

logger = logging.getLogger(__name__)

# (furo template, exact text in it, the English to translate)
FURO_STRINGS = [
    ("page.html", 'aria-label="{}"', "Toggle site navigation sidebar"),
    ("page.html", 'aria-label="{}"', "Toggle table of contents sidebar"),
    ("page.html", 'aria-label="{}"', "Toggle Light / Dark / Auto color theme"),
    ("partials/icons.html", "<title>{}</title>", "Contents"),
    ("partials/icons.html", "<title>{}</title>", "Menu"),
    ("partials/icons.html", "<title>{}</title>", "Expand"),
    ("partials/icons.html", "<title>{}</title>", "Light mode"),
    ("partials/icons.html", "<title>{}</title>", "Dark mode"),
    ("partials/icons.html", "<title>{}</title>", "Auto light/dark, in light mode"),
    ("partials/icons.html", "<title>{}</title>", "Auto light/dark, in dark mode"),
]
# furo/navigation.py names each expand button after its page
NAVIGATION = ("navigation.py", 'accessible_name = f"Toggle navigation of {', "Toggle navigation of %s")
_NAV_LABEL = re.compile(r'aria-label="Toggle navigation of ([^"]*)"')
COPYBUTTON_TABLE = "const messages = {"
COPYBUTTON = {
    "copy": "Copy",
    "copy_to_clipboard": "Copy to clipboard",
    "copy_success": "Copied!",
    "copy_failure": "Failed to copy",
}
SEARCH_MESSAGES = [
    ("Search finished, found one page matching the search query.",
     "Search finished, found ${resultCount} pages matching the search query."),
]  # fmt: skip


def furo_drift():
    """The strings of FURO_STRINGS and NAVIGATION that furo no longer has, as messages."""
    import furo

    root = Path(furo.__file__).parent
    missing = []
    for name, pattern, english in FURO_STRINGS:
        if pattern.format(english) not in (root / "theme" / "furo" / name).read_text(encoding="utf-8"):
            missing.append(f"furo's {name} no longer contains {pattern.format(english)!r}")
    name, text, _english = NAVIGATION
    if text not in (root / name).read_text(encoding="utf-8"):
        missing.append(f"furo's {name} no longer contains {text!r}")
    return missing


def _check_furo(app):
    for problem in furo_drift():
        logger.warning("%s: its Korean in src/autograd_recipes/pages/ui_strings.py is not applied", problem)


def _translate_page(text):
    for _name, pattern, english in FURO_STRINGS:
        text = text.replace(pattern.format(english), pattern.format(escape(_(english), quote=True)))
    return _NAV_LABEL.sub(lambda m: 'aria-label="%s"' % (_(NAVIGATION[2]) % m.group(1)), text)


def _copybutton(outdir, language):
    """Add the page language's strings to copybutton.js's ``messages`` table."""
    path = Path(outdir) / "_static" / "copybutton.js"
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    if COPYBUTTON_TABLE not in text:
        logger.warning(
            "sphinx-copybutton's copybutton.js has no %r: its buttons stay English", COPYBUTTON_TABLE
        )
        return
    strings = {key: str(_(english)) for key, english in COPYBUTTON.items()}
    entry = f"{json.dumps(language)}: {json.dumps(strings, ensure_ascii=False)},"
    if entry not in text:
        path.write_text(text.replace(COPYBUTTON_TABLE, f"{COPYBUTTON_TABLE}\n  {entry}", 1), encoding="utf-8")


def _search_count(outdir):
    path = Path(outdir) / "_static" / "translations.js"
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    start, end = text.index("{"), text.rindex("}") + 1
    catalog = json.loads(text[start:end])
    for singular, plural in SEARCH_MESSAGES:
        many = str(_(plural))
        if many != plural:  # Korean has one form (plural_expr 0), which shows the count
            catalog["messages"][singular] = [many]
    path.write_text(
        text[:start] + json.dumps(catalog, ensure_ascii=False, indent=4) + text[end:], encoding="utf-8"
    )


def _copyright(app, pagename, templatename, context, doctree):
    """conf.py's ``copyright`` (who holds it) in the page's language."""
    if context.get("copyright"):
        context["copyright"] = str(_(context["copyright"]))


def _finish(app, exception):
    if exception or app.builder.format != "html":
        return
    if app.config.language != source_language(app.config):
        _search_count(app.outdir)
        _copybutton(app.outdir, app.config.language)
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = _translate_page(text)
        if new != text:
            page.write_text(new, encoding="utf-8")


def _gallery_cards(app, doctree, docname):
    """The recipe cards' tooltips (the gallery index's, and the mini-galleries' of other pages)
    from the translated recipe's first paragraph; gallery_cards writes every card's caption
    from the recipe page's title, which is translated already."""
    if app.config.language == source_language(app.config):
        return
    for opening, doc, _caption in gallery_cards.cards(app, doctree, docname):
        if doc not in app.env.all_docs:
            continue
        try:
            tooltip = re.sub(r"\s+", " ", lede(app.env, doc).astext())
        except ValueError:
            tooltip = app.env.titles[doc].astext()
        _replace(
            opening,
            re.sub(r'tooltip="[^"]*"', f'tooltip="{escape(tooltip, quote=True)}"', opening.astext()),
        )


def _replace(raw, text):
    raw.children = [nodes.Text(text)]


def setup(app):
    app.connect("builder-inited", _check_furo)
    app.connect("doctree-resolved", _gallery_cards)
    app.connect("html-page-context", _copyright)
    app.connect("build-finished", _finish)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
