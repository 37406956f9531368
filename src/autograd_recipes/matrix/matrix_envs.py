"""The torch matrix's environments: one per release, made, filled, run and removed in turn
(``nox -s matrix``; ``python -m autograd_recipes.matrix.matrix_envs [RELEASE ...] [--list]
[--stale] [--strict]``).

Each release gets a virtual environment of its own, with the package alone (``--no-deps``:
the runner needs only torch), then that torch and the numpy its recipes run with. A
release whose torch does not install is recorded as not run, with pip's last line; a run
that crashes is recorded as not run, with its exit code. The standard library only: nox's
own Python runs this, before any environment has the package's dependencies.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from autograd_recipes import installers

ENVS = Path(".nox") / "matrix-envs"  # one at a time, removed after its run
RUNNER = ["-m", "autograd_recipes.matrix.matrix_runner"]
PACKAGE_ALONE = ("--no-deps", "-e", ".")  # the machinery without its dependencies
FIRST_RELEASE = (2, 0)
INSTALL_ATTEMPTS = 3  # a download cut by a network timeout is tried again
NUMPY_2_FROM = (2, 3)  # torch built against numpy 1.x before this release


def numpy_for(release, requirements):
    """The numpy a release's recipes run with (torch's wheels leave it out; a recipe that
    calls ``numpy()`` needs it): ``requirements``' pinned one, or the last 1.x for the
    releases built before numpy 2."""
    if tuple(int(part) for part in release.split(".")[:2]) < NUMPY_2_FROM:
        return "numpy<2"
    pinned = re.search(r"^numpy==\S+", requirements, re.M)
    return pinned.group(0) if pinned else "numpy"


def newest_patches(listed, first=FIRST_RELEASE):
    """The newest patch of every minor release from ``first`` in ``pip index versions
    torch``'s output; local builds (``2.13.0+cpu``) and pre-releases left out. None where
    the output lists no versions."""
    found = re.search(r"Available versions: (.*)", listed)
    if not found:
        return None
    newest = {}
    for release in found[1].split(", "):
        if not re.fullmatch(r"\d+\.\d+\.\d+", release.strip()):
            continue
        parts = tuple(int(p) for p in release.split("."))
        if parts[:2] >= first and parts > newest.get(parts[:2], (0,)):
            newest[parts[:2]] = parts
    return [".".join(map(str, parts)) for _, parts in sorted(newest.items())]


def run_release(release, flags, pip_env, log=print):
    """Make ``release``'s environment, run the matrix runner in it, remove it; (exit code,
    seconds to install, seconds in all). Code 0: the run matched the records; 1: a verdict
    changed, or the release could not be checked (recorded as not run)."""
    venv = ENVS / release
    shutil.rmtree(venv, ignore_errors=True)
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    # the runner first, so that it can record a release whose torch does not install
    subprocess.run([python, "-m", "pip", "install", "-q", *PACKAGE_ALONE], check=True, env=pip_env)
    numpy = numpy_for(release, Path("requirements.txt").read_text(encoding="utf-8"))
    for attempt in range(INSTALL_ATTEMPTS):
        install = subprocess.run(
            [python, "-m", "pip", "install", "-q", "--no-compile", f"torch=={release}", numpy],
            capture_output=True,
            text=True,
            env=pip_env,
        )
        if install.returncode == 0:
            break
        log(f"torch {release}: pip install failed (attempt {attempt + 1} of {INSTALL_ATTEMPTS})")
    installed = time.monotonic() - started
    if install.returncode != 0:
        reason = ((install.stdout + install.stderr).strip().splitlines() or ["no output"])[-1]
        log(f"torch {release} could not be installed: {reason}")
        subprocess.run([python, *RUNNER, release, "--not-run", f"pip install failed: {reason}"], check=True)
        code = 1
    else:
        code = subprocess.run(
            [python, *RUNNER, release, "--install-seconds", f"{installed:.1f}", *flags]
        ).returncode
        if code not in (0, 1):
            subprocess.run(
                [python, *RUNNER, release, "--not-run", f"the run failed (exit {code})"], check=True
            )
            code = 1
    shutil.rmtree(venv, ignore_errors=True)
    return code, installed, time.monotonic() - started


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "releases", nargs="*", help="torch releases (default: the newest patch of each from 2.0)"
    )
    parser.add_argument(
        "--list", action="store_true", help="print the default releases as JSON (the workflow's)"
    )
    parser.add_argument(
        "--stale", action="store_true", help="rerun only the code changed since a release's record"
    )
    parser.add_argument(
        "--strict", action="store_true", help="fail when a claim's verdict changed on a release"
    )
    args = parser.parse_args(argv)
    pip_env = {**os.environ, **installers.unconstrained_pip(installers.pip_config())}
    releases = args.releases
    if not releases:
        listed = subprocess.run(
            [sys.executable, "-m", "pip", "index", "versions", "torch"],
            capture_output=True,
            text=True,
            env=pip_env,
        ).stdout
        releases = newest_patches(listed)
        if releases is None:
            sys.exit(f"autograd_recipes.matrix.matrix_envs: pip could not list torch's releases:\n{listed}")
    if args.list:
        print(json.dumps(releases))
        return 0
    print(f"torch releases to check: {', '.join(releases)}", flush=True)
    flags = [flag for flag, on in (("--stale", args.stale), ("--strict", args.strict)) if on]
    times, failed = [], []
    for release in releases:
        code, installed, total = run_release(release, flags, pip_env, log=lambda m: print(m, flush=True))
        times.append((release, installed, total))
        if code:
            failed.append(release)
        print(f"torch {release}: {total:.0f} s ({installed:.0f} s to install)", flush=True)
    print("time per release: " + ", ".join(f"{r} {t:.0f} s (install {i:.0f} s)" for r, i, t in times))
    if failed:
        print(
            f"torch {', '.join(failed)}: verdicts changed or the release could not be checked",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
