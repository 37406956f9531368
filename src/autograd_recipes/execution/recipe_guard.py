"""Run each recipe under the same conditions, with a time limit, and leave nothing behind.

sphinx-gallery calls ``prepare_recipe`` (listed in ``reset_modules``) before and
after every recipe, in the recipe's own process (recipe_runs). Before: torch is imported (so
the first recipe's run time is not the cost of importing torch), the seed is fixed, and the
breadcrumb says which recipe runs. A recipe that
runs longer than ``recipe_timeout`` seconds (conf.py's, or its own
``# sphinx_gallery_recipe_timeout = N`` comment's, which the page does not show) is
stopped with a ``TimeoutError`` naming it and the limit's source; one that does not stop (a native call that ignores the alarm) is
ended (its process), with every thread's traceback, by a watchdog ``WATCHDOG_GRACE`` seconds
later. After: a recipe that changed global state it can name (torch's settings, the warnings
filters, the environment, global module hooks, patched torch or builtins: torch_state) or
left a thread running or wrote a file into its folder (which sphinx-gallery makes its
working directory: the checkout's recipes/) fails the build by name: its process ends with
it, so nothing reaches the recipes after it (the guard names what it can; what it cannot
name ends all the same), the files it added are removed, and it also loses its
sphinx-gallery cache entry, so the next build runs it again instead of passing.
With ``AUTOGRAD_RECIPES_EXECUTION_LOG`` (project.EXECUTION_LOG_VARIABLE) set, each run is appended to that file (for
``nox -s bench``).
"""

import faulthandler
import os
import signal
import threading
import time
from pathlib import Path

from sphinx.util import logging

from autograd_recipes import upstream
from autograd_recipes.execution import breadcrumb
from autograd_recipes.project import EXECUTION_LOG_VARIABLE, PROJECT

logger = logging.getLogger(__name__)
WATCHDOG_GRACE = 10  # seconds after recipe_timeout before the process is ended
THREAD_GRACE = 2  # seconds a recipe's thread may take to finish after the recipe
_settings = {"timeout": 60}
_run = {}  # what 'before' saw, for 'after'


def _on_timeout(fname, limit, source):
    def handler(signum, frame):
        raise TimeoutError(
            f"recipe {fname} still running after {limit} s (recipe_timeout in {source}); stopped"
        )

    return handler


def _time_limit(text, source, warn=True):
    """(seconds, where they are set): the recipe's own limit where its source sets one; a bad
    value is named (``warn``) and conf.py's is used."""
    own = upstream.gallery_file_config(text).get("recipe_timeout")
    if own is None:
        return int(_settings["timeout"]), "conf.py"
    if type(own) is not int or own < 1:
        if warn:
            line = next(n for n, t in enumerate(text.splitlines(), 1) if "sphinx_gallery_recipe_timeout" in t)
            logger.warning(
                "sphinx_gallery_recipe_timeout must be a whole number of seconds, not %r; conf.py's is used",
                own,
                location=f"{source.resolve()}:{line}",
            )
        return int(_settings["timeout"]), "conf.py"
    return own, f"{source.name} itself"


def time_limit(source):
    """``_time_limit`` of the recipe at ``source``, without a word on a bad value (its run,
    in its own process, names it)."""
    return _time_limit(source.read_text(encoding="utf-8"), source, warn=False)


def _source(gallery_conf, fname):
    """The recipe's script: sphinx-gallery names it by file name alone, in any section."""
    return PROJECT.recipe_named(fname, Path(gallery_conf["src_dir"]) / gallery_conf["examples_dirs"])


def _recipe_path(gallery_conf, fname):
    source = _source(gallery_conf, fname)
    return os.path.relpath(source.resolve(), Path(gallery_conf["src_dir"]).resolve().parent)


def prepare_recipe(gallery_conf, fname, when):
    if fname is None:  # called once on entering the gallery directory
        return
    if when == "before":
        _before(gallery_conf, fname)
    else:
        _after(gallery_conf, fname)


