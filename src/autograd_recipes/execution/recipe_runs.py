"""Each recipe runs in a child forked from the build: nothing one recipe does reaches another.

Before any thread is started (``builder-inited``, priority 465: after the extensions that
decide which recipes must run again), the build forks a runner, which imports torch and runs
each recipe whose outputs are not current in a child forked from it (forked), one after
another, while the build starts the notebooks. The child makes the recipe's page with
sphinx-gallery's own ``generate_file_rst`` (the unit its parallel mode runs in worker
processes) with the guards around it (recipe_guard). Whatever the recipe changes (torch's
settings, a ``torch.library`` override, a patched function, a mode left entered, the
warnings filters) or starts (a process) ends with its child, listed or not; the guard only
reports what it can name. A recipe that exits, hangs past its watchdog or crashes ends its
own process, not the build's: it fails the build, named, and the other recipes still run.

Before sphinx-gallery's pass (priority 500, after the notebooks' start), the build waits for
the runner, logs each child's warnings (so ``-W`` counts them, each with its location) and
enters each failure in sphinx-gallery's ``failing_examples`` (its summary fails the build,
naming the recipe). sphinx-gallery's pass then finds every recipe current and runs none in
the build's process: a recipe that failed or that its guard reported gets a checksum for
this build only, removed after the pass, so it runs again next time.
"""

import json
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

from sphinx.util import logging

from autograd_recipes import forked, upstream
from autograd_recipes.execution import breadcrumb, recipe_guard
from autograd_recipes.project import PROJECT

logger = logging.getLogger(__name__)
GRACE = 30  # seconds past a recipe's watchdog before its child is killed from here
TAIL = 15  # lines of what a child that died printed last, in its failure
_for_this_build = []  # checksums written so that sphinx-gallery skips a recipe that must run again


_runs = {}  # the runs under way: the runner's process id, the recipes, their folder


def start_runs(app):
    """Fork the runner, which runs each recipe that must run in a child of its own, one after
    another, while the build goes on (the notebooks start beside it)."""
    conf = app.config.sphinx_gallery_conf
    if not conf.get("plot_gallery"):
        return
    gallery = Path(app.srcdir) / conf["gallery_dirs"]
    pending = [(r, _target(gallery, r)) for r in PROJECT.recipes()]
    pending = [
        (recipe, target) for recipe, target in pending if not upstream.gallery_output_current(recipe, target)
    ]
    if not pending:
        return
    folder = Path(tempfile.mkdtemp(prefix="recipe-runs-"))
    for _recipe, target in pending:
        (target.parent / "images" / "thumb").mkdir(parents=True, exist_ok=True)
    # forked before the notebooks' kernels are started (their client runs threads here)
    pid = forked.start(lambda: _run_each(conf, pending, folder))
    deadline = sum(recipe_guard.time_limit(r)[0] + recipe_guard.WATCHDOG_GRACE + GRACE for r, _ in pending)
    _runs.update(pid=pid, pending=pending, folder=folder, deadline=time.monotonic() + deadline)


def _run_each(conf, pending, folder):
    """The runner: torch imported once, then each recipe in a child forked from it."""
    import torch

    if len(pending) > 1:  # one recipe alone (an edited one) would pay for it once all the same
        # the first optimizer made in a process imports torch._dynamo (about 1 s): made once
        # here, every recipe's child has it already; what a recipe prints does not change
        torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # this process reaps its children itself
    for recipe, target in pending:
        limit = recipe_guard.time_limit(recipe)[0] + recipe_guard.WATCHDOG_GRACE + GRACE
        code = forked.run(lambda recipe=recipe, target=target: _run_one(conf, recipe, target, folder), limit)
        (folder / f"{recipe.stem}.code").write_text(json.dumps(code))


def _run_one(conf, recipe, target, folder):
    """A recipe's child: its page made by sphinx-gallery, its warnings and outcome written."""
    with open(folder / f"{recipe.stem}.stderr", "w", encoding="utf-8") as log:  # what it printed last
        os.dup2(log.fileno(), 2)
    warnings = _capture_warnings()
    result = {"passing": False, "failure": None}
    try:
        out_vars = upstream.gallery_run_example(recipe.name, target.parent, recipe.parent, conf)[3]
        result.update(passing=bool(out_vars.get("passing")), failure=out_vars.get("formatted_exception"))
    except SystemExit as exit_:  # not an Exception: sphinx-gallery lets it by
        path = os.path.relpath(recipe, PROJECT.root)
        result["failure"] = (
            f"{_exit_site(exit_, recipe)}: sys.exit({exit_.code!r}) ended the run of recipe {path}; "
            "a page's code must not exit"
        )
    result["warnings"] = warnings
    (folder / f"{recipe.stem}.json").write_text(json.dumps(result), encoding="utf-8")


