"""Every recipe and notebook page opens its executed notebook in Colab, from the branch the Pages
workflow pushes the built notebooks to (publish/colab.py).

The tests read the shared build of the real site: its pages' links, and the folder that
``python -m autograd_recipes.publish.colab`` makes of it for the workflow to push. A fork's
links (another repository) are checked on the tiny site's build for another repository, in
tests/test_site_address.py.
"""

import html as html_text
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import CONF, LANGUAGES, RECIPES, ROOT

from autograd_recipes.project import PROJECT, torch_version

COLAB = f"https://colab.research.google.com/github/{CONF['site_repository']}/blob/{CONF['notebooks_branch']}/"
COLAB_LINK = re.compile(r'href="(https://colab\.research\.google\.com/[^"]*)"')
LINE = re.compile(r'<p class="colab-link">(.*?)</p>', re.S)
NOTEBOOK_DOWNLOAD = re.compile(r'href="([^"#?]*_downloads/[^"#?]+\.ipynb)"')
PRINTED = re.compile(r'<div class="sphx-glr-script-out[^"]*"><div class="highlight"><pre>(.*?)</pre>', re.S)


def pages(html, lang):
    """{docname: page text} of a language's pages (Sphinx's own folders left out)."""
    tree = html / lang
    return {
        p.relative_to(tree).with_suffix("").as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(tree.rglob("*.html"))
        if not p.relative_to(tree).parts[0].startswith("_")
    }


def downloaded_notebook(html, lang, docname, text):
    """The bytes of the one notebook the page offers as a download."""
    (href,) = set(NOTEBOOK_DOWNLOAD.findall(text))
    return ((html / lang / docname).parent / href).resolve().read_bytes()


