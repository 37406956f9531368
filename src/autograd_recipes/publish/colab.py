"""Every recipe and notebook page opens in Google Colab: its executed notebook, from a branch of the repository.

A page's "Open in Colab" link opens
``https://colab.research.google.com/github/<owner>/<name>/blob/<branch>/<path>``: conf.py's
``site_repository`` (the Pages workflow sets it to the repository it runs in, so a fork links to
itself), conf.py's ``notebooks_branch``, and the page's notebook there. That notebook is the
page's own download: a notebook page's, with the outputs of its cached run
(pages/notebook_download.py); a recipe's, with the outputs its page shows
(pages/standalone_downloads.py, pages/recipe_outputs.py). Colab opens it with those outputs.

``branch_files`` is the one list of what the branch holds (each page's path there -> the file
the build made), read by the links here and by ``python -m autograd_recipes.publish.colab
FOLDER``, which copies those files into FOLDER for the Pages workflow to push to the branch
(``--branch`` prints the branch's name): a link and the pushed files cannot disagree.

The link ends the page: under its lede it would push a Korean recipe's first case below a
phone's first screen. Beside the link, the page says which torch it was checked with (the installed torch of this
build, project.torch_version) and that Colab's may be another release, with a link to the versions page.
"""

import shutil
import sys
from pathlib import Path
from urllib.parse import quote

from docutils import nodes
from sphinx.locale import _  # Korean for these strings: locales/ko/LC_MESSAGES/sphinx.po

from autograd_recipes.matrix.matrix_html import VERSIONS_DOC
from autograd_recipes.project import PROJECT, torch_version

COLAB = "https://colab.research.google.com/github"
LINK_CLASS = "colab-link"
VERSIONS_SLOT = "\x00versions\x00"  # where the versions page's link goes in the sentence


def branch_files(project=PROJECT):
    """{docname: (its notebook's path on the branch, the file the build made)}, for every
    recipe and notebook page of ``project``, in the gallery's order, then the notebooks'."""
    config = project.config
    pages = [(d, config["recipe_download_dir"]) for d in project.recipe_docnames()]
    pages += [
        (page.relative_to(project.docs).with_suffix("").as_posix(), config["notebook_download_dir"])
        for page in project.notebooks()
    ]
    return {docname: (f"{docname}.ipynb", Path(folder, f"{docname}.ipynb")) for docname, folder in pages}


def colab_url(config, path):
    return f"{COLAB}/{config.site_repository}/blob/{quote(config.notebooks_branch)}/{quote(path)}"


def _versions_link(app, docname):
    """A link to the versions page, its title in the page's language."""
    uri = app.builder.get_relative_uri(docname, VERSIONS_DOC)
    title = app.env.titles[VERSIONS_DOC].astext()
    return nodes.reference("", title, refuri=uri, internal=True)


def add_colab_link(app, doctree, docname):
    """At the end of a page that has a notebook on the branch. When the page is written, not
    read: the repository and the branch change what is written, and a rebuild reads no page again."""
    found = branch_files().get(docname)
    section = next(iter(doctree.findall(nodes.section)), None)
    if app.builder.format != "html" or found is None or section is None or not found[1].is_file():
        return  # notebook_download warns when a notebook page has no executed notebook
    para = nodes.paragraph(classes=[LINK_CLASS])
    para += nodes.reference("", _("Open in Colab"), refuri=colab_url(app.config, found[0]))
    said = _("Checked with torch %(torch)s; Colab's torch may be another release (see %(versions)s).") % {
        "torch": torch_version(),
        "versions": VERSIONS_SLOT,
    }
    before, _slot, after = said.partition(VERSIONS_SLOT)
    para += nodes.Text(" · " + before)
    if VERSIONS_DOC in app.env.all_docs:
        para += _versions_link(app, docname)
    para += nodes.Text(after)
    section += para  # the page's end: on a phone, the first screen holds the lede and the first case


def copy_notebooks(folder, project=PROJECT):
    """Copy each page's notebook to its path on the branch, under ``folder`` (emptied first);
    return the paths, or raise FileNotFoundError naming the first notebook the build did not make."""
    folder = Path(folder)
    shutil.rmtree(folder, ignore_errors=True)
    copied = []
    for docname, (path, built) in branch_files(project).items():
        if not built.is_file():
            raise FileNotFoundError(
                f"page {docname}: its notebook {project.named(built)} is missing (build the site first)"
            )
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, folder / path)
        copied.append(path)
    return copied


def main(argv=None):
    """Copy the built notebooks into a folder, at their paths on the notebooks branch."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("folder", nargs="?", type=Path, help="where to copy them (emptied first)")
    parser.add_argument("--branch", action="store_true", help="print conf.py's notebooks_branch and stop")
    args = parser.parse_args(argv)
    if args.branch:
        print(PROJECT.config["notebooks_branch"])
        return 0
    if args.folder is None:
        parser.error("name the folder to copy the notebooks into")
    try:
        copied = copy_notebooks(args.folder)
    except FileNotFoundError as err:
        print(f"colab: {err}", file=sys.stderr)
        return 1
    print(f"colab: {len(copied)} notebooks in {args.folder}")
    return 0


def setup(app):
    app.add_config_value("notebooks_branch", "notebooks", "html", types=(str,))
    app.connect("doctree-resolved", add_colab_link)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    sys.exit(main())
