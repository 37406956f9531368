"""The English and Korean trees: same pages, linked to each other, Korean searchable."""

import json
import re
from pathlib import Path

import pytest
from conftest import JOBS, LANGUAGES, SITE_URL, background_build
from sphinx.search import js_index
from tiny import RECIPES

from autograd_recipes.search import utf8_index


def pages(project, lang):
    tree = project / "build" / "html" / lang
    return {
        p.relative_to(tree).as_posix()
        for p in tree.rglob("*.html")
        if not p.relative_to(tree).as_posix().startswith(("_", "jupyter_execute"))
    }


def test_both_trees_have_the_same_pages(built_site):
    project, code, output = built_site
    assert code == 0, output
    en, ko = pages(project, "en"), pages(project, "ko")
    assert en == ko and "recipes/plot_01_manual_weight_update.html" in en and len(en) >= 14


def test_every_page_links_to_its_counterpart_and_declares_languages(built_site):
    project, code, output = built_site
    html = project / "build" / "html"
    for lang, other in (("en", "ko"), ("ko", "en")):
        for page in pages(project, lang):
            text = (html / lang / page).read_text(encoding="utf-8")
            assert f'<html class="no-js" lang="{lang}"' in text, page
            switch = re.search(r'<nav class="language-switch".*?</nav>', text, re.S).group(0)
            href = re.search(rf'href="([^"]+)" hreflang="{other}"', switch).group(1)
            assert (html / lang / page).parent.joinpath(href).resolve() == (html / other / page).resolve(), (
                lang,
                page,
                href,
            )
            for code in LANGUAGES:
                assert re.search(
                    rf'<link rel="alternate" hreflang="{code}" href="{re.escape(SITE_URL)}{code}/{re.escape(page)}"',
                    text,
                ), (lang, page, code)
            canonical = f'<link rel="canonical" href="{SITE_URL}{lang}/{page}"'
            assert canonical in text, page


def test_root_page_sends_readers_to_their_language(built_site):
    project, code, output = built_site
    root = (project / "build/html/index.html").read_text(encoding="utf-8")
    assert 'href="en/index.html"' in root and 'href="ko/index.html"' in root
    assert "navigator.languages" in root


def article(project, lang, page):
    text = (project / "build/html" / lang / page).read_text(encoding="utf-8")
    return re.search(r"<article.*?</article>", text, re.S).group(0)


@pytest.mark.parametrize(
    "page",
    [
        "index.html",
        "inplace_overview.html",
        "no_grad_guide.html",
        "recipes/plot_02_residual_add.html",
        "glossary.html",
    ],
)
def test_korean_pages_are_korean_and_markup_rendered(built_site, page):
    project, code, output = built_site
    body = article(project, "ko", page)
    text = re.sub(r"<pre.*?</pre>|<code.*?</code>|<[^>]+>", " ", body, flags=re.S)
    hangul = len(re.findall(r"[\uac00-\ud7a3]", text))
    assert hangul > 100, f"{page}: only {hangul} Hangul characters"
    # markup that failed to render shows up as literal characters
    for leftover in ("**", "``", "\\ ", ":doc:", ":ref:", "{doc}"):
        assert leftover not in text, f"{page}: {leftover!r} left in the text"


def test_korean_ui_strings_are_translated(built_site):
    project, code, output = built_site
    text = (project / "build/html/ko/recipes/plot_01_manual_weight_update.html").read_text(encoding="utf-8")
    for english in (
        "On this page",
        "Back to top",
        "Skip to content",
        "Run time when this site was built",
        "Download Python source code",
        "Download Jupyter notebook",
    ):
        assert english not in text, english
    assert "이 사이트를 빌드할 때 걸린 실행 시간" in text


def test_korean_css_uses_system_fonts_and_keep_all(built_site):
    project, code, output = built_site
    css = (project / "build/html/ko/_static/site.css").read_text()
    assert 'html[lang="ko"]' in css and "word-break: keep-all" in css and "Noto Sans KR" in css
    assert "@font-face" not in css and "url(" not in css


