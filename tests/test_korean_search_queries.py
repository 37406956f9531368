"""Korean queries as readers type them, run through the built site's real search page.

tests/korean_search_queries.csv holds the queries (compounds typed without the page's
space, other verb forms, particles, glossed English terms, Latin/Hangul mixes) and
the pages that should answer each. Each query is run by ko/search.html's own search
code in Chromium and read from the result list it shows; a query scores when one of
its pages is among the first five results.
The test requires at least 95%; run this file as a script to print the score and
the misses for any built site:

    python tests/test_korean_search_queries.py build/html
"""

import csv
import json
import sys
from pathlib import Path
from urllib.parse import quote

import background
import polib
import pytest
from browser_pass import CHROMIUM, in_pages, run_in_browser, served, skip_without_chromium
from conftest import JOBS

HERE = Path(__file__).resolve().parent
QUERIES = HERE / "korean_search_queries.csv"
REQUIRED_SHARE = 0.95
# searchtools.js writes the summary line (found N pages, or none) when every result is shown.
FINISHED = "() => document.querySelector('#search-results .search-summary')?.innerText.trim()"


def load_queries():
    with open(QUERIES, encoding="utf-8") as f:
        return [(row[0], set(row[1].split()), row[2]) for row in list(csv.reader(f))[1:]]


# A search page already loaded searches again the way it searched for the ?q= it was
# opened with (searchtools.js Search.init): the query into the search boxes, then
# Search.performSearch, here into an emptied result list. The index stays loaded.
SEARCH_AGAIN = """q => {
  document.querySelectorAll('input[name="q"]').forEach((el) => (el.value = q));
  document.getElementById("search-results").replaceChildren();
  Search.performSearch(q);
}"""


async def top_pages(page, search_url, query, count=5):
    """The docnames of the first ``count`` results of ``query`` on the search page: the
    page opened with the query in its URL (as the search box sends it), or, when ``page``
    already shows the search page, searched again in place (SEARCH_AGAIN)."""
    if page.url.split("?")[0] == search_url:
        await page.evaluate(SEARCH_AGAIN, query)
    else:
        await page.goto(f"{search_url}?q={quote(query)}")
    await page.wait_for_function(FINISHED, timeout=15000)
    links = await page.eval_on_selector_all("#search-results ul.search li > a", "els => els.map(e => e.href)")
    root = search_url.rsplit("/", 1)[0] + "/"
    return [link.split("#")[0].removeprefix(root).removesuffix(".html") for link in links[:count]]


def score(html):
    """(share of queries with an expected page in the top 5, [missed queries]).

    Served over HTTP: from file:// the page cannot fetch the result summaries. A few
    pages search at once (browser_pass.in_pages); each opens ko/search.html with its
    first query and runs its later ones in place (top_pages)."""
    queries = load_queries()
    with served(html) as base:

        async def run_all(browser):
            context = await browser.new_context()
            found = await in_pages(
                context, queries, lambda page, q: top_pages(page, base + "ko/search.html", q[0])
            )
            await context.close()
            return found

        results = run_in_browser(run_all)
    misses = [
        f"{query!r} ({kind}): expected {sorted(expected)}, top 5 {found}"
        for (query, expected, kind), found in zip(queries, results)
        if not expected & set(found)
    ]
    return 1 - len(misses) / len(queries), misses


def test_query_set_is_large_and_varied():
    queries = load_queries()
    assert len(queries) >= 40
    assert {kind for _, _, kind in queries} >= {
        "spacing",
        "verb form",
        "particle",
        "gloss",
        "Latin/Hangul",
        "synonym",
        "one syllable",
        "several words",
    }


def _scored(folder, site):
    """The query set run in Chromium as soon as the site is built, beside the other tests."""
    if site.code != 0 or not Path(CHROMIUM).exists():
        return background.Task(lambda: None)  # the test fails or skips, saying why
    return background.Task(lambda: score(site.project / "build" / "html"))


JOBS.register("korean queries", "korean_query_scores", _scored, after=["site"])


@pytest.fixture(scope="module")
def korean_query_scores(built_site):
    skip_without_chromium()
    assert built_site[1] == 0, built_site[2]
    return JOBS.value("korean queries")


def test_korean_queries_find_their_pages_in_the_top_5(korean_query_scores):
    share, misses = korean_query_scores
    assert share >= REQUIRED_SHARE, f"top-5 share {share:.0%}; missed:\n" + "\n".join(misses)


NO_RESULTS = (
    "Your search did not match any documents. Please make sure that all words are spelled "
    "correctly and that you've selected enough categories."
)


def test_no_results_text_is_the_projects(built_site):
    """searchtools.js shows Documentation.gettext(NO_RESULTS) from _static/translations.js:
    the built Korean catalog has sphinx.po's text (korean_search._no_results), not Sphinx's,
    which speaks of categories the search page does not have."""
    project, code, log = built_site
    assert code == 0, log
    text = (project / "build" / "html" / "ko" / "_static" / "translations.js").read_text(encoding="utf-8")
    catalog = json.loads(text[text.index("{") : text.rindex("}") + 1])
    ours = polib.pofile(str(project / "locales" / "ko" / "LC_MESSAGES" / "sphinx.po")).find(NO_RESULTS)
    assert ours and ours.msgstr
    assert catalog["messages"][NO_RESULTS] == ours.msgstr
    assert "카테고리" not in ours.msgstr


if __name__ == "__main__":
    html = Path(sys.argv[1] if len(sys.argv) > 1 else "build/html")
    share, misses = score(html)
    print("\n".join(misses))
    print(
        f"top-5 share: {share:.1%} of {len(load_queries())} queries; ko/searchindex.js "
        f"{(html / 'ko' / 'searchindex.js').stat().st_size:,} bytes"
    )
