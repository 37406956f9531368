"""What the contributor sessions and the torch matrix install with: pip's settings for uv
(src/autograd_recipes/installers.py) and the matrix's environments
(src/autograd_recipes/matrix/matrix_envs.py), tried on pip's own output formats."""

import os

import pytest

from autograd_recipes.installers import parse_pip_config, unconstrained_pip, uv_settings
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
    from conftest import ROOT

    requirements = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    import numpy

    assert numpy_for("2.13.0", requirements) == f"numpy=={numpy.__version__}"