def search_index(project, lang):
    raw = (project / "build/html" / lang / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(raw[raw.index("(") + 1 : raw.rindex(")")])


@pytest.mark.parametrize(
    "query, expected",
    [
        ("텐서는", "inplace_overview"),
        ("기울기를", "no_grad_guide"),
        ("제자리", "inplace_overview"),
        ("no_grad", "no_grad_guide"),
    ],
)
def test_korean_search_finds_pages(built_site, query, expected):
    from autograd_recipes.search.korean import SearchKorean

    project, code, output = built_site
    index = search_index(project, "ko")
    assert index["envversion"] and index["docnames"]
    lang = SearchKorean({})
    terms = [lang.stem(w) for w in lang.split(query)]
    hits = set()
    for term in terms:  # as searchtools.js does: body terms and title terms
        for found in (index["terms"].get(term), index["titleterms"].get(term)):
            if found is not None:
                hits |= {found} if isinstance(found, int) else set(found)
    names = {index["docnames"][i] for i in hits}
    assert expected in names, (query, terms, sorted(names))


def _korean_again(folder, tiny):
    """A copy of the tiny site's build, its Korean pages built again from a fresh environment."""
    import shutil

    project = folder / "project"
    shutil.copytree(tiny.project, project, symlinks=True)
    costs = sorted((project / "docs" / "recipes").glob("*.cost.json"))
    return background_build(project, "--lang", "ko", "-E"), {
        "before": {p: p.stat().st_mtime_ns for p in costs}
    }


JOBS.register("korean again", "korean_rebuild", _korean_again, after=["tiny"])


@pytest.fixture(scope="module")
def korean_rebuild():
    return JOBS.result("korean again")


def test_korean_build_runs_nothing_again(korean_rebuild):
    project, code, output = korean_rebuild.project, korean_rebuild.code, korean_rebuild.output
    costs = sorted((project / "docs" / "recipes").glob("*.cost.json"))
    assert code == 0, output
    assert "Executing notebook" not in output
    assert {p: p.stat().st_mtime_ns for p in costs} == korean_rebuild.extra["before"]


# --- a third language: one line in conf.py plus its catalogs ---------------------------
THIRD = ("fr", "Français")


def _third_language(folder, tiny):
    """A copy of the tiny site's build with a third language added the documented way: its
    line in conf.py's site_languages and a catalog per document (here the English
    itself, as msgstr: empty of translation, but complete for the catalog check)."""
    import shutil

    import polib

    project = folder / "project"
    shutil.copytree(tiny.project, project, symlinks=True)
    conf = project / "conf.py"
    line = next(line for line in conf.read_text().splitlines() if line.startswith("site_languages = {"))
    conf.write_text(conf.read_text().replace(line, line.replace("}", f', "{THIRD[0]}": "{THIRD[1]}"}}')))
    source = project / "locales" / LANGUAGES[1] / "LC_MESSAGES"
    for catalog in source.rglob("*.po"):
        po = polib.pofile(str(catalog))
        for entry in po:
            entry.msgstr = entry.msgid
        target = project / "locales" / THIRD[0] / "LC_MESSAGES" / catalog.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        po.metadata["Language"] = THIRD[0]
        po.save(str(target))
    # the English pages the new language's must match (a build of fr alone removes the en tree)
    return background_build(project, "--lang", THIRD[0]), {"english pages": pages(project, LANGUAGES[0])}


JOBS.register("third language", "third_language_build", _third_language, after=["tiny"])


@pytest.fixture(scope="module")
def third_language_build():
    return JOBS.result("third language")


def test_a_third_language_is_one_line_plus_its_catalogs(third_language_build):
    project, code, output = (
        third_language_build.project,
        third_language_build.code,
        third_language_build.output,
    )
    assert code == 0, output
    lang, html = THIRD[0], project / "build" / "html"
    assert pages(project, lang) == third_language_build.extra["english pages"]
    index = (html / lang / "index.html").read_text(encoding="utf-8")
    assert f'<html class="no-js" lang="{lang}"' in index
    switch = re.search(r'<nav class="language-switch".*?</nav>', index, re.S).group(0)
    for other in LANGUAGES:  # the new pages link every other language
        assert f'hreflang="{other}"' in switch, switch
    root = (html / "index.html").read_text(encoding="utf-8")
    assert f'href="{lang}/index.html"' in root and THIRD[1] in root
    assert not (html / LANGUAGES[0]).exists(), "an earlier build's English tree is published as current"
    assert f"built {lang} only, not {', '.join(LANGUAGES)}: " in output
    assert f"/{lang}/{Path(RECIPES[0]).with_suffix('.html')}</loc>" in (html / "sitemap.xml").read_text()
    assert 'hreflang="fr"' in (html / "404.html").read_text(encoding="utf-8")


def test_the_korean_search_index_spells_hangul_as_utf8(built_site):
    project, code, output = built_site
    raw = (project / "build/html/ko/searchindex.js").read_text(encoding="utf-8")
    escaped = [c for c in re.findall(r"\\u([0-9a-fA-F]{4})", raw) if 0xAC00 <= int(c, 16) <= 0xD7A3]
    assert not escaped, escaped[:5]
    assert "텐서" in raw


def test_the_rewritten_index_holds_the_data_sphinx_wrote(tmp_path):
    data = {"terms": {"텐서": [0, 2], "~텐서": 1, "view": [1]}, "titles": ['뷰 "따옴표"\n']}
    path = tmp_path / "searchindex.js"
    path.write_text(js_index.dumps(data), encoding="utf-8")
    utf8_index.rewrite(path)
    text = path.read_text(encoding="utf-8")
    assert js_index.loads(text) == data
    assert len(text.encode()) < len(js_index.dumps(data).encode())
