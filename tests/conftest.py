"""Shared helpers: the project root, and fresh copies of the project to build."""

import os
import re
import runpy
import shlex
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


def _build_command(project, extra, env, offline=False):
    env = {k: v for k, v in {**os.environ, **(env or {})}.items() if k != "FORCE_COLOR"}
    env.update(PYTHONHASHSEED="0", NO_COLOR="1")  # plain text to assert on
    command = [sys.executable, "docs/build.py", "--no-color", *extra]
    if offline:
        # a new network namespace has only a loopback device, down: bring it up for the notebook kernel
        command = ["unshare", "--net", "sh", "-c", "ip link set lo up && exec " + shlex.join(command)]
    return command, env


def _finish(result_stdout, result_stderr):
    # the notebook kernel colours its tracebacks whatever NO_COLOR says
    return ANSI_ESCAPE.sub("", result_stdout + result_stderr)


def build_site(project, *extra, timeout=900, env=None, offline=False):
    """Build ``project`` with its own docs/build.py; return (exit code, all output)."""
    command, env = _build_command(project, extra, env, offline)
    result = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=timeout)
    return result.returncode, _finish(result.stdout, result.stderr)


def start_build(project, *extra, env=None):
    """Start a build in the background; ``wait_build`` gives (exit code, all output)."""
    command, env = _build_command(project, extra, env)
    return subprocess.Popen(
        command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def wait_build(process, timeout=900):
    stdout, stderr = process.communicate(timeout=timeout)
    return process.returncode, _finish(stdout, stderr)


EPOCH_2024 = "1704067200"  # 2024-01-01: builds must take their dates from SOURCE_DATE_EPOCH
CAN_UNSHARE = os.geteuid() == 0 and shutil.which("unshare") is not None


@pytest.fixture(scope="session")
def second_cold_build(request, tmp_path_factory):
    """A second cold build of another copy, for the determinism test. When that test is
    collected, it starts beside the shared build (two cores: about the time of one)."""
    holder = request.config.stash.setdefault(_SECOND, {})
    if "process" not in holder:
        holder["project"] = copy_project(tmp_path_factory.mktemp("second") / "project")
        holder["process"] = start_build(holder["project"], env={"SOURCE_DATE_EPOCH": EPOCH_2024})
    code, output = wait_build(holder["process"])
    return holder["project"], code, output


@pytest.fixture(scope="session")
def built_site(request, tmp_path_factory):
    """The shared build: one fresh, cold, full build of a copy of the project, with
    SOURCE_DATE_EPOCH fixed (the first of the determinism test's two builds) and, where
    this machine allows (root and unshare), without network (the offline test). Tests
    only read it; tests that change something work on a seeded copy.

    Developer shortcut, never used by CI: with AUTOGRAD_RECIPES_PREBUILT set to a project
    folder that holds a finished build (its build/html), that build is used as it is,
    without building, e.g. to iterate on the browser tests:
    ``AUTOGRAD_RECIPES_PREBUILT=/path/to/project pytest tests/test_browser.py``."""
    prebuilt = os.environ.get("AUTOGRAD_RECIPES_PREBUILT")
    if prebuilt:
        return Path(prebuilt), 0, ""
    if any("second_cold_build" in item.fixturenames for item in request.session.items):
        holder = request.config.stash.setdefault(_SECOND, {})
        holder["project"] = copy_project(tmp_path_factory.mktemp("second") / "project")
        holder["process"] = start_build(holder["project"], env={"SOURCE_DATE_EPOCH": EPOCH_2024})
    project = copy_project(tmp_path_factory.mktemp("site") / "project")
    code, output = build_site(project, env={"SOURCE_DATE_EPOCH": EPOCH_2024}, offline=CAN_UNSHARE)
    return project, code, output


_SECOND = pytest.StashKey()


@pytest.fixture(scope="session")
def page_visits(built_site):
    """(the built site's folder, {page: what its one visit in Chromium recorded}): every
    page of both languages, loaded once for the page-by-page checks of test_browser.py and
    test_korean_ui.py (tests/browser_pass.py)."""
    import browser_pass

    browser_pass.skip_without_chromium()
    project, code, output = built_site
    assert code == 0, output
    html = project / "build" / "html"
    return html, browser_pass.visit_site(html, LANGUAGES)
