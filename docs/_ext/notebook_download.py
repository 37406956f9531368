"""Offer each MyST-NB page as an ``.ipynb`` download, with the outputs of the build's run.

myst-nb writes every notebook it executes to ``<outdir>/../jupyter_execute/``
while the page is read; furo shows no download button, so we add a link to that
file (Sphinx copies it into ``_downloads/``) at the top of the page.
"""

import os
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.locale import _  # Korean for these strings: locales/ko/LC_MESSAGES/sphinx.po



def add_download_link(app, doctree):
    docname = app.env.docname
    if app.env.doc2path(docname).suffix != ".md" or not app.env.metadata[docname].get("kernelspec"):
        return
    notebook = Path(app.outdir).parent / "jupyter_execute" / f"{docname}.ipynb"
    if not notebook.is_file():
        return
    target = os.path.relpath(notebook, Path(app.srcdir, docname).parent)
    filename = notebook.name
    link = addnodes.download_reference(
        "", "", reftarget=target, refdoc=docname, refexplicit=True, refdomain="", reftype="download",
    )
    link += nodes.literal(filename, filename)
    para = nodes.paragraph(classes=["notebook-download"], translatable=False)
    para += nodes.Text(_("Download this page as a Jupyter notebook:") + " ")
    para += link
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is not None:
        section.insert(1, para)  # after the title


def setup(app):
    # before Sphinx collects download files from the doctree
    app.connect("doctree-read", add_download_link, priority=400)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
