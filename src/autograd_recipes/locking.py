"""The lock files: every package the sessions install, pinned with its hashes and resolved
for Python 3.11 on Linux x86_64 (``nox -s lock``; ``python -m autograd_recipes.locking
[UV OPTION ...]``, e.g. ``--upgrade-package sphinx`` or ``--upgrade``).

``requirements.lock`` is resolved from ``requirements.txt`` less its ``-e .`` (a folder has
no hash), with torch's CPU build (``+cpu``, published only on PyTorch's CPU index), and from
pyproject.toml's build backend (setuptools: the editable install is built with the lock's
own, without isolation). ``requirements-lint.lock`` is resolved from LINT_TOOLS. uv reads
an existing lock as its preferences, so a refresh keeps every version that its inputs allow
unless an ``--upgrade`` option says otherwise. uv looks where the sessions install from
(``installers.locked_settings``). The standard library only: nox's own Python runs it, with
the uv that ``nox[uv]`` installs beside nox.
"""

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from autograd_recipes import installers

LOCK = "requirements.lock"
LINT_LOCK = "requirements-lint.lock"
LINT_TOOLS = ("ruff==0.17.5", "sphinx-lint==1.0.2", "zizmor==1.32.0")
PROJECT_NAME = "autograd-recipes"  # pyproject.toml's: installed editable, never locked
TARGET = ("--python-version", "3.11", "--python-platform", "x86_64-unknown-linux-gnu")
# a lock's entry: ``name==version`` and its ``--hash=sha256:...`` continuation lines
ENTRY = re.compile(r"^([A-Za-z0-9][\w.-]*)==(\S+)((?:[ \t]*\\\n[ \t]*--hash=sha256:[0-9a-f]{64})*)", re.M)
PIN = re.compile(r"^([A-Za-z0-9][\w.-]*)==([^\s;#]+)", re.M)


def normalize(name):
    """A distribution's name as indexes compare it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_lock(text):
    """{name: (version, [sha256, ...])} of a lock file's entries."""
    return {
        normalize(found[1]): (found[2], re.findall(r"sha256:([0-9a-f]{64})", found[3]))
        for found in ENTRY.finditer(text)
    }


def pins(text):
    """{name: version} of a requirements file's ``name==version`` lines."""
    return {normalize(found[1]): found[2] for found in PIN.finditer(text)}


def build_requirements(pyproject):
    """pyproject.toml's build backend, as requirement lines."""
    return tomllib.loads(pyproject)["build-system"]["requires"]


def lock_inputs(requirements, pyproject):
    """What requirements.lock is resolved from, as uv reads it on its standard input:
    requirements.txt, torch's CPU build, pyproject.toml's build requirements."""
    torch = f"torch=={pins(requirements)['torch']}+cpu"
    return "\n".join(["-r requirements.txt", torch, *build_requirements(pyproject)]) + "\n"


def locked_torch(root=Path(".")):
    """The torch release requirements.lock pins (e.g. ``2.13.0+cpu``)."""
    return parse_lock((Path(root) / LOCK).read_text(encoding="utf-8"))["torch"][0]


def install_steps(lock, uv, root=Path(".")):
    """[(arguments of ``session.install``, environment)] that install the lock file ``lock``
    with every file's hash required, torch from PyTorch's CPU index and the rest from PyPI
    (installers.locked_settings; pip: locked_pip_settings); after requirements.lock, the
    package itself, editable: a folder, which has no hash, built with the lock's setuptools."""
    config, torch = installers.pip_config(), locked_torch(root)
    settings = installers.locked_settings if uv else installers.locked_pip_settings
    env = settings(config, torch)
    steps = [(("--require-hashes", "-r", lock), env)]
    if lock == LOCK:
        steps.append((("--no-deps", "--no-build-isolation", "-e", "."), env))
    return steps


def compile_lock(inputs, output, env, options=()):
    """Resolve ``inputs`` into the lock file ``output`` with uv; its exit code."""
    command = [sys.executable, "-m", "uv", "pip", "compile", "-", "--generate-hashes", *TARGET]
    command += ["--no-emit-package", PROJECT_NAME, "--custom-compile-command", "nox -s lock"]
    command += ["--output-file", output, *options]
    # uv prints the lock too: its summary on stderr is enough
    return subprocess.run(command, input=inputs, text=True, env=env, stdout=subprocess.DEVNULL).returncode


def main(argv=None):
    options = sys.argv[1:] if argv is None else argv
    requirements = Path("requirements.txt").read_text(encoding="utf-8")
    inputs = lock_inputs(requirements, Path("pyproject.toml").read_text(encoding="utf-8"))
    torch = f"{pins(requirements)['torch']}+cpu"
    env = {**os.environ, **installers.locked_settings(installers.pip_config(), torch)}
    for lock, lock_input in ((LOCK, inputs), (LINT_LOCK, "\n".join(LINT_TOOLS) + "\n")):
        code = compile_lock(lock_input, lock, env, options)
        if code:
            return code
        locked = parse_lock(Path(lock).read_text(encoding="utf-8"))
        print(f"{lock}: {len(locked)} packages, each with its hashes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
