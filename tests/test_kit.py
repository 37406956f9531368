"""The recipes' kit (autograd_recipes/kit/): what it may import, and its copy in a download."""

import ast
import importlib
import json
import os
import subprocess
import sys

import background
import pytest
import torch
from conftest import JOBS

from autograd_recipes import kit
from autograd_recipes.kit import graph, standalone

KIT_MODULES = sorted(set(kit.PARTS.values()))


@pytest.mark.parametrize("module", KIT_MODULES)
def test_a_kit_module_imports_only_torch_and_the_standard_library(module):
    """A download carries the module's code: an import of anything else would not run there."""
    tree = ast.parse((standalone.KIT / f"{module}.py").read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported - set(sys.stdlib_module_names) <= {"torch"}, imported


def test_the_kit_exports_each_name_from_the_module_its_parts_say():
    assert set(kit.__all__) == set(kit.PARTS) == set(standalone.CELL_SAYS)
    for name, module in kit.PARTS.items():
        assert getattr(kit, name) is getattr(importlib.import_module(f"autograd_recipes.kit.{module}"), name)


SOURCE = '''"""
A title
=======
"""

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
WORDS = "a reader's variable named as one of the drawer's globals"
x = torch.ones(2, requires_grad=True)
y = (x * 2).exp()
show_graph(y)
# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "a leaf Variable that requires grad"):
    # sphinx_gallery_end_ignore
    x.add_(1)
'''


def _copied_kit_run(folder):
    """The sample as a download, run in a fresh interpreter that cannot import the package."""
    (folder / "download.py").write_text(standalone.script(SOURCE), encoding="utf-8")
    command = [
        sys.executable,
        "-c",
        "import runpy, sys; sys.modules['autograd_recipes'] = None; "
        "sys.argv = ['download.py']; runpy.run_path('download.py', run_name='__main__')",
    ]
    env = {**os.environ, graph.GRAPHS_FOLDER: str(folder / "copied")}
    return background.Task(
        lambda: (folder, subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True))
    )


JOBS.register("copied kit run", "copied_kit_run", _copied_kit_run)


copied_kit_run = JOBS.fixture("copied kit run")


def test_a_script_download_runs_alone_with_the_kit_in_place_of_its_import(copied_kit_run):
    """No import of the package, no hidden-line marker; in a fresh interpreter that cannot
    import the package, the copied kit checks the error and draws the graph, and the same
    picture as the package's, byte for byte (an indent must not change a string of it)."""
    folder, run = copied_kit_run
    script = (folder / "download.py").read_text(encoding="utf-8")
    assert "autograd_recipes.kit import" not in script and "sphinx_gallery" not in script
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("RuntimeError: a leaf Variable that requires grad"), run.stdout
    x = torch.ones(2, requires_grad=True)
    y = (x * 2).exp()
    expected = graph.svg(graph.record(y), standalone=True)  # named from this frame: x and y
    assert (folder / "copied" / "download-1.svg").read_text(encoding="utf-8") == expected


def test_a_kit_name_it_does_not_have_is_refused():
    with pytest.raises(ValueError, match="the kit has no draw_graph"):
        standalone.script("# sphinx_gallery_start_ignore\nfrom autograd_recipes.kit import draw_graph\n")


def test_a_notebook_download_has_the_kit_in_a_collapsed_cell_before_its_first_use():
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "# A title"},
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": "import torch\n\n# sphinx_gallery_start_ignore\nfrom autograd_recipes.kit import expect_error\n\n"
            "# sphinx_gallery_end_ignore\nx = torch.ones(2)",
        },
    ]
    out = standalone.notebook_cells(cells)
    assert [c["cell_type"] for c in out] == ["markdown", "markdown", "code", "code"]
    assert out[1]["source"].startswith("The site's helper, `expect_error`, copied in"), out[1]  # it alone
    assert out[2]["metadata"] == {"jupyter": {"source_hidden": True}}
    assert "def expect_error" in out[2]["source"] and "def show_graph" not in out[2]["source"]
    assert out[3]["source"] == "import torch\n\nx = torch.ones(2)"
    namespace = {}
    exec(out[2]["source"] + "\n" + out[3]["source"], namespace)
    assert callable(namespace["expect_error"])
    json.dumps(out)  # a notebook's JSON
