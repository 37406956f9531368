"""Pictures of the autograd graph on the recipe and notebook pages, in the page's language.

The kit's drawer (``kit/graph.py``) reads the graph behind a tensor where a case is set up
(``show_graph(t)``, one line per case) and draws it. This extension connects it to the build:

* Before any recipe runs it has the drawer ``collect()`` its records instead of displaying them.
  The kit's code is part of the execution environment's key (execution/cache_key.py): changing
  it runs the recipes and notebooks again.
* ``scrape`` (an ``image_scrapers`` entry of sphinx-gallery) takes the records a recipe block
  made and puts after the block one ``.. autograd-graph::`` directive per record, the record as
  JSON: no language in it, so the Korean build reuses the executed recipe as it is. The
  recipe's first failing case is also written as an SVG file without any words of ours (torch's
  names and version numbers only): sphinx-gallery copies it as the recipe's gallery thumbnail.
* In a notebook, ``show_graph`` displays the record under ``graph.MIME``;
  ``NotebookGraphs``, a myst-nb mime renderer registered by an entry point in
  pyproject.toml (``myst_nb.mime_renderers``), makes the same node of it.
* When a page is written, each node becomes a ``<figure>``: the SVG inline, labelled by its
  caption (the text alternative, sentences made from the same record), with our labels in the
  page's language from sphinx.po (``graph.WORDS`` lists the English) and torch's names
  as they are. site.css gives the colours of the page's theme, light or dark. Other builders
  (gettext) drop the node: it has no text to translate.
"""

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.locale import _
from sphinx.util.docutils import SphinxDirective

from autograd_recipes import upstream
from autograd_recipes.kit import graph


class graph_figure(nodes.General, nodes.Element):
    """A graph record (``node["data"]``), drawn when the page is written."""


class AutogradGraph(SphinxDirective):
    """``.. autograd-graph::`` with a record as JSON content (written by ``scrape``)."""

    has_content = True

    def run(self):
        try:
            data = json.loads("\n".join(self.content))
        except ValueError as err:
            raise self.error(f"autograd-graph: the content is not a graph record: {err}") from err
        return [graph_figure(data=data)]


# Whether the thumbnail written for the recipe running now shows a failing case. Module
# state, as the drawer's pending records are: sphinx-gallery runs one recipe at a time per
# process, and reset_pending clears it before each.
_thumbnail = {"failing": False}


def scrape(block, block_vars, gallery_conf):
    """sphinx-gallery scraper: the records of this block, as directives after its output."""
    records = graph.take()
    images = block_vars["image_path_iterator"]
    rst = ""
    for data in records:
        failing = data["verdict"] in graph.FAILING
        # the thumbnail is the recipe's first failing case; a recipe whose pictures show no
        # failing case (its pitfall is not a saved tensor or a leaf write) gets its first picture
        if len(images) == 0 or (failing and not _thumbnail["failing"]):
            first = Path(next(images) if len(images) == 0 else upstream.gallery_first_image(images))
            thumbnail = first.with_suffix(".svg")
            thumbnail.write_text(graph.svg(data, tags=False, standalone=True), encoding="utf-8")
            _thumbnail["failing"] = failing
            # an older build's placeholder would be found first (sphinx-gallery looks for .png first)
            stem = Path(block_vars["src_file"]).stem
            stale = thumbnail.parent / upstream.GALLERY_THUMBNAIL.format(stem=stem)
            stale.unlink(missing_ok=True)
        content = json.dumps(data, ensure_ascii=False, sort_keys=True)
        rst += f"\n.. autograd-graph::\n\n    {content}\n\n"
    return rst


# what scrape writes for one record: the directive, a blank line, the record on one line
SCRAPED = re.compile(r"^\.\. autograd-graph::\n\n    (\{.*\})\n", re.M)


def scraped_records(rst):
    """The records ``scrape`` wrote into ``rst`` (a recipe's generated page, or part of it), in order."""
    return [json.loads(found) for found in SCRAPED.findall(rst)]


def reset_pending(gallery_conf, fname, when):
    """sphinx-gallery ``reset_modules`` entry: each recipe starts with no records pending, and a
    record no block's scraper took (a show_graph in a block that then raised) is not carried over."""
    graph.take()
    _thumbnail["failing"] = False


class NotebookGraphs:
    """myst-nb mime renderer: a cell output carrying a graph record becomes a graph_figure."""

    mime_priority_overrides = [("*", "application/vnd.autograd-recipes.graph+json", 0)]

    @staticmethod
    def handle_mime(renderer, data, inline):
        if data.mime_type != graph.MIME:
            return None
        content = data.content if isinstance(data.content, dict) else json.loads(data.content)
        return [graph_figure(data=content)]


def words():
    """Our labels and sentences in the page's language (sphinx.po); torch's names stay."""
    return {key: _(english) for key, english in graph.WORDS.items()}


def _fill(app, doctree, docname):
    figures = list(doctree.findall(graph_figure))
    if not figures:
        return
    if app.builder.format != "html":
        for node in figures:
            node.parent.remove(node)
        return
    labels = words()
    for n, node in enumerate(figures, 1):
        html = graph.figure(node["data"], labels, ident=f"autograd-graph-{n}")
        node.replace_self(nodes.raw("", html, format="html"))


def _start_collecting(app, config):
    graph.collect()
    if NotebookGraphs.mime_priority_overrides[0][1] != graph.MIME:
        raise ExtensionError("graph_figures: NotebookGraphs' mime type differs from graph.MIME")


def setup(app):
    app.add_node(graph_figure)
    app.add_directive("autograd-graph", AutogradGraph)
    app.connect("config-inited", _start_collecting)
    app.connect("doctree-resolved", _fill)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
