"""Every page of both languages links to the file to edit and to a prefilled issue, and
says what it was checked with (src/autograd_recipes/pages/source_links.py, src/autograd_recipes/pages/provenance.py)."""

import platform
import re
import shutil
import subprocess
from importlib.metadata import version
from urllib.parse import parse_qs, unquote, urlsplit

from conftest import CONF, LANGUAGES, ROOT, SITE_URL

GITHUB = f"https://github.com/{CONF['site_repository']}"
EDIT = f"{GITHUB}/edit/{CONF['site_branch']}/"
# the shared build's date is conftest.EPOCH_2024's, written as each language writes dates
CHECKED = {
    "en": "Checked on torch {torch} with Python {python}, January 1, 2024.",
    "ko": "torch {torch}, Python {python} 환경에서 2024년 1월 1일에 확인했습니다.",
}
NO_SOURCE = {"search.html", "genindex.html"}  # pages Sphinx makes from no file
HREF = re.compile(r'<a [^>]*href="([^"]*)"[^>]*>')


def pages(html, lang):
    tree = html / lang
    return {
        p.relative_to(tree).as_posix(): p
        for p in sorted(tree.rglob("*.html"))
        if not p.relative_to(tree).as_posix().startswith("_")
    }


def anchors(text, marker):
    """The hrefs of the <a> tags whose opening tag contains ``marker``."""
    return [m.group(1).replace("&amp;", "&") for m in HREF.finditer(text) if marker in m.group(0)]


def tracked_files():
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True)
    return set(listed.stdout.splitlines())


def edit_link_problems(html, tracked):
    """Edit links (rel="edit": furo's button and the footer's) that do not name a file of
    the repository, or not the file the page is made from, on any page of any language."""
    problems = []
    for lang in LANGUAGES:
        for name, path in pages(html, lang).items():
            links = anchors(path.read_text(encoding="utf-8"), 'rel="edit"')
            if name in NO_SOURCE:
                if links:
                    problems.append(f"{lang}/{name}: edit links on a page with no source: {links}")
                continue
            if len(links) != 2 or len(set(links)) != 1:
                problems.append(f"{lang}/{name}: expected furo's and the footer's edit link alike: {links}")
                continue
            if not links[0].startswith(EDIT):
                problems.append(f"{lang}/{name}: {links[0]} is not on {EDIT}")
                continue
            file = unquote(links[0][len(EDIT) :])
            if file not in tracked:
                problems.append(f"{lang}/{name}: {file} is not a file of the repository")
            elif lang != LANGUAGES[0] and file != f"locales/{lang}/LC_MESSAGES/{name[: -len('.html')]}.po":
                problems.append(f"{lang}/{name}: {file} is not the page's catalog")
    return problems


def test_every_edit_link_names_the_pages_file_in_the_repository(built_site):
    project, code, output = built_site
    assert code == 0, output
    assert edit_link_problems(project / "build/html", tracked_files()) == []


def test_edit_links_go_to_the_file_a_contributor_changes(built_site):
    """A recipe page: the recipe script (not the generated .rst); the gallery's index: its
    header; a notebook page: its .md; a Korean page: its catalog."""
    project, code, output = built_site
    html = project / "build/html"
    expected = {
        "en/recipes/plot_01_manual_weight_update.html": "recipes/plot_01_manual_weight_update.py",
        "en/recipes/index.html": "recipes/README.rst",
        "en/no_grad_guide.html": "docs/no_grad_guide.md",
        "en/index.html": "docs/index.rst",
        "ko/recipes/plot_01_manual_weight_update.html": "locales/ko/LC_MESSAGES/recipes/plot_01_manual_weight_update.po",
        "ko/index.html": "locales/ko/LC_MESSAGES/index.po",
    }
    for page, file in expected.items():
        links = anchors((html / page).read_text(encoding="utf-8"), 'rel="edit"')
        assert links == [EDIT + file] * 2, (page, links)


def test_edit_link_check_catches_a_link_to_no_file(built_site, tmp_path):
    project, code, output = built_site
    site = tmp_path / "html"
    shutil.copytree(project / "build/html", site)
    page = site / "ko" / "glossary.html"
    page.write_text(
        page.read_text(encoding="utf-8").replace("LC_MESSAGES/glossary.po", "LC_MESSAGES/glossary-old.po", 1),
        encoding="utf-8",
    )
    problems = edit_link_problems(site, tracked_files())
    assert problems == [
        "ko/glossary.html: expected furo's and the footer's edit link alike: "
        + repr([EDIT + "locales/ko/LC_MESSAGES/glossary-old.po", EDIT + "locales/ko/LC_MESSAGES/glossary.po"])
    ]
    page.write_text(
        page.read_text(encoding="utf-8").replace("glossary.po", "glossary-old.po"), encoding="utf-8"
    )
    assert edit_link_problems(site, tracked_files()) == [
        "ko/glossary.html: locales/ko/LC_MESSAGES/glossary-old.po is not a file of the repository"
    ]


def test_every_page_has_a_prefilled_report_link(built_site):
    project, code, output = built_site
    html = project / "build/html"
    torch = version("torch")
    for lang in LANGUAGES:
        for name, path in pages(html, lang).items():
            links = anchors(path.read_text(encoding="utf-8"), 'class="report-problem')
            assert len(links) == 1, (lang, name, links)
            url = urlsplit(links[0])
            assert f"{url.scheme}://{url.netloc}{url.path}" == f"{GITHUB}/issues/new", links[0]
            query = parse_qs(url.query)
            body = query["body"][0].splitlines()
            assert body[:3] == [
                f"{'Page' if lang == 'en' else '페이지'}: {SITE_URL}{lang}/{name}",
                f"{'Language' if lang == 'en' else '언어'}: {lang}",
                f"torch: {torch}",
            ], (lang, name, body)
            assert query["title"][0], (lang, name)
    title = parse_qs(
        urlsplit(anchors((html / "ko/no_grad_guide.html").read_text(), "report-problem")[0]).query
    )
    assert title["title"][0].endswith("” 페이지의 문제"), title


def test_every_page_says_what_it_was_checked_with(built_site):
    """torch's and Python's versions of the build, and the date of SOURCE_DATE_EPOCH (the
    upgrade build of test_site_build.py shows the version comes from torch's metadata)."""
    project, code, output = built_site
    html = project / "build/html"
    for lang in LANGUAGES:
        line = CHECKED[lang].format(torch=version("torch"), python=platform.python_version())
        for name, path in pages(html, lang).items():
            found = re.findall(r'<p class="provenance">(.*?)</p>', path.read_text(encoding="utf-8"))
            assert found == [line], (lang, name, found)
