"""Korean queries as readers type them, run through the built site's real search page.

tests/korean_search_queries.csv holds the queries (compounds typed without the page's
space, other verb forms, particles, glossed English terms, Latin/Hangul mixes) and
the pages that should answer each. Each query is typed into ko/search.html in
Chromium; a query scores when one of its pages is among the first five results.
The test requires at least 95%; run this file as a script to print the score and
the misses for any built site:

    python tests/test_korean_search_queries.py build/html
"""

import csv
import functools
import http.server
import sys
import threading
from pathlib import Path
from urllib.parse import quote

import pytest

HERE = Path(__file__).resolve().parent
QUERIES = HERE / "korean_search_queries.csv"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]  # fmt: skip
REQUIRED_SHARE = 0.95
# searchtools.js writes the summary line (found N pages, or none) when every result is shown.
FINISHED = "() => document.querySelector('#search-results .search-summary')?.innerText.trim()"


def load_queries():
    with open(QUERIES, encoding="utf-8") as f:
        return [(row[0], set(row[1].split()), row[2]) for row in list(csv.reader(f))[1:]]


def top_pages(page, search_url, query, count=5):
    """The docnames of the first ``count`` results of ``query`` on the search page."""
    page.goto(f"{search_url}?q={quote(query)}")
    page.wait_for_function(FINISHED, timeout=15000)
    links = page.eval_on_selector_all("#search-results ul.search li > a", "els => els.map(e => e.href)")
    root = search_url.rsplit("/", 1)[0] + "/"
    return [link.split("#")[0].removeprefix(root).removesuffix(".html") for link in links[:count]]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def score(html, browser):
    """(share of queries with an expected page in the top 5, [missed queries]).

    Served over HTTP: from file:// the page cannot fetch the result summaries."""
    handler = functools.partial(_QuietHandler, directory=str(Path(html).resolve()))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    search_url = f"http://127.0.0.1:{server.server_port}/ko/search.html"
    page = browser.new_page()
    misses = []
    queries = load_queries()
    for query, expected, kind in queries:
        found = top_pages(page, search_url, query)
        if not expected & set(found):
            misses.append(f"{query!r} ({kind}): expected {sorted(expected)}, top 5 {found}")
    page.close()
    server.shutdown()
    return 1 - len(misses) / len(queries), misses


def test_query_set_is_large_and_varied():
    queries = load_queries()
    assert len(queries) >= 40
    assert {kind for _, _, kind in queries} >= {"spacing", "verb form", "particle", "gloss", "Latin/Hangul"}


def test_korean_queries_find_their_pages_in_the_top_5(built_site):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    project, code, output = built_site
    assert code == 0, output
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        share, misses = score(project / "build" / "html", browser)
        browser.close()
    assert share >= REQUIRED_SHARE, f"top-5 share {share:.0%}; missed:\n" + "\n".join(misses)


if __name__ == "__main__":
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        share, misses = score(sys.argv[1] if len(sys.argv) > 1 else "build/html", browser)
        browser.close()
    index = Path(sys.argv[1] if len(sys.argv) > 1 else "build/html") / "ko" / "searchindex.js"
    print("\n".join(misses))
    print(
        f"top-5 share: {share:.1%} of {len(load_queries())} queries; ko/searchindex.js {index.stat().st_size:,} bytes"
    )
