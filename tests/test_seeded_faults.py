"""Faults that must fail the build and name their source file and line, on seeded copies.

One copy carries several faults at once and is built once (English), then
rebuilt without changes; each test asserts one message. A fault that stops the
build outright (a notebook kernel that dies) gets a build of its own.
"""

import json

import pytest

from conftest import build_site, copy_project

BIG = 2_000_000  # bytes printed; conf.py's max_output_bytes is 100,000
# -D: a notebook that fails to run warns instead of stopping the build, so it has no cached run
OPTIONS = ("--lang", "en", "-D", "nb_execution_raise_on_error=0")


def seed(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1))


def line_of(path, code):
    """The line number of the one line that is ``code``."""
    [number] = [n for n, line in enumerate(path.read_text().splitlines(), 1) if line == code]
    return number


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    project = copy_project(tmp_path_factory.mktemp("faults") / "project")
    recipe = project / "recipes/plot_02_residual_add.py"
    recipe.write_text(recipe.read_text() + f'\n\n# %%\n# Far too much output\nprint("x" * {BIG})\n')
    notebook = project / "docs/inplace_overview.md"
    # many short lines: myst-nb's stream merging takes time quadratic in a line's length
    seed(notebook, "\n## In place vs out of place",
         f"\n```{{code-cell}} ipython3\nfor _ in range({BIG // 80}):\n    print('y' * 79)\n```\n"
         "\n## In place vs out of place")
    lines = {"recipe": line_of(recipe, f'print("x" * {BIG})'),
             "cell": line_of(notebook, f"for _ in range({BIG // 80}):") - 1}  # its {code-cell} line
    seed(project / "docs/no_grad_guide.md", "layer = torch.nn.Linear(4, 3)\n",
         'layer = torch.nn.Linear(4, 3)\nraise KeyError("planted")\n')
    first = build_site(project, *OPTIONS)
    return project, lines, first


@pytest.fixture(scope="module")
def rebuilt(faulty):
    project, lines, first = faulty
    return project, lines, build_site(project, *OPTIONS)


MESSAGES = {
    "recipe output over the cap": lambda project, lines: (
        f"{project}/recipes/plot_02_residual_add.py:{lines['recipe']}: WARNING: this code block printed "
        f"{BIG:,} bytes, more than max_output_bytes (100,000, conf.py): its output is cut on the page"),
    "notebook cell output over the cap": lambda project, lines: (
        f"{project}/docs/inplace_overview.md:{lines['cell']}: WARNING: this cell printed "
        f"{BIG:,} bytes, more than max_output_bytes (100,000, conf.py): its output is cut on the page"),
    "notebook without a cached run": lambda project, lines: (
        f"{project}/docs/no_grad_guide.md: WARNING: no executed copy of this notebook in jupyter-cache "
        "(did it fail to run? nb_execution_mode must be 'cache'): the page gets no notebook download"),
}


@pytest.mark.parametrize("build", ["faulty", "rebuilt"])
@pytest.mark.parametrize("fault", sorted(MESSAGES))
def test_fault_fails_the_build_naming_its_source(request, build, fault):
    project, lines, (code, output) = request.getfixturevalue(build)  # a rebuild must fail the same way
    assert code != 0
    assert MESSAGES[fault](project, lines) in output, output


@pytest.mark.parametrize("page", ["recipes/plot_02_residual_add.html", "inplace_overview.html"])
def test_output_over_the_cap_is_cut_on_the_page(faulty, page):
    project, lines, first = faulty
    html = (project / "build/html/en" / page).read_text(encoding="utf-8")
    assert len(html.encode()) < 250_000
    assert "bytes printed, max_output_bytes is 100,000]" in html


def test_notebook_without_a_cached_run_offers_no_download(faulty):
    project, lines, first = faulty
    html = (project / "build/html/en/no_grad_guide.html").read_text(encoding="utf-8")
    assert ".ipynb" not in html
    assert not (project / "build/notebooks/no_grad_guide.ipynb").exists()


def test_dead_notebook_kernel_leaves_a_crumb_naming_the_cell(tmp_path):
    project = copy_project(tmp_path / "project")
    notebook = project / "docs/inplace_overview.md"
    seed(notebook, "\n## In place vs out of place",
         "\n```{code-cell} ipython3\nimport os; os._exit(1)\n```\n\n## In place vs out of place")
    crumb = tmp_path / "crumb.json"
    code, output = build_site(project, "--lang", "en", "-D", "plot_gallery=0",
                              env={"AUTOGRAD_RECIPES_BREADCRUMB": str(crumb)})
    assert code != 0
    assert "DeadKernelError: Kernel died" in output
    # what docs/build.py will print: describe(read(crumb)) in docs/_ext/breadcrumb.py
    assert json.loads(crumb.read_text()) == {
        "what": "notebook cell", "file": "docs/inplace_overview.md",
        "line": line_of(notebook, "import os; os._exit(1)") - 1,  # its {code-cell} line
        "detail": "import os; os._exit(1)",
    }
