"""Accessibility fixes for markup the theme generates, found by axe-core in the browser tests.

Sphinx renders a toctree caption as ``<p class="caption" role="heading">`` with no
``aria-level``, which a heading role requires (axe: aria-required-attr, critical).
furo hands the navigation to its template as an HTML string, so we add the level
there; the page's own headings are h1 and h2, so the sidebar captions are level 2.
"""


def add_caption_level(app, pagename, templatename, context, doctree):
    tree = context.get("furo_navigation_tree")
    if tree:
        context["furo_navigation_tree"] = tree.replace(
            'class="caption" role="heading"', 'class="caption" role="heading" aria-level="2"'
        )


def setup(app):
    app.connect("html-page-context", add_caption_level, priority=900)  # after furo's handler
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
