"""Show each recipe's measured run time, and a page listing them all.

sphinx-gallery caches each example's last run time in ``<gallery>/<name>.cost.json``
(also when an unchanged example is skipped). We read that instead of its
"Total running time" line, which would be a new translatable message on every
build, and instead of its ``sg_execution_times`` page, which loads scripts from CDNs.

The figures are wrapped in ``<span class="measured">`` so tests can mask them.
"""

import json
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.locale import get_translation
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

MESSAGE_CATALOG = "recipe_runtimes"
_ = get_translation(MESSAGE_CATALOG)
logger = logging.getLogger(__name__)


def _gallery_dir(app):
    gallery_dirs = app.config.sphinx_gallery_conf["gallery_dirs"]
    return gallery_dirs if isinstance(gallery_dirs, str) else gallery_dirs[0]


def recipe_costs(app):
    """``{docname: (cost_file, seconds)}`` for every recipe sphinx-gallery has run."""
    gallery = Path(app.srcdir) / _gallery_dir(app)
    costs = {}
    for cost_file in sorted(gallery.glob("*.cost.json")):
        stem = cost_file.name[: -len(".cost.json")]
        seconds = float(json.loads(cost_file.read_text())["time"])
        costs[f"{_gallery_dir(app)}/{stem}"] = (cost_file, seconds)
    return costs


def seconds_text(seconds):
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def measured(text):
    """An inline node holding a figure measured at build time (never translated)."""
    # No "translatable" attribute here: Sphinx strips inline nodes that carry one.
    return nodes.inline(text, text, classes=["measured"])


def add_runtime_line(app, doctree):
    docname = app.env.docname
    costs = recipe_costs(app)
    if docname not in costs:
        return
    cost_file, seconds = costs[docname]
    app.env.note_dependency(str(cost_file))
    para = nodes.paragraph(classes=["recipe-runtime"], translatable=False)
    para += nodes.strong("", _("Run time when this site was built:"))
    para += nodes.Text(" ")
    para += measured(seconds_text(seconds))
    footer = next(
        (n for n in doctree.findall(nodes.container) if "sphx-glr-footer" in n["classes"]),
        None,
    )
    if footer is not None:
        # go before the footer's ``only`` wrapper and its label, or the
        # paragraph would take over the label's id
        before = footer
        while not isinstance(before.parent, nodes.section):
            before = before.parent
        label = before.previous_sibling()
        if isinstance(label, nodes.target):
            before = label
        before.parent.insert(before.parent.index(before), para)
    else:
        doctree.children[-1] += para


class RecipeRuntimes(SphinxDirective):
    """``.. recipe-runtimes::``: a table of every recipe and its last run time."""

    def run(self):
        costs = recipe_costs(self.env.app)
        gallery = Path(self.env.srcdir) / _gallery_dir(self.env.app)
        expected = sorted(p.stem for p in gallery.glob("plot_*.py"))
        missing = [s for s in expected if f"{_gallery_dir(self.env.app)}/{s}" not in costs]
        if missing and self.config.sphinx_gallery_conf.get("plot_gallery"):
            logger.warning(
                "no recorded run time for: %s (did the recipe fail?)",
                ", ".join(missing), location=self.get_location(),
            )
        table = nodes.table(classes=["recipe-runtimes"])
        group = nodes.tgroup(cols=2)
        table += group
        group += nodes.colspec(colwidth=4)
        group += nodes.colspec(colwidth=1)
        head = nodes.thead()
        group += head
        head += self._row(nodes.Text(_("Recipe")), nodes.Text(_("Run time")))
        body = nodes.tbody()
        group += body
        total = 0.0
        for docname, (cost_file, seconds) in costs.items():
            self.env.note_dependency(str(cost_file))
            total += seconds
            xref = addnodes.pending_xref(
                "", nodes.inline(docname, docname), refdomain="std", reftype="doc",
                reftarget="/" + docname, refexplicit=False, refwarn=True, refdoc=self.env.docname,
            )
            body += self._row(xref, measured(seconds_text(seconds)))
        body += self._row(nodes.strong("", _("Total")), measured(seconds_text(total)))
        return [table]

    @staticmethod
    def _row(*cells):
        row = nodes.row()
        for content in cells:
            entry = nodes.entry()
            para = nodes.paragraph(translatable=False)
            para += content
            entry += para
            row += entry
        return row


def setup(app):
    app.add_message_catalog(MESSAGE_CATALOG, str(Path(__file__).parent / "locales"))
    app.connect("doctree-read", add_runtime_line)
    app.add_directive("recipe-runtimes", RecipeRuntimes)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
