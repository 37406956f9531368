"""What a Korean reader sees or hears on the Korean site is Korean (docs/_ext/ui_strings.py).

In Chromium: every Korean page's visible text and accessible names hold no English
UI phrase (code, code output, proper names, claim ids and glosses excepted); no
table cell breaks a word at phone or desktop width (word-break: keep-all); the
copy button and the search result count are Korean. Without a browser: furo
still has each string we translate.
"""

import functools
import http.server
import re
import sys
import threading
from pathlib import Path

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import ui_strings  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
# Quoted text is torch's own English (an error message), shown as it is.
QUOTED = re.compile(r"[\"“'‘][^\"”'’]*[\"”'’]")
# Two or more English words in a row, outside code and output.
ENGLISH = re.compile(r"[A-Za-z][A-Za-z'’]+(?:[ /][A-Za-z][A-Za-z'’]*)+")
ALLOWED = re.compile(
    r"^(Autograd Recipes|PyTorch Korea|Python float|Python|Jupyter|autograd-recipes|dL/dW)$"
    r"|^[a-z -]+$"  # a gloss: "(leaf tensor)", "computational graph"
)
SCAN = """() => {
  const skip = "pre, code, .highlight, .output, .cell_output, .measured, math, script, style, noscript,"
    + " .claim-evidence, .claim-section, [lang=en], .sphx-glr-script-out, .search .context";
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (el && !el.closest(skip) && walker.currentNode.textContent.trim()) out.push(walker.currentNode.textContent);
  }
  for (const el of document.querySelectorAll("[aria-label], [alt], [data-tooltip], svg title"))
    out.push(el.getAttribute("aria-label") || el.getAttribute("alt") || el.getAttribute("data-tooltip")
      || el.textContent);
  for (const el of document.querySelectorAll("[title]"))
    if (!el.closest(".claim-link, code")) out.push(el.getAttribute("title"));
  return out;
}"""
# For each table cell: the words drawn on more than one line.
BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll("article td, article th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      for (const m of node.textContent.matchAll(/[\\uac00-\\ud7a3]+|[A-Za-z0-9_]+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""


def test_furo_still_has_the_strings_we_translate():
    assert ui_strings.furo_drift() == []


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def korean(built_site):
    """(base URL of the served site, Chromium, Korean page names)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    project, code, output = built_site
    assert code == 0, output
    html = project / "build" / "html"
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    names = [
        p.relative_to(html / "ko").as_posix()
        for p in sorted((html / "ko").rglob("*.html"))
        if not p.relative_to(html / "ko").as_posix().startswith(("_", "jupyter_execute"))
    ]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield f"http://127.0.0.1:{server.server_port}/ko/", browser, names
        browser.close()
    server.shutdown()


def test_no_english_ui_on_korean_pages(korean):
    base, browser, names = korean
    page = browser.new_page()
    found = []
    for name in [*names, "search.html?q=텐서"]:
        page.goto(base + name, wait_until="networkidle")
        for text in page.evaluate(SCAN):
            text = QUOTED.sub(" ", text)
            found += [f"{name}: {m!r}" for m in ENGLISH.findall(text) if not ALLOWED.match(m)]
    page.close()
    assert not found, "\n".join(sorted(set(found)))


@pytest.mark.parametrize("width", [390, 1200])
def test_no_table_cell_breaks_a_word(korean, width):
    base, browser, names = korean
    page = browser.new_page(viewport={"width": width, "height": 900})
    broken = {}
    for name in names:
        page.goto(base + name)
        words = page.evaluate(BROKEN_WORDS)
        if words:
            broken[name] = words
    page.close()
    assert not broken, broken


def test_copy_button_and_search_count_are_korean(korean):
    base, browser, names = korean
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
