"""A build changes nothing of the checkout: what it writes goes under build/.

``snapshot(folder)`` records the size and modification time of every file under
``folder``, leaving out what is never the checkout's own: folders whose name starts with
a dot (.git, .nox, virtual environments), bytecode, compiled catalogs (``*.mo``, which
Sphinx writes beside each ``.po``) and ``skip``. ``checkout()`` is that of the project,
also leaving out what the build generates there (build/, the gallery's folder of docs/,
sphinx-gallery's timing page). ``changes(before, after)`` names what was added, changed
or removed. build.py takes one before building and one after, and fails the build
naming every file a recipe, a notebook cell, a claim or an extension wrote into the
checkout (``torch.save("model.pt")``), which would otherwise leave ``git status`` dirty
with rc 0; recipe_guard does the same for each recipe's own folder, by recipe.
"""

import os
from pathlib import Path

from autograd_recipes.project import PROJECT

SKIPPED_DIRS = {"__pycache__", "node_modules"}
SKIPPED_SUFFIXES = (".pyc", ".mo")


def snapshot(folder, skip=()):
    """{path relative to ``folder``: (size, mtime_ns)} of the files under it."""
    folder = Path(folder)
    skipped = {Path(p).resolve() for p in skip}
    files = {}
    for top, dirs, names in os.walk(folder):
        here = Path(top)
        dirs[:] = [
            d
            for d in dirs
            if not d.startswith(".")
            and d not in SKIPPED_DIRS
            and not d.endswith(".egg-info")
            and (here / d).resolve() not in skipped
        ]
        for name in names:
            path = here / name
            if name.endswith(SKIPPED_SUFFIXES) or path.resolve() in skipped:
                continue
            try:
                stat = path.stat()
            except OSError:  # removed while we looked (a build beside this one's tests)
                continue
            files[path.relative_to(folder).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return files


def checkout(project=PROJECT):
    """snapshot() of the project's files, without what the build generates in it."""
    generated = (
        project.build_dir,
        project.docs / project.gallery_dir,
        project.docs / "sg_execution_times.rst",
    )
    return snapshot(project.root, skip=generated)


def changes(before, after):
    """['<path> (new)' | '<path> (changed)' | '<path> (removed)', ...], sorted by path."""
    found = {p: "new" for p in after.keys() - before.keys()}
    found |= {p: "removed" for p in before.keys() - after.keys()}
    found |= {p: "changed" for p in before.keys() & after.keys() if before[p] != after[p]}
    return [f"{p} ({found[p]})" for p in sorted(found)]
