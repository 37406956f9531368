"""Run every recipe and notebook again when what they run on changes.

sphinx-gallery skips a recipe whose source text is unchanged, and jupyter-cache
serves a notebook whose code cells are unchanged, whatever torch is installed:
after an upgrade, a build would publish the old torch's outputs as the new
one's. The execution environment's key (the versions of torch, numpy and Python,
the platform, the code of our run guards and of the kit the recipes and
notebooks import) is therefore part of every execution cache: notebooks use a
jupyter-cache folder per key, recipes lose their sphinx-gallery md5 files when
the key differs from the one their outputs were made with, and Sphinx re-reads
every page (``execution_environment`` is an "env" config value). A notebook
whose execution failed is read again on the next build, so a failure cannot
pass the second time.
A module of the checkout that a recipe imports is recipe_imports' part of the key.
"""

import hashlib
import platform
import shutil
import sqlite3
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from sphinx.util import logging

from autograd_recipes import upstream
from autograd_recipes.project import PROJECT, source_file

logger = logging.getLogger(__name__)
DISTRIBUTIONS = ("torch", "numpy")  # what the recipes and notebooks import
GUARDS = (
    "autograd_recipes.execution.recipe_guard",
    "autograd_recipes.execution.torch_state",
)  # code around every recipe
KIT = ("autograd_recipes.kit.expect", "autograd_recipes.kit.graph")  # what every recipe imports
STAMP = ".execution-environment"  # in the generated gallery folder: the key of its outputs


def _version(name):
    try:
        return version(name)
    except PackageNotFoundError:
        return "absent"


def environment():
    """What the executed outputs depend on besides their own source."""
    described = {name: _version(name) for name in DISTRIBUTIONS}
    described.update(python=sys.version.split()[0], platform=platform.platform())
    for module in GUARDS + KIT:
        path = source_file(module)
        described[module] = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    return described


def environment_key():
    text = "\n".join(f"{k}={v}" for k, v in sorted(environment().items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _key_the_caches(app, config):
    key = environment_key()
    config.execution_environment = key
    if config.nb_execution_cache_path:
        config.nb_execution_cache_path = str(Path(config.nb_execution_cache_path) / key)


def _damaged_database(database):
    """None, or what SQLite says is wrong with ``database`` (its quick check, read-only)."""
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
            rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as err:  # "file is not a database", "... malformed"
        return str(err)
    return None if rows == [("ok",)] else "; ".join(str(r[0]) for r in rows[:3])


def _remake_a_damaged_notebook_cache(app, config):
    """A jupyter-cache database that a killed write or a bad disk damaged would stop every
    build (sqlite3's "database disk image is malformed", naming no file): it is a cache,
    so it is removed, named, and the notebooks run again into a new one."""
    folder = Path(config.nb_execution_cache_path or "")
    database = folder / "global.db"
    if not config.nb_execution_cache_path or not database.is_file():
        return
    problem = _damaged_database(database)
    if problem is not None:
        remove_notebook_cache(folder, "global.db", f"jupyter-cache's database is damaged ({problem})")


def remove_notebook_cache(folder, name, why):
    """Remove a notebook cache folder, saying which of its files (``name``) was wrong and why."""
    shutil.rmtree(folder)
    shown = folder.relative_to(PROJECT.root) if folder.is_relative_to(PROJECT.root) else folder
    # printed, not logged: Sphinx runs quietly (-q), and this is news, not a failure
    print(
        f"autograd_recipes: {shown.as_posix()}/{name}: {why}: removed {shown.as_posix()}/; the notebooks run again",
        file=sys.stderr,
    )


def _rerun_recipes_made_elsewhere(app):
    gallery = config_gallery_dir(app)
    stamp = gallery / STAMP
    key = app.config.execution_environment
    old = stamp.read_text(encoding="utf-8").strip() if stamp.is_file() else None
    if old == key:
        return
    stale = upstream.gallery_md5_files(gallery)
    if old is not None and stale:
        logger.info(
            "execution environment changed (%s): running %d recipes again",
            ", ".join(f"{k} {v}" for k, v in environment().items() if k in DISTRIBUTIONS),
            len(stale),
        )
    for md5 in stale:
        md5.unlink()
    gallery.mkdir(parents=True, exist_ok=True)
    stamp.write_text(key + "\n", encoding="utf-8")


def config_gallery_dir(app):
    return Path(app.srcdir) / PROJECT.gallery_dir


def _failed_notebooks_again(app, env, added, changed, removed):
    """A notebook that failed is read (run) again: its source has not changed, so Sphinx
    would otherwise keep the failed page and a second build would pass."""
    return [
        name
        for name in env.all_docs
        if (upstream.notebook_exec_data(env, name) or {}).get("succeeded") is False
    ]


def setup(app):
    app.add_config_value("execution_environment", "", "env", types=(str,))
    app.connect("config-inited", _key_the_caches)
    app.connect("config-inited", _remake_a_damaged_notebook_cache, priority=600)  # once keyed
    app.connect("builder-inited", _rerun_recipes_made_elsewhere, priority=400)  # before sphinx-gallery
    app.connect("env-get-outdated", _failed_notebooks_again)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
