"""What a page loads: an extension's stylesheet only on a page that has what it styles.

Sphinx links every stylesheet an extension adds on every page. Four of them style
nothing but their own markup: myst-nb's (a notebook's cells), sphinx-gallery's (a
recipe's output, download links and cards), Pygments' and sphinx-copybutton's
(highlighted code). On a page without that markup they are bytes a reader downloads
for nothing: 75 KB of the Korean search page's 411 KB, which has no code at all.

``upstream.OPTIONAL_STYLESHEETS`` names each stylesheet by the start of its file name and
the classes that its rules select; a page keeps a stylesheet when its body has one of
those classes.
tests/test_browser.py checks the other direction on every page, in Chromium: no rule of
a stylesheet a page left out matches an element of the page, after its scripts ran.
"""

import re

from autograd_recipes import upstream

_CLASS_ATTRIBUTE = re.compile(r'class="([^"]*)"')


def classes(html):
    """Every class token used in ``html``."""
    return {token for value in _CLASS_ATTRIBUTE.findall(html) for token in value.split()}


def needed(filename, page_classes):
    """Whether a page with ``page_classes`` needs the stylesheet ``filename`` (True for any
    stylesheet OPTIONAL_STYLESHEETS does not name)."""
    name = str(filename).replace("\\", "/").rsplit("/", 1)[-1]
    for start, prefixes in upstream.OPTIONAL_STYLESHEETS.items():
        if name.startswith(start):
            return any(token.startswith(prefixes) for token in page_classes)
    return True


def _page_context(app, pagename, templatename, context, doctree):
    if "css_files" not in context:
        return
    used = classes(context.get("body", ""))
    # a new list: Sphinx hands every page the same one
    context["css_files"] = [css for css in context["css_files"] if needed(css.filename, used)]


def setup(app):
    app.connect("html-page-context", _page_context)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
