"""What ran when the site was built: a run-time line on each executed page, and a report page.

Executed pages are the sphinx-gallery recipes and the MyST-NB notebooks. Their
run times come from the runs themselves: sphinx-gallery caches each recipe's last
run time in ``<gallery>/<name>.cost.json`` (kept when an unchanged recipe is
skipped), and myst-nb records each notebook's execution data. We do not use
sphinx-gallery's "Total running time" line (a new translatable message on every
build) nor its ``sg_execution_times`` page (it loads scripts from CDNs).

Figures measured at build time are wrapped in ``<span class="measured">`` so
tests can mask them. ``.. execution-report::`` renders the table.
"""

import json
import re

from docutils import nodes
from sphinx import addnodes
from sphinx.locale import _  # Korean for these strings: locales/ko/LC_MESSAGES/sphinx.po
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from autograd_recipes import upstream
from autograd_recipes.project import PROJECT, torch_version

logger = logging.getLogger(__name__)

# What expect_error prints for each error it caught: "RuntimeError: message"
ERROR_LINE = re.compile(r"^[A-Z]\w*(Error|Exception): ", re.M)
DEVICE_LINE = re.compile(r"\bdevice: (\w+)")


def seconds_text(seconds):
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def measured(text):
    """An inline node for a figure measured at build time."""
    # No "translatable" attribute here: Sphinx strips inline nodes that carry one.
    return nodes.inline(text, text, classes=["measured"])


def _outputs(doctree):
    for block in doctree.findall(nodes.literal_block):
        classes = block["classes"]
        if upstream.GALLERY_OUTPUT_CLASS in classes or "output" in classes:
            yield block.astext()


def _recipe_seconds(app, docname):
    prefix = PROJECT.gallery_dir + "/"
    if not docname.startswith(prefix):
        return None
    cost_file = upstream.gallery_cost_file(app.srcdir, docname)
    if not cost_file.is_file():
        return None
    app.env.note_dependency(str(cost_file))
    return float(json.loads(cost_file.read_text())["time"])


def _notebook_seconds(app, docname):
    data = upstream.notebook_exec_data(app.env, docname)
    if not data or data.get("runtime") is None:
        return None
    return float(data["runtime"])


def _runtime_paragraph(seconds):
    para = nodes.paragraph(classes=["run-time"], translatable=False)
    para += nodes.strong("", _("Run time when this site was built:"))
    para += nodes.Text(" ")
    para += measured(seconds_text(seconds))
    return para


def _insert_before_gallery_footer(doctree, para):
    footer = next(
        (n for n in doctree.findall(nodes.container) if upstream.GALLERY_FOOTER_CLASS in n["classes"]),
        None,
    )
    if footer is None:
        doctree.children[-1] += para
        return
    # go before the footer's ``only`` wrapper and its label, or the
    # paragraph would take over the label's id
    before = footer
    while not isinstance(before.parent, nodes.section):
        before = before.parent
    label = before.previous_sibling()
    if isinstance(label, nodes.target):
        before = label
    before.parent.insert(before.parent.index(before), para)


def record_execution(app, doctree):
    docname = app.env.docname
    seconds = _recipe_seconds(app, docname)
    kind = "recipe"
    if seconds is None:
        seconds = _notebook_seconds(app, docname)
        kind = "notebook"
    if seconds is None:
        return
    outputs = "\n".join(_outputs(doctree))
    device = DEVICE_LINE.search(outputs)
    app.env.execution_records[docname] = {
        "kind": kind,
        "seconds": seconds,
        "expected_errors": len(ERROR_LINE.findall(outputs)),
        "device": device.group(1) if device else "cpu",
        "output": outputs,  # what the run printed: the torch matrix compares its pinned record with it
    }
    para = _runtime_paragraph(seconds)
    if kind == "recipe":
        _insert_before_gallery_footer(doctree, para)
    else:
        doctree.children[-1] += para


class execution_report(nodes.General, nodes.Element):
    """Placeholder, filled in once every document has been read."""


class ExecutionReport(SphinxDirective):
    def run(self):
        self.env.execution_report_docs.add(self.env.docname)
        node = execution_report()
        self.set_source_info(node)
        return [node]


def _cell(content):
    entry = nodes.entry()
    para = nodes.paragraph(translatable=False)
    para += content
    entry += para
    return entry


def _row(*cells):
    row = nodes.row()
    for content in cells:
        row += _cell(content)
    return row


def _table(app, docname, records):
    headers = [
        _("Page"),
        _("Kind"),
        _("Status"),
        _("Expected errors shown"),
        _("Run time"),
        _("torch"),
        _("Device"),
    ]
    table = nodes.table(classes=["execution-report"])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for width in (4, 1, 1, 1, 1, 1, 1):
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    head += _row(*(nodes.Text(h) for h in headers))
    body = nodes.tbody()
    group += head
    group += body
    kinds = {"recipe": _("recipe"), "notebook": _("notebook")}
    for name, record in sorted(records.items(), key=lambda item: (item[1]["kind"], item[0])):
        xref = addnodes.pending_xref(
            "",
            nodes.inline(name, name),
            refdomain="std",
            reftype="doc",
            reftarget="/" + name,
            refexplicit=False,
            refwarn=True,
            refdoc=docname,
        )
        body += _row(
            xref,
            nodes.Text(kinds[record["kind"]]),
            nodes.Text(_("ok")),
            nodes.Text(str(record["expected_errors"])),
            measured(seconds_text(record["seconds"])),
            nodes.Text(torch_version()),
            nodes.Text(record["device"]),
        )
    total = sum(r["seconds"] for r in records.values())
    body += _row(
        nodes.strong("", _("Total")),
        nodes.Text(""),
        nodes.Text(""),
        nodes.Text(""),
        measured(seconds_text(total)),
        nodes.Text(""),
        nodes.Text(""),
    )
    return table


def fill_report(app, doctree, docname):
    for node in list(doctree.findall(execution_report)):
        records = app.env.execution_records
        missing = [d for d in PROJECT.recipe_docnames() if d not in records]
        if missing and app.config.sphinx_gallery_conf.get("plot_gallery"):
            logger.warning("no recorded run for: %s (did it fail?)", ", ".join(missing), location=node)
        table = _table(app, docname, records)
        node.replace_self(table)
        # the references were added after resolution: resolve them now
        app.env.resolve_references(table, docname, app.builder)


def _init_env(app, env, *args):
    if not hasattr(env, "execution_records"):
        env.execution_records = {}
        env.execution_report_docs = set()


def _purge(app, env, docname):
    env.execution_records.pop(docname, None)
    env.execution_report_docs.discard(docname)


def _merge(app, env, docnames, other):
    for name in docnames:
        if name in other.execution_records:
            env.execution_records[name] = other.execution_records[name]
        if name in other.execution_report_docs:
            env.execution_report_docs.add(name)


def _report_always_outdated(app, env, added, changed, removed):
    _init_env(app, env)
    return sorted(env.execution_report_docs)


def setup(app):
    app.add_node(execution_report)
    app.add_directive("execution-report", ExecutionReport)
    app.connect("env-before-read-docs", _init_env)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-get-outdated", _report_always_outdated)
    app.connect("doctree-read", record_execution)
    app.connect("doctree-resolved", fill_report)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
