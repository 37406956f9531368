"""A fresh, full build of a copy of the site: warning-free, with real outputs on every page."""

import ast
import html as html_text
import json
import os
import re
import sqlite3
from pathlib import Path

import polib
import pytest
from conftest import EPOCH_2024, JOBS, LANGUAGES, RECIPES, ROOT, background_build
from tiny import RECIPES as TINY_RECIPES

from autograd_recipes.project import PROJECT


def html(project, page, lang="en"):
    return (project / "build" / "html" / lang / page).read_text(encoding="utf-8")


# a cell of each notebook page, found by its code, whose output the download must carry
KNOWN_CELLS = {
    "inplace_overview": "address = a.data_ptr()",
    "no_grad_guide": "print(f\"output's grad_fn",
    "tiny_notebook": "y = x * 2",  # the tiny site's (tests/tinysite)
}
NOTEBOOKS = ("inplace_overview", "no_grad_guide")
HIDDEN = {"remove-cell", "remove-output"}


def check_notebook_download(project, lang, name):
    """The page's .ipynb download carries as many outputs as the page shows, and the same text."""
    page = html(project, f"{name}.html", lang)
    link = re.search(rf'href="(_downloads/[^"]+/{name}\.ipynb)"', page)
    assert link, f"no notebook download on {lang}/{name}.html"
    notebook = json.loads((project / "build/html" / lang / link.group(1)).read_text(encoding="utf-8"))
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    shown = [c for c in cells if c["outputs"] and not HIDDEN & set(c["metadata"].get("tags", []))]
    assert len(shown) == page.count('class="cell_output'), f"{lang}/{name}: outputs in the download"
    known = next(c for c in cells if KNOWN_CELLS[name] in "".join(c["source"]))
    text = "".join("".join(o["text"]) for o in known["outputs"] if o["output_type"] == "stream").strip()
    on_page = [
        html_text.unescape(re.sub(r"<[^>]+>", "", block)).strip()
        for block in re.findall(
            r'<div class="output stream[^"]*"><div class="highlight"><pre>(.*?)</pre>', page, re.S
        )
    ]
    assert text and text in on_page, f"{lang}/{name}: the known cell's output differs"


def test_fresh_build_succeeds_without_warnings(built_site):
    project, code, output = built_site
    assert code == 0, output
    # neither Sphinx's warnings ("WARNING:") nor anyone else's, such as the notebook
    # kernel's "[IPKernelApp] WARNING | Kernel is running over TCP" (kernels use IPC)
    assert not re.search(r"WARNING|ERROR", output), output
    ran = sorted(p.name for p in (project / "docs" / PROJECT.gallery_dir).rglob("*.cost.json"))
    assert ran == sorted(f"{r.stem}.cost.json" for r in RECIPES)


def test_a_cold_build_runs_each_notebook_once_beside_the_gallery(tiny_site):
    """The notebooks start before the gallery's first recipe (notebook_prerun), each run
    once: myst-nb, reading the page later, takes the run from jupyter-cache."""
    project, code, output = tiny_site
    assert code == 0, output
    log = (project.parent / "executions.log").read_text().splitlines()
    assert log == ["notebook tiny_notebook.md", *(f"recipe {Path(r).name}" for r in TINY_RECIPES)], log
    assert output.count("Executing notebook with kernel") == 1, output


def test_every_page_has_one_viewport_tag(built_site):
    """furo writes one; docutils' writer added a second to every page with a source (autograd_recipes.theme)."""
    project, code, output = built_site
    assert code == 0, output
    site = project / "build" / "html"
    counts = {
        page.relative_to(site).as_posix(): page.read_text(encoding="utf-8").count('<meta name="viewport"')
        for page in sorted(site.rglob("*.html"))
    }
    assert len(counts) > 30 and "ko/recipes/index.html" in counts and "index.html" in counts
    assert {page: count for page, count in counts.items() if count != 1} == {}


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.stem)
def test_recipe_page_shows_its_run_time_and_no_build_path(built_site, recipe):
    """What its run printed is the copy test's (tests/test_copy_paste.py), its downloads the
    downloads test's (tests/test_downloads.py)."""
    project, code, output = built_site
    assert code == 0, output
    page = html(project, f"{PROJECT.recipe_docname(recipe)}.html")
    assert "/work/" not in page and "/tmp/" not in page, "absolute build path on the page"
    runtime = re.search(
        r'Run time when this site was built:</strong> <span class="measured">([\d.]+ m?s)</span>', page
    )
    assert runtime, "run time missing"


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_download_carries_the_page_outputs(built_site, name, lang):
    project, code, output = built_site
    assert code == 0, output
    check_notebook_download(project, lang, name)


