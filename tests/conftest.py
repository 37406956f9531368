"""Shared helpers: the project root, and fresh copies of the project to build."""

import os
import re
import shlex
import shutil
import subprocess
import sys

import background
import pytest
from tiny import tiny_project

from autograd_recipes.execution import reused_outputs
from autograd_recipes.project import EXECUTION_LOG_VARIABLE, PROJECT

ROOT = PROJECT.root
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
RECIPES = PROJECT.recipes()
FIELD_RECIPES = [r for r in RECIPES if r.parent != PROJECT.recipes_dir]  # the gallery's second section
CONF = PROJECT.config  # as the builds read it, in the same environment
LANGUAGES = PROJECT.languages  # the source first
SITE_URL = CONF["site_url"].rstrip("/") + "/"  # where the pages say they are published
# Build outputs and caches stay behind: each copy starts cold.
_NOT_COPIED = shutil.ignore_patterns("build", ".git", ".nox", "node_modules", "__pycache__", ".pytest_cache")


def copy_project(dest):
    """A copy of the project's sources, without build outputs or caches."""
    shutil.copytree(ROOT, dest, ignore=_NOT_COPIED)
    shutil.rmtree(dest / "docs" / PROJECT.gallery_dir, ignore_errors=True)  # generated gallery
    return dest


def seeded_tiny(dest, built):
    """A copy of the tiny site seeded with the executed outputs of ``built`` (a finished
    build of it: the gallery folder with sphinx-gallery's md5 files, the notebooks'
    jupyter-cache, the claims cache): a build of it runs only what the test changed. Each
    seed is checked against the sources, so a change the test makes still runs."""
    project = tiny_project(dest)
    for path in ("docs/recipes", "build/.jupyter_cache", "build/claims"):
        if (built / path).is_dir():
            shutil.copytree(built / path, project / path)
    # the digests of those outputs: without them every reused output is untrusted and runs again
    record = f"build/{reused_outputs.RECORD_NAME}"
    if (built / record).is_file():
        shutil.copy2(built / record, project / record)
    return project


def _build_command(project, extra, env, offline=False):
    env = {k: v for k, v in {**os.environ, **(env or {})}.items() if k != "FORCE_COLOR"}
    env.update(PYTHONHASHSEED="0", NO_COLOR="1")  # plain text to assert on
    command = [sys.executable, "-m", "autograd_recipes.publish.build", "--no-color", *extra]
    if offline:
        # a new network namespace has only a loopback device, down: bring it up for the notebook kernel
        command = ["unshare", "--net", "sh", "-c", "ip link set lo up && exec " + shlex.join(command)]
    return command, env


def _finish(result_stdout, result_stderr):
    # the notebook kernel colours its tracebacks whatever NO_COLOR says
    return ANSI_ESCAPE.sub("", result_stdout + result_stderr)


def build_site(project, *extra, timeout=900, env=None, offline=False):
    """Build ``project`` with its own src/autograd_recipes/publish/build.py; return (exit code, all output)."""
    command, env = _build_command(project, extra, env, offline)
    result = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=timeout)
    return result.returncode, _finish(result.stdout, result.stderr)


EPOCH_2024 = "1704067200"  # 2024-01-01: builds must take their dates from SOURCE_DATE_EPOCH
CAN_UNSHARE = os.geteuid() == 0 and shutil.which("unshare") is not None


# --- builds beside the tests (tests/background.py) ------------------------------------
JOBS = background.Jobs(lambda stdout, stderr: _finish(stdout, stderr))
# jobs at once: most of a build is one core or waiting, and the tests' own browser runs beside
# them (3 measured 171 s where 5 took 176-186 s; PARALLEL_BUILDS=1 runs them one by one, for
# each job's own time in the summary)
PARALLEL_BUILDS = int(os.environ.get("PARALLEL_BUILDS", 3))


def background_build(project, *extra, env=None, offline=False, timeout=900):
    """A background.Build of ``project`` with its src/autograd_recipes/publish/build.py (as build_site runs it)."""
    command, env = _build_command(project, extra, env, offline)
    return background.Build(project, command, env, timeout)


def _shared(folder):
    project = copy_project(folder / "project")
    return background_build(project, env={"SOURCE_DATE_EPOCH": EPOCH_2024}, offline=CAN_UNSHARE)


def _tiny(folder):
    project = tiny_project(folder / "project")
    log = {EXECUTION_LOG_VARIABLE: str(folder / "executions.log")}  # what ran, in order
    return background_build(project, env={"SOURCE_DATE_EPOCH": EPOCH_2024, **log})


JOBS.register("site", "built_site", _shared, first=True)


def _keep_as_built(result):
    """A copy of a finished build, for tests to read while a later job builds it again."""
    result.extra["as built"] = background.snapshot(result.project, result.project.parent / "as-built")


JOBS.register("tiny", "tiny_site", _tiny)
JOBS.register("tiny again", "second_tiny_build", _tiny, then=_keep_as_built)


def pytest_collection_modifyitems(session, config, items):
    """Tests that need no background build first: they run while the builds do."""
    waiting = JOBS.fixtures()

    def rank(item):
        # then those that read only the real site (the browser tests, mostly): they run while
        # the tiny builds and the tasks that start from the site are still going, so that the
        # last minute is those builds side by side, not one browser test after another
        used = waiting & set(getattr(item, "fixturenames", ()))
        return 0 if not used else 1 if used == {"built_site"} else 2

    items.sort(key=rank)


