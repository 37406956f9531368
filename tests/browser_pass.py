"""The browser tests' one place for Chromium: its path and flags, the local server, and
the one visit per page that the page-by-page checks share.

``visit_site`` opens every page of both languages once, a few pages at a time in one
Chromium (driven by playwright's async API: while one page waits for the network to go
quiet or runs axe, another loads). In that visit it records what the tests check:

- every page: console errors, page errors, failed requests, the HTTP status, every
  request's URL, axe's violations and the contrast of every token of highlighted code in
  the light and the dark theme (tests/test_browser.py);
- Korean pages: the visible text and accessible names (SCAN) and, after axe, the words
  that a table cell draws on more than one line (BROKEN_WORDS) at 1200 px and then,
  resized without a reload, at 390 px (tests/test_korean_ui.py).

Checks that need a page of their own (the root page's language choice, the site from
disk, the copy button, the theme toggle, the language switch, screenshots) keep it.
"""

import asyncio
import contextlib
import functools
import http.server
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
SUB_PATH = "/autograd-recipes/"  # the site is served below a sub-path, as on GitHub Pages
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# Pages open at once: on two cores this keeps both busy (one page runs axe while
# another loads or waits for the network to go quiet) without starving either.
CONCURRENT_PAGES = 3
AXE_VIEWPORT = {"width": 1280, "height": 720}  # playwright's default, as a new context gets
BROKEN_WORD_WIDTHS = (1200, 390)  # desktop, then phone: the same page resized, not reloaded
# A Korean search with results, for the visible-text scan: result counts and snippets.
KOREAN_SEARCH = "ko/search.html?q=텐서"

# Every text node and accessible name a Korean reader sees or hears, outside code and
# output (tests/test_korean_ui.py decides which of them are English UI).
SCAN = r"""() => {
  const skip = "pre, code, .highlight, .output, .cell_output, .measured, math, script, style, noscript,"
    + " .claim-evidence, .claim-section, [lang=en], .sphx-glr-script-out, .search .context,"
    + " svg.ag text:not(.ag-tag)";  // a graph picture's torch names and versions; its words are checked
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const thread = /^[\w.-]+\/[\w.-]+#\d+$/;  // a public thread's name (owner/repository#number)
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement, text = walker.currentNode.textContent.trim();
    if (el && !el.closest(skip) && text && !thread.test(text)) out.push(walker.currentNode.textContent);
  }
  for (const el of document.querySelectorAll("[aria-label], [alt], [data-tooltip], svg title"))
    out.push(el.getAttribute("aria-label") || el.getAttribute("alt") || el.getAttribute("data-tooltip")
      || el.textContent);
  for (const el of document.querySelectorAll("[title]"))
    if (!el.closest(".claim-link, code")) out.push(el.getAttribute("title"));
  return out;
}"""
# axe's color-contrast finds each text's background by hit-testing the elements stacked under
# it, which is most of axe's time on a page of code (2.6 of 2.9 s on the guide). Highlighted
# code is many coloured tokens on the code block's own solid background: CODE_CONTRAST checks
# each of them directly, in both themes (axe sees only the theme the page loads in), and axe
# checks the contrast of everything else.
AXE_SETUP = """() => axe.configure({rules: [{id: "color-contrast", selector: "*:not(.highlight *)"}]})"""
# axe's violations, and the rules that found something to judge (passed, failed or undecided):
# a selector that axe stopped reading would leave the contrast rule judging nothing, silently
AXE_RUN = """() => axe.run(document, {resultTypes: ["violations"]}).then((r) =>
  [r.violations, [...r.passes, ...r.violations, ...r.incomplete].map((rule) => rule.id)])"""
