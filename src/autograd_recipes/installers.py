"""What pip is configured with here, the same settings for uv and for the torch matrix, and
where uv and pip take the lock files' packages from.

The standard library only: ``noxfile.py`` imports it from ``src/`` before any environment
has the package.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

# where the CPU builds of torch are published (uv's ``--torch-backend cpu`` asks it for
# torch's family alone; the default torch wheels on PyPI carry CUDA, about 3 GB)
PYTORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# pip's setting -> uv's variable; uv reads no pip configuration
UV_VARIABLES = {
    "index-url": "UV_DEFAULT_INDEX",
    "extra-index-url": "UV_EXTRA_INDEX_URL",
    "find-links": "UV_FIND_LINKS",
    "constraint": "UV_CONSTRAINT",
}


def parse_pip_config(listed):
    """{"find-links": ..., ...} from ``pip config list``'s output: its configuration files'
    settings, then the PIP_* variables (``:env:`` lines), which win."""
    files, variables = {}, {}
    for line in listed.splitlines():
        match = re.match(r"(global|install|download|index|:env:)\.([\w-]+)='(.*)'$", line)
        if match:
            (variables if match[1] == ":env:" else files)[match[2]] = match[3]
    return files | variables


def pip_config():
    """pip's settings here: its configuration files and PIP_* variables."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True)
    return parse_pip_config(listed.stdout)


def uv_settings(config, environ=os.environ):
    """Environment that makes uv install what pip would: pip's indexes, find-links (where a
    CPU build of torch may lie) and constraints as UV_* variables (without them uv takes
    torch from PyPI: a CUDA build of about 3 GB), and bytecode written as it installs (uv
    writes none by default; where PYTHONDONTWRITEBYTECODE is set nothing else would, and
    every process would compile torch's modules again on import). A UV_* variable already
    set wins."""
    env = {"UV_COMPILE_BYTECODE": "1"}
    for setting, value in config.items():
        name = UV_VARIABLES.get(setting)
        if name and name not in environ:
            env[name] = value
    if "UV_EXTRA_INDEX_URL" in env or "UV_FIND_LINKS" in env:
        # pip takes the best version from all its indexes; uv by default only from the first
        # index that has the package
        env.setdefault("UV_INDEX_STRATEGY", "unsafe-best-match")
    return env


def torch_folders(config, torch_version):
    """pip's find-links folders on this disk that hold ``torch_version``'s wheel (a machine
    that keeps the CPU build of torch, and may not reach PyTorch's index)."""
    folders = [entry.removeprefix("file://") for entry in config.get("find-links", "").split()]
    return [
        folder
        for folder in folders
        if "://" not in folder and any(Path(folder).glob(f"torch-{torch_version}-*.whl"))
    ]


def locked_settings(config, torch_version, environ=os.environ):
    """Environment that makes uv install a lock file (``requirements.lock``) from where it
    was resolved: every package from the default index (PyPI) alone, pip's extra indexes
    left out (with two indexes and ``unsafe-best-match``, any name could come from either),
    and torch's family from PyTorch's CPU index (``UV_TORCH_BACKEND=cpu``: torch,
    torchvision, triton, ... and nothing else) or, where pip's find-links folders hold the
    locked torch wheel, from there instead (that index is then not asked). The lock's hashes
    decide what is installed; this decides where uv looks. Bytecode as in ``uv_settings``."""
    env = {"UV_COMPILE_BYTECODE": "1"}
    folders = torch_folders(config, torch_version)
    if folders:
        env["UV_FIND_LINKS"] = ",".join(folders)  # uv splits at commas, pip at spaces
    else:
        env["UV_TORCH_BACKEND"] = "cpu"
    return {name: value for name, value in env.items() if name not in environ}


def locked_pip_settings(config, torch_version, environ=os.environ):
    """The same for pip (nox without uv): pip has no index per package, so the CPU index is
    one more index for every name, unless pip's find-links hold the locked torch; the hashes
    are what keep each file the locked one."""
    if torch_folders(config, torch_version) or "PIP_EXTRA_INDEX_URL" in environ:
        return {}
    return {"PIP_EXTRA_INDEX_URL": PYTORCH_CPU_INDEX}


def unconstrained_pip(config, environ=os.environ):
    """Environment for pip commands that may install any torch release.

    A machine's pip configuration may cap torch at the releases stored locally (a
    ``constraint`` in its configuration file); ``PIP_CONSTRAINT=`` does not lift it, so these
    commands skip the configuration files (``PIP_CONFIG_FILE`` set to the null device) and
    carry over, as ``PIP_*`` variables, every other setting they held (certificate, indexes,
    find-links). Only these commands see it: pip elsewhere is unchanged."""
    env = {"PIP_CONFIG_FILE": os.devnull}
    for setting, value in config.items():
        name = "PIP_" + setting.upper().replace("-", "_")
        if setting != "constraint" and name not in environ:
            env[name] = value
    return env
