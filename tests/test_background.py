"""The background builds' runner (tests/background.py) leaves no process behind."""

import os
import time

import background


def alive(pid):
    """Whether ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def start_sleeper(tmp_path, timeout=900):
    """A build whose process starts a grandchild, as build.py starts its child build and
    kernels; returns the runner and the grandchild's pid."""
    pid_file = tmp_path / "grandchild.pid"
    jobs = background.Jobs(lambda stdout, stderr: stdout + stderr)
    script = f"sleep 300 & echo $! > {pid_file}; wait"
    jobs.register(
        "sleeper",
        "unused_fixture",
        lambda folder: background.Build(tmp_path, ["bash", "-c", script], dict(os.environ), timeout),
        first=True,
    )
    jobs.start(["sleeper"], lambda name: tmp_path, limit=1)
    for _ in range(100):
        if pid_file.is_file() and pid_file.read_text().strip():
            return jobs, int(pid_file.read_text())
        time.sleep(0.05)
    raise AssertionError("the build never started its grandchild")


def ends(pid):
    """Whether ``pid`` ends within 5 s (a killed process dies as soon as it is scheduled)."""
    for _ in range(100):
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_stop_ends_a_running_build_with_the_processes_it_started(tmp_path):
    jobs, grandchild = start_sleeper(tmp_path)
    assert alive(grandchild)  # control: running until stopped
    jobs.stop()
    assert ends(grandchild)


def test_a_build_past_its_timeout_ends_with_its_processes(tmp_path):
    jobs, grandchild = start_sleeper(tmp_path, timeout=1)
    result = jobs.result("sleeper", timeout=30)
    assert result.code == -9 and result.seconds >= 1
    assert ends(grandchild)


def test_a_waiting_build_takes_no_place_of_the_limit(tmp_path):
    """With one place, a build marked ``waits`` starts beside a working one, and a second
    working build waits for the first; the control is the timeline the runner keeps."""
    jobs = background.Jobs(lambda stdout, stderr: stdout + stderr)

    def build(seconds):
        return lambda folder: background.Build(tmp_path, ["sleep", str(seconds)], dict(os.environ), 60)

    jobs.register("work", "unused", build(1), first=True)
    jobs.register("asleep", "unused", build(1), waits=True)
    jobs.register("more work", "unused", build(0.1))
    jobs.start(["work", "asleep", "more work"], lambda name: tmp_path, limit=1)
    for name in ("work", "asleep", "more work"):
        assert jobs.result(name, timeout=30).code == 0
    started = {name: times[0] for name, times in jobs.timeline.items()}
    assert started["asleep"] < 0.5 and started["more work"] >= 0.9, jobs.timeline


def test_asking_for_a_job_that_never_started_fails_at_once(tmp_path):
    """A fixture that asks for a job no collected test needs would wait forever: it fails,
    naming the job and its fixture. Control: the job that started gives its result."""
    import pytest

    jobs = background.Jobs(lambda stdout, stderr: stdout + stderr)
    for name in ("wanted", "forgotten"):
        jobs.register(
            name, f"{name}_fixture", lambda folder: background.Build(tmp_path, ["true"], dict(os.environ))
        )
    jobs.start(["wanted"], lambda name: tmp_path, limit=1)
    assert jobs.result("wanted", timeout=30).code == 0
    with pytest.raises(RuntimeError, match="'forgotten' was not started: no collected test uses its fixture"):
        jobs.result("forgotten", timeout=30)
