"""One viewport tag per page: furo's.

furo's base.html writes ``<meta name="viewport">`` itself; docutils' HTML5 writer adds
another to the document's meta tags, which Sphinx hands to the template as ``metatags``.
Two are invalid HTML (and a browser takes the last), so docutils' is dropped here.
"""

import re

VIEWPORT = re.compile(r'<meta name="viewport"[^>]*>\n?')


def _drop_docutils_viewport(app, pagename, templatename, context, doctree):
    if context.get("metatags"):
        context["metatags"] = VIEWPORT.sub("", context["metatags"])


def setup(app):
    app.connect("html-page-context", _drop_docutils_viewport)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
