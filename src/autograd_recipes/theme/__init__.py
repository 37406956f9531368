"""The site's additions to the furo theme, and its fixes of the markup the theme writes.

conf.py names the additions: the templates (the language switch in the top bar and the
sidebar, the page's provenance, edit and report links), the stylesheet and the language
switch's script, and the favicon. As an extension, this module fixes two things found in
the generated pages:

* Sphinx renders a toctree caption as ``<p class="caption" role="heading">`` with no
  ``aria-level``, which a heading role requires (axe: aria-required-attr, critical).
  furo hands the navigation to its template as an HTML string, so the level is added
  there; the page's own headings are h1 and h2, so the sidebar captions are level 2.
* furo's base.html writes ``<meta name="viewport">`` itself; docutils' HTML5 writer adds
  another to the document's meta tags, which Sphinx hands to the template as
  ``metatags``. Two are invalid HTML (and a browser takes the last): docutils' is dropped.
* Sphinx adds ``?v=<checksum>`` to a stylesheet's link only if the file is already in the
  output's ``_static`` when a page is written; myst-nb copies its stylesheet there when the
  build finishes, so a cold build linked it without ``?v=`` and an incremental build with.
  myst-nb's own copying also runs when the builder starts: every build writes the same link.
"""

import re
from pathlib import Path

_HERE = Path(__file__).resolve().parent
TEMPLATES = str(_HERE / "templates")
STATIC = str(_HERE / "static")
FAVICON = str(_HERE / "static" / "favicon.svg")

VIEWPORT = re.compile(r'<meta name="viewport"[^>]*>\n?')
CAPTION = 'class="caption" role="heading"'


def add_caption_level(app, pagename, templatename, context, doctree):
    tree = context.get("furo_navigation_tree")
    if tree:
        context["furo_navigation_tree"] = tree.replace(CAPTION, CAPTION + ' aria-level="2"')


def drop_docutils_viewport(app, pagename, templatename, context, doctree):
    if context.get("metatags"):
        context["metatags"] = VIEWPORT.sub("", context["metatags"])


def copy_notebook_css_first(app):
    from myst_nb.sphinx_ext import add_global_html_resources

    if app.builder.format == "html":
        Path(app.builder.outdir, "_static").mkdir(parents=True, exist_ok=True)  # made later on a cold build
    add_global_html_resources(app, None)


def setup(app):
    app.connect("builder-inited", copy_notebook_css_first)
    app.connect("html-page-context", add_caption_level, priority=900)  # after furo's handler
    app.connect("html-page-context", drop_docutils_viewport)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
