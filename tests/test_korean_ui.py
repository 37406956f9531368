"""What a Korean reader sees or hears on the Korean site is Korean (src/autograd_recipes/pages/ui_strings.py).

In Chromium: every Korean page's visible text and accessible names hold no English
UI phrase (code, code output, proper names, claim ids and glosses excepted); no
table cell breaks a word at phone or desktop width (word-break: keep-all); the
copy button and the search result count are Korean. Without a browser: furo
still has each string we translate.

The page-by-page scans (SCAN, BROKEN_WORDS) run in the one visit per page of
tests/browser_pass.py; the tests here judge what they recorded.
"""

import re

import pytest
from browser_pass import KOREAN_SEARCH

from autograd_recipes.pages import ui_strings

# Quoted text is torch's own English (an error message), shown as it is.
QUOTED = re.compile(r"[\"“'‘][^\"”'’]*[\"”'’]")
# Two or more English words in a row, outside code and output.
ENGLISH = re.compile(r"[A-Za-z][A-Za-z'’]+(?:[ /][A-Za-z][A-Za-z'’]*)+")
ALLOWED = re.compile(
    r"^(Autograd Recipes|PyTorch Korea|Python float|Python|Jupyter|autograd-recipes|dL/d[Wyb])$"
    r"|^(Hugging Face|AOT Autograd|minGPT DDP)$"  # names of projects, as the threads name them
    r"|^[\w.-]+/[\w./-]+$"  # a repository (pytorch/pytorch) or a file's path (loops/utilities)
    r"|^[a-z -]+$"  # a gloss: "(leaf tensor)", "computational graph"
)
SEARCH_WITH_RESULTS = KOREAN_SEARCH.removeprefix("ko/")  # "search.html?q=텐서"


def test_furo_still_has_the_strings_we_translate():
    assert ui_strings.furo_drift() == []


def korean_names(html):
    """The Korean pages, relative to ko/."""
    return [
        p.relative_to(html / "ko").as_posix()
        for p in sorted((html / "ko").rglob("*.html"))
        if not p.relative_to(html / "ko").as_posix().startswith(("_", "jupyter_execute"))
    ]


@pytest.fixture(scope="module")
def korean(served_site, chromium):
    """(base URL of the served Korean site, Chromium)."""
    base, html = served_site
    return base + "ko/", chromium


@pytest.fixture(scope="module")
def korean_visits(page_visits):
    """(Korean page names, {name: its visit}): what the one visit per page recorded
    (browser_pass.visit_site runs SCAN and BROKEN_WORDS), and the search page with
    results, which only the text scan reads."""
    html, visits = page_visits
    names = korean_names(html)
    return names, {name: visits[f"ko/{name}"] for name in [*names, SEARCH_WITH_RESULTS]}


def test_no_english_ui_on_korean_pages(korean_visits):
    names, visits = korean_visits
    found = []
    for name in [*names, SEARCH_WITH_RESULTS]:
        for text in visits[name].texts:
            text = QUOTED.sub(" ", text)
            found += [f"{name}: {m!r}" for m in ENGLISH.findall(text) if not ALLOWED.match(m)]
    assert not found, "\n".join(sorted(set(found)))


@pytest.mark.parametrize("width", [390, 1200])  # browser_pass.BROKEN_WORD_WIDTHS
def test_no_table_cell_breaks_a_word(korean_visits, width):
    names, visits = korean_visits
    broken = {}
    for name in names:
        words = visits[name].broken_words[width]
        if words:
            broken[name] = words
    assert not broken, broken


def test_copy_button_and_search_count_are_korean(korean):
    base, browser = korean
    page = browser.new_page()
    page.goto(base + "recipes/plot_03_clone_before_inplace.html")
    button = page.locator("button.copybtn").first
    assert button.get_attribute("data-tooltip") == "복사"
    assert button.locator("svg title").text_content() == "클립보드에 복사"
    page.goto(base + "search.html?q=텐서")
    page.wait_for_function("() => document.querySelector('.search-summary')?.innerText.trim()", timeout=15000)
    assert re.fullmatch(
        r"검색을 마쳤습니다\. 검색어와 일치하는 페이지를 \d+개 찾았습니다\.",
        page.inner_text(".search-summary"),
    )
    page.close()