@pytest.fixture(scope="module")
def pushed(built_site, tmp_path_factory):
    """The folder the workflow pushes to the notebooks branch, made from the shared build."""
    project, code, output = built_site
    assert code == 0, output
    folder = tmp_path_factory.mktemp("notebooks-branch")
    command = [sys.executable, "-m", "autograd_recipes.publish.colab", str(folder)]
    result = subprocess.run(command, cwd=project, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return folder


def test_every_recipe_and_notebook_page_has_one_colab_link_in_each_language(built_site):
    html = built_site[0] / "build" / "html"
    notebook_pages = [PROJECT.recipe_docname(r) for r in RECIPES] + [
        p.relative_to(built_site[0] / "docs").with_suffix("").as_posix()
        for p in PROJECT.notebooks(built_site[0] / "docs")
    ]
    assert len(notebook_pages) >= len(RECIPES) + 2  # the recipes, the overview and the guide
    for lang in LANGUAGES:
        for docname, text in pages(html, lang).items():
            links = COLAB_LINK.findall(text)
            if docname in notebook_pages:
                assert links == [f"{COLAB}{docname}.ipynb"], (lang, docname, links)
                assert NOTEBOOK_DOWNLOAD.search(text), (lang, docname)  # the page offers the same notebook
            else:
                assert links == [], (lang, docname)


def test_beside_the_link_the_page_names_its_torch_and_links_the_versions_page(built_site):
    html = built_site[0] / "build" / "html"
    said = {
        "en": ("Open in Colab", "Colab's torch may be another release"),
        "ko": ("Colab에서 열기", "Colab의 torch는"),
    }
    for lang in LANGUAGES:
        for docname in [PROJECT.recipe_docname(RECIPES[-1]), "no_grad_guide"]:
            page = html / lang / f"{docname}.html"
            (line,) = LINE.findall(page.read_text(encoding="utf-8"))
            opens, newer = said[lang]
            assert f">{opens}</a>" in line and newer in line, (lang, line)
            assert f"torch {torch_version()}" in line, (lang, line)  # the build's torch, not typed
            versions = re.search(r'<a class="reference internal" href="([^"]*)">', line).group(1)
            assert (page.parent / versions).resolve() == html / lang / "versions.html", (lang, line)


def test_each_link_opens_a_pushed_notebook_that_is_the_pages_download(built_site, pushed):
    html = built_site[0] / "build" / "html"
    linked = set()
    for lang in LANGUAGES:
        for docname, text in pages(html, lang).items():
            for link in COLAB_LINK.findall(text):
                path = link.removeprefix(COLAB)
                linked.add(path)
                assert (pushed / path).is_file(), (lang, docname, path)
                assert (pushed / path).read_bytes() == downloaded_notebook(html, lang, docname, text), path
    # the branch holds what the pages link, and nothing else
    files = sorted(p.relative_to(pushed).as_posix() for p in pushed.rglob("*") if p.is_file())
    assert files == sorted(linked)


def test_a_recipes_notebook_carries_the_outputs_its_page_shows(built_site, pushed):
    html = built_site[0] / "build" / "html" / LANGUAGES[0]
    for recipe in RECIPES:
        docname = PROJECT.recipe_docname(recipe)
        notebook = nbformat.read(pushed / f"{docname}.ipynb", as_version=4)
        nbformat.validate(notebook)
        outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
        page = (html / f"{docname}.html").read_text(encoding="utf-8")
        shown = [html_text.unescape(re.sub(r"<[^>]+>", "", t)).rstrip() for t in PRINTED.findall(page)]
        printed = [o.text.rstrip() for o in outputs if o.output_type == "stream"]
        assert shown and printed == shown, docname
        graphs = [o for o in outputs if o.output_type == "display_data"]
        assert len(graphs) == page.count('<figure class="autograd-graph"'), docname
        assert all("<svg" in g.data["text/html"] for g in graphs), docname


def test_an_output_in_no_code_blocks_part_of_the_page_is_an_error():
    """The control of the mapping: an output sphinx-gallery wrote after a block the notebook
    does not have as a code cell is not dropped quietly."""
    from autograd_recipes.pages import recipe_outputs

    rst = (
        ".. GENERATED FROM PYTHON SOURCE LINES 3-5\n\n.. code-block:: Python\n\n    print(1)\n\n"
        ".. rst-class:: sphx-glr-script-out\n\n .. code-block:: none\n\n    1\n\n\n"
        ".. GENERATED FROM PYTHON SOURCE LINES 7-9\n\n.. code-block:: Python\n\n    print(2)\n\n"
        ".. rst-class:: sphx-glr-script-out\n\n .. code-block:: none\n\n    2\n    \n    two\n\n"
    )
    outputs = recipe_outputs.cell_outputs(rst, [3, 7])
    assert [o["text"] for line in (3, 7) for o in outputs[line]] == ["1\n", "2\n\ntwo\n"]
    unplaced = r"shows 0 graph\(s\) and 2 output\(s\); the notebook's code cells hold 0 and 1"
    with pytest.raises(recipe_outputs.UnplacedOutput, match=unplaced):
        recipe_outputs.cell_outputs(rst, [3])


def test_the_workflow_pushes_the_folder_the_links_are_made_from_once_the_checks_pass():
    import yaml

    workflow = yaml.safe_load((ROOT / ".github/workflows/pages.yml").read_text(encoding="utf-8"))
    jobs = workflow["jobs"]
    build = "\n".join(step.get("run", "") for step in jobs["build"]["steps"])
    assert "-m autograd_recipes.publish.colab build/colab-notebooks" in build
    upload = next(s for s in jobs["build"]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "build/colab-notebooks"
    push = jobs["notebooks"]
    assert set(push["needs"]) == {"checks", "build"}
    assert push["permissions"] == {"contents": "write"}
    writers = [name for name, job in jobs.items() if job.get("permissions", {}).get("contents") == "write"]
    assert writers == ["notebooks"] and workflow["permissions"] == {}
    assert 'push -q "$URL" "HEAD:refs/heads/$BRANCH"' in push["steps"][-1]["run"]
    assert Path(ROOT / "conf.py").read_text(encoding="utf-8").count("notebooks_branch = ") == 1
