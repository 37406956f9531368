"""A recipe runs again when a module of the checkout that it imports changes (recipe_imports).

A copy of the tiny site, seeded with the tiny build's outputs, whose first recipe imports a
package at the project's root that imports a module of its own; it is built, then that
module is changed and the copy built again: the recipe runs again and its page shows what
the new module gives, while the other recipe is reused.
"""

import pytest
from conftest import JOBS, background_build, seeded_tiny
from tiny import RECIPES

from autograd_recipes.project import EXECUTION_LOG_VARIABLE

RECIPE = RECIPES[0]
HELPER = "planted_shared/values.py"  # imported through planted_shared/__init__.py


def _importing(folder, tiny):
    project = seeded_tiny(folder / "project", tiny.project)
    (project / "planted_shared").mkdir()
    (project / "planted_shared/__init__.py").write_text("from .values import SCALE\n")
    (project / HELPER).write_text("SCALE = 2\n")
    recipe = project / RECIPE
    source = recipe.read_text()
    assert "import torch\n" in source
    recipe.write_text(
        source.replace(
            "import torch\n", 'import torch\nfrom planted_shared import SCALE\n\nprint("scale", SCALE)\n', 1
        )
    )
    return background_build(project, "--lang", "en")


def _helper_changed(folder, first):
    project = first.project
    (project / HELPER).write_text("SCALE = 3\n")
    log = folder / "executions.log"
    return background_build(project, "--lang", "en", env={EXECUTION_LOG_VARIABLE: str(log)}), {"log": log}


JOBS.register("checkout import", "checkout_import_build", _importing, after=["tiny"])
JOBS.register(
    "checkout import changed", "checkout_import_rebuild", _helper_changed, after=["checkout import"]
)


@pytest.fixture(scope="module")
def checkout_import_rebuild():
    first, second = JOBS.result("checkout import"), JOBS.result("checkout import changed")
    assert first.code == 0, first.output
    return second


def test_a_change_of_a_module_a_recipe_imports_from_the_checkout_runs_it_again(checkout_import_rebuild):
    result = checkout_import_rebuild
    assert result.code == 0, result.output
    ran = result.extra["log"].read_text().splitlines() if result.extra["log"].exists() else []
    assert ran == [f"recipe {RECIPE.rsplit('/', 1)[1]}"], ran  # and not the other recipe
    page = (result.project / f"build/html/en/recipes/{RECIPE.rsplit('/', 1)[1][:-3]}.html").read_text(
        encoding="utf-8"
    )
    assert "scale 3" in page and "scale 2" not in page
    assert (
        f"autograd_recipes: {RECIPE} imports {HELPER}, which changed since its last run: it runs again"
    ) in result.output, result.output


def test_a_recipes_checkout_imports_are_found_through_packages_and_relative_imports(tmp_path):
    """Read from syntax trees alone: nothing is imported, and only files under the root count."""
    from autograd_recipes.execution.recipe_imports import checkout_imports

    root = tmp_path / "project"
    files = {
        "recipes/plot_01_x.py": "import torch\nimport beside\nfrom shared import tools\n\ndef f():\n    import late\n",
        "recipes/beside.py": "VALUE = 1\n",
        "recipes/late.py": "raise SystemExit('never run: only read')\n",
        "shared/__init__.py": "from .inner import deep\n",
        "shared/tools.py": "from . import inner\nfrom ... import outside\n",  # (above the root)
        "shared/inner/__init__.py": "",
        "shared/inner/deep.py": "import broken\n",
        "broken.py": "def (:\n",  # unparsable: counted, its imports unread
        "unused.py": "",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (tmp_path / "outside.py").write_text("")  # found, but not the checkout's
    found = {p.relative_to(root).as_posix() for p in checkout_imports(root / "recipes/plot_01_x.py", root)}
    assert found == set(files) - {"recipes/plot_01_x.py", "unused.py"}
