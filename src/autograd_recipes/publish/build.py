"""Build the site: ``python src/autograd_recipes/publish/build.py [--lang en|ko] [--gettext] [sphinx-build options]``.

The one place that knows how the site is built; ``nox -s docs``, the tests and
the benchmarks all call it. Output: ``build/html/<lang>/`` for each language,
its offline copy ``build/html/<project>-<lang>.zip`` (src/autograd_recipes/publish/offline_copy.py), and
``build/html/index.html``, which sends a reader to their language. English
is built first: it runs the recipes and notebooks, and the Korean build reuses
their results (sphinx-gallery's md5 check, myst-nb's jupyter-cache). While one language
builds, the next one's child imports Sphinx and the extensions and waits, and the
previous one's offline copy is written: only the first language's start-up is on the
critical path of a rebuild that changes nothing.

Before any work, it refuses, naming each fault by file and line and all of them at once
(``refused``), sources that Sphinx would crash on without naming them (source_checks.py)
and translations with problems (check_catalogs.py). Exit 0 means the site is fit to
publish (warnings count as errors). To make that hold whatever the site's code does,
each language is built by a child process (``--child``), watched from here: one that
exits early (``os._exit``, ``sys.exit``, a crash, a kill) fails the build, named by the
breadcrumb of what it was running (execution/breadcrumb.py); one that runs past ``--timeout``
is killed. Then every page of every built language must be there, and none may show this
checkout's absolute path. One build at a time runs in a checkout (a lock in ``build/``).
"""

import argparse
import datetime
import fcntl
import os
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

from autograd_recipes.execution import breadcrumb
from autograd_recipes.project import PACKAGE, PROJECT
from autograd_recipes.publish.site_checks import missing_pages, off_site_problems, path_problems
from autograd_recipes.publish.site_root import write_site_root

FALLBACK_EPOCH = "1795996800"  # 2026-11-30, used outside a git checkout
BUILD_TIMEOUT = 1800  # seconds for one language, a last resort behind every finer limit


LOCK = None  # build/.lock, held by this process and its children (acquire_lock)


def source_date_epoch():
    """Respect SOURCE_DATE_EPOCH; else the last commit's time, so a commit builds alike."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return os.environ["SOURCE_DATE_EPOCH"]
    try:
        out = subprocess.run(
            ["git", "-C", str(PROJECT.root), "log", "-1", "--format=%ct"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        out = ""
    return out or FALLBACK_EPOCH


def sphinx_args(builder, lang, outdir, extra=()):
    return [
        "-b",
        builder,
        "-W",
        "--keep-going",
        "-q",
        "-c",
        str(PROJECT.root),
        "-d",
        str(PROJECT.root / "build" / "doctrees" / f"{builder}-{lang}"),
        "-D",
        f"language={lang}",
        *extra,
        str(PROJECT.root / "docs"),
        str(outdir),
    ]


def run_child(builder, lang, outdir, extra=(), timeout=BUILD_TIMEOUT):
    """Build one language in a child process; exit code, with a message when it died."""
    return ChildBuild(builder, lang, outdir, extra, timeout).wait()


class ChildBuild:
    """One language's build in a child process, started when made; ``wait()`` gives its exit code,
    with a message when it died. The parent can work meanwhile (the previous language's
    offline copy); ``kill()`` ends it.

    ``held``: the child imports Sphinx and the extensions, then waits for ``go()`` before it
    builds. The next language's child is started so while the previous one builds (the
    build uses the caches the previous one fills, its imports do not), which takes its
    start-up, most of a rebuild's time, off the critical path. Its timeout counts from ``go()``."""

    def __init__(self, builder, lang, outdir, extra=(), timeout=BUILD_TIMEOUT, held=False):
        state = PROJECT.root / "build" / f".{builder}-{lang}"
        self.lang, self.timeout = lang, timeout
        self.go_fd = None
        if held:
            hold, self.go_fd = os.pipe()
        self.crumb, self.done = state.with_suffix(".running"), state.with_suffix(".done")
        self.crumb.unlink(missing_ok=True)
        self.done.unlink(missing_ok=True)
        env = {**os.environ, "SOURCE_DATE_EPOCH": source_date_epoch(), breadcrumb.ENV: str(self.crumb)}
        command = [
            sys.executable,
            "-m",
            "autograd_recipes.publish.build",
            "--child",
            builder,
            lang,
            str(outdir),
            str(self.done),
            str(os.getpid()),  # the child ends with this process (child_process)
            str(hold) if held else "-",  # the pipe it waits on before it builds, if held
            *extra,
        ]
        kept = (LOCK.fileno(),) if LOCK is not None else ()  # the child holds the lock too
        self.started = time.monotonic()
        self.process = subprocess.Popen(command, env=env, pass_fds=(*kept, *((hold,) if held else ())))
        if held:
            os.close(hold)

    def go(self):
        """Let a held child build (its timeout starts now)."""
        if self.go_fd is not None:
            os.write(self.go_fd, b"go")
            os.close(self.go_fd)
            self.go_fd = None
            self.started = time.monotonic()

    def kill(self):
        self.process.kill()
        self.process.wait()
        if self.go_fd is not None:
            os.close(self.go_fd)
            self.go_fd = None

    def wait(self):
        self.go()
        left = self.timeout - (time.monotonic() - self.started)
        try:
            code = self.process.wait(timeout=max(left, 0))
            finished = self.done.is_file()
        except subprocess.TimeoutExpired:
            self.kill()
            code, finished = f"killed after {self.timeout} s (--timeout)", False
        if finished:
            return code
        last = breadcrumb.read(self.crumb)
        running = f", while running {breadcrumb.describe(last)}" if last else ""
        how = (
            f"killed by signal {-code}"
            if isinstance(code, int) and code < 0
            else (code if isinstance(code, str) else f"exit {code}")
        )
        say(
            f"the {self.lang} build ended before it finished ({how}){running}; "
            "nothing it wrote can be published"
        )
        return 1


