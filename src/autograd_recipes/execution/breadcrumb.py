"""What the build is running right now, so that a process that dies can be named.

``src/autograd_recipes/publish/build.py`` sets ``AUTOGRAD_RECIPES_BREADCRUMB`` to a file for each
Sphinx process it starts. Whatever runs the site's code (a recipe, a claim, a
notebook and its cells) calls ``enter`` before and ``leave`` after; the kernel
of a notebook inherits the variable. If the process or a kernel dies mid-run
(``os._exit``, a crash, the watchdog), the file still says what was running,
and build.py names it. Without the variable (a plain ``sphinx-build``) these
calls do nothing.
"""

import json
import os
from pathlib import Path

from autograd_recipes.project import BREADCRUMB_VARIABLE

ENV = BREADCRUMB_VARIABLE


def _path():
    value = os.environ.get(ENV)
    return Path(value) if value else None


def enter(what, file, line=None, detail=None):
    """Record that ``what`` (e.g. "recipe") from ``file`` (relative to the project) starts."""
    path = _path()
    if path is None:
        return
    crumb = {"what": what, "file": str(file), "line": line, "detail": detail}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(crumb), encoding="utf-8")
    os.replace(tmp, path)  # never half-written


def leave():
    path = _path()
    if path is not None:
        path.unlink(missing_ok=True)


def read(path):
    """The last crumb left in ``path``, or None."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def describe(crumb):
    """'recipe recipes/plot_01.py', 'notebook cell docs/guide.md:40 (x = 1)', ..."""
    where = crumb["file"] + (f":{crumb['line']}" if crumb.get("line") else "")
    detail = f" ({crumb['detail']})" if crumb.get("detail") else ""
    return f"{crumb['what']} {where}{detail}"