def finish_runs(app):
    """Before sphinx-gallery's pass: wait for the runner, log what each recipe's run warned,
    enter the failures, and mark a recipe that must run again as current for this build."""
    if not _runs:
        return
    pid, pending, folder = _runs["pid"], _runs["pending"], _runs["folder"]
    while forked.ended(pid) is None:
        if time.monotonic() > _runs["deadline"]:
            forked.kill(pid)
            break
        time.sleep(0.05)
    _runs.clear()
    conf = app.config.sphinx_gallery_conf
    for recipe, target in pending:
        _take(conf, recipe, target, folder)
    breadcrumb.leave()  # a child's, should one have died inside its recipe
    shutil.rmtree(folder, ignore_errors=True)


def _take(conf, recipe, target, folder):
    printed = folder / f"{recipe.stem}.stderr"
    stderr = printed.read_text(encoding="utf-8", errors="replace") if printed.exists() else ""
    try:
        result = json.loads((folder / f"{recipe.stem}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        try:
            code = json.loads((folder / f"{recipe.stem}.code").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            code = None
        how = (
            "killed at its time limit" if code is None else f"exit {code}" if code >= 0 else f"signal {-code}"
        )
        tail = "\n".join(stderr.strip().splitlines()[-TAIL:])
        path = os.path.relpath(recipe, PROJECT.root)
        failure = f"the process of recipe {path} ended ({how}) while it ran\n{tail}"
        result = {"passing": False, "failure": failure, "warnings": []}
    if stderr.strip():  # as a recipe run in the build's process would have printed it
        print(stderr, end="", file=sys.stderr)
    for level, message, location, kind, subtype in result["warnings"]:
        getattr(logger, level)("%s", message, location=location, type=kind, subtype=subtype)
    if result["failure"]:
        conf["failing_examples"][os.path.normpath(recipe)] = result["failure"]
    if not upstream.gallery_output_current(recipe, target):  # failed, or its guard reported it
        _for_this_build.append(upstream.gallery_mark_current(recipe, target))


def _target(gallery, recipe):
    return gallery / recipe.relative_to(PROJECT.recipes_dir)


def _capture_warnings():
    """In the child: Sphinx's warnings kept as [level, message, location, type, subtype] for
    the build to log, instead of written (the build's ``-W`` counts what it logs itself)."""
    records = []

    class Keep(logging.logging.Handler):
        def emit(self, record):
            location = getattr(record, "location", None)
            if location is not None and not isinstance(location, str):
                location = (
                    logging.get_node_location(location) if hasattr(location, "source") else str(location)
                )
            records.append(
                [
                    record.levelname.lower(),
                    record.getMessage(),
                    location,
                    getattr(record, "type", None),
                    getattr(record, "subtype", None),
                ]
            )

    root = logging.logging.getLogger(logging.NAMESPACE)
    for handler in list(root.handlers):
        if isinstance(handler, logging.WarningStreamHandler):
            root.removeHandler(handler)
    keep = Keep(level=logging.logging.WARNING)
    root.addHandler(keep)
    return records


def _exit_site(exit_, recipe):
    """``recipes/…py:LINE``: the recipe's line that called sys.exit."""
    frames = [f for f in traceback.extract_tb(exit_.__traceback__) if Path(f.filename) == recipe]
    path = os.path.relpath(recipe, PROJECT.root)
    return f"{path}:{frames[-1].lineno}" if frames else path


def _forget_checksums(app):
    """After sphinx-gallery's pass: the checksums written for this build only are removed,
    so the next build runs those recipes again."""
    while _for_this_build:
        _for_this_build.pop().unlink(missing_ok=True)


def setup(app):
    app.connect("builder-inited", start_runs, priority=465)  # before any thread: the notebooks' start
    # after notebook_prerun's start and before sphinx-gallery's pass, both at 500: conf.py lists
    # this extension between them, and listeners of one priority run in the order they were added
    app.connect("builder-inited", finish_runs, priority=500)
    app.connect("builder-inited", _forget_checksums, priority=600)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