# Every text-bearing element of highlighted code: its colour against the first solid background
# at or above it; the pairs under 4.5:1 (WCAG AA for text under 24 px, as code is), and how many
# elements were checked, on which backgrounds.
CODE_CONTRAST = """() => {
  const rgba = (css) => (css.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((c) => c / 255)
    .map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
    .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => { const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x); return (hi + 0.05) / (lo + 0.05); };
  const low = [], backgrounds = new Set();
  let checked = 0;
  for (const el of document.querySelectorAll(".highlight pre, .highlight pre *")) {
    if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
    let under = el, bg;
    while (under && (bg = rgba(getComputedStyle(under).backgroundColor)).length === 4 && bg[3] === 0)
      under = under.parentElement;
    const fg = rgba(getComputedStyle(el).color);
    checked++;
    // a translucent colour or background mixes with what is under it: not judged here, refused
    if ((fg.length === 4 && fg[3] < 1) || (bg.length === 4 && bg[3] < 1)) {
      low.push(`${el.className || el.tagName}: translucent ${getComputedStyle(el).color} on ${getComputedStyle(under).backgroundColor}`);
      continue;
    }
    backgrounds.add(getComputedStyle(under).backgroundColor);
    const r = ratio(fg, bg);
    if (r < 4.5) low.push(`${el.className || el.tagName}: ${getComputedStyle(el).color} on ${getComputedStyle(under).backgroundColor} (${r.toFixed(2)}:1)`);
  }
  return {checked, backgrounds: [...backgrounds], low: [...new Set(low)]};
}"""
# The selectors of each stylesheet that pages/page_assets.py may leave out, read once:
# {url: [selector]}. A pseudo-element is dropped from a selector (querySelector cannot match
# one; its element can), and one the browser cannot match at all is left out.
SHEET_SELECTORS = """async (urls) => {
  const out = {};
  for (const url of urls) {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(await (await fetch(url)).text());
    const selectors = new Set();
    const walk = (rules) => {
      for (const rule of rules) {
        if (rule instanceof CSSStyleRule) {
          const selector = rule.selectorText.replace(/::?(before|after|-webkit-[\\w-]+|placeholder|selection|marker)/g, "");
          try { document.createDocumentFragment().querySelector(selector); selectors.add(selector); } catch (e) {}
        }
        if (rule.cssRules) walk(rule.cssRules);
      }
    };
    walk(sheet.cssRules);
    out[url] = [...selectors];
  }
  return out;
}"""
# The selectors of the stylesheets this page does not link that match an element inside its
# body, after its scripts ran (a rule for <html> or <body> alone, a stylesheet's colour
# variables, matches nothing inside): each would have styled the page, and does not now.
UNLINKED_RULES = """(selectors) => {
  const linked = new Set([...document.querySelectorAll("link[rel=stylesheet]")]
    .map((link) => new URL(link.href).pathname));
  const hits = [];
  for (const [url, list] of Object.entries(selectors)) {
    if (linked.has(new URL(url).pathname) || !list.length) continue;
    if (!document.body.querySelector(list.join(", "))) continue;  // one native call for the common case
    for (const selector of list)
      if (document.body.querySelector(selector)) hits.push(`${url.split("/").pop()}: ${selector}`);
  }
  return hits;
}"""
CODE_THEMES = ("light", "dark")  # furo's data-theme values; "auto" is one of them by the system's


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


def skip_without_chromium(allow_module_level=False):
    """Skip the caller when Chromium is missing; fail instead where
    AUTOGRAD_RECIPES_REQUIRE_BROWSER=1 (as in .ci/run)."""
    if Path(CHROMIUM).exists():
        return
    if os.environ.get("AUTOGRAD_RECIPES_REQUIRE_BROWSER") == "1":
        raise RuntimeError(f"{CHROMIUM} is missing but browser tests are required (apt-get install chromium)")
    pytest.skip(
        f"{CHROMIUM} not installed (apt-get install chromium); browser tests skipped",
        allow_module_level=allow_module_level,
    )


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def served(html):
    """The built site (``html``) served on 127.0.0.1 below SUB_PATH, as on GitHub Pages
    (a link that starts at the server's root fails there); yields the site's base URL."""
    with tempfile.TemporaryDirectory() as www:
        (Path(www) / SUB_PATH.strip("/")).symlink_to(Path(html).resolve())
        handler = functools.partial(_QuietHandler, directory=www)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{server.server_port}{SUB_PATH}"
        finally:
            server.shutdown()


def all_pages(html, languages):
    """Every page of every language, as "<lang>/<path>" (none of the "_" folders)."""
    out = []
    for lang in languages:
        tree = html / lang
        out += [
            f"{lang}/{p.relative_to(tree).as_posix()}"
            for p in sorted(tree.rglob("*.html"))
            if not p.relative_to(tree).as_posix().startswith("_")
        ]
    return out


def run_in_browser(work):
    """``await work(browser)`` in a fresh Chromium, through playwright's async API.

    It runs in a thread of its own, so its event loop never meets one that a test's
    sync_playwright holds open in this thread."""

    async def main():
        from playwright.async_api import async_playwright

        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            try:
                return await work(browser)
            finally:
                await browser.close()

    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, main()).result()


async def in_pages(context, items, work, limit=CONCURRENT_PAGES):
    """``await work(page, item)`` for every item, in ``limit`` pages of ``context`` at
    once, each page taking the next item when it is done; the results in item order.
    (A page reused saves starting a renderer for every item.)"""
    queue = list(enumerate(items))
    results = [None] * len(queue)

    async def worker():
        page = await context.new_page()
        while queue:
            index, item = queue.pop(0)
            results[index] = await work(page, item)
        await page.close()

    await asyncio.gather(*(worker() for _ in range(min(limit, len(queue)))))
    return results


