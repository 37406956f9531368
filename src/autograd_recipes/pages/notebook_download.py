"""Offer each MyST-NB page as an ``.ipynb`` download, with the outputs the page shows.

When a notebook page has been read (``doctree-read``), its source is read again
with myst-nb's reader and merged with the executed copy that myst-nb keeps in
jupyter-cache (``merge_match_into_notebook``): the outputs on the page come from
that same copy. The result goes to ``notebook_download_dir`` (conf.py; outside
the published tree, shared by both languages, rewritten only when it changes),
and a link to it goes under the page's lede; Sphinx copies the file into
``_downloads/``. furo shows no download button, hence the link. The kit's code stands in a
cell of its own in place of its import (kit/standalone.py), so the download runs alone.

We do not offer the ``.ipynb`` that myst-nb writes to ``<outdir>/../jupyter_execute/``:
it is the notebook as read, so it has no outputs when they came from the cache.
When there is no executed copy to merge (the notebook failed to run, or the
execution mode is not "cache"), the build warns and the page gets no link: an
empty notebook is never offered. Such a page is read again on the next build,
so the warning does not go away on a rebuild that changes nothing.
"""

import os
import re
from pathlib import Path

import nbformat
from docutils import nodes
from sphinx import addnodes
from sphinx.locale import _  # Korean for these strings: locales/ko/LC_MESSAGES/sphinx.po
from sphinx.util import logging

from autograd_recipes import read_again, upstream
from autograd_recipes.kit import standalone
from autograd_recipes.pages import first_screen

logger = logging.getLogger(__name__)


def executed_notebook(env, docname):
    """The notebook myst-nb reads from ``docname``, with its cached outputs; None if none."""
    config = env.mystnb_config  # myst-nb's resolved settings, as its parser uses them
    if config.execution_mode != "cache":
        return None
    path = env.doc2path(docname)
    text = path.read_text(encoding="utf-8")
    notebook = upstream.read_notebook(path, env, text)
    # the kernel name is part of the cache key: alias it as myst-nb does before matching
    kernelspec = notebook.metadata.get("kernelspec", {})
    for pattern, alias in config.kernel_rgx_aliases.items():
        if kernelspec.get("name") is not None and re.fullmatch(pattern, kernelspec["name"]):
            kernelspec["name"] = alias
            break
    merged = upstream.cached_outputs(config.execution_cache_path, notebook)
    if merged is None:
        return None
    merged.metadata.pop("source_map", None)  # line numbers in the .md: no use to a reader
    merged.cells = [nbformat.from_dict(cell) for cell in standalone.notebook_cells(merged.cells)]
    for index, cell in enumerate(merged.cells):  # the reader draws random ids: the file
        cell.id = f"cell-{index}"  # would change on every read, and so re-read the page
    return merged


def write_if_changed(path, content):
    """Write ``content`` (text or bytes), leaving an unchanged file alone: its mtime would make
    Sphinx re-read the page, or copy a download again."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def add_download_link(app, doctree):
    env = app.env
    docname = env.docname
    if env.doc2path(docname).suffix != ".md" or not env.metadata[docname].get("kernelspec"):
        return
    notebook = executed_notebook(env, docname)
    if notebook is None:
        read_again.mark(env, "no notebook download", docname)
        logger.warning(
            "no executed copy of this notebook in jupyter-cache (did it fail to run? "
            "nb_execution_mode must be 'cache'): the page gets no notebook download",
            location=docname,
        )
        return
    target = Path(app.config.notebook_download_dir, f"{docname}.ipynb")
    write_if_changed(target, nbformat.writes(notebook))
    filename = target.name
    # relative to the page's folder (a target starting with "/" is read from the source folder)
    reftarget = os.path.relpath(target.resolve(), env.doc2path(docname).parent)
    link = addnodes.download_reference(
        "",
        "",
        reftarget=reftarget,
        refdoc=docname,
        refexplicit=True,
        refdomain="",
        reftype="download",
    )
    link += nodes.literal(filename, filename)
    para = nodes.paragraph(classes=["notebook-download"], translatable=False)
    para += nodes.Text(_("Download this page as a Jupyter notebook:") + " ")
    para += link
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is not None:  # after the lede, as a recipe's downloads: a search snippet starts with the lede
        first_screen.add_under_lede(section, para)


def setup(app):
    app.add_config_value("notebook_download_dir", "", "env", types=(str,))
    read_again.keep(app, "no notebook download")  # it warns again on the next build
    # before Sphinx collects download files from the doctree
    app.connect("doctree-read", add_download_link, priority=400)
    return {"version": "2", "parallel_read_safe": True, "parallel_write_safe": True}
