"""Run the notebooks beside the gallery, so a cold build waits for the longest page only.

myst-nb executes a notebook page when Sphinx reads it, after sphinx-gallery has run
every recipe: on a cold build the gallery, the claims and the notebooks ran one after
another, though each runs in a process of its own (the notebooks in their kernels).
This extension starts, when the builder is ready and before the gallery runs, every
notebook page that jupyter-cache has no result for, each in a thread of its own
that waits on its kernel, and stores each successful run in jupyter-cache the way
myst-nb does; when Sphinx comes to read that page (``source-read``), it waits for the
run, and myst-nb finds the result in the cache.

The notebook is read as myst-nb's parser reads it (its reader, the kernel alias, the
page's own ``mystnb`` settings), so the cache key is the one myst-nb looks up. A run
that fails is not stored: myst-nb then runs the page again while reading it, and
reports the failure as it always does (the failing page runs twice; nothing else
changes). A kernel started here gets a breadcrumb file of its own, so that what it
runs never stands for what the build's own process is running, and a working
directory of its own under build/run/ (PROJECT.scratch), so that a file a cell writes
to a relative path never lands in the checkout.
"""

import os
import re
import sys
import tempfile
import threading
from pathlib import Path

from sphinx.errors import ExtensionError

from autograd_recipes.project import BREADCRUMB_VARIABLE, EXECUTION_LOG_VARIABLE, PROJECT

_RUNS = "autograd_recipes_notebook_runs"  # app attribute: {docname: thread}


def _notebook(app, path):
    """(notebook, reader, its nb_config) as myst-nb's Parser.parse builds them."""
    from myst_nb.core.nb_to_tokens import nb_node_to_dict
    from myst_nb.core.read import create_nb_reader

    text = path.read_text(encoding="utf-8")
    nb_config = app.env.mystnb_config
    reader = create_nb_reader(str(path), app.env.myst_config, nb_config, text)
    notebook = reader.read(text)
    kernel = notebook.metadata.get("kernelspec", {}).get("name")
    if kernel is not None:
        for pattern, alias in nb_config.kernel_rgx_aliases.items():
            if re.fullmatch(pattern, kernel):
                notebook.metadata["kernelspec"]["name"] = alias
                break
    if nb_config.metadata_key in notebook.metadata:
        overrides = nb_node_to_dict(notebook.metadata[nb_config.metadata_key])
        overrides.pop("output_folder", None)
        nb_config = nb_config.copy(**overrides)
    return notebook, reader, nb_config


def _run(cache_path, path, notebook, reader, nb_config, crumb):
    """Execute ``notebook`` as jupyter-cache's single_nb_execution does, with its own
    breadcrumb file, and cache it on success."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.utils import Timer
    from nbclient import NotebookClient

    timeout, allow_errors = nb_config.execution_timeout, nb_config.execution_allow_errors
    if "execution" in notebook.metadata:  # meta_override, as myst-nb asks for it
        timeout = notebook.metadata.execution.get("timeout", timeout)
        allow_errors = notebook.metadata.execution.get("allow_errors", allow_errors)
    env = dict(os.environ)
    if crumb is not None:
        env[BREADCRUMB_VARIABLE] = str(crumb)
    timer = Timer()
    try:
        # the kernel's working directory: a folder of its own under build/, not docs/
        with PROJECT.scratch(f"notebook-{path.stem}-") as folder, timer:
            client = NotebookClient(
                notebook,
                timeout=timeout,
                allow_errors=allow_errors,
                record_timing=False,
                resources={"metadata": {"path": folder}},
            )
            client.execute(env=env)
    except Exception as err:  # noqa: BLE001 - myst-nb runs the page again and reports it
        # said here: a page that runs twice is slower, and one that fails only here (a kernel that
        # did not start) would otherwise leave no trace
        first = (str(err).strip().splitlines() or [""])[0][:300]
        print(
            f"{path.name}: its run beside the gallery failed ({type(err).__name__}: {first}); "
            "myst-nb runs it again",
            file=sys.stderr,
            flush=True,
        )
        return
    finally:
        if crumb is not None:
            crumb.unlink(missing_ok=True)
    cache = get_cache(cache_path)
    record = cache.add_nb_to_project(str(path), read_data=reader.read_fmt)
    cache.cache_notebook_bundle(
        CacheBundleIn(notebook, record.uri, data={"execution_seconds": timer.last_split}),
        check_validity=False,
        overwrite=True,
    )


def start(app):
    """Start a run of every notebook page that jupyter-cache has no result for."""
    runs = {}
    setattr(app, _RUNS, runs)
    # myst-nb runs a page again itself where its run here failed, in a temporary folder
    # (nb_execution_in_temp): from here on this process makes those under build/run/, as
    # PROJECT.scratch does, so that a relative write stays out of the checkout and the page's
    # code still finds the project (the recipes' runner was forked before: recipe_runs)
    folder = PROJECT.build_dir / "run"
    folder.mkdir(parents=True, exist_ok=True)
    tempfile.tempdir = str(folder)
    nb_config = app.env.mystnb_config
    if nb_config.execution_mode != "cache":
        return
    from jupyter_cache import get_cache

    cache = get_cache(nb_config.execution_cache_path)
    crumbs = os.environ.get(BREADCRUMB_VARIABLE)
    for path in PROJECT.notebooks(app.srcdir):
        notebook, reader, page_config = _notebook(app, path)
        try:
            cache.match_cache_notebook(notebook)
            continue  # myst-nb will take it from the cache
        except KeyError:
            pass
        docname = app.env.path2doc(str(path))
        crumb = Path(f"{crumbs}.{docname.replace('/', '.')}") if crumbs else None
        thread = threading.Thread(
            target=_run,
            args=(nb_config.execution_cache_path, path, notebook, reader, page_config, crumb),
            name=f"notebook {docname}",
            daemon=True,
        )
        thread.start()
        runs[docname] = thread
        if os.environ.get(EXECUTION_LOG_VARIABLE):  # nox -s bench and the tests read the order
            with open(os.environ[EXECUTION_LOG_VARIABLE], "a") as log:
                log.write(f"notebook {path.name}\n")


def wait_for_run(app, docname, source):
    """Before myst-nb parses a page, let its run (if one was started) finish."""
    thread = getattr(app, _RUNS, {}).pop(docname, None)
    if thread is not None:
        thread.join()


def wait_for_all(app, exception):
    for thread in getattr(app, _RUNS, {}).values():
        thread.join()


def setup(app):
    if "sphinx_gallery.gen_gallery" in app.extensions:
        raise ExtensionError(
            "autograd_recipes.execution.notebook_prerun must come before sphinx_gallery.gen_gallery "
            "in conf.py's extensions: it starts the notebooks before the gallery runs its recipes"
        )
    app.setup_extension("myst_nb")  # its configuration is made first, at the same event
    app.connect("builder-inited", start)
    app.connect("source-read", wait_for_run, priority=400)  # before the breadcrumb says "notebook"
    app.connect("build-finished", wait_for_all)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
