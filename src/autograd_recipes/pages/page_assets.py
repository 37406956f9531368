"""What a page loads: an extension's stylesheet or script only on a page that has what it serves.

Sphinx links every stylesheet and script an extension adds on every page. Some serve
nothing but their own markup: myst-nb's stylesheet (a notebook's cells), sphinx-gallery's
(a recipe's output, download links and cards), Pygments' and sphinx-copybutton's
(highlighted code); sphinx-copybutton's scripts (its buttons on highlighted code) and
sphinx-gallery's tag filter (a gallery's tags). On a page without that markup they are
bytes a reader downloads for nothing: the Korean search page, which has no code at all,
loaded 75 KB of such stylesheets and 22 KB of such scripts.

``upstream.OPTIONAL_STYLESHEETS`` and ``upstream.OPTIONAL_SCRIPTS`` name each file by the
start of its name and the classes that its rules or code select; a page keeps a file when
its body has one of those classes.
tests/test_browser.py checks the other direction for stylesheets on every page, in
Chromium: no rule of a stylesheet a page left out matches an element of the page, after
its scripts ran; tests/test_page_assets.py checks it for scripts on every built page.
"""

import re

from autograd_recipes import upstream

_CLASS_ATTRIBUTE = re.compile(r'class="([^"]*)"')


def classes(html):
    """Every class token used in ``html``."""
    return {token for value in _CLASS_ATTRIBUTE.findall(html) for token in value.split()}


def needed(filename, page_classes, optional=upstream.OPTIONAL_STYLESHEETS):
    """Whether a page with ``page_classes`` needs the file ``filename`` (True for any file
    ``optional`` does not name)."""
    name = str(filename).replace("\\", "/").rsplit("/", 1)[-1]
    for start, prefixes in optional.items():
        if name.startswith(start):
            return any(token.startswith(prefixes) for token in page_classes)
    return True


def _page_context(app, pagename, templatename, context, doctree):
    used = classes(context.get("body", ""))
    # new lists: Sphinx hands every page the same ones
    if "css_files" in context:
        context["css_files"] = [css for css in context["css_files"] if needed(css.filename, used)]
    if "script_files" in context:
        context["script_files"] = [
            js for js in context["script_files"] if needed(js.filename, used, upstream.OPTIONAL_SCRIPTS)
        ]


def setup(app):
    # last: after the handlers that add a file to one page (file_search's script)
    app.connect("html-page-context", _page_context, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
