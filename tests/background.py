"""Builds (and a few other long tasks) that run beside the tests: started as soon as the
tests that need them are collected (or as soon as the build they start from has
finished), a few at a time.

Most of a build's time is one busy core or waiting (kernels starting, planted
timeouts), so independent builds overlap well on a small machine, and tests that
only read a finished build run meanwhile. A job is registered with the fixture
that hands out its result; it runs only when a collected test uses that fixture
(or a job that starts from it).
"""

import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest


@dataclass
class Build:
    """One build to run: ``command`` in ``project`` with ``env``."""

    project: Path
    command: list
    env: dict
    timeout: float = 900


@dataclass
class Task:
    """Work to run in a thread beside the tests: work that waits on processes of its own (a
    browser, fresh interpreters), so a thread is enough. ``work()``'s value is handed to the
    fixture as ``Result.extra["value"]``."""

    work: object
    timeout: float = 900


@dataclass
class Result:
    project: Path
    code: int
    output: str
    seconds: float
    extra: dict = field(default_factory=dict)  # what prepare() handed over, e.g. a snapshot


@dataclass
class _Job:
    name: str
    fixture: str
    prepare: object  # (folder, *results of `after`) -> Build, or (Build, extra)
    after: tuple
    then: object  # result -> None, run when the build ends (before anything starts from it)
    first: bool
    waits: bool