def child(builder, lang, outdir, done, parent, hold, extra):
    """The child's side: Sphinx, then a note that it finished, then a hard exit (a thread
    a recipe left running must not keep the process alive). ``hold``: a pipe to read
    "go" from after the imports, before building ("-": build at once); anything else
    (the parent closed it, or the parent failed) ends the child."""
    import importlib

    from sphinx.cmd.build import build_main

    from autograd_recipes.child_process import end_with_parent

    end_with_parent(parent)
    if hold != "-":
        from sphinx.application import builtin_extensions

        from autograd_recipes import upstream

        config = PROJECT.config
        for name in (
            *builtin_extensions,
            *config["extensions"],
            *upstream.SETUP_IMPORTS,
            config["html_theme"],
        ):
            importlib.import_module(name)  # as Sphinx would, later: only the import, not setup()
        if os.read(int(hold), 2) != b"go":
            os._exit(1)
        os.close(int(hold))

    try:
        code = build_main(sphinx_args(builder, lang, outdir, extra))
    except SystemExit as exit_:  # a page's code called sys.exit(): not an Exception, so Sphinx lets it by
        print(
            f"{_exit_site(exit_)}: sys.exit({exit_.code!r}) ended the build"
            f"{_while_running()}; a page's code must not exit",
            file=sys.stderr,
        )
        code = 1
    else:
        if code and _while_running():  # Sphinx stopped mid-run (e.g. a notebook's kernel died)
            say(f"the {lang} build stopped{_while_running()}")
    Path(done).write_text(str(code), encoding="utf-8")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _exit_site(exit_):
    """'recipes/plot_01.py:12': the last frame in this project that raised SystemExit."""
    sites = [
        f
        for f in traceback.extract_tb(exit_.__traceback__)
        if Path(f.filename).resolve().is_relative_to(PROJECT.root)
        and not Path(f.filename).resolve().is_relative_to(PACKAGE)
    ]
    if not sites:
        return "src/autograd_recipes/publish/build.py"
    return f"{os.path.relpath(sites[-1].filename, PROJECT.root)}:{sites[-1].lineno}"


def _while_running():
    last = breadcrumb.read(os.environ.get(breadcrumb.ENV, ""))
    return f" while running {breadcrumb.describe(last)}" if last else ""


def build_html(languages=None, extra=(), timeout=BUILD_TIMEOUT):
    """Build ``languages``; then fail, naming each file, if the build wrote into the checkout."""
    from autograd_recipes.execution import checkout_writes

    before = checkout_writes.checkout()
    code = build_languages(languages or PROJECT.languages, extra, timeout)
    written = checkout_writes.changes(before, checkout_writes.checkout())
    if written:
        say(
            f"the build changed the checkout: {'; '.join(written)}. "
            "Code that a page runs must write under a temporary folder (tempfile.mkdtemp()), "
            "not beside its source; remove or restore these files (git status shows them)."
        )
        return code or 1
    return code


def refused(languages=()):
    """Report what stops a build before any work, every fault at once; True if any.

    A source Sphinx would crash on without naming it (source_checks); a message left untranslated
    or a catalog missing would show English on a page of ``languages``, and a translation with
    other code, targets, numbers or markup would change it."""
    from autograd_recipes.i18n.check_catalogs import catalog_problems
    from autograd_recipes.publish.source_checks import source_problems

    stopped = []
    problems = source_problems()
    report(problems)
    if problems:
        stopped.append("the sources")
    for lang in languages:
        problems = [] if lang == PROJECT.source_language else catalog_problems(PROJECT.catalogs(lang))
        report(problems)
        if problems:
            stopped.append(f"the {lang} catalogs")
    if stopped:
        say(f"{' and '.join(stopped)} have the problems above; not building")
    return bool(stopped)


