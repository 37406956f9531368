"""Nothing from a source that is gone stays published.

Sphinx never deletes an output page, and sphinx-gallery never deletes what it generated
for an example: a recipe deleted from recipes/ would keep its page, its ``_sources``
copy and its downloads, and so its place in the sitemap and the offline copy. So before
sphinx-gallery runs (``config-inited``), the files it generated for recipes that no
longer exist are removed from the gallery folder; and when the build has finished, each
output page, source copy, download and image of the language's tree that no document of
this build has is removed. Each removal is printed, naming the file.
"""

import sys
from pathlib import Path

from autograd_recipes import upstream
from autograd_recipes.project import PROJECT

# pages the HTML builder writes without a document
BUILDER_PAGES = {"search", "genindex"}


def _removed(path, why):
    path.unlink()
    print(f"autograd_recipes: removed {path}: {why}", file=sys.stderr)


def generated_leftovers(gallery, recipes, prefix):
    """The files of a generated gallery folder made from recipes that no longer exist."""
    stems = {p.stem for p in recipes}
    return sorted(
        path
        for folder in upstream.gallery_section_folders(gallery)
        if folder.is_dir()
        for path in folder.iterdir()
        if path.is_file() and (stem := upstream.gallery_file_stem(path.name, prefix)) and stem not in stems
    )


def remove_generated_leftovers(app, config):
    gallery = Path(app.srcdir) / PROJECT.gallery_dir
    recipes_dir = PROJECT.recipes_dir.relative_to(PROJECT.root).as_posix()
    for path in generated_leftovers(gallery, PROJECT.recipes(), PROJECT.recipe_prefix):
        stem = upstream.gallery_file_stem(path.name, PROJECT.recipe_prefix)
        _removed(path, f"generated from a {recipes_dir}/ script {stem}.py, which is gone")


def output_leftovers(outdir, docnames, suffixes, downloads, images):
    """Files of an HTML output tree that no document of this build made: pages, source
    copies, downloads and images."""
    outdir = Path(outdir)
    docnames = set(docnames) | BUILDER_PAGES
    found = []
    for page in outdir.rglob("*.html"):
        rel = page.relative_to(outdir)
        if not rel.parts[0].startswith("_") and rel.with_suffix("").as_posix() not in docnames:
            found.append(page)
    sources = outdir / upstream.SPHINX_SOURCES_FOLDER
    for copy in sources.rglob("*.txt") if sources.is_dir() else ():
        name = copy.relative_to(sources).as_posix().removesuffix(".txt")
        doc = next((name.removesuffix(s) for s in suffixes if name.endswith(s)), name)
        if doc not in docnames:
            found.append(copy)
    for folder, kept in (
        (upstream.SPHINX_DOWNLOADS_FOLDER, downloads),
        (upstream.SPHINX_IMAGES_FOLDER, images),
    ):
        folder = outdir / folder
        for path in folder.rglob("*") if folder.is_dir() else ():
            if path.is_file() and path.relative_to(folder).as_posix() not in kept:
                found.append(path)
    return sorted(found)


def remove_output_leftovers(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    env = app.env
    # (Sphinx 8 keeps these as paths, not strings)
    downloads = {Path(dest).as_posix() for _docs, dest in env.dlfiles.values()}
    images = {Path(name).as_posix() for _docs, name in env.images.values()}
    for path in output_leftovers(
        app.outdir, env.all_docs, tuple(app.config.source_suffix), downloads, images
    ):
        _removed(path, "no document of this build made it")
    for folder in sorted(Path(app.outdir).rglob("*"), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def setup(app):
    app.connect("config-inited", remove_generated_leftovers)
    app.connect("build-finished", remove_output_leftovers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
