"""Work run in a child forked from this process: one claim, or one claim under a condition.

The child starts with everything this process has imported (torch: a fork costs
milliseconds, an import seconds) and whatever the work changes ends with the child: torch's
settings, ``torch.library`` overrides, patched functions, modes left entered, the
environment. Nothing has to be listed to be put back, so nothing can be missed.

The child leads a process group of its own. When it has ended, the group is killed, so a
process the work started (``subprocess.Popen``, a ``multiprocessing`` fork) does not
outlive it, or hold what the child held (the build's lock); and the child ends with the
process that forked it (child_process), so a killed build leaves none of them running.
"""

import contextlib
import os
import signal
import sys
import time
import traceback

from autograd_recipes.child_process import end_with_parent


def start(work):
    """Fork a child that runs ``work()`` and exits (0, or 1 if it raised); its process id."""
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: leave without running the parent's cleanup or atexit hooks
        code = 1
        try:
            os.setpgid(0, 0)
            end_with_parent(parent)  # a fork does not inherit it: a killed build ends its children
            work()
            code = 0
        except BaseException:  # noqa: BLE001 - whatever ended the work, the child reports it
            with contextlib.suppress(BaseException):
                traceback.print_exc()
        finally:
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    with contextlib.suppress(OSError):  # set from both sides: no window where a kill misses it
        os.setpgid(pid, pid)
    return pid


def ended(pid):
    """The child's exit code (negative: the signal) once it has ended, its group killed
    and itself reaped; None while it runs."""
    if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        return None
    _kill_group(pid)  # while the ended child is not reaped, its process id names its group only
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def kill(pid):
    """End the child and its group now; its exit code."""
    _kill_group(pid)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def run(work, limit):
    """``work()`` in a child, waited for at most ``limit`` seconds; its exit code, or None
    where it was killed at the limit."""
    pid = start(work)
    deadline = time.monotonic() + limit
    while (code := ended(pid)) is None:
        if time.monotonic() > deadline:
            kill(pid)
            return None
        time.sleep(0.005)
    return code


def _kill_group(pid):
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