def build_languages(languages, extra, timeout):
    if refused(languages):
        return 1
    html = PROJECT.root / "build" / "html"
    remove_unbuilt(html, languages)
    unarchived = None  # a language built and checked whose offline copy is still to make
    children = [ChildBuild("html", languages[0], html / languages[0], extra, timeout)]
    for index, lang in enumerate(languages):
        start = time.perf_counter()
        building = children[index]
        building.go()
        if index + 1 < len(languages):  # the next one's start-up, beside this build
            following = languages[index + 1]
            children.append(ChildBuild("html", following, html / following, extra, timeout, held=True))
        if unarchived is not None:  # made while this language builds: it reads only its own tree
            code = write_archive(html, unarchived)
            if code:
                _end(children)
                return code
        code = building.wait()
        remove_executed_notebooks(html)
        say(f"{lang} built in {time.perf_counter() - start:.1f} s")
        loads = off_site_problems(html, lang)
        if code:
            _end(children)
            say(f"the {lang} build failed (exit {code})")
            report(path_problems(html) + loads)
            return code
        if loads:
            _end(children)
            report(loads)
            say(f"the {lang} pages are not fit to publish")
            return 1
        unarchived = lang
    code = write_archive(html, unarchived)
    if code:
        return code
    write_site_root(html, languages)
    problems = missing_pages(html, languages) + path_problems(html)
    if problems:
        report(problems)
        say("the site is not fit to publish")
        return 1
    unbuilt = [lang for lang in PROJECT.languages if lang not in languages]
    if unbuilt:
        say(
            f"built {', '.join(languages)} only, not {', '.join(unbuilt)}: "
            f"the site's root, sitemap and 404 page list {', '.join(languages)}, but each page's "
            f"language switch and hreflang links still point to the {', '.join(unbuilt)} pages, which "
            "this build did not make. Build every language (no --lang) before publishing."
        )
    return 0


def _end(children):
    """Kill the children still held or running: a build that stops builds no more languages."""
    for building in children:
        if building.process.poll() is None:
            building.kill()


def remove_unbuilt(html, languages):
    """The trees and offline copies of the languages this build does not make: an earlier
    build's would be published beside this one's as if current."""
    from autograd_recipes.publish import offline_copy

    for lang in PROJECT.languages:
        if lang in languages:
            continue
        archive = html / offline_copy.archive_name(PROJECT.config["project"], lang)
        for path in (html / lang, archive):
            if path.exists():
                shutil.rmtree(path) if path.is_dir() else path.unlink()
                say(f"removed {path}: an earlier build made it, and this one does not build {lang}")


def write_archive(html, lang):
    """The language's offline copy (src/autograd_recipes/publish/offline_copy.py), its size on the landing page."""
    from autograd_recipes.publish import offline_copy

    config = PROJECT.config
    try:
        path, size = offline_copy.write_offline_copy(
            html, lang, config["project"], config["site_url"], source_date_epoch()
        )
    except ValueError as error:
        say(error)
        return 1
    say(f"{lang} offline copy {path.name}: {path.stat().st_size} bytes, shown as {size}")
    return 0


def remove_executed_notebooks(html):
    """myst-nb writes each executed notebook to build/html/jupyter_execute/ (upstream.py):
    not for publishing (the pages' downloads come from build/notebooks/). Image files
    there would be pages' figures, so they stay, and missing_pages reports them."""
    from autograd_recipes import upstream

    folder = html / upstream.MYST_NB_OUTPUT_FOLDER
    for notebook in folder.rglob("*.ipynb"):
        notebook.unlink()
    for sub in sorted(folder.rglob("*"), reverse=True):
        if sub.is_dir() and not any(sub.iterdir()):
            sub.rmdir()
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()


def say(message):
    """A line of the build's own, on stderr, named as the build."""
    print(f"autograd_recipes.publish.build: {message}", file=sys.stderr)


def report(problems):
    for problem in problems:
        say(problem)


def acquire_lock():
    """An exclusive lock on build/.lock for this process's life, or None with a message."""
    lock_path = PROJECT.root / "build" / ".lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock = open(lock_path, "a+", encoding="utf-8")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip() or "another process"
        say(
            f"another build is running in this checkout ({holder}); "
            f"wait for it to end. Two builds would overwrite each other's output. "
            f"(The lock, {lock_path}, frees itself when that process ends.)"
        )
        return None
    lock.seek(0)
    lock.truncate()
    started = datetime.datetime.now().isoformat(timespec="seconds")
    lock.write(f"pid {os.getpid()}, started {started}")
    lock.flush()
    return lock


def build_gettext(extra=(), timeout=BUILD_TIMEOUT):
    """Message templates (.pot) of the English source, for ``nox -s i18n``."""
    if refused():
        return 1
    return run_child("gettext", PROJECT.source_language, PROJECT.root / "build" / "gettext", extra, timeout)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return child(*argv[1:7], argv[7:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--lang",
        choices=PROJECT.languages,
        action="append",
        help="build only this language (repeatable); default: all",
    )
    parser.add_argument("--gettext", action="store_true", help="write .pot templates instead")
    parser.add_argument(
        "--timeout",
        type=float,
        default=BUILD_TIMEOUT,
        help=f"seconds one language may take before it is killed (default {BUILD_TIMEOUT})",
    )
    args, extra = parser.parse_known_args(argv)
    global LOCK
    LOCK = acquire_lock()
    if LOCK is None:
        return 1
    if args.gettext:
        return build_gettext(extra, args.timeout)
    return build_html(tuple(args.lang or PROJECT.languages), extra, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