def _before(gallery_conf, fname):
    if os.environ.get(EXECUTION_LOG_VARIABLE):  # nox -s bench counts executions
        with open(os.environ[EXECUTION_LOG_VARIABLE], "a") as log:
            log.write(f"recipe {Path(fname).name}\n")
    import torch

    from autograd_recipes import hidden_lines
    from autograd_recipes.execution import checkout_writes, torch_state

    source = _source(gallery_conf, fname)
    text = source.read_text(encoding="utf-8")
    limit, limit_source = _time_limit(text, source)
    problem = hidden_lines.recipe_problem(text)
    if problem:  # named here: sphinx-gallery's own check says neither file nor line
        number, what = problem
        logger.warning("hidden lines: %s", what, location=f"{source.resolve()}:{number}")
    torch.manual_seed(0)
    _run.update(
        state=torch_state.snapshot(),
        threads=set(threading.enumerate()),
        files=checkout_writes.snapshot(source.parent),
    )
    breadcrumb.enter("recipe", _recipe_path(gallery_conf, fname))
    signal.signal(signal.SIGALRM, _on_timeout(Path(fname).name, limit, limit_source))
    signal.alarm(limit)
    faulthandler.dump_traceback_later(limit + WATCHDOG_GRACE, exit=True)


def _after(gallery_conf, fname):
    from autograd_recipes.execution import checkout_writes, torch_state

    signal.alarm(0)
    faulthandler.cancel_dump_traceback_later()
    problems = [
        f"it changed global state ({'; '.join(changed)}); it was put back"
        for changed in [torch_state.check_and_restore(_run["state"])]
        if changed
    ]
    threads = _threads_left(_run["threads"])
    if threads:
        problems.append(
            f"it left {len(threads)} thread(s) running ({', '.join(threads)}): "
            "join them before the recipe ends"
        )
    folder = _source(gallery_conf, fname).parent
    after = checkout_writes.snapshot(folder)
    written = checkout_writes.changes(_run["files"], after)
    for name in after.keys() - _run["files"].keys():  # the checkout stays clean
        (folder / name).unlink()
    if written:  # sphinx-gallery runs a recipe in its own folder, the checkout's
        problems.append(
            f"it wrote into {Path(_recipe_path(gallery_conf, fname)).parent}/, where sphinx-gallery runs it: "
            f"{'; '.join(w.replace(' (new)', ' (new; removed)') for w in written)}. "
            "Write under a temporary folder (tempfile.mkdtemp()) instead"
        )
    path = _recipe_path(gallery_conf, fname)
    for problem in problems:
        # the path goes in the message: Sphinx would read a location without a line as a docname
        logger.warning(
            "%s: a recipe must leave the process and the checkout as it found them: %s",
            path,
            problem,
            type="recipe_guard",
            subtype="leftover",
        )
    if problems:
        upstream.gallery_md5_file(gallery_conf, fname).unlink(missing_ok=True)
    breadcrumb.leave()


def _threads_left(before):
    deadline = time.monotonic() + THREAD_GRACE
    left = []
    for thread in threading.enumerate():
        if thread in before:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            left.append(f"{thread.name}{' (daemon)' if thread.daemon else ''}")
    return left


def _check_recipe_names(app, config):
    # Spaces in the checkout's path are fine (conf.py silences sphinx-gallery's check,
    # which looks at whole paths); spaces in a recipe's own name would break its links.
    recipes = Path(app.srcdir) / config.sphinx_gallery_conf["examples_dirs"]
    for recipe in sorted(recipes.glob("**/*.py")):
        if " " in recipe.name:
            logger.warning("%s: recipe file names must not contain spaces", recipe)


def _remember_timeout(app, config):
    _settings["timeout"] = config.recipe_timeout


def setup(app):
    app.add_config_value("recipe_timeout", 60, "env", types=(int,))
    app.connect("config-inited", _remember_timeout)
    app.connect("config-inited", _check_recipe_names)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