@dataclass
class Visit:
    """What one visit of one page recorded (None: not looked at on this visit)."""

    path: str  # below the site root: "ko/recipes/index.html"
    url: str  # where it was loaded from
    status: int | None = None  # the HTTP status of the page itself (None: no response)
    events: list[str] = field(default_factory=list)  # console errors, page errors, failed requests
    requests: list[str] = field(default_factory=list)  # every URL the page requested, in order
    requests_until_axe_done: int | None = None  # how many of them came before axe finished
    violations: list[dict] | None = None  # axe's violations, every impact
    axe_rules: list[str] | None = None  # the ids of the rules that judged an element
    code_contrast: dict[str, dict] | None = None  # theme -> CODE_CONTRAST's {checked, backgrounds, low}
    texts: list[str] | None = None  # Korean pages: SCAN's texts
    broken_words: dict[int, list[str]] | None = None  # Korean pages: width -> BROKEN_WORDS
    unlinked_rules: list[str] | None = None  # UNLINKED_RULES: rules of left-out stylesheets that match


async def _visit(page, base, path, axe, sheets):
    """One page, loaded once in ``page``: listeners first, then the load (network quiet),
    then the checks: SCAN before axe (axe adds its script to the page), the widths after,
    then the code's contrast in each theme.
    Then it stops listening (as closing the page did: a request cut short by leaving is
    no fault of the page) and leaves, so that the next visit in ``page`` starts from a
    blank page at the axe viewport."""
    korean = path.startswith("ko/")
    visit = Visit(path, base + path)
    listeners = {
        "console": lambda m: (
            visit.events.append(f"console {m.type}: {m.text}") if m.type == "error" else None
        ),
        "pageerror": lambda e: visit.events.append(f"page error: {e}"),
        "requestfailed": lambda r: visit.events.append(f"failed request: {r.url} {r.failure}"),
        "request": lambda r: visit.requests.append(r.url),
    }
    for event, listener in listeners.items():
        page.on(event, listener)
    response = await page.goto(visit.url, wait_until="networkidle")
    visit.status = response and response.status
    if korean:
        visit.texts = await page.evaluate(SCAN)
    visit.unlinked_rules = await page.evaluate(UNLINKED_RULES, sheets[path.split("/", 1)[0]])
    if axe is not None:
        await page.evaluate(axe.axe_script)
        await page.evaluate(AXE_SETUP)
        visit.violations, visit.axe_rules = await page.evaluate(AXE_RUN)
        visit.requests_until_axe_done = len(visit.requests)
        if korean:
            visit.broken_words = {}
            for width in BROKEN_WORD_WIDTHS:
                await page.set_viewport_size({"width": width, "height": 900})
                visit.broken_words[width] = await page.evaluate(BROKEN_WORDS)
        visit.code_contrast = {}
        for theme in CODE_THEMES:  # as furo's theme button sets it (the page is left next)
            await page.evaluate(f"document.body.dataset.theme = {theme!r}")
            visit.code_contrast[theme] = await page.evaluate(CODE_CONTRAST)
    for event, listener in listeners.items():
        page.remove_listener(event, listener)
    await page.goto("about:blank")
    await page.set_viewport_size(AXE_VIEWPORT)
    return visit


def optional_sheets(html, languages, base):
    """{language: the URL of each stylesheet that pages/page_assets.py may leave out}."""
    from autograd_recipes.upstream import OPTIONAL_STYLESHEETS

    return {
        lang: [
            base + path.relative_to(html).as_posix()
            for path in sorted((html / lang / "_static").rglob("*.css"))
            if path.name.startswith(tuple(OPTIONAL_STYLESHEETS))
        ]
        for lang in languages
    }


async def sheet_selectors(page, base, html, languages):
    """{language: SHEET_SELECTORS of its optional stylesheets}, read in ``page``."""
    out = {}
    for lang, urls in optional_sheets(html, languages, base).items():
        await page.goto(f"{base}{lang}/search.html")
        out[lang] = await page.evaluate(SHEET_SELECTORS, urls)
    return out


def visit_site(html, languages):
    """{path: Visit} for every page of ``all_pages`` (all checks) and for KOREAN_SEARCH
    (the text scan only), the site (``html``) served as ``served`` serves it."""
    from axe_playwright_python.async_playwright import Axe

    axe = Axe()
    # the largest pages (the longest axe runs) first, so that none of them starts last
    pages = sorted(all_pages(html, languages), key=lambda path: -(html / path).stat().st_size)
    if "ko" in languages:
        pages.append(KOREAN_SEARCH)
    with served(html) as base:

        async def work(browser):
            context = await browser.new_context(viewport=AXE_VIEWPORT)
            page = await context.new_page()
            sheets = await sheet_selectors(page, base, html, languages)
            await page.close()
            visits = await in_pages(
                context,
                pages,
                lambda page, path: _visit(page, base, path, None if path == KOREAN_SEARCH else axe, sheets),
            )
            await context.close()
            return visits

        visits = run_in_browser(work)
    return {visit.path: visit for visit in visits}
