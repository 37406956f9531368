"""Leave a breadcrumb (src/autograd_recipes/execution/breadcrumb.py) naming the notebook, and the cell, being run.

A notebook's kernel that dies (``os._exit``, a crash, the out-of-memory killer)
makes nbclient raise ``DeadKernelError`` through myst-nb and Sphinx: a crash dump
that names no cell. Two sides leave crumbs while src/autograd_recipes/publish/build.py asks for them
(``AUTOGRAD_RECIPES_BREADCRUMB`` set); build.py names what the last one says.

- Sphinx side (this extension): ``enter("notebook", "docs/<name>.md")`` when a
  notebook page starts being read (``source-read``: myst-nb runs it while
  parsing), ``leave()`` once it has been read (``doctree-read``).
- Kernel side: the hidden setup cell of each notebook calls ``follow_cells``,
  which records each following cell before it runs, as
  ("notebook cell", "docs/<name>.md", the line of its ``{code-cell}``, its first line).
"""

import os

from autograd_recipes import upstream
from autograd_recipes.execution import breadcrumb
from autograd_recipes.project import PROJECT

_reading = {}  # Sphinx side: the notebook page being read, if any


def follow_cells(shell, file):
    """In a notebook's kernel: before each cell runs, say where it is in ``file`` (from the project)."""
    if not os.environ.get(breadcrumb.ENV):
        return
    text = (PROJECT.root / file).read_text(encoding="utf-8")
    searched = 0  # cells run in order: look after the last one found

    def before_cell(info):
        nonlocal searched
        source = info.raw_cell
        found = text.find(source, searched) if source.strip() else -1
        line = None
        if found >= 0:
            searched = found + len(source)
            fence = text.rfind("{code-cell}", 0, found)
            line = text.count("\n", 0, fence if fence >= 0 else found) + 1
        first = next((code.strip() for code in source.splitlines() if code.strip()), "")
        breadcrumb.enter("notebook cell", file, line, first[:80])

    shell.events.register("pre_run_cell", before_cell)


def _is_notebook(app, docname, text):
    path = app.env.doc2path(docname)
    return path.suffix == ".ipynb" or (path.suffix == ".md" and upstream.is_notebook_text(text))


def notebook_starts(app, docname, source):
    if _is_notebook(app, docname, source[0]):
        _reading["docname"] = docname
        breadcrumb.enter("notebook", app.env.doc2path(docname).relative_to(app.confdir).as_posix())


def notebook_read(app, doctree):
    if _reading.pop("docname", None) == app.env.docname:
        breadcrumb.leave()


def setup(app):
    app.connect("source-read", notebook_starts)
    app.connect("doctree-read", notebook_read)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