def lede(recipe, lang):
    """The recipe's one-sentence lede (its docstring's first paragraph), in ``lang``."""
    english = " ".join(ast.get_docstring(ast.parse(recipe.read_text())).split("\n\n")[1].split())
    if lang == "en":
        return english
    catalog = polib.pofile(str(ROOT / f"locales/{lang}/LC_MESSAGES/{PROJECT.recipe_docname(recipe)}.po"))
    from autograd_recipes.i18n.first_gloss import GLOSS  # the landing page drops the recipe page's glosses

    return GLOSS.sub("", catalog.find(english).msgstr)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_landing_page_lists_every_recipe_with_its_lede(built_site, lang):
    project, code, output = built_site
    page = (project / "build/html" / lang / "index.html").read_text(encoding="utf-8")
    text = " ".join(html_text.unescape(re.sub(r"<[^>]+>", "", page)).split())
    text = text.translate(str.maketrans("“”’", '""\''))  # Sphinx's smart quotes
    assert 'href="inplace_overview.html"' in page
    for recipe in RECIPES:
        assert f'href="{PROJECT.recipe_docname(recipe)}.html"' in page
        words = " ".join(re.sub(r"``|\\ ", "", lede(recipe, lang)).split())
        assert words in text, f"{lang}: the lede of {recipe.name} is not on the landing page: {words!r}"


def test_code_blocks_have_a_copy_button_that_skips_output(built_site):
    project, code, output = built_site
    page = html(project, "recipes/plot_03_clone_before_inplace.html")
    assert "copybutton.js" in page
    options = (project / "build/html/en/_static/copybutton.js").read_text()
    assert ":not(.sphx-glr-script-out)" in options


def _rebuilt(folder, second):
    """The determinism test's second tiny build, built again in place without a change."""
    project = second.project
    costs = sorted((project / "docs" / "recipes").glob("*.cost.json"))
    notebooks = [project / f"build/doctrees/html-{lang}/tiny_notebook.doctree" for lang in LANGUAGES]
    before = {p: p.stat().st_mtime_ns for p in [*costs, *notebooks]}
    pages = {p: p.read_bytes() for p in sorted((project / "build/html").rglob("*.html"))}
    # the first build's date: another would be a change (every page's footer shows it)
    return background_build(project, env={"SOURCE_DATE_EPOCH": EPOCH_2024}), {
        "costs": costs,
        "notebooks": notebooks,
        "before": before,
        "pages": pages,
    }


JOBS.register("tiny rebuilt", "tiny_rebuild", _rebuilt, after=["tiny again"])


@pytest.fixture(scope="module")
def tiny_rebuild():
    return JOBS.result("tiny rebuilt")


def test_rebuild_without_changes_succeeds_and_runs_nothing(tiny_rebuild):
    project, code, output, extra = (
        tiny_rebuild.project,
        tiny_rebuild.code,
        tiny_rebuild.output,
        tiny_rebuild.extra,
    )
    assert code == 0, output
    assert len(extra["costs"]) == len(TINY_RECIPES)
    assert "Executing notebook" not in output
    now = {p: p.stat().st_mtime_ns for p in extra["before"]}
    assert {p: now[p] for p in extra["costs"]} == {p: extra["before"][p] for p in extra["costs"]}, (
        "a recipe ran again"
    )
    assert {p: now[p] for p in extra["notebooks"]} == {p: extra["before"][p] for p in extra["notebooks"]}, (
        "a notebook page was read again"
    )
    for lang in LANGUAGES:
        check_notebook_download(project, lang, "tiny_notebook")


