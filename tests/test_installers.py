"""What the contributor sessions and the torch matrix install with: pip's settings for uv
(src/autograd_recipes/installers.py), the lock files (src/autograd_recipes/locking.py) and
the matrix's environments (src/autograd_recipes/matrix/matrix_envs.py), tried on pip's own
output formats."""

import importlib.metadata
import os

import pytest
from conftest import ROOT

from autograd_recipes import locking
from autograd_recipes.installers import (
    PYTORCH_CPU_INDEX,
    locked_pip_settings,
    locked_settings,
    parse_pip_config,
    unconstrained_pip,
    uv_settings,
)
from autograd_recipes.matrix.matrix_envs import newest_patches, numpy_for

PIP_CONFIG_LIST = """\
global.find-links='/srv/wheels'
global.constraint='/etc/pip-constraints.txt'
install.extra-index-url='https://download.pytorch.org/whl/cpu'
:env:.find-links='/tmp/other-wheels'
global.cert='/etc/ssl/ca.pem'
"""


def test_pip_config_is_read_with_pip_variables_winning_over_files():
    config = parse_pip_config(PIP_CONFIG_LIST)
    assert config == {
        "find-links": "/tmp/other-wheels",  # the PIP_FIND_LINKS variable, not the file's
        "constraint": "/etc/pip-constraints.txt",
        "extra-index-url": "https://download.pytorch.org/whl/cpu",
        "cert": "/etc/ssl/ca.pem",
    }


def test_uv_gets_pips_indexes_find_links_and_constraints_unless_set_already():
    config = parse_pip_config(PIP_CONFIG_LIST)
    env = uv_settings(config, environ={"UV_CONSTRAINT": "/mine.txt"})
    assert env == {
        "UV_COMPILE_BYTECODE": "1",
        "UV_FIND_LINKS": "/tmp/other-wheels",
        "UV_EXTRA_INDEX_URL": "https://download.pytorch.org/whl/cpu",
        "UV_INDEX_STRATEGY": "unsafe-best-match",  # pip's way: the best version from every index
    }
    assert uv_settings({}, environ={}) == {"UV_COMPILE_BYTECODE": "1"}


def test_the_matrix_pip_skips_the_configured_torch_cap_and_keeps_the_rest():
    env = unconstrained_pip(parse_pip_config(PIP_CONFIG_LIST), environ={"PIP_CERT": "/set/already.pem"})
    assert env == {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_FIND_LINKS": "/tmp/other-wheels",
        "PIP_EXTRA_INDEX_URL": "https://download.pytorch.org/whl/cpu",
    }


PIP_INDEX_VERSIONS = """\
torch (2.15.0)
Available versions: 2.15.0, 2.14.1, 2.14.0, 2.13.0+cpu, 2.13.0, 2.12.1, 2.10.0, 2.9.1, 2.9.0, 2.1.2, 2.0.1, 2.0.0, 1.13.1, 2.16.0rc1
  INSTALLED: 2.13.0+cpu
  LATEST:    2.15.0
"""


def test_the_matrix_takes_the_newest_patch_of_each_minor_release_from_2_0():
    assert newest_patches(PIP_INDEX_VERSIONS) == [
        "2.0.1",
        "2.1.2",
        "2.9.1",
        "2.10.0",
        "2.12.1",
        "2.13.0",
        "2.14.1",
        "2.15.0",
    ]
    assert newest_patches("ERROR: no matching distribution") is None


@pytest.mark.parametrize(
    "release, numpy",
    [("2.0.1", "numpy<2"), ("2.2.2", "numpy<2"), ("2.3.1", "numpy==2.4.6"), ("2.13.0", "numpy==2.4.6")],
)
def test_each_release_gets_a_numpy_it_was_built_for(release, numpy):
    """torch wheels leave numpy out, and a recipe that calls numpy() needs it; the releases
    before 2.3 were built against numpy 1.x."""
    assert numpy_for(release, "torch==2.13.0\nnumpy==2.4.6\n") == numpy
    assert numpy_for("2.13.0", "torch==2.13.0\n") == "numpy"


