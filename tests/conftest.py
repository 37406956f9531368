"""Shared helpers: the project root, and fresh copies of the project to build."""

import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
RECIPES = sorted((ROOT / "recipes").glob("plot_*.py"))
# conf.py's site_languages: the one list of languages, the source first
LANGUAGES = tuple(runpy.run_path(str(ROOT / "conf.py"))["site_languages"])
# Build outputs and caches stay behind: each copy starts cold.
_NOT_COPIED = shutil.ignore_patterns("build", ".git", ".nox", "__pycache__", ".pytest_cache")


def copy_project(dest):
    """A copy of the project's sources, without build outputs or caches."""
    shutil.copytree(ROOT, dest, ignore=_NOT_COPIED)
    shutil.rmtree(dest / "docs" / "recipes", ignore_errors=True)  # generated gallery
    return dest


def seeded_copy(dest, built_site):
    """A copy of the project seeded with the shared build's executed outputs (the gallery
    folder with sphinx-gallery's md5 files, the notebooks' jupyter-cache, the claims cache):
    a build of it runs only what the test changed. Each seed is checked against the
    sources, so a change the test makes still runs."""
    project = copy_project(dest)
    for path in ("docs/recipes", "build/.jupyter_cache", "build/claims"):
        if (built_site[0] / path).is_dir():
            shutil.copytree(built_site[0] / path, project / path)
    return project


def build_site(project, *extra, timeout=900, env=None):
    """Build ``project`` with its own docs/build.py; return (exit code, all output)."""
    env = {k: v for k, v in {**os.environ, **(env or {})}.items() if k != "FORCE_COLOR"}
    env.update(PYTHONHASHSEED="0", NO_COLOR="1")  # plain text to assert on
    result = subprocess.run(
        [sys.executable, "docs/build.py", "--no-color", *extra],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    # the notebook kernel colours its tracebacks whatever NO_COLOR says
    return result.returncode, ANSI_ESCAPE.sub("", result.stdout + result.stderr)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """One fresh, cold, full build of a copy of the project, shared by the site tests."""
    project = copy_project(tmp_path_factory.mktemp("site") / "project")
    code, output = build_site(project)
    return project, code, output
