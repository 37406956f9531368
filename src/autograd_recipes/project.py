"""The project a command works on, and the facts about it that everything reads.

The machinery is installed once (``pip install -e .``), while a build or a check runs on
a project: this checkout, or a copy of it (the tests and ``nox -s bench`` build copies).
So the project is found from the working directory, which every command has as the
project's root or a folder of it (nox runs there; the build's child processes inherit
it; the notebooks' kernels and the claims runner run in a folder under build/run/,
``scratch``), never from where this package's files are.

``PROJECT`` is read once from ``conf.py``: the languages and which is the source, where
the recipes are and what makes a file a recipe, the gallery's folder, the notebooks. The
build, the extensions, the catalog check, bench, lighthouse, the torch matrix and the
tests read these facts here, so each is written once, in conf.py.

Nothing is looked up when this module is imported: the root is found, and conf.py read, the
first time a fact is asked for. So every module imports anywhere (a recipe's download, a
tool run outside a checkout), and only a command that needs the project says it is missing.
"""

import functools
import importlib.metadata
import importlib.util
import runpy
import tempfile
from functools import cached_property
from pathlib import Path

# sphinx-gallery's names for the file its gallery index is made from, in the order it looks
GALLERY_HEADERS = ("GALLERY_HEADER.rst", "GALLERY_HEADER.txt", "README.rst", "README.txt")
NOTEBOOK_FORMAT = "file_format: mystnb"  # the front matter of a page of docs/ that myst-nb executes


class NotAProject(SystemExit):
    pass


def find_root(start=None):
    """The working directory (or ``start``) or the nearest folder above it holding ``conf.py``."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "conf.py").is_file():
            return folder
    raise NotAProject(f"no conf.py in {here} or above it: run this from the project's root folder")


class Project:
    """The project at ``root``, or, by default, the one the working directory is in (found
    when first needed)."""

    def __init__(self, root=None):
        self._root = root

    @cached_property
    def root(self):
        return Path(self._root).resolve() if self._root is not None else find_root()

    @cached_property
    def config(self):
        """conf.py's names, as Sphinx reads them (it imports nothing but the standard library)."""
        return runpy.run_path(str(self.root / "conf.py"))

    @property
    def languages(self):
        """The site's language codes, the source first (conf.py's ``site_languages``)."""
        return tuple(self.config["site_languages"])

    @property
    def source_language(self):
        return self.languages[0]

    @property
    def translations(self):
        return self.languages[1:]

    @property
    def docs(self):
        return self.root / "docs"

    @property
    def recipe_prefix(self):
        """What starts a recipe's file name (conf.py's ``RECIPE_PREFIX``, sphinx-gallery's pattern)."""
        return self.config["RECIPE_PREFIX"]

    @cached_property
    def recipes_dir(self):
        """The recipes' folder (sphinx-gallery's ``examples_dirs``, relative to docs/)."""
        return (self.docs / self.config["sphinx_gallery_conf"]["examples_dirs"]).resolve()

    @property
    def gallery_dir(self):
        """Where the gallery's pages go, relative to docs/ (``gallery_dirs``): also their docnames' folder."""
        dirs = self.config["sphinx_gallery_conf"]["gallery_dirs"]
        return dirs if isinstance(dirs, str) else dirs[0]

    def sections(self, recipes_dir=None):
        """The gallery's sections, in its order: the recipes' folder, then each subfolder that
        has a header file (sphinx-gallery's subsections), by name."""
        return list(self._listing(recipes_dir)[0])

    def recipes(self, recipes_dir=None):
        """The recipes' scripts, in the gallery's order (section by section, by file name)."""
        return list(self._listing(recipes_dir)[1])

    def _listing(self, recipes_dir=None):
        """(sections, recipes, {stem: docname}) of a recipes' folder. A build asks hundreds of times, so the
        listing is kept and made again when the folder or one of its subfolders changed
        (a file added, removed or renamed changes its folder's mtime)."""
        folder = Path(recipes_dir or self.recipes_dir)
        kept = self.__dict__.setdefault("_listings", {}).get(folder)

        def stamp(subfolders):
            return tuple(p.stat().st_mtime_ns if p.is_dir() else None for p in (folder, *subfolders))

        if kept is not None and stamp(kept[0]) == kept[1]:
            return kept[2]
        subfolders = sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
        sections = [folder, *(p for p in subfolders if self.gallery_header(p))]
        recipes = [r for s in sections for r in sorted(s.glob(f"{self.recipe_prefix}*.py"))]
        pages = {r.stem: self.recipe_docname(r, folder) for r in recipes}
        self._listings[folder] = (subfolders, stamp(subfolders), (sections, recipes, pages))
        return sections, recipes, pages

    def recipe_docname(self, recipe, recipes_dir=None):
        """The page's docname of a recipe's script: ``recipes/plot_01_x``, ``recipes/field/plot_08_y``."""
        relative = Path(recipe).relative_to(Path(recipes_dir or self.recipes_dir)).with_suffix("")
        return f"{self.gallery_dir}/{relative.as_posix()}"

    def recipe_named(self, name, recipes_dir=None):
        """The script of the recipe file called ``name`` (sphinx-gallery names a recipe by its
        file name alone), in whichever section it is."""
        return next(p for p in self.recipes(recipes_dir) if p.name == name)

    def gallery_header(self, recipes_dir=None):
        """The file sphinx-gallery makes the gallery's index page from (the first it finds), or None."""
        folder = Path(recipes_dir or self.recipes_dir)
        return next((folder / n for n in GALLERY_HEADERS if (folder / n).is_file()), None)

    def recipe_page(self, stem):
        """The docname of the recipe whose script is ``<stem>.py`` (the matrix names recipes so)."""
        return self._listing()[2][stem]

    def recipe_docnames(self):
        return [self.recipe_docname(p) for p in self.recipes()]

    def notebooks(self, docs_dir=None):
        """The pages of docs/ that myst-nb executes."""
        return sorted(
            p
            for p in Path(docs_dir or self.docs).glob("*.md")
            if NOTEBOOK_FORMAT in p.read_text(encoding="utf-8")[:300]
        )

    @property
    def build_dir(self):
        """build/: everything a build writes, and nothing of the checkout's own."""
        return self.root / "build"

    def scratch(self, prefix):
        """A new empty folder under build/run/, removed when the ``with`` block ends: the
        working directory of code the build runs (notebooks, claims), so that a relative
        path it writes to lands there and not in the checkout. Under the project, not in
        the system's temporary folder, so the code still finds the project (find_root)."""
        folder = self.build_dir / "run"
        folder.mkdir(parents=True, exist_ok=True)
        return tempfile.TemporaryDirectory(prefix=prefix, dir=folder)

    def catalogs(self, lang):
        """locales/<lang>/LC_MESSAGES."""
        return self.root / "locales" / lang / "LC_MESSAGES"

    def named(self, path):
        """``path`` as a message names it: relative to the root where it lies under it (as a
        contributor finds it from the checkout), else as given."""
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except (ValueError, NotAProject):  # outside the project, or no project at all
            return str(path)


