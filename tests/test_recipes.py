"""Each recipe is a standalone script: it runs with plain ``python``, needing only torch."""

import ast
import json
import re
import shutil
import subprocess
import sys

import background
import pytest
from conftest import FIELD_RECIPES, JOBS, RECIPES, ROOT

# recipes/autograd_graph.py: the pictures' drawer; a recipe runs without it
from autograd_recipes.project import DRAWER, PROJECT


def test_recipes_are_numbered_in_order():
    """The gallery sorts by file name: plot_01_..., plot_02_..., with no gap or repeat."""
    numbers = [int(r.name.split("_")[1]) for r in RECIPES]
    assert RECIPES and numbers == list(range(1, len(RECIPES) + 1)), [r.name for r in RECIPES]


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_recipe_imports_only_torch_and_the_standard_library(recipe):
    """Besides those, only the drawer of the site's pictures, and only where its absence is
    caught (``try: ... except ImportError``): a recipe copied on its own still runs."""
    tree = ast.parse(recipe.read_text(), filename=str(recipe))
    optional = {
        id(node)
        for handler_block in ast.walk(tree)
        if isinstance(handler_block, ast.Try)
        and any(getattr(h.type, "id", None) == "ImportError" for h in handler_block.handlers)
        for node in handler_block.body
    }
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not (node.module == DRAWER and id(node) in optional):
            imported.add(node.module.split(".")[0])
    outside = imported - set(sys.stdlib_module_names) - {"torch"}
    assert not outside, f"{recipe.name} imports {sorted(outside)}"


def drawer_fallback_source(text):
    match = re.search(
        rf"\ntry:(?:  #[^\n]*)?\n    from {DRAWER} import show_graph\nexcept ImportError:.*?\n(?=\S)",
        text,
        re.S,
    )
    assert match, "no guarded import of show_graph"
    return match.group(0)


def test_every_page_carries_the_same_drawer_fallback():
    copies = {p.name: drawer_fallback_source(p.read_text()) for p in RECIPES}
    copies["inplace_overview.md"] = drawer_fallback_source(
        (ROOT / "docs" / "inplace_overview.md").read_text()
    )
    assert len(set(copies.values())) == 1, copies


def _alone(folder):
    """One recipe run on its own in a folder, and beside the drawer (two interpreters)."""
    recipe = next(r for r in RECIPES if "show_graph(" in r.read_text())
    alone, beside = folder / "alone", folder / "beside"  # beside: the drawer next to it
    for place in (alone, beside):
        place.mkdir()
        (place / recipe.name).write_text(recipe.read_text() + "\nprint('drawer:', show_graph.__module__)\n")
    shutil.copy(recipe.parent / f"{DRAWER}.py", beside)

    def work():
        return {
            place.name: subprocess.run(
                [sys.executable, str(place / recipe.name)], capture_output=True, text=True, timeout=600
            )
            for place in (alone, beside)
        }

    return background.Task(work)


JOBS.register("recipe alone", "alone_runs", _alone)


alone_runs = JOBS.fixture("recipe alone")


def test_a_recipe_copied_alone_runs_without_the_drawer(alone_runs):
    """What a reader who downloads one recipe gets: the same run, without the pictures.
    Control: beside the drawer, the same recipe's show_graph is the drawer's."""
    runs = alone_runs
    assert runs["alone"].returncode == 0, runs["alone"].stderr
    assert runs["alone"].stdout.rstrip().endswith("drawer: __main__")
    assert runs["beside"].stdout.rstrip().endswith(f"drawer: {DRAWER}")
    without = runs["alone"].stdout.rsplit("drawer:", 1)[0]
    assert without == runs["beside"].stdout.rsplit("drawer:", 1)[0], "the pictures change no output"


# One interpreter imports torch (all a recipe may import besides the standard library),
# then forks a child per recipe that runs it as ``python recipe.py`` would: as __main__,
# with fresh globals, argv = [its path], from an unrelated working directory, and the
# drawer importable (recipes/autograd_graph.py, loaded under its module name, as the build
# loads it for the recipes of every section). Forking saves each recipe the seconds of importing torch again.
RUNNER = """
import importlib.util
import json
import os
import runpy
import sys
import traceback
import torch
# the first optimizer made in a process imports torch._dynamo (about 0.8 s): made once here,
# every child has it already; what a block prints does not change
torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)

results = {}
drawer = sys.argv[1]
for path, out in zip(sys.argv[2::2], sys.argv[3::2]):
    pid = os.fork()
    if pid == 0:
        with open(out + ".stdout", "w") as stdout, open(out + ".stderr", "w") as stderr:
            os.dup2(stdout.fileno(), 1), os.dup2(stderr.fileno(), 2)
        sys.argv = [path]
        spec = importlib.util.spec_from_file_location("DRAWER", drawer)
        sys.modules["DRAWER"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules["DRAWER"])
        try:
            runpy.run_path(path, run_name="__main__")
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush(), sys.stderr.flush()
        os._exit(code)
    results[path] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps(results))
""".replace("DRAWER", DRAWER)


def _plain(folder):
    drawer = PROJECT.recipes_dir / f"{DRAWER}.py"
    arguments = [str(drawer)] + [a for recipe in RECIPES for a in (str(recipe), str(folder / recipe.stem))]

    def work():
        result = subprocess.run(
            [sys.executable, "-c", RUNNER, *arguments],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0 and result.stderr == "", result.stderr  # importing torch is silent
        codes = json.loads(result.stdout)
        return {
            recipe: (
                codes[str(recipe)],
                *((folder / f"{recipe.stem}.{s}").read_text() for s in ("stdout", "stderr")),
            )
            for recipe in RECIPES
        }

    return background.Task(work)


JOBS.register("plain runs", "plain_runs", _plain)


plain_runs = JOBS.fixture("plain runs")


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_recipe_runs_with_plain_python(plain_runs, recipe):
    code, stdout, stderr = plain_runs[recipe]
    assert code == 0, stderr
    assert stdout, "a recipe prints what it shows"
    assert stderr == "", stderr  # no warnings leak onto the page


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


def expect_error_source(text):
    match = re.search(r"@contextlib\.contextmanager\ndef expect_error\(.*?\n(?=\S)", text, re.S)
    assert match, "no expect_error helper"
    return match.group(0)


def test_every_page_carries_the_same_expect_error():
    """Each recipe must run alone, so each carries the helper: the copies may not drift apart."""
    copies = {p.name: expect_error_source(p.read_text()) for p in RECIPES}
    for notebook in ("inplace_overview.md", "no_grad_guide.md"):
        copies[notebook] = expect_error_source((ROOT / "docs" / notebook).read_text())
    assert len(set(copies.values())) == 1, copies


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