def test_the_pinned_numpy_is_the_one_the_site_builds_with():
    requirements = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    import numpy

    assert numpy_for("2.13.0", requirements) == f"numpy=={numpy.__version__}"


def read(name):
    return (ROOT / name).read_text(encoding="utf-8")


def test_the_lock_pins_every_requirement_with_its_hashes_and_torch_as_its_cpu_build():
    """requirements.txt's pins (and pyproject.toml's build backend, and the lint tools) are
    in their lock at the same version, every locked package with at least one SHA-256, and
    torch as the CPU build, which only PyTorch's CPU index publishes."""
    lock, lint_lock = locking.parse_lock(read(locking.LOCK)), locking.parse_lock(read(locking.LINT_LOCK))
    build = locking.build_requirements(read("pyproject.toml"))
    wanted = locking.pins(read("requirements.txt")) | locking.pins("\n".join(build))
    assert wanted["torch"] == "2.13.0" and wanted["setuptools"] == "80.9.0"
    assert {name: lock.get(name, ("missing",))[0] for name in wanted} == wanted | {"torch": "2.13.0+cpu"}
    lint_wanted = locking.pins("\n".join(locking.LINT_TOOLS))
    assert {name: lint_lock[name][0] for name in lint_wanted} == lint_wanted
    assert len(lock) > 90 and locking.PROJECT_NAME not in lock  # the editable package has no hash
    unhashed = [name for name, (_, hashes) in (lock | lint_lock).items() if not hashes]
    assert unhashed == []
    assert locking.locked_torch(ROOT) == "2.13.0+cpu"


def test_the_locked_torch_comes_from_the_cpu_index_or_a_folder_that_holds_its_wheel(tmp_path):
    """uv asks PyTorch's CPU index for torch's family alone and PyPI for the rest, with no
    index strategy that mixes indexes; pip's find-links take the index's place for torch
    where they hold its wheel. pip, without an index per package, gets the CPU index as one
    more index."""
    config = parse_pip_config(PIP_CONFIG_LIST)
    assert locked_settings(config, "2.13.0+cpu", environ={}) == {
        "UV_COMPILE_BYTECODE": "1",
        "UV_TORCH_BACKEND": "cpu",  # not pip's extra index, not its find-links
    }
    assert locked_pip_settings(config, "2.13.0+cpu", environ={}) == {"PIP_EXTRA_INDEX_URL": PYTORCH_CPU_INDEX}
    (tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    config["find-links"] = f"/srv/absent file://{tmp_path} https://example.org/wheels"
    assert locked_settings(config, "2.13.0+cpu", environ={}) == {
        "UV_COMPILE_BYTECODE": "1",
        "UV_FIND_LINKS": str(tmp_path),
    }
    assert locked_settings(config, "2.12.0+cpu", environ={})["UV_TORCH_BACKEND"] == "cpu"
    assert locked_pip_settings(config, "2.13.0+cpu", environ={}) == {}


def test_every_distribution_installed_here_is_the_locked_one():
    """The tests' environment is installed from requirements.lock, as the build's is: a
    package the lock does not name, or another version of one it does, fails here (an
    environment made before the lock changed: remove .nox/<session>)."""
    lock = locking.parse_lock(read(locking.LOCK))
    # the package itself (editable), and what virtualenv seeds where nox runs without uv
    not_locked = {locking.PROJECT_NAME, "pip", "wheel"}
    installed = {
        locking.normalize(dist.metadata["Name"]): dist.version for dist in importlib.metadata.distributions()
    }
    assert installed.keys() > {"torch", "sphinx", "pytest"}
    drift = {
        name: (version, lock.get(name, ("not locked",))[0])
        for name, version in installed.items()
        if name not in not_locked and lock.get(name, ("",))[0] != version
    }
    assert drift == {}
