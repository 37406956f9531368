"""The tiny site (tests/tinysite): a fixture project the plumbing tests build copies of.

A copy is the tiny site's own pages, recipes, claims, matrix records and catalogs, plus
the real site's files that a project holds besides the package: conf.py, the root pages
and the catalog of interface strings. So the tests exercise the configuration the site is built
with, on content of a few lines.
"""

import shutil
from pathlib import Path

from autograd_recipes.project import PROJECT

TINY = Path(__file__).resolve().parent / "tinysite"
FROM_THE_SITE = (
    "conf.py",
    "docs/_root",
    "locales/ko/LC_MESSAGES/sphinx.po",  # the package's interface strings, not a page's
)
RECIPES = ("recipes/plot_01_leaf_update.py", "recipes/plot_02_clone_first.py")
NOTEBOOK = "docs/tiny_notebook.md"


def tiny_project(dest):
    """A fresh copy of the tiny site at ``dest`` (created), ready to build."""
    dest = Path(dest)
    shutil.copytree(TINY, dest, ignore=shutil.ignore_patterns("*.mo", "__pycache__"))
    for name in FROM_THE_SITE:
        source, target = PROJECT.root / name, dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)
    return dest