# The variables that cross a process boundary (besides SOURCE_DATE_EPOCH and Jupyter's own):
# the file where the build's child notes what it is running (breadcrumb), and the log where
# ``nox -s bench`` and the tests read what a build ran, in order ("recipe <file>" from
# recipe_guard, "notebook <file>" from notebook_prerun)
BREADCRUMB_VARIABLE = "AUTOGRAD_RECIPES_BREADCRUMB"
EXECUTION_LOG_VARIABLE = "AUTOGRAD_RECIPES_EXECUTION_LOG"


@functools.cache  # asked for by every page's claims and versions line; pip changes it between runs
def torch_version():
    """The installed torch's version as its distribution gives it (what ``pip install
    torch==`` names: ``2.13.0+cpu`` from PyTorch's CPU index, ``2.13.0`` from PyPI's CUDA
    build, whose ``torch.__version__`` reads ``2.13.0+cu130``), read without importing
    torch. Every label of the torch a page was checked with is this one."""
    return importlib.metadata.version("torch")


def source_file(module):
    """The file of one of this package's modules, found without importing it (torch_state
    imports torch, which a no-change rebuild should not pay for)."""
    return Path(importlib.util.find_spec(module).origin)


PROJECT = Project()
PACKAGE = Path(__file__).resolve().parent  # this package's own files (its tracebacks are not a page's)


def __getattr__(name):
    """``ROOT``: the project's root, found when first asked for (a module-level constant
    would look for it when this module is imported)."""
    if name == "ROOT":
        return PROJECT.root
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
