"""Each recipe is a standalone script: it runs with plain ``python``, needing only torch."""

import ast
import re
import sys

import background
import fork_runs
import pytest
from conftest import FIELD_RECIPES, JOBS, RECIPES

from autograd_recipes import hidden_lines
from autograd_recipes.kit.graph import GRAPHS_FOLDER as GRAPHS
from autograd_recipes.project import PROJECT


def test_recipes_are_numbered_in_order():
    """The gallery sorts by file name: plot_01_..., plot_02_..., with no gap or repeat."""
    numbers = [int(r.name.split("_")[1]) for r in RECIPES]
    assert RECIPES and numbers == list(range(1, len(RECIPES) + 1)), [r.name for r in RECIPES]


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_recipe_imports_only_torch_the_standard_library_and_the_kit(recipe):
    """Besides those, only the site's kit, in a hidden line: the downloads carry its code
    instead (kit/standalone.py), and the page shows no line of it."""
    source = recipe.read_text()
    imported = set()
    for node in ast.walk(ast.parse(source, filename=str(recipe))):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module != "autograd_recipes.kit":
            imported.add(node.module.split(".")[0])
    outside = imported - set(sys.stdlib_module_names) - {"torch"}
    assert not outside, f"{recipe.name} imports {sorted(outside)}"
    assert "autograd_recipes" not in hidden_lines.shown(source)[0], "the kit's import is hidden"


# The first recipe of each section that draws a graph, run from the checkout: every recipe
# imports the kit the same way, and every recipe's code runs alone in tests/test_downloads.py.
DRAWING = [
    next(r for r in RECIPES if r.parent == section and "show_graph(" in r.read_text())
    for section in PROJECT.sections()
]


def _plain(folder):
    """Each as ``python recipes/…/plot_x.py`` runs it from an unrelated folder: the kit imported
    from the checkout's package, and AUTOGRAD_RECIPES_GRAPHS naming a folder of its own, where
    the kit's show_graph writes each picture."""

    def work():
        runs = fork_runs.run(
            DRAWING, folder, alone=False, env=lambda r: {GRAPHS: str(folder / f"{r.stem}.graphs")}
        )
        return {r: (*runs[r], sorted((folder / f"{r.stem}.graphs").glob("*.svg"))) for r in DRAWING}

    return background.Task(work)


JOBS.register("plain runs", "plain_runs", _plain)


plain_runs = JOBS.fixture("plain runs")


@pytest.mark.parametrize("recipe", DRAWING, ids=lambda p: p.stem)
def test_recipe_runs_with_plain_python_and_draws_from_the_checkout(plain_runs, built_site, recipe):
    """Each picture of the page is drawn by the plain run too, with the kit of the checkout
    (in each section: the field recipes are a folder further down)."""
    code, stdout, stderr, pictures = plain_runs[recipe]
    assert code == 0, stderr
    assert stdout, "a recipe prints what it shows"
    assert stderr == "", stderr  # no warnings leak onto the page
    page = built_site[0] / "build" / "html" / "en" / f"{PROJECT.recipe_docname(recipe)}.html"
    figures = page.read_text(encoding="utf-8").count('<figure class="autograd-graph">')
    assert len(pictures) == figures, (len(pictures), figures)
    assert all(p.read_text(encoding="utf-8").startswith("<svg") for p in pictures)


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_recipe_demonstrates_a_pitfall_and_a_checked_fix(recipe):
    """Each recipe runs at least one failing snippet through expect_error and proves its fix; a
    pitfall that raises nothing (its lede says it happens silently) asserts the wrong result
    instead, before the fix."""
    source = recipe.read_text()
    tree = ast.parse(source)
    docstring = ast.get_docstring(tree)
    assert docstring and "\n===" in docstring, "module docstring with a title"
    asserts = sum(isinstance(node, ast.Assert) for node in ast.walk(tree))
    if "with expect_error(" not in source:
        assert "silently" in docstring, "shows a real error, or says the pitfall is silent"
        assert asserts >= 2, "asserts the silent wrong result and the fix"
    assert asserts, "checks the safe version"


THREAD = re.compile(r"<https://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/\d+>`__")


def test_the_field_section_has_its_recipes():
    """The gallery's second section: the pitfalls people report, after the article's seven."""
    assert [s.name for s in PROJECT.sections()[1:]] == ["field"]
    assert len(FIELD_RECIPES) >= 8, [r.name for r in FIELD_RECIPES]


@pytest.mark.parametrize("recipe", FIELD_RECIPES, ids=lambda p: p.stem)
def test_a_field_recipe_links_the_public_threads_where_it_recurs(recipe):
    """Its last section lists at least two threads of public issue trackers (issues or pull
    requests), each with the thread's number as its title; the Korean catalog keeps the targets
    (check_catalogs refuses a translation whose link targets differ)."""
    last = recipe.read_text().rsplit("# %%\n", 1)[1]
    assert last.startswith("# Where people report it\n"), last[:80]
    assert len(THREAD.findall(last)) >= 2, last
