"""Processes the build starts end when the process that started them ends.

A build's child (one language) and its claims runner write into build/; if the build
that holds the lock is killed (``kill -9``), they must not go on writing beside the next
build. The parent passes its process id on the child's command line; the child's first
step is ``end_with_parent(pid)``: Linux's PR_SET_PDEATHSIG sends it SIGKILL when that
parent ends, and a parent already gone ends it at once. The child arms this itself, not
through subprocess's ``preexec_fn``, which can deadlock in a parent that runs threads
(Sphinx's does). The notebooks' kernels end on their own: ipykernel exits when its
parent is gone. Elsewhere than Linux it does nothing.
"""

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def end_with_parent(parent):
    """Kill this process when process ``parent`` (its parent) ends."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != int(parent):  # the parent ended before the signal was armed
        os._exit(1)
