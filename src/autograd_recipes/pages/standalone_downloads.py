"""A recipe page's downloads run alone: the script, the notebook and the zip of both.

sphinx-gallery offers a recipe's source as it is, which imports the site's kit in a hidden
line (``from autograd_recipes.kit import …``), and a notebook made with the hidden lines left
out, which lacks the ``expect_error`` around each failing case and so stops at the first.
Neither runs on a reader's machine. Each recipe's downloads are made again here from its
source (kit/standalone.py): the script with the kit's code in place of its import; the
notebook, made by sphinx-gallery's own converter with the hidden lines kept and the kit in a
cell of its own, each cell with the outputs its block shows on the page (recipe_outputs); and a
zip of the two. They are written to ``recipe_download_dir`` (conf.py:
outside the published tree, shared by both languages, rewritten only when they change), and
the page's download links point to them before Sphinx collects a page's download files.
"""

import hashlib
import io
import json
import os
import zipfile
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging

from autograd_recipes import upstream
from autograd_recipes.kit import standalone
from autograd_recipes.pages import graph_figures, recipe_outputs
from autograd_recipes.pages.notebook_download import write_if_changed
from autograd_recipes.project import PROJECT

logger = logging.getLogger(__name__)

ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the zip format's first date: the same bytes in every build


def zipped(files):
    """A zip of {name: text}, the same bytes for the same texts."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            info = zipfile.ZipInfo(name, ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text)
    return buffer.getvalue()


def downloads(recipe, gallery_conf, target_dir, page=None):
    """{suffix: content} of a recipe's downloads: ``.py``, ``.ipynb`` and ``.zip``; the
    notebook's cells carry the outputs that ``page``, the recipe's generated page, shows."""
    script = standalone.script(recipe.read_text(encoding="utf-8"))
    outputs = None
    if page is not None:
        code_lines = upstream.gallery_code_lines(recipe)
        outputs = recipe_outputs.cell_outputs(page.read_text(encoding="utf-8"), code_lines)
    notebook = upstream.gallery_notebook(recipe, gallery_conf, target_dir, outputs)
    notebook["cells"] = standalone.notebook_cells(notebook["cells"])
    notebook_text = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    files = {f"{recipe.stem}.py": script, f"{recipe.stem}.ipynb": notebook_text}
    return {".py": script, ".ipynb": notebook_text, ".zip": zipped(files)}


def _key(recipe, page):
    """What a recipe's downloads are made from, hashed."""
    import sphinx_gallery

    sources = [
        recipe,
        page,  # the outputs of its run
        PROJECT.root / "conf.py",  # sphinx-gallery's settings
        *sorted(standalone.KIT.glob("*.py")),
        Path(__file__),
        Path(recipe_outputs.__file__),
        Path(graph_figures.__file__),
        Path(upstream.__file__),
    ]
    digest = hashlib.sha256(sphinx_gallery.__version__.encode())
    for path in sources:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def point_downloads_here(app, doctree):
    env = app.env
    docname = env.docname
    recipe = next((p for p in PROJECT.recipes() if PROJECT.recipe_docname(p) == docname), None)
    if recipe is None:
        return
    page_folder = env.doc2path(docname).parent
    paths = {s: Path(app.config.recipe_download_dir, f"{docname}{s}") for s in (".py", ".ipynb", ".zip")}
    # the other language's build made the same files from the same sources: made again only
    # when one of them changed (the recipe, the kit, this code, sphinx-gallery's converter)
    page = env.doc2path(docname)
    stamp, key = Path(app.config.recipe_download_dir, f"{docname}.key"), _key(recipe, page)
    if not (all(p.is_file() for p in paths.values()) and stamp.is_file() and stamp.read_text() == key):
        try:
            made = downloads(recipe, app.config.sphinx_gallery_conf, page_folder, page)
        except recipe_outputs.UnplacedOutput as err:
            # no stamp: the next build makes them again, and warns again
            logger.warning("its notebook download has no outputs: %s", err, location=docname)
            made, key = downloads(recipe, app.config.sphinx_gallery_conf, page_folder), ""
        for suffix, content in made.items():
            write_if_changed(paths[suffix], content)
        write_if_changed(stamp, key)
    for container in doctree.findall(nodes.container):
        for ref in container.findall(addnodes.download_reference):
            target = Path(ref["reftarget"])
            if target.stem == recipe.stem and target.suffix in paths:
                # relative to the page's folder (a target starting with "/" is read from the source folder)
                ref["reftarget"] = os.path.relpath(paths[target.suffix].resolve(), page_folder)


def setup(app):
    app.add_config_value("recipe_download_dir", "", "env", types=(str,))
    # before Sphinx collects download files from the doctree, and before first_screen copies the links
    app.connect("doctree-read", point_downloads_here, priority=400)
    return {"version": "1", "env_version": 1, "parallel_read_safe": True, "parallel_write_safe": True}
