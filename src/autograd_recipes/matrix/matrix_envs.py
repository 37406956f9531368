"""The torch matrix's environments: one per release, made, filled, run and removed in turn
(``nox -s matrix``; ``python -m autograd_recipes.matrix.matrix_envs [RELEASE ...] [--list]
[--unlisted] [--stale] [--strict] [--verify]``).

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
from autograd_recipes.matrix import matrix_data

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


def _pip(python, args, pip_env, log, what):
    """Run ``pip args`` in the environment, trying again after a cut download; the last try."""
    for attempt in range(INSTALL_ATTEMPTS):
        done = subprocess.run([python, "-m", "pip", *args], capture_output=True, text=True, env=pip_env)
        if done.returncode == 0:
            break
        log(f"{what}: pip {args[0]} failed (attempt {attempt + 1} of {INSTALL_ATTEMPTS})")
    return done


def wanted_torch(release, recorded):
    """The torch to install: the release, or, to verify a record, the build it names: its
    wheel's version, a CPU build's (their local label: ``2.13.0+cpu``), or PyPI's own build of
    the release (``2.12.1+cu130`` at run time, ``2.12.1`` on the index): ``===`` matches that
    version string alone, so a CPU index beside PyPI, whose ``2.12.1+cpu`` would sort above
    it, cannot stand in for it."""
    recorded = recorded or {}
    if recorded.get("wheel"):
        return f"torch=={recorded['wheel']['file'].split('-')[1]}"
    if recorded.get("torch", "").endswith("+cpu"):
        return f"torch=={recorded['torch']}"
    if "+" in recorded.get("torch", ""):
        return f"torch==={release}"
    return f"torch=={release}"


def run_release(release, flags, pip_env, log=print, command=None, recorded=None):
    """Make ``release``'s environment, run the matrix runner in it, remove it; (exit code,
    seconds to install, seconds in all). Code 0: the run matched the records; 1: a verdict
    changed, or the release could not be checked (recorded as not run).

    The torch wheel is downloaded first and installed from its file, so the record names the
    very file (its name and SHA-256). ``recorded``: the record to verify (``--verify``): the
    environment is made with its requirements as constraints, the run is compared with it
    and written beside the environments, and docs/matrix/ is left as it is."""
    venv, wheels = ENVS / release, ENVS / f"{release}-wheel"
    for folder in (venv, wheels):
        shutil.rmtree(folder, ignore_errors=True)
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    # the runner first, so that it can record a release whose torch does not install
    subprocess.run([python, "-m", "pip", "install", "-q", *PACKAGE_ALONE], check=True, env=pip_env)
    numpy = numpy_for(release, Path("requirements.txt").read_text(encoding="utf-8"))
    what = f"torch {release}"
    install = _pip(
        python,
        [
            "download",
            "-q",
            "--no-deps",
            "--only-binary",
            ":all:",
            "-d",
            str(wheels),
            wanted_torch(release, recorded),
        ],
        pip_env,
        log,
        what,
    )
    wheel = next(iter(sorted(wheels.glob("torch-*.whl"))), None)
    if install.returncode == 0:
        constraints = []
        if recorded is not None and recorded.get("requirements"):
            lock = ENVS / f"{release}-requirements.txt"
            lock.write_text("\n".join(recorded["requirements"]) + "\n", encoding="utf-8")
            constraints = ["-c", str(lock)]
        install = _pip(
            python, ["install", "-q", "--no-compile", str(wheel), numpy, *constraints], pip_env, log, what
        )
    installed = time.monotonic() - started
    made = ["--wheel", str(wheel)] if wheel is not None else []
    made += ["--command", command] if command else []
    if recorded is not None:
        made += ["--verify", str(ENVS / f"torch-{release}.verify.json")]
    if install.returncode != 0:
        reason = ((install.stdout + install.stderr).strip().splitlines() or ["no output"])[-1]
        log(f"torch {release} could not be installed: {reason}")
        if recorded is None:
            subprocess.run(
                [python, *RUNNER, release, "--not-run", f"pip install failed: {reason}"], check=True
            )
        code = 1
    else:
        code = subprocess.run(
            [python, *RUNNER, release, "--install-seconds", f"{installed:.1f}", *made, *flags]
        ).returncode
        if code not in (0, 1):
            log(f"torch {release}: the run failed (exit {code})")
            if recorded is None:
                subprocess.run(
                    [python, *RUNNER, release, "--not-run", f"the run failed (exit {code})"], check=True
                )
            code = 1
    for folder in (venv, wheels):
        shutil.rmtree(folder, ignore_errors=True)
    return code, installed, time.monotonic() - started


def unlisted(listed, releases=matrix_data.RELEASES):
    """The newest patches in ``pip index versions torch``'s output that ``releases`` lacks
    (a newer torch, or a newer patch of one listed); None where pip listed none."""
    newest = newest_patches(listed)
    return None if newest is None else [r for r in newest if r not in releases]


def _registry(pip_env):
    return subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "torch"],
        capture_output=True,
        text=True,
        env=pip_env,
    ).stdout


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("releases", nargs="*", help="torch releases (default: matrix_data.RELEASES)")
    parser.add_argument(
        "--list", action="store_true", help="print the default releases as JSON (the workflow's)"
    )
    parser.add_argument(
        "--unlisted",
        action="store_true",
        help="exit 1 naming each newest patch the registry has that matrix_data.RELEASES lacks",
    )
    parser.add_argument(
        "--stale", action="store_true", help="rerun only the code changed since a release's record"
    )
    parser.add_argument(
        "--strict", action="store_true", help="fail when a claim's verdict changed on a release"
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="run each release again in an environment made as its record says and fail on any "
        "difference from the record (docs/matrix/ is left as it is)",
    )
    args = parser.parse_args(argv)
    command = " ".join(["nox -s matrix --", *(sys.argv[1:] if argv is None else argv)])
    pip_env = {**os.environ, **installers.unconstrained_pip(installers.pip_config())}
    releases = args.releases or list(matrix_data.RELEASES)
    if args.list:
        print(json.dumps(releases))
        return 0
    if args.unlisted:
        listed = _registry(pip_env)
        missing = unlisted(listed)
        if missing is None:
            sys.exit(f"autograd_recipes.matrix.matrix_envs: pip could not list torch's releases:\n{listed}")
        if missing:
            print(
                f"torch {', '.join(missing)}: on the registry, not in matrix_data.RELEASES "
                "(src/autograd_recipes/matrix/matrix_data.py): add the newest patch of each release",
                file=sys.stderr,
            )
            return 1
        print(f"matrix_data.RELEASES lists the newest patch of every torch release from 2.0 ({releases[-1]})")
        return 0
    print(f"torch releases to {'verify' if args.verify else 'check'}: {', '.join(releases)}", flush=True)
    flags = [flag for flag, on in (("--stale", args.stale), ("--strict", args.strict)) if on]
    times, failed = [], []
    for release in releases:
        recorded = None
        if args.verify:
            path = matrix_data.data_file(release, matrix_data.MATRIX_DIR)
            recorded = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        log = lambda m: print(m, flush=True)  # noqa: E731
        code, installed, total = run_release(release, flags, pip_env, log, command, recorded)
        times.append((release, installed, total))
        if code:
            failed.append(release)
        print(f"torch {release}: {total:.0f} s ({installed:.0f} s to install)", flush=True)
    print("time per release: " + ", ".join(f"{r} {t:.0f} s (install {i:.0f} s)" for r, i, t in times))
    if failed:
        what = (
            "differ from their records"
            if args.verify
            else "verdicts changed or the release could not be checked"
        )
        print(f"torch {', '.join(failed)}: {what}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