def write_ledger(path, claims):
    """A ledger file of ``claims`` (dicts as claims_ledger.load gives them)."""
    import json

    from autograd_recipes.claims import claims_ledger

    def value(v):  # JSON strings and lists of strings are TOML too; a table is written inline
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k} = {json.dumps(x)}" for k, x in v.items()) + "}"
        return json.dumps(v)

    # the conditions and reasons the claims name, as the real ledger defines them
    tables = "".join(
        f"[{kind}.{name}]\n" + "".join(f"{k} = {value(v)}\n" for k, v in table.items()) + "\n"
        for kind, entries in claims_ledger.load_vocabulary().items()
        for name, table in entries.items()
    )
    text = tables + "".join(
        "[[claim]]\n" + "".join(f"{key} = {value(v)}\n" for key, v in claim.items()) + "\n"
        for claim in claims
    )
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="session", autouse=True)
def _background_builds(request, tmp_path_factory):
    """Start every background build the collected tests need, before the first test."""
    names = JOBS.needed(request.session.items)
    if names:
        JOBS.start(names, tmp_path_factory.mktemp, PARALLEL_BUILDS)


@pytest.fixture(scope="session")
def built_site():
    """The real site, built once per test run: a fresh, cold, full build of a copy of the
    project, with SOURCE_DATE_EPOCH fixed and, where this machine allows (root and
    unshare), without network (the offline test). The tests about content read it; the
    plumbing tests build the tiny site instead (tiny_site)."""
    result = JOBS.result("site")
    return result.project, result.code, result.output


@pytest.fixture(scope="session")
def tiny_site():
    """A cold, full build of a copy of the tiny site (tests/tinysite), SOURCE_DATE_EPOCH
    fixed: what the plumbing tests start from. Tests only read it; they change copies."""
    result = JOBS.result("tiny")
    return result.project, result.code, result.output


@pytest.fixture(scope="session")
def second_tiny_build():
    """A second cold build of another copy of the tiny site, for the determinism test."""
    result = JOBS.result("tiny again")
    return result.extra["as built"], result.code, result.output


def pytest_sessionfinish(session, exitstatus):
    """End the builds still running (a session stopped early needs none of them); after a
    whole run (not a selection: -k, paths), measure the host's speed for the summary."""
    JOBS.stop()
    config = session.config
    if config.option.keyword or config.option.markexpr or config.args != config.getini("testpaths"):
        return
    if session.testscollected:
        # measured after the run (every build ended), so that it adds nothing to the run's time
        config.stash[_REFERENCE] = machine_reference()


_REFERENCE = pytest.StashKey()


def pytest_terminal_summary(terminalreporter):
    """When each background job ran: the suite's time is mostly the longest chain of them."""
    if not JOBS.timeline:
        return
    terminalreporter.section("background jobs (seconds from the first start)")
    terminalreporter.write_line(f"the tests waited {JOBS.waited:.1f} s for them")
    import resource

    used = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in used)
    terminalreporter.write_line(f"the run used {cpu:.0f} CPU s (its processes and those they waited for)")
    reference = terminalreporter.config.stash.get(_REFERENCE, None)
    if reference is not None:  # a whole run's: the host's speed (machine_reference)
        terminalreporter.write_line(f"after the run, importing torch took {reference} CPU s")
    for name, (started, ended) in sorted(JOBS.timeline.items(), key=lambda item: item[1][0]):
        until = "not finished" if ended is None else f"{ended:6.1f}  {ended - started:6.1f} s"
        cpu = f"  ({JOBS.cpu[name]:.1f} CPU s)" if name in JOBS.cpu else ""
        terminalreporter.write_line(f"{started:6.1f} -> {until}  {name}{cpu}")


def machine_reference():
    """CPU seconds (user and system) that a fresh interpreter of this environment takes to
    import torch: the machine's speed at the suite's own commonest work, beside a run's time.
    This shared host's speed varies within a day: the import took 1.3-1.4 s at one hour and
    2.0-2.4 s at another, when the suite took 171-176 s and then 240-263 s."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2)


@pytest.fixture(scope="session")
def chromium():
    """One Chromium, through playwright's sync API, for every browser test on pytest's thread:
    a launch (its driver and browser) costs about a core-second, and contexts keep tests apart."""
    import browser_pass

    browser_pass.skip_without_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_pass.CHROMIUM, args=browser_pass.FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def served_site(built_site):
    """(base URL, folder) of the built site, served on 127.0.0.1 below a sub-path as on
    GitHub Pages (browser_pass.served)."""
    import browser_pass

    project, code, output = built_site
    assert code == 0, output
    with browser_pass.served(project / "build" / "html") as base:
        yield base, project / "build" / "html"


def _visits(folder, site):
    """Every page of both languages, loaded once in Chromium as soon as the site is built."""
    import browser_pass

    if site.code != 0 or not os.path.exists(browser_pass.CHROMIUM):
        return background.Task(lambda: None)  # the fixture fails or skips, saying why
    return background.Task(lambda: browser_pass.visit_site(site.project / "build" / "html", LANGUAGES))


# first: the page-by-page checks wait for it, and it waits for the site
JOBS.register("visits", "page_visits", _visits, after=["site"], first=True)


@pytest.fixture(scope="session")
def page_visits(built_site):
    """(the built site's folder, {page: what its one visit in Chromium recorded}): every
    page of both languages, loaded once for the page-by-page checks of test_browser.py and
    test_korean_ui.py (tests/browser_pass.py), beside the other tests."""
    import browser_pass

    browser_pass.skip_without_chromium()
    project, code, output = built_site
    assert code == 0, output
    return project / "build" / "html", JOBS.value("visits")