class Jobs:
    def __init__(self, finish):
        self._jobs, self._results = {}, {}
        self._finish = finish  # (stdout, stderr) -> output text
        self._changed = threading.Condition()
        self._processes = {}  # name -> the running build's process (leader of its own group)
        self._stopped = threading.Event()
        self._starting = threading.Lock()  # a build is started, or all are stopped, not both at once
        self.timeline = {}  # name -> (started, ended) in seconds since start(): what the suite waited on
        self.cpu = {}  # name -> CPU seconds of a build's processes (not of a task's: threads share one)
        self._began = None
        self.waited = 0.0  # seconds the tests spent waiting for results

    def register(self, name, fixture, prepare, after=(), then=None, first=False, waits=False):
        """``first``: a build or task on the way to most tests (the real site, which also
        times code; the page visits that start from it) or at the head of the longest chain
        of builds (the fault build): these start before the others, and the others run at a
        lower priority (nice), so that the first ones take the cores they need and the
        others what is left. ``waits``: a build that spends most of its time waiting for a
        time limit to pass (the watchdog's): it starts as soon as what it needs is ready and
        takes none of the ``limit`` places, which are for work the cores do."""
        self._jobs[name] = _Job(name, fixture, prepare, tuple(after), then, first, waits)

    def fixtures(self):
        return {job.fixture for job in self._jobs.values()}

    def needed(self, items):
        used = {f for item in items for f in getattr(item, "fixturenames", ())}
        wanted = [j.name for j in self._jobs.values() if j.fixture in used]
        for name in wanted:  # and what they start from
            wanted += [d for d in self._jobs[name].after if d not in wanted]
        # the jobs marked first, then the others, each in registration order
        return sorted(
            (name for name in self._jobs if name in wanted), key=lambda name: not self._jobs[name].first
        )

    def start(self, names, folder_for, limit):
        folders = {name: folder_for(name) for name in names}  # created here, in the main thread
        self._started = set(names)
        self._began = time.monotonic()
        threading.Thread(target=self._run, args=(names, folders, limit), daemon=True).start()

    def result(self, name, timeout=1800):
        if name not in getattr(self, "_started", ()):
            # it would never come: a job starts only when a collected test uses its fixture
            raise RuntimeError(
                f"background job {name!r} was not started: no collected test uses its fixture "
                f"{self._jobs[name].fixture!r}"
                if name in self._jobs
                else f"no background job {name!r}"
            )
        asked = time.monotonic()
        with self._changed:
            if not self._changed.wait_for(lambda: name in self._results, timeout):
                raise TimeoutError(f"background build {name} did not finish in {timeout} s")
        self.waited += time.monotonic() - asked
        result = self._results[name]
        if isinstance(result, BaseException):
            raise result
        return result

    def value(self, name):
        """What the work of Task ``name`` returned."""
        return self.result(name).extra["value"]

    def fixture(self, name, scope="module"):
        """The fixture that a Task's job was registered with, handing out its work's value:
        ``alone_runs = JOBS.fixture("recipe alone")`` in the module of its tests."""
        return pytest.fixture(scope=scope, name=self._jobs[name].fixture)(lambda: self.value(name))

    def stop(self):
        """End every build still running, with the processes it started (kernels, the
        child build): a session that stops early (-x, Ctrl-C, a crash) leaves none behind."""
        with self._starting:  # a build being started now is either in _processes or never starts
            self._stopped.set()
            processes = list(self._processes.values())
        for process in processes:
            _kill_group(process)

    def _run(self, names, folders, limit):
        pending, running = list(names), {}
        while (pending or running) and not self._stopped.is_set():
            for name in list(pending):
                job = self._jobs[name]
                working = sum(not self._jobs[r].waits for r in running)
                if (working >= limit and not job.waits) or not all(d in self._results for d in job.after):
                    continue
                pending.remove(name)
                self.timeline[name] = (time.monotonic() - self._began, None)
                try:
                    prepared = job.prepare(folders[name], *(self._results[d] for d in job.after))
                    build, extra = prepared if isinstance(prepared, tuple) else (prepared, {})
                    if isinstance(build, Task):
                        task = _start_task(name, build, job.first)
                        running[name] = (task, build, extra, None, None, time.monotonic())
                        continue
                    out, err = (open(folders[name] / f"{name}.{s}", "w+") for s in ("stdout", "stderr"))
                    command = build.command if job.first else ["nice", "-n", "10", *build.command]
                    with self._starting:
                        if self._stopped.is_set():
                            out.close(), err.close()
                            return
                        process = subprocess.Popen(
                            command,
                            cwd=build.project,
                            env=build.env,
                            stdout=out,
                            stderr=err,
                            text=True,
                            start_new_session=True,  # a group of its own, ended as one (stop, timeout)
                        )
                        self._processes[name] = process
                    running[name] = (process, build, extra, out, err, time.monotonic())
                except BaseException as error:  # handed to the test that asks for it
                    self._done(name, error)
            for name, (process, build, extra, out, err, started) in list(running.items()):
                elapsed = time.monotonic() - started
                if isinstance(build, Task):
                    if process.is_alive() and elapsed < build.timeout:
                        continue
                    del running[name]
                    if process.is_alive():
                        self._done(name, TimeoutError(f"task {name} did not finish in {build.timeout} s"))
                    elif "error" in process.box:
                        self._done(name, process.box["error"])
                    else:
                        self._done(
                            name, Result(None, 0, "", elapsed, {**extra, "value": process.box["value"]})
                        )
                    continue
                if process.returncode is None:
                    # wait4, not poll: the build's CPU seconds, its waited-for processes' included
                    pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                    if pid == 0 and elapsed < build.timeout:
                        continue
                    if pid:
                        process.returncode = os.waitstatus_to_exitcode(status)
                        self.cpu[name] = usage.ru_utime + usage.ru_stime
                if process.returncode is None:
                    _kill_group(process)
                del running[name]
                del self._processes[name]
                out.seek(0), err.seek(0)
                output = self._finish(out.read(), err.read())
                out.close(), err.close()
                result = Result(build.project, process.returncode, output, elapsed, extra)
                try:
                    if self._jobs[name].then:
                        self._jobs[name].then(result)
                except BaseException as error:
                    result = error
                self._done(name, result)
            time.sleep(0.1)

    def _done(self, name, result):
        if name in self.timeline:
            self.timeline[name] = (self.timeline[name][0], time.monotonic() - self._began)
        with self._changed:
            self._results[name] = result
            self._changed.notify_all()


def _start_task(name, task, first=False):
    """A started thread running ``task.work``; its value or error lands in ``thread.box``."""
    box = {}

    def run():
        # this thread, and the processes it starts, yield to the builds marked first, as the
        # other builds do (on Linux a thread has a niceness of its own, which its children inherit)
        if not first:
            os.setpriority(os.PRIO_PROCESS, 0, 10)
        try:
            box["value"] = task.work()
        except BaseException as error:  # handed to the test that asks for it
            box["error"] = error

    thread = threading.Thread(target=run, name=f"task {name}", daemon=True)
    thread.box = box
    thread.start()
    return thread


def _kill_group(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:  # already ended, with all of its group
        pass
    process.wait()


def snapshot(project, dest):
    """A copy of a finished build's project for tests to read while the original is built again."""
    shutil.copytree(project, dest, symlinks=True)
    return dest