def test_a_rebuild_without_changes_writes_the_pages_a_cold_build_wrote(tiny_rebuild):
    """An incremental build's pages are byte for byte the cold build's (a stylesheet link
    that gains ``?v=`` only in incremental builds would differ on every notebook page)."""
    project, before = tiny_rebuild.project, tiny_rebuild.extra["pages"]
    assert tiny_rebuild.code == 0, tiny_rebuild.output
    after = {p: p.read_bytes() for p in sorted((project / "build/html").rglob("*.html"))}
    assert sorted(after) == sorted(before)
    differ = [p.relative_to(project).as_posix() for p in before if after[p] != before[p]]
    assert differ == [], f"pages that differ from the cold build's: {differ}"
    notebook = (project / "build/html/en/tiny_notebook.html").read_text(encoding="utf-8")
    assert re.search(r'href="_static/mystnb\.[0-9a-f]+\.css\?v=[0-9a-f]{8}"', notebook), (
        "myst-nb's stylesheet link"
    )


def _upgraded(folder, tiny):
    """A copy of the tiny site's build, built again with torch's metadata saying 2.99.0."""
    import shutil

    project = folder / "project"
    shutil.copytree(tiny.project, project, symlinks=True)
    fake = folder / "upgraded" / "torch-2.99.0.dist-info"
    fake.mkdir(parents=True)
    (fake / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.99.0\n")
    costs = sorted((project / "docs" / "recipes").glob("*.cost.json"))
    before = {p: p.stat().st_mtime_ns for p in costs}
    build = background_build(project, "--lang", "en", env={"PYTHONPATH": str(fake.parent)})
    return build, {"before": before}


JOBS.register("torch upgrade", "upgraded_build", _upgraded, after=["tiny"])


@pytest.fixture(scope="module")
def upgraded_build():
    return JOBS.result("torch upgrade")


def test_torch_upgrade_runs_every_recipe_and_notebook_again(upgraded_build):
    """A torch upgrade with no source change must not publish the old torch's outputs.

    The build reads the installed torch's version from its distribution metadata (it
    does not import torch to decide); a ``torch-2.99.0.dist-info`` first on the path is
    what an upgrade changes there, while the same torch still runs the code.
    """
    project, code, output = upgraded_build.project, upgraded_build.code, upgraded_build.output
    before = upgraded_build.extra["before"]
    costs = sorted((project / "docs" / "recipes").glob("*.cost.json"))
    assert code == 0, output
    assert len(costs) == len(TINY_RECIPES) and all(p.stat().st_mtime_ns != before[p] for p in costs), (
        "a recipe was not run again"
    )
    assert output.count("Executing notebook") == 1, output
    # built in English only: the earlier build's Korean pages are not published as current
    assert not (project / "build/html" / LANGUAGES[1]).exists()
    assert not list((project / "build/html").glob(f"*-{LANGUAGES[1]}.zip"))
    assert f"build/html/{LANGUAGES[1]}: an earlier build made it, and this one does not build" in output
    assert f"built {LANGUAGES[0]} only, not {LANGUAGES[1]}: " in output
    root = (project / "build/html/index.html").read_text(encoding="utf-8")
    assert f'href="{LANGUAGES[0]}/index.html"' in root and f'href="{LANGUAGES[1]}/' not in root
    assert f"/{LANGUAGES[1]}/" not in (project / "build/html/sitemap.xml").read_text(encoding="utf-8")
    report = html(project, "build_report.html")
    assert "2.99.0" in report
    # every page's provenance line names the torch the build saw (src/autograd_recipes/pages/provenance.py)
    for page in ("index.html", "claims.html", Path(TINY_RECIPES[0]).with_suffix(".html").as_posix()):
        assert "Checked on torch 2.99.0 with Python" in html(project, page), page
    # one label: the claims page's own line says what its footer says, though torch.__version__
    # (the running torch's) differs from the distribution's here, as on PyPI's CUDA build
    claims = html(project, "claims.html")
    assert set(re.findall(r"Checked on torch ([^\s:]+): \d+ claims", claims)) == {"2.99.0"}, claims[:3000]


def test_the_outputs_key_reads_the_kit_the_recipes_import(tmp_path):
    """A changed kit (autograd_recipes/kit/graph.py, which every recipe and notebook imports)
    changes the key the executed outputs are kept under: the package is imported from a copy
    of it, unchanged and then changed."""
    import shutil
    import subprocess
    import sys

    from autograd_recipes.project import PACKAGE

    script = "from autograd_recipes.execution import cache_key; print(cache_key.environment_key())"
    keys = []
    for name, extra in (("same", ""), ("changed", "\n# a changed drawer\n")):
        package = tmp_path / name / "autograd_recipes"
        shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
        with open(package / "kit" / "graph.py", "a", encoding="utf-8") as drawer:
            drawer.write(extra)
        env = {**os.environ, "PYTHONPATH": str(package.parent)}
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        keys.append(done.stdout.strip())
    here = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert keys[0] == here.stdout.strip() and keys[1] != keys[0], keys


REMOVED = "plot_02_clone_first"  # a tiny recipe that the "recipe removed" build deletes


def _removed_recipe(folder, tiny):
    """A copy of the tiny site's build with what an earlier build leaves behind, built
    again: one recipe deleted (with its catalog and its claim), whose pages must leave the
    site, and jupyter-cache's database damaged (as a killed write or a bad disk leaves it),
    which must be named and made again."""
    import shutil

    project = folder / "project"
    shutil.copytree(tiny.project, project, symlinks=True)
    (database,) = (project / "build" / ".jupyter_cache").glob("*/global.db")
    damaged = bytearray(database.read_bytes())
    damaged[4096:] = b"Z" * (len(damaged) - 4096)  # every page after the first: "malformed"
    database.write_bytes(damaged)
    (project / "recipes" / f"{REMOVED}.py").unlink()
    (project / "locales/ko/LC_MESSAGES/recipes" / f"{REMOVED}.po").unlink()
    claims = project / "docs" / "claims.toml"
    parts = claims.read_text(encoding="utf-8").split("\n[[claim]]\n")
    kept = [p for p in parts if f'page = "recipes/{REMOVED}"' not in p]
    assert len(kept) == len(parts) - 1, "the tiny site has one claim on the removed recipe's page"
    claims.write_text("\n[[claim]]\n".join(kept), encoding="utf-8")
    return background_build(project, env={"SOURCE_DATE_EPOCH": EPOCH_2024})


JOBS.register("recipe removed", "removed_recipe_build", _removed_recipe, after=["tiny"])


@pytest.fixture(scope="module")
def removed_recipe_build():
    result = JOBS.result("recipe removed")
    assert result.code == 0, result.output
    return result


EDITS = {  # an output line, as a sed over docs/ or a hand edit of the cache would change it
    "recipe": (
        "docs/recipes/plot_01_leaf_update.rst",
        "tensor([ 0.3000, -0.7000]",
        "tensor([ 9.9999, -0.7000]",
    ),
    "notebook": (None, "does not have a grad_fn", "has a planted edit"),
}


def _edited_outputs(folder, tiny):
    """A copy of the tiny site's build whose reused outputs were edited after their run:
    one line of a recipe's generated page, and one of a notebook's executed copy in
    jupyter-cache (with build/doctrees removed, so the notebook page is read again)."""
    import shutil

    project = folder / "project"
    shutil.copytree(tiny.project, project, symlinks=True)
    (executed,) = (project / "build" / ".jupyter_cache").glob("*/executed/*/*.ipynb")
    edited = {}
    for what, (path, old, new) in EDITS.items():
        path = project / path if path else executed
        text = path.read_text(encoding="utf-8")
        assert old in text, (what, path)
        path.write_text(text.replace(old, new), encoding="utf-8")
        edited[what] = path
    shutil.rmtree(project / "build" / "doctrees")
    costs = {p: p.stat().st_mtime_ns for p in (project / "docs" / "recipes").glob("*.cost.json")}
    build = background_build(project, "--lang", "en", env={"SOURCE_DATE_EPOCH": EPOCH_2024})
    return build, {"edited": edited, "costs": costs}


JOBS.register("outputs edited", "edited_outputs_build", _edited_outputs, after=["tiny"])


@pytest.fixture(scope="module")
def edited_outputs_build():
    return JOBS.result("outputs edited")


def test_an_edited_output_is_not_published_its_code_runs_again(edited_outputs_build):
    """Control: the other recipe, whose files are as its run wrote them, is reused."""
    result = edited_outputs_build
    project, output = result.project, result.output
    assert result.code == 0, output[-3000:]
    executed = result.extra["edited"]["notebook"]
    assert (
        "autograd_recipes: docs/recipes/plot_01_leaf_update.rst: changed since its run; "
        "recipes/plot_01_leaf_update.py runs again so that its page shows what its run printed"
    ) in output, output[-3000:]
    cache = executed.relative_to(project).parts[:3]
    assert (
        f"autograd_recipes: {'/'.join(cache)}/{executed.relative_to(project / '/'.join(cache)).as_posix()}: "
        f"changed since its run: removed {'/'.join(cache)}/; the notebooks run again"
    ) in output, output[-3000:]
    for what, (path, _old, new) in EDITS.items():
        assert new not in html(
            project, "recipes/plot_01_leaf_update.html" if path else "tiny_notebook.html"
        ), what
    assert "tensor([ 0.3000, -0.7000]" in html(project, "recipes/plot_01_leaf_update.html")
    assert "does not have a grad_fn" in html(project, "tiny_notebook.html")
    check_notebook_download(project, "en", "tiny_notebook")  # the download carries the page's outputs
    now = {p: p.stat().st_mtime_ns for p in result.extra["costs"]}
    rerun = sorted(p.name for p in now if now[p] != result.extra["costs"][p])
    assert rerun == ["plot_01_leaf_update.cost.json"], rerun


def test_a_damaged_notebook_cache_is_named_and_made_again(removed_recipe_build):
    project, output = removed_recipe_build.project, removed_recipe_build.output
    (database,) = (project / "build" / ".jupyter_cache").glob("*/global.db")
    cache = database.parent.relative_to(project).as_posix()
    assert (
        f"{cache}/global.db: jupyter-cache's database is damaged (database disk image is malformed): "
        f"removed {cache}/; the notebooks run again"
    ) in output, output[-3000:]
    assert output.count("removed " + cache) == 1, output  # the first language's build remade it
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    assert "cell_output" in html(project, "tiny_notebook.html")  # its cells ran again and show output


def test_a_removed_recipe_leaves_no_generated_file(removed_recipe_build):
    project, output = removed_recipe_build.project, removed_recipe_build.output
    left = sorted(p.name for p in (project / "docs" / "recipes").rglob(f"*{REMOVED}*"))
    assert left == [], left
    assert (
        f"docs/recipes/{REMOVED}.rst: generated from a recipes/ script {REMOVED}.py, which is gone" in output
    )


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_removed_recipe_leaves_the_published_site(removed_recipe_build, lang):
    import zipfile

    project, output = removed_recipe_build.project, removed_recipe_build.output
    tree = project / "build" / "html" / lang
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob(f"*{REMOVED}*")) == []
    assert f"build/html/{lang}/recipes/{REMOVED}.html: no document of this build made it" in output
    assert f"build/html/{lang}/_sources/recipes/{REMOVED}.rst.txt: no document" in output
    assert REMOVED not in (project / "build/html/sitemap.xml").read_text(encoding="utf-8")
    (archive,) = (project / "build" / "html").glob(f"*-{lang}.zip")
    assert [n for n in zipfile.ZipFile(archive).namelist() if REMOVED in n] == []
    index = (tree / "searchindex.js").read_text(encoding="utf-8")
    docnames = json.loads(re.search(r'"docnames":(\[[^\]]*\])', index).group(1))
    assert f"recipes/{REMOVED}" not in docnames and "recipes/plot_01_leaf_update" in docnames
    assert REMOVED not in html(project, "recipes/index.html", lang)
