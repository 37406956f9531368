"""Every download a page offers runs alone: the same files in both languages, each run in a
fresh interpreter that cannot import this site's package, as on a reader's machine.

The recipes' scripts and the notebook pages' notebooks run (a notebook's code cells one after
another in one namespace, as "Run all" does); a recipe's notebook has its script's code, cell
by cell (the same statements, the kit's copy aside), and its zip holds the two.
"""

import ast
import io
import json
import re
import zipfile
from pathlib import Path

import background
import fork_runs
import pytest
from conftest import JOBS, LANGUAGES, RECIPES

from autograd_recipes.project import PROJECT

DOWNLOAD = re.compile(r'href="([^"#?]*_downloads/[^"#?]+)"')


def offered(html, lang):
    """{file name: bytes} of every file the language's pages link as a download."""
    found = {}
    for page in sorted((html / lang).rglob("*.html")):
        for href in DOWNLOAD.findall(page.read_text(encoding="utf-8")):
            path = (page.parent / href).resolve()
            found[path.name] = path.read_bytes()
    return found


def runnable(files):
    """The names to run: every script, and every notebook without a script of its name (a
    recipe's notebook has its script's code: test_a_recipes_notebook_has_its_scripts_code)."""
    stems = {Path(n).stem for n in files if n.endswith(".py")}
    return sorted(
        n for n in files if n.endswith(".py") or (n.endswith(".ipynb") and Path(n).stem not in stems)
    )


def _runs(folder, site):
    def work():
        files = offered(site.project / "build" / "html", LANGUAGES[0])
        names = runnable(files)
        downloaded = folder / "downloaded"  # the files alone in a folder; their outputs beside it
        downloaded.mkdir()
        for name in names:
            (downloaded / name).write_bytes(files[name])
        runs = fork_runs.run([downloaded / n for n in names], folder, alone=True)
        return {path.name: run for path, run in runs.items()}

    return background.Task(work)


JOBS.register(
    "downloads run", "download_runs", _runs, after=["site"], first=True
)  # as paste: long, from the site


download_runs = JOBS.fixture("downloads run")


@pytest.fixture(scope="module")
def downloads(built_site):
    html = built_site[0] / "build" / "html"
    return {lang: offered(html, lang) for lang in LANGUAGES}


def test_every_page_offers_its_downloads_the_same_in_both_languages(downloads):
    """A script, a notebook and their zip for each recipe, a notebook for each notebook page."""
    source = downloads[LANGUAGES[0]]
    expected = {f"{r.stem}{s}" for r in RECIPES for s in (".py", ".ipynb", ".zip")}
    expected |= {f"{p.stem}.ipynb" for p in PROJECT.notebooks()}
    assert expected <= set(source), sorted(expected - set(source))
    for lang in LANGUAGES[1:]:
        assert downloads[lang] == source, f"{lang}: {sorted(set(downloads[lang]) ^ set(source))}"


@pytest.mark.parametrize(
    "name",
    runnable({f"{r.stem}.py": b"" for r in RECIPES} | {f"{p.stem}.ipynb": b"" for p in PROJECT.notebooks()}),
)
def test_every_download_runs_alone(download_runs, name):
    """It exits 0, prints what it shows, and no warning leaks (a recipe's page would show it)."""
    code, output, errors = download_runs[name]
    assert code == 0, errors[-3000:]
    assert output and "autograd_recipes" not in output
    assert errors == "", errors[-3000:]


def _statements(code):
    """The module's statements, as ast.dump gives them, without its docstring and the kit's copy."""
    body = ast.parse(code).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    kit = [
        s
        for s in body
        if (isinstance(s, ast.FunctionDef) and s.name.startswith("_kit_"))
        or (
            isinstance(s, ast.Assign)
            and isinstance(s.value, ast.Call)
            and getattr(s.value.func, "id", "").startswith("_kit_")
        )
    ]
    assert kit, "the kit's copy is there"
    return [ast.dump(s) for s in body if s not in kit]


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_a_recipes_notebook_has_its_scripts_code_and_its_zip_both(downloads, recipe):
    files = downloads[LANGUAGES[0]]
    script = files[f"{recipe.stem}.py"].decode("utf-8")
    cells = json.loads(files[f"{recipe.stem}.ipynb"])["cells"]
    code = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert _statements(code) == _statements(script)
    with zipfile.ZipFile(io.BytesIO(files[f"{recipe.stem}.zip"])) as archive:
        assert {n: archive.read(n) for n in archive.namelist()} == {
            f"{recipe.stem}{s}": files[f"{recipe.stem}{s}"] for s in (".py", ".ipynb")
        }


def test_the_downloads_are_made_again_when_their_recipe_changes(tmp_path):
    """The second language's build reuses the first one's files only while their key holds: the
    recipe and the outputs its page shows (a run reused by sphinx-gallery keeps its page)."""
    from autograd_recipes.pages import standalone_downloads

    recipe, page = tmp_path / "plot_x.py", tmp_path / "plot_x.rst"
    recipe.write_text('"""\nA\n=\n"""\nx = 1\n', encoding="utf-8")
    page.write_text("A\n=\n", encoding="utf-8")
    first = standalone_downloads._key(recipe, page)
    assert standalone_downloads._key(recipe, page) == first
    recipe.write_text('"""\nA\n=\n"""\nx = 2\n', encoding="utf-8")
    second = standalone_downloads._key(recipe, page)
    assert second != first
    page.write_text("A\n=\n\n.. rst-class:: sphx-glr-script-out\n", encoding="utf-8")
    assert standalone_downloads._key(recipe, page) != second
