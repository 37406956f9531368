"""The pages link to where they are published and to the repository they come from, as
the Pages workflow says (conf.py: AUTOGRAD_RECIPES_SITE_URL, _REPOSITORY, _BRANCH).

One build with another address, repository, branch and date: a copy of the tiny
site's build, its English pages built again (nothing runs again: the settings change only
what is written). Every place that names the site's address must name the new one;
the shared build, made with conf.py's defaults, is the control: it names none of them.
"""

import re
import shutil
import zipfile
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import CONF, JOBS, LANGUAGES, background_build

from autograd_recipes.publish import offline_copy

OTHER = {
    "AUTOGRAD_RECIPES_SITE_URL": "https://fork.example.org/renamed-recipes",  # as configure-pages says it
    "AUTOGRAD_RECIPES_REPOSITORY": "someone-else/renamed-recipes",
    "AUTOGRAD_RECIPES_BRANCH": "trunk",
    "SOURCE_DATE_EPOCH": "1750000000",  # 2025-06-15
}
BASE = OTHER["AUTOGRAD_RECIPES_SITE_URL"] + "/"
REPOSITORY = "https://github.com/" + OTHER["AUTOGRAD_RECIPES_REPOSITORY"]
MARKERS = ("fork.example.org", "renamed-recipes", "someone-else")


def _other_address(folder, tiny):
    project = folder / "project"
    shutil.copytree(tiny.project, project, symlinks=True)
    return background_build(project, "--lang", LANGUAGES[0], env=OTHER)


JOBS.register("other address", "other_address_build", _other_address, after=["tiny"])


@pytest.fixture(scope="module")
def other_address_build():
    return JOBS.result("other address")


@pytest.fixture(scope="module")
def other_html(other_address_build):
    assert other_address_build.code == 0, other_address_build.output
    return other_address_build.project / "build" / "html"


def english_pages(html):
    tree = html / LANGUAGES[0]
    return {
        p.relative_to(tree).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(tree.rglob("*.html"))
        if not p.relative_to(tree).as_posix().startswith("_")
    }


def test_pages_name_the_address_they_are_published_at(other_html):
    lang = LANGUAGES[0]
    pages = english_pages(other_html)
    assert len(pages) >= 10  # the tiny site's eight documents, search and genindex
    for name, text in pages.items():
        assert f'<link rel="canonical" href="{BASE}{lang}/{name}">' in text, name
        for code in [*LANGUAGES, "x-default"]:
            target = LANGUAGES[0] if code == "x-default" else code
            assert f'<link rel="alternate" hreflang="{code}" href="{BASE}{target}/{name}" />' in text, (
                name,
                code,
            )
        assert f'<meta property="og:url" content="{BASE}{lang}/{name}" />' in text, name


def test_sitemap_and_404_page_name_the_new_address(other_html):
    sitemap = (other_html / "sitemap.xml").read_text(encoding="utf-8")
    locations = re.findall(r"<loc>([^<]*)</loc>", sitemap) + re.findall(r'href="([^"]*)"', sitemap)
    listed = [n for n in english_pages(other_html) if n not in {"search.html", "genindex.html"}]
    # each page of the one language built: its address and its one hreflang alternate
    assert len(locations) == 2 * len(listed) and all(url.startswith(BASE) for url in locations), locations[:5]
    page_404 = (other_html / "404.html").read_text(encoding="utf-8")
    links = re.findall(r'<a href="([^"]*)"', page_404)
    assert links == [f"/renamed-recipes/{LANGUAGES[0]}/index.html"]  # the language built


def test_edit_and_report_links_name_the_new_repository_and_branch(other_html):
    lang = LANGUAGES[0]
    for name, text in english_pages(other_html).items():
        edits = re.findall(r'<a [^>]*href="([^"]*)"[^>]*rel="edit"', text)
        if name not in {"search.html", "genindex.html"}:
            assert edits and all(url.startswith(f"{REPOSITORY}/edit/trunk/") for url in edits), (name, edits)
        report = (
            re.search(r'<a class="report-problem[^"]*" href="([^"]*)"', text).group(1).replace("&amp;", "&")
        )
        assert report.startswith(f"{REPOSITORY}/issues/new?"), name
        assert f"Page: {BASE}{lang}/{name}" in parse_qs(urlsplit(report).query)["body"][0], name
        assert "June 15, 2025." in re.search(r'<p class="provenance">(.*?)</p>', text).group(1), name


def test_colab_links_open_the_notebooks_of_the_new_repository(other_html):
    """A fork's pages open its own notebooks branch in Colab (publish/colab.py): the tiny site's
    recipes and its notebook, each once."""
    from autograd_recipes.project import Project

    project = Project(other_html.parent.parent)
    branch = (
        f"https://colab.research.google.com/github/{OTHER['AUTOGRAD_RECIPES_REPOSITORY']}/blob/notebooks/"
    )
    pages = english_pages(other_html)
    expected = [*project.recipe_docnames(), *(p.stem for p in project.notebooks())]
    assert len(expected) == 3  # the tiny site's two recipes and its notebook
    for docname in expected:
        links = re.findall(r'href="(https://colab\.research\.google\.com/[^"]*)"', pages[f"{docname}.html"])
        assert links == [f"{branch}{docname}.ipynb"], (docname, links)


def test_offline_copy_links_out_to_the_new_address(other_html):
    lang, other = LANGUAGES[0], LANGUAGES[1]
    with zipfile.ZipFile(other_html / offline_copy.archive_name(CONF["project"], lang)) as archive:
        text = archive.read(f"{offline_copy.archive_folder(CONF['project'], lang)}/index.html").decode(
            "utf-8"
        )
    assert f'href="{BASE}{other}/index.html"' in text


def test_default_build_names_none_of_them(tiny_site):
    """The control: the tiny site's build (conf.py's defaults) names its own address
    everywhere, and nothing of the other build's."""
    project, code, output = tiny_site
    html = project / "build" / "html"
    texts = {p: p.read_text(encoding="utf-8") for p in html.rglob("*") if p.suffix in {".html", ".xml"}}
    assert len(texts) >= 20
    found = [f"{p}: {m}" for p, text in texts.items() for m in MARKERS if m in text]
    assert found == []
    default = CONF["site_url"].rstrip("/") + "/"
    assert f'<link rel="canonical" href="{default}en/index.html">' in texts[html / "en" / "index.html"]
