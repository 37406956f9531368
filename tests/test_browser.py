"""The site in a real browser: Debian's Chromium, driven by Playwright.

Skipped when Chromium is missing, unless AUTOGRAD_RECIPES_REQUIRE_BROWSER=1 (as in
.ci/run), which turns the skip into a failure. Screenshots and the per-page
request counts go to build/test-artifacts/.

The every-page check judges what the one visit per page recorded (tests/browser_pass.py,
shared with test_korean_ui.py; pytest's durations count that pass as its setup); the
other tests open the pages they need themselves.
"""

import html as html_text
import json
import re
from urllib.parse import quote, urlsplit

import background
import pytest
from browser_pass import all_pages, skip_without_chromium
from conftest import JOBS, LANGUAGES, ROOT

from autograd_recipes.project import PROJECT

ARTIFACTS = ROOT / "build" / "test-artifacts"

skip_without_chromium(allow_module_level=True)


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    yield page
    context.close()


def page_type(path):
    name = path.split("/", 1)[1]
    if name.removesuffix(".html") in PROJECT.recipe_docnames():
        return "recipe"
    return {
        "index.html": "landing",
        "no_grad_guide.html": "guide",
        "inplace_overview.html": "overview",
        "claims.html": "claims",
        "search.html": "search",
    }.get(name, "other")


def test_every_page_is_clean_local_and_accessible(page_visits):
    """Read from the one visit per page (browser_pass.visit_site): no console error, page
    error, failed request or request off the local origin, HTTP 200, and no serious or
    critical axe violation, with axe's contrast rule judging the text outside code."""
    html, visits = page_visits
    pages = all_pages(html, LANGUAGES)
    assert len(pages) >= 30
    problems, requests_per_type = [], {}
    for path in pages:
        visit = visits[path]
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(visit.url))
        events = list(visit.events)
        if visit.status != 200:
            events.append(f"HTTP {visit.status}")
        off = [u for u in visit.requests if not u.startswith(origin) and not u.startswith("data:")]
        events += [f"request off the local origin: {u}" for u in off]
        if "color-contrast" not in visit.axe_rules:  # its selector (browser_pass.AXE_SETUP) still matches
            events.append("axe's color-contrast rule judged no element")
        violations = [v for v in visit.violations if v["impact"] in ("serious", "critical")]
        events += [
            f"axe {v['impact']} {v['id']}: {v['help']} ({len(v['nodes'])} nodes: {v['nodes'][0]['target']})"
            for v in violations
        ]
        problems += [f"{path}: {e}" for e in events]
        requests_per_type.setdefault(page_type(path), []).append(visit.requests_until_axe_done)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "requests-per-page.json").write_text(json.dumps(requests_per_type, indent=1))
    assert not problems, "\n".join(problems)


def test_highlighted_code_keeps_its_contrast_in_both_themes(page_visits):
    """Every token of highlighted code on every page, in furo's light and dark themes, at
    least 4.5:1 against the code block's background (browser_pass.CODE_CONTRAST, which axe's
    own contrast rule leaves to it); the pages of code were checked, and the themes differ."""
    html, visits = page_visits
    low, checked = [], {}
    for path in all_pages(html, LANGUAGES):
        for theme, seen in visits[path].code_contrast.items():
            low += [f"{path} ({theme}): {pair}" for pair in seen["low"]]
            checked[path, theme] = seen
    assert not low, "\n".join(low)
    for lang in LANGUAGES:
        for name in ("recipes/plot_02_residual_add.html", "no_grad_guide.html", "inplace_overview.html"):
            light, dark = checked[f"{lang}/{name}", "light"], checked[f"{lang}/{name}", "dark"]
            assert light["checked"] >= 100 and dark["checked"] == light["checked"], (name, light, dark)
            assert not set(light["backgrounds"]) & set(dark["backgrounds"]), (light, dark)


def test_the_code_contrast_check_finds_a_faint_token(page):
    """The control: a token as faint as #999 on the code's #fff fails, and the one beside
    it, dark enough, passes; the background is found above the token's own transparent one;
    a translucent background, whose colour depends on what is under it, is refused."""
    from browser_pass import CODE_CONTRAST

    page.set_content(
        '<div class="highlight" style="background: #fff"><pre><span class="c1" style="color: #999">'
        '# faint</span> <span class="n" style="color: #333">x</span></pre></div>'
    )
    seen = page.evaluate(CODE_CONTRAST)
    assert seen["checked"] == 2 and seen["backgrounds"] == ["rgb(255, 255, 255)"], seen
    assert seen["low"] == ["c1: rgb(153, 153, 153) on rgb(255, 255, 255) (2.85:1)"], seen
    page.set_content(
        '<div class="highlight" style="background: rgba(255, 255, 255, 0.5)"><pre>'
        '<span class="n" style="color: #333">x</span></pre></div>'
    )
    assert page.evaluate(CODE_CONTRAST)["low"] == [
        "n: translucent rgb(51, 51, 51) on rgba(255, 255, 255, 0.5)"
    ]


def test_a_page_leaves_out_only_stylesheets_that_style_nothing_on_it(page_visits):
    """On every page (and on a Korean search with results), no rule of an extension
    stylesheet the page does not link (pages/page_assets.py) matches an element of
    it; and the check had work to do: the search pages, which have no code, cells or
    cards, leave out all four, while a recipe page keeps what styles its code and output."""
    from autograd_recipes.upstream import OPTIONAL_STYLESHEETS

    html, visits = page_visits
    pages = [*all_pages(html, LANGUAGES), *(p for p in visits if "?" in p)]
    assert len(pages) > len(all_pages(html, LANGUAGES))
    hits = [f"{path}: {rule}" for path in pages for rule in visits[path].unlinked_rules]
    assert not hits, "\n".join(hits)
    for lang in LANGUAGES:
        linked = re.findall(
            r'<link rel="stylesheet"[^>]*href="([^"]*)"', (html / lang / "search.html").read_text()
        )
        assert not [href for href in linked if href.split("/")[-1].startswith(tuple(OPTIONAL_STYLESHEETS))], (
            linked
        )
        recipe = (html / lang / "recipes" / "plot_02_residual_add.html").read_text()
        for name in ("sg_gallery.css", "pygments.css", "copybutton.css"):
            assert f"_static/{name}" in recipe, name


def test_the_stylesheet_check_finds_a_rule_a_page_needs(served_site, page):
    """The control: the Korean search page, given a block of highlighted code it does not
    have, matches rules of the Pygments stylesheet it left out, and the check says which."""
    from browser_pass import SHEET_SELECTORS, UNLINKED_RULES, optional_sheets

    base, html = served_site
    page.goto(base + "ko/search.html")
    sheets = page.evaluate(SHEET_SELECTORS, optional_sheets(html, ["ko"], base)["ko"])
    assert len(sheets) == 4 and all(len(selectors) >= 5 for selectors in sheets.values()), sheets
    assert page.evaluate(UNLINKED_RULES, sheets) == []
    page.evaluate(
        """() => document.querySelector("article").insertAdjacentHTML("beforeend",
        '<div class="highlight"><pre><span class="k">import</span></pre></div>')"""
    )
    hits = page.evaluate(UNLINKED_RULES, sheets)
    assert "pygments.css: .highlight .k" in hits, hits
    assert not [hit for hit in hits if hit.startswith(("mystnb", "sg_gallery"))], hits


def test_language_switch_lands_on_the_same_page_and_back(served_site, page):
    base, html = served_site
    page.goto(base + "en/recipes/plot_05_indexing_and_inplace.html")
    page.click("nav.language-switch a[hreflang=ko]")
    page.wait_for_load_state()
    assert page.url == base + "ko/recipes/plot_05_indexing_and_inplace.html"
    assert page.get_attribute("html", "lang") == "ko"
    page.click("nav.language-switch a[hreflang=en]")
    page.wait_for_load_state()
    assert page.url == base + "en/recipes/plot_05_indexing_and_inplace.html"


def test_root_page_picks_the_readers_language(served_site, chromium):
    base, html = served_site
    for locale, expected in (
        ("ko-KR", "ko/index.html"),
        ("en-US", "en/index.html"),
        ("de-DE", "en/index.html"),
    ):
        context = chromium.new_context(locale=locale)
        page = context.new_page()
        page.goto(base)
        page.wait_for_url(base + expected)
        context.close()


@pytest.mark.parametrize(
    "languages, expected",
    [
        (["en-US", "en", "ko"], "en"),
        (["en-US", "ko-KR"], "en"),
        (["ko-KR", "en"], "ko"),
        (["ko"], "ko"),
        (["fr-FR", "ko"], "ko"),
        (["fr-FR"], "en"),  # none the site has: the source language
    ],
)
def test_root_page_picks_the_first_listed_language_the_site_has(served_site, chromium, languages, expected):
    """The browser's whole language list (Accept-Language and navigator.languages), set
    through the DevTools protocol as Chromium's language settings set it."""
    base, html = served_site
    context = chromium.new_context()
    page = context.new_page()
    user_agent = page.evaluate("navigator.userAgent")
    cdp = context.new_cdp_session(page)
    cdp.send(
        "Emulation.setUserAgentOverride", {"userAgent": user_agent, "acceptLanguage": ",".join(languages)}
    )
    page.goto(base)
    page.wait_for_url(re.compile(r".*/(en|ko)/index\.html$"))
    assert page.evaluate("navigator.languages") == languages  # the list really was the browser's
    assert page.url == f"{base}{expected}/index.html", languages
    context.close()


PHONE = {"width": 390, "height": 844}


def exactly(url):
    """``url`` for wait_for_url, read as it is (not as a glob: ``?`` and ``*`` are literal)."""
    return re.compile(re.escape(url) + "$")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_phone_language_switch_is_on_the_first_screen_and_keeps_the_place(served_site, chromium, lang):
    """At 390 px furo hides the sidebar (and its switch) behind the menu button: the top
    bar's switch is on screen without opening it, and leads to the same section of the
    other language's page, and to the same search."""
    base, html = served_site
    other = next(code for code in LANGUAGES if code != lang)
    context = chromium.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(f"{base}{lang}/no_grad_guide.html")
    sidebar = page.locator("nav.language-switch").bounding_box()  # the sidebar's: in the closed menu
    assert sidebar["x"] + sidebar["width"] <= 0, sidebar
    ids = page.eval_on_selector_all("article section[id]", "els => els.map(e => e.id)")
    section = ids[len(ids) // 2]
    page.goto(f"{base}{lang}/no_grad_guide.html#{section}")
    switch = page.locator(f".mobile-header a[hreflang={other}]")
    box = switch.bounding_box()
    assert switch.is_visible() and box and 0 <= box["y"] and box["y"] + box["height"] <= PHONE["height"], box
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    switch.click()
    page.wait_for_url(exactly(f"{base}{other}/no_grad_guide.html#{section}"))
    assert page.get_attribute("html", "lang") == other
    assert page.locator(f"article section[id='{section}']").count() == 1  # the same section is there
    # a jump within the page first: the switch follows the new fragment
    page.goto(f"{base}{lang}/inplace_overview.html")
    later = page.eval_on_selector_all("article section[id]", "els => els.map(e => e.id)")[-1]
    page.evaluate(f"location.hash = {json.dumps(later)}")
    page.locator(f".mobile-header a[hreflang={other}]").click()
    page.wait_for_url(exactly(f"{base}{other}/inplace_overview.html#{later}"))
    # the search keeps its query
    page.goto(f"{base}{lang}/search.html?q=no_grad")
    page.wait_for_selector("#search-results ul.search li", timeout=15000)
    page.locator(f".mobile-header a[hreflang={other}]").click()
    page.wait_for_url(exactly(f"{base}{other}/search.html?q=no_grad"))
    page.wait_for_selector("#search-results ul.search li", timeout=15000)
    context.close()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_recipe_cards_show_their_descriptions(served_site, chromium, lang):
    """On a phone, where nothing hovers: each card of the gallery shows its recipe's first
    paragraph as text (sphinx-gallery put it only in a tooltip attribute)."""
    base, html = served_site
    context = chromium.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(f"{base}{lang}/recipes/index.html")
    cards = page.locator(".sphx-glr-thumbcontainer")
    assert cards.count() >= 7
    for index in range(cards.count()):
        card = cards.nth(index)
        description = card.locator(".sphx-glr-thumbnail-description")
        card.scroll_into_view_if_needed()
        assert description.is_visible(), f"{lang}: card {index}"
        text = description.inner_text().strip()
        assert len(text) > 20 and text != card.locator(".sphx-glr-thumbnail-title").inner_text().strip()
        assert bool(re.search(r"[\uac00-\ud7a3]", text)) == (lang != "en"), text
        assert card.get_attribute("tooltip") is None
    context.close()


def test_site_works_when_opened_from_disk(served_site, page):
    base, html = served_site
    page.goto((html / "en" / "recipes" / "plot_01_manual_weight_update.html").as_uri())
    page.click("nav.language-switch a[hreflang=ko]")
    page.wait_for_load_state()
    assert page.url == (html / "ko" / "recipes" / "plot_01_manual_weight_update.html").as_uri()
    assert "리프" in page.inner_text("article")


PHONE = {"width": 390, "height": 844}

# Each table of the article, at the phone's width: whether it fits the viewport, its nearest
# ancestor that scrolls sideways (and whether setting scrollLeft moves it), and every ancestor
# that clips (overflow other than visible, paint containment, content-visibility) whose box
# cuts the table or its scroll box.
TABLES = """() => [...document.querySelectorAll("article table")].map((table) => {
  table.scrollIntoView();
  const box = (el) => el.getBoundingClientRect();
  const vw = document.documentElement.clientWidth;
  let scroller = null;
  for (let el = table.parentElement; el && el !== document.body && !scroller; el = el.parentElement)
    if (/auto|scroll/.test(getComputedStyle(el).overflowX)) scroller = el;
  const cut = [];
  let shown = table;  // the table, and above its scroll box the box
  for (let el = table.parentElement; el && el !== document.documentElement; el = el.parentElement) {
    const style = getComputedStyle(el);
    const clips = el !== scroller && (style.overflowX !== "visible" || /paint|strict|content/.test(style.contain)
      || style.contentVisibility === "auto");
    if (el === scroller) shown = scroller;
    else if (clips && (box(shown).left < box(el).left - 1 || box(shown).right > box(el).right + 1))
      cut.push(`${el.tagName.toLowerCase()}#${el.id}.${el.className}`);
  }
  const found = {table: table.className, columns: table.rows[0].cells.length, cut,
    fits: box(table).left >= -1 && box(table).right <= vw + 1};
  if (scroller) {
    scroller.scrollLeft = 0;
    Object.assign(found, {scrollWidth: scroller.scrollWidth, clientWidth: scroller.clientWidth,
      scrollerFits: box(scroller).left >= -1 && box(scroller).right <= vw + 1});
    scroller.scrollLeft = scroller.scrollWidth;
    found.scrolled = scroller.scrollLeft;
    found.lastColumnShown = box(table.rows[0].cells[table.rows[0].cells.length - 1]).right <= box(scroller).right + 1;
    scroller.scrollLeft = 0;
  }
  return found;
})"""


LONG_PAGES = ("no_grad_guide", "inplace_overview")
SCROLL_TO_THE_END = """async () => {
  for (let i = 0; i < 200; i++) {  // a screen at a time, as a reader scrolls, to the end
    window.scrollBy(0, innerHeight);
    if (innerHeight + scrollY >= document.documentElement.scrollHeight - 1) return;
    await new Promise((done) => setTimeout(done, 30));
  }
}"""
HEADING_PLACE = (
    "h => [h.getBoundingClientRect().top, h.getBoundingClientRect().bottom,"
    " innerHeight + scrollY >= document.documentElement.scrollHeight - 1]"
)


async def _on_a_phone(browser, base, path):
    """What the phone checks of a long page read: its tables (TABLES) on one load; on
    another, its height at load and after scrolling to the end, and its sections' ids;
    then where the last section's heading is when a link opens the page at it."""
    context = await browser.new_context(viewport=PHONE)
    page = await context.new_page()
    await page.goto(base + path, wait_until="load")
    found = {"tables": await page.evaluate(TABLES)}
    await page.close()
    page = await context.new_page()
    await page.goto(base + path, wait_until="load")
    found["first"] = await page.evaluate("document.documentElement.scrollHeight")
    await page.evaluate(SCROLL_TO_THE_END)
    await page.wait_for_timeout(300)
    found["last"] = await page.evaluate("document.documentElement.scrollHeight")
    found["ids"] = await page.eval_on_selector_all("article > section > section", "els => els.map(e => e.id)")
    await page.close()
    if found["ids"]:
        page = await context.new_page()
        await page.goto(f"{base}{path}#{found['ids'][-1]}", wait_until="load")
        await page.wait_for_timeout(300)
        found["landing"] = await page.eval_on_selector(
            f"section#{found['ids'][-1]} > :is(h2, h3)", HEADING_PLACE
        )
    await context.close()
    return found


def _phone_pass(folder, site):
    """The long pages on a phone, in a Chromium of their own beside the tests, all at once."""
    import asyncio

    import browser_pass

    html = site.project / "build" / "html"
    if site.code != 0 or not browser_pass.Path(browser_pass.CHROMIUM).exists():
        return background.Task(lambda: None)  # the fixture fails or skips, saying why
    pages = [(lang, name) for lang in LANGUAGES for name in LONG_PAGES]

    def work():
        with browser_pass.served(html) as base:

            async def measure(browser):
                found = await asyncio.gather(
                    *(_on_a_phone(browser, base, f"{lang}/{name}.html") for lang, name in pages)
                )
                return dict(zip(pages, found))

            return browser_pass.run_in_browser(measure)

    return background.Task(work)


JOBS.register("phone pass", "on_a_phone", _phone_pass, after=["site"], first=True)


@pytest.fixture(scope="module")
def on_a_phone(built_site):
    project, code, output = built_site
    assert code == 0, output
    return JOBS.value("phone pass")


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("name", LONG_PAGES)
def test_every_table_on_a_phone_is_whole_or_scrolls(on_a_phone, lang, name):
    """At 390 px each table of the guide and the overview is either all in the viewport or in a
    box that scrolls sideways (scrollWidth > clientWidth, and scrollLeft moves it to the last
    column), and no ancestor cuts it off: the guide's benchmark tables were clipped by the
    sections' paint containment (3.5 of 6 columns shown, and no way to scroll)."""
    tables = on_a_phone[lang, name]["tables"]
    if name == "no_grad_guide":
        assert len(tables) >= 2, tables  # the memory and the timing tables
    for table in tables:
        assert table["cut"] == [], table
        if not table["fits"]:
            assert "scrolled" in table, f"{table}: wider than the phone and in no box that scrolls"
            assert table["scrollWidth"] > table["clientWidth"] and table["scrollerFits"], table
            assert table["scrolled"] > 0 and table["lastColumnShown"], table


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("name", LONG_PAGES)
def test_a_long_page_keeps_its_height_while_it_scrolls(on_a_phone, lang, name):
    """The page's height on a phone is the same, within 3%, at first load and after a reader has
    scrolled to the end (section sizes that are guessed until laid out made the guide grow from
    8,900 px to 15,200 px); and a link to the guide's last section still lands on its heading."""
    found = on_a_phone[lang, name]
    first, last, ids = found["first"], found["last"], found["ids"]
    assert abs(last - first) <= 0.03 * first, f"{lang}/{name}: {first} px at load, {last} px at the end"
    assert len(ids) >= 3, ids
    top, bottom, at_end = found["landing"]
    # at the top, or on screen with the page at its end (a last section shorter than the screen)
    landed = 0 <= top < 120 or (at_end and 0 <= top and bottom <= PHONE["height"])
    assert landed, f"{lang}/{name}: the heading of #{ids[-1]} is at {top} px"


# After the matrix's box is scrolled right and down: the element drawn at the box's left edge
# (a row's name) and at its top (a column's header), and where they are.
MATRIX_AFTER_SCROLLING = """() => {
  const box = document.querySelector(".torch-matrix-scroll").getBoundingClientRect();
  const at = (x, y) => {
    const el = document.elementFromPoint(x, y);
    const cell = el && el.closest("th, td");
    if (!cell) return {tag: el && el.tagName};
    const r = cell.getBoundingClientRect();
    return {tag: cell.tagName, scope: cell.getAttribute("scope"), inHead: !!cell.closest("thead"),
      text: cell.textContent.trim().slice(0, 40), left: r.left, top: r.top, bottom: r.bottom, right: r.right};
  };
  return {box: {left: box.left, top: box.top, right: box.right, bottom: box.bottom},
    viewport: {width: innerWidth, height: innerHeight},
    rowName: at(box.left + 8, box.top + box.height / 2), header: at(box.left + box.width * 0.75, box.top + 6)};
}"""


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_matrix_keeps_its_row_names_and_header_in_view_on_a_phone(served_site, chromium, lang):
    """At 390 px, after one swipe to the right and some down the versions matrix, the cell at the
    box's left edge is still a row's name and the cell at its top a release's header, both
    inside the box and the viewport (sticky cells): not columns of symbols without names."""
    base, html = served_site
    context = chromium.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(f"{base}{lang}/versions.html", wait_until="load")
    scroller = page.locator(".torch-matrix-scroll")
    scroller.evaluate("el => el.scrollIntoView({behavior: 'instant'})")  # the page down to the matrix
    before = scroller.evaluate(
        "el => ({w: el.scrollWidth, cw: el.clientWidth, h: el.scrollHeight, ch: el.clientHeight})"
    )
    assert before["w"] > before["cw"] and before["h"] > before["ch"], before  # it scrolls both ways
    box = scroller.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    # A wheel's scroll runs after mouse.wheel returns: each waits for the box to have moved, not a
    # fixed time (on a busy machine 500 ms was too short for the second one).
    page.mouse.wheel(600, 0)  # right
    page.wait_for_function("document.querySelector('.torch-matrix-scroll').scrollLeft > 300", timeout=15000)
    page.mouse.wheel(0, 1500)  # down
    page.wait_for_function("document.querySelector('.torch-matrix-scroll').scrollTop > 300", timeout=15000)
    moved = scroller.evaluate("el => [el.scrollLeft, el.scrollTop]")
    assert moved[0] > 300 and moved[1] > 300, moved  # the control: the box did scroll
    seen = page.evaluate(MATRIX_AFTER_SCROLLING)
    context.close()
    view, box = seen["viewport"], seen["box"]
    assert 0 <= box["top"] and box["bottom"] <= view["height"], seen  # the box is on screen
    row, head = seen["rowName"], seen["header"]
    assert row.get("tag") == "TH" and row["scope"] == "row" and not row["inHead"], seen
    assert head.get("tag") == "TH" and head["inHead"] and re.fullmatch(r"\d+\.\d+\.\d+", head["text"]), seen
    assert row["left"] >= box["left"] - 1 and 0 <= row["left"] and row["right"] <= view["width"], seen
    assert head["top"] >= box["top"] - 1 and head["bottom"] <= box["bottom"] and head["top"] >= 0, seen


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_matrix_links_are_targets_apart(served_site, chromium, lang):
    """Each row's name link and its evidence link: the evidence link at least 24 by 24 px and
    not overlapping the name (WCAG 2.5.8; Lighthouse's target-size audit). At 390 px."""
    base, html = served_site
    context = chromium.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(f"{base}{lang}/versions.html", wait_until="load")
    rows = page.eval_on_selector_all(
        "table.torch-matrix th[scope=row]",
        """ths => ths.map(th => [...th.querySelectorAll("a")].map(a => {
          const r = a.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }))""",
    )
    context.close()
    assert len(rows) >= 70 and sum(len(links) == 2 for links in rows) >= 70
    for links in rows:
        if len(links) == 1:  # a row with no evidence yet: its name alone
            continue
        (l1, t1, r1, b1), (l2, t2, r2, b2) = links
        assert r2 - l2 >= 24 and b2 - t2 >= 24, links
        assert b1 <= t2 or r1 <= l2, f"the evidence link overlaps the row's name: {links}"


ERRORS_PAGE_SCREENS = 12  # on a 390 x 844 phone; 22 before it was grouped by family


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_errors_page_reads_on_a_phone(served_site, chromium, lang):
    """At 390 px: nothing scrolls sideways (the messages wrap), the page is a few screens
    with every printed message folded, the jump list and the first group's message are on
    the first two screens, each jump lands on its group, and a tap on a group's copy button
    copies its message."""
    base, html = served_site
    context = chromium.new_context(
        viewport=PHONE, has_touch=True, is_mobile=True, permissions=["clipboard-read", "clipboard-write"]
    )
    page = context.new_page()
    page.goto(f"{base}{lang}/errors.html")
    sizes = page.evaluate(
        """() => ({width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight,
          wide: [...document.querySelectorAll('.error-family pre')].filter((p) => p.scrollWidth > p.clientWidth + 1).length,
          jump: document.querySelector('nav.error-jump').getBoundingClientRect().top + scrollY,
          first: document.querySelector('.error-message-block').getBoundingClientRect().top + scrollY,
          open: document.querySelectorAll('details.error-wordings[open]').length,
          folded: document.querySelectorAll('details.error-wordings').length})"""
    )
    assert sizes["width"] <= PHONE["width"] and sizes["wide"] == 0, sizes
    assert sizes["height"] <= ERRORS_PAGE_SCREENS * PHONE["height"], sizes
    assert sizes["jump"] < PHONE["height"] and sizes["first"] < 2 * PHONE["height"], sizes
    assert sizes["open"] == 0 and sizes["folded"] >= 10, sizes
    links = page.locator("nav.error-jump a")
    for number in range(links.count()):
        target = links.nth(number).get_attribute("href").lstrip("#")
        links.nth(number).click()
        top = page.evaluate(f"document.getElementById({json.dumps(target)}).getBoundingClientRect().top")
        assert -2 <= top < PHONE["height"] / 2, (target, top)
    page.evaluate("scrollTo(0, 0)")
    block = page.locator(".error-message-block").first
    block.locator("button.copybtn").tap()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.strip() == block.locator("pre").inner_text().strip() and ": " in copied
    context.close()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_timing_charts_text_is_readable_on_a_phone(served_site, chromium, lang):
    """At 390 px every text of the guide's chart is drawn at least 11 CSS px tall (its font size
    times the SVG's scale, and its box's height), and none runs past the picture's edges. Drawn
    640 units wide and shrunk to the phone's column, it was about 6 px."""
    base, html = served_site
    context = chromium.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(f"{base}{lang}/no_grad_guide.html", wait_until="load")
    texts = page.evaluate(
        """() => {
          const svg = [...document.querySelectorAll("svg.chart")].find((s) => s.checkVisibility());
          svg.scrollIntoView();
          const frame = svg.getBoundingClientRect();
          return [...svg.querySelectorAll("text")].map((t) => {
            const r = t.getBoundingClientRect();
            return {text: t.textContent, size: parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a,
              height: r.height, inside: r.left >= frame.left - 1 && r.right <= frame.right + 1,
              onScreen: frame.right <= innerWidth};
          });
        }"""
    )
    context.close()
    assert len(texts) >= 10, texts
    for text in texts:
        assert text["size"] >= 11 and text["height"] >= 11, text
        assert text["inside"] and text["onScreen"], text


def search(page, base, lang, query):
    page.goto(f"{base}{lang}/search.html?q={quote(query)}")
    page.wait_for_selector("#search-results ul.search li", timeout=15000)
    return {
        urlsplit(a).path.rsplit("/", 1)[-1]
        for a in page.eval_on_selector_all("#search-results ul.search li a", "els => els.map(e => e.href)")
    }


@pytest.mark.parametrize(
    "lang, query, expected",
    [
        ("ko", "텐서는", "inplace_overview.html"),
        ("ko", "기울기를", "no_grad_guide.html"),
        ("ko", "제자리", "plot_02_residual_add.html"),
        ("ko", "no_grad", "no_grad_guide.html"),
        ("en", "version counter", "inplace_overview.html"),
        ("en", "inference_mode", "no_grad_guide.html"),
    ],
)
def test_search_returns_the_expected_pages(served_site, page, lang, query, expected):
    base, html = served_site
    assert expected in search(page, base, lang, query)


def pasted(kind, message):
    """``kind: message`` as a reader's run prints it: other shapes and numbers, the node
    names of another torch release (``Relu`` <-> ``ReluBackward0``), and words of the
    reader's own code that no page has."""
    message = re.sub(r"\[(\d+(?:, \d+)*)\]", "[17, 3]", message)
    message = re.sub(r"\b(\d)\b", lambda m: str((int(m.group(1)) + 3) % 10), message)
    message = re.sub(
        r"\b(of|is) ([A-Z][A-Za-z]+?)(Backward\d)?\b",
        lambda m: f"{m.group(1)} {m.group(2)}{'' if m.group(3) else 'Backward0'}",
        message,
    )
    return f"{kind}: {message} (in qzmodel_forward_pass, mytrainer.fit)"


# what a terminal shows above the message, pasted with it (a search box makes it one line)
TRACEBACK = (
    'Traceback (most recent call last): File "/home/me/project/train.py", line 42, in <module> '
    'loss.backward() File "/usr/lib/python3.11/site-packages/torch/_tensor.py", line 581, in '
    "backward torch.autograd.backward( "
)


def error_entries(html, lang):
    """[(kind, message, {page file names that explain it})] from the built errors page."""
    page = (html / lang / "errors.html").read_text(encoding="utf-8")
    items = re.findall(r'<li><p><code class="error-message[^"]*">(.*?)</code></p>\s*<p>(.*?)</p>', page, re.S)
    out = []
    for code, links in items:
        kind, message = html_text.unescape(re.sub(r"<[^>]+>", "", code)).split(": ", 1)
        out.append((kind, message, {h.split("#")[0] for h in re.findall(r'href="([^"]+)"', links)}))
    return out


# The results of a query as the search page lists them, first first, each as [docname, the
# reason it shows beside the title] (it shows the last of _performSearch's results first),
# without rendering them: rendering fetches every result's page for its snippet
FIRST_RESULTS = """([query, count]) => Search._performSearch(...Search._parseQuery(query))
  .slice(-count).reverse().map((result) => result[0])"""
FIRST_RESULT_EACH = """(queries) => queries.map((query) => {
  const results = Search._performSearch(...Search._parseQuery(query));
  const first = results[results.length - 1];
  return first ? [first[0], first[3]] : [null, null];
})"""
LISTING_PAGES = {"claims", "errors"}  # they list messages; a page that shows one explains it


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_pasted_error_message_finds_the_page_that_explains_it(served_site, page, lang):
    """Every message the errors page lists, pasted as a reader's run would print it (other
    shapes, numbers and node names, and words no page has), alone and after its traceback,
    finds first a page that shows it, or that explains the situation its node names; the
    claims page and the errors page come first only for a message no other page shows (the
    errors page stands for the versions page, whose matrix the search does not index). One
    of them is also typed into the page and its list read as shown."""
    base, html = served_site
    entries = error_entries(html, lang)
    assert len(entries) >= 10, entries
    page.goto(f"{base}{lang}/search.html")
    page.wait_for_function("Search.hasIndex()")
    missed = []
    for kind, message, explaining in entries:
        queries = [pasted(kind, message), TRACEBACK + pasted(kind, message)]
        wanted = {f.removesuffix(".html") for f in explaining}
        wanted = {"errors"} if wanted == {"versions"} else (wanted - LISTING_PAGES or wanted)
        for query, (first, why) in zip(queries, page.evaluate(FIRST_RESULT_EACH, queries)):
            top = page.evaluate(FIRST_RESULTS, [query, 5])
            # the first result shows the message, or the page of the situation its node names
            if first in LISTING_PAGES - wanted or not (first in wanted or why):
                missed.append(f"{query}\n  first results {top}, explained in {sorted(explaining)}")
    assert not missed, "\n".join(missed)
    kind, message, explaining = next(e for e in entries if "which is output" in e[1])
    query = pasted(kind, message)
    expected = page.evaluate(FIRST_RESULTS, [query, 5])
    page.goto(f"{base}{lang}/search.html?q={quote(query)}")
    page.wait_for_selector("#search-results .search-summary:not(:empty)", timeout=15000)
    shown = page.eval_on_selector_all(
        "#search-results ul.search > li > a:first-child",
        "els => els.slice(0, 5).map((e) => new URL(e.href).pathname)",
    )
    assert [path.split(f"/{lang}/", 1)[1].removesuffix(".html") for path in shown] == expected, (
        shown,
        expected,
    )
    # the first result says why: the node the message names, and what that node means
    reason = page.locator("#search-results ul.search > li").first.inner_text()
    assert re.search(r"\(output \d+ of \w+: .{20,}\)", reason), reason


# what a reader's terminal prints around a message, as pasted into the search box
PASTE_AROUNDS = [
    "{}",
    TRACEBACK + "{}",
    'File "/content/drive/MyDrive/gan/train.py", line 118, in train_step errD.backward() {}',
    "{} During handling of the above exception, another exception occurred:",
]
TENSOR_TYPES = ["torch.FloatTensor", "torch.cuda.FloatTensor", "torch.cuda.HalfTensor"]
NODE_STYLES = ["{}", "{}Backward0", "{}Backward"]  # torch 2.13; 2.0-2.12; 1.x


def pasted_set():
    """[(query, {docname, ...})] from tests/pasted_errors.csv: each message written as a
    reader pastes it, with its tensor's type, its node's name (as torch 2.13, 2.0-2.12 and
    1.x print it: ``{Relu}``) and what the terminal printed around it varied."""
    import csv

    rows = list(csv.reader((ROOT / "tests" / "pasted_errors.csv").open(encoding="utf-8")))[1:]
    out = []
    for number, (message, explained) in enumerate(rows):
        nodes = re.findall(r"\{([A-Z]\w*)\}", message)
        for style_number, style in enumerate(NODE_STYLES if nodes else NODE_STYLES[:1]):
            for tensor in TENSOR_TYPES if "{tensor}" in message else TENSOR_TYPES[:1]:
                text = message.replace("{tensor}", tensor)
                for node in nodes:
                    text = text.replace("{" + node + "}", style.format(node))
                around = PASTE_AROUNDS[(number + style_number) % len(PASTE_AROUNDS)]
                out += [(text, set(explained.split())), (around.format(text), set(explained.split()))]
    return out


def test_the_pasted_set_varies_what_a_paste_varies():
    queries = [q for q, _ in pasted_set()]
    assert len(queries) >= 300
    for part in [
        "torch.cuda.HalfTensor",
        "ReluBackward0,",
        "ReluBackward,",
        "of Relu,",
        "TBackward,",
        "Traceback",
    ]:
        assert any(part in q for q in queries), part


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_pasted_message_lands_first_on_its_page(served_site, page, lang):
    """Each message of tests/pasted_errors.csv, in each of its pasted forms (tensor types,
    node names of three torch generations, traceback lines around it), finds first a page
    that explains it: never the claims page or the errors page, which list messages."""
    base, html = served_site
    page.goto(f"{base}{lang}/search.html")
    page.wait_for_function("Search.hasIndex()")
    cases = pasted_set()
    firsts = page.evaluate(FIRST_RESULT_EACH, [query for query, _ in cases])
    missed = [
        f"{query[:220]}\n  first: {first} ({why}); explained on {sorted(wanted)}"
        for (query, wanted), (first, why) in zip(cases, firsts)
        if first not in wanted
    ]
    assert not missed, f"{len(missed)} of {len(cases)}:\n" + "\n".join(missed)


def test_a_pasted_message_finds_nothing_by_every_word_alone(served_site, page):
    """The control: Sphinx's own search, which needs every word, finds no page for a pasted
    message; the ranked search finds pages for the same words."""
    base, html = served_site
    kind, message, _ = next(e for e in error_entries(html, "en") if "which is output" in e[1])
    page.goto(f"{base}en/search.html")
    page.wait_for_function("Search.hasIndex()")
    every, ranked = page.evaluate(
        """(query) => { const [, terms, excluded] = Search._parseQuery(query);
          return [Search.performEveryWordSearch(terms, excluded).length,
                  Search.performTermsSearch(terms, excluded).length]; }""",
        pasted(kind, message),
    )
    assert every == 0 and ranked >= 2, (every, ranked)
    # a pasted traceback is read from its message on: the same words as the message alone
    alone, after = page.evaluate(
        """([one, two]) => [one, two].map((query) => [...Search._parseQuery(query)[1]].sort())""",
        [pasted(kind, message), TRACEBACK + pasted(kind, message)],
    )
    assert after == alone and "traceback" not in after and len(alone) >= 10, (alone, after)


@pytest.mark.parametrize(
    "lang, query, target",
    [
        ("en", "Residual", "recipes/plot_02_residual_add.html"),
        ("en", "Accumulating", "recipes/plot_07_detach_statistics.html"),
        ("en", "Turning", "no_grad_guide.html"),
        ("ko", "잔차", "recipes/plot_02_residual_add.html"),
        ("ko", "슬라이싱", "recipes/plot_05_indexing_and_inplace.html"),
        ("ko", "autograd와", "inplace_overview.html"),
    ],
)
def test_a_search_snippet_is_the_pages_title_and_lede(served_site, page, lang, query, target):
    """Found by a word of its title, a page's result shows its title and then its lede: the
    downloads line, the versions banner and sphinx-gallery's notes come after the lede (the
    snippet is the text from the page's start up to 240 characters, searchtools.js)."""
    base, html = served_site
    search(page, base, lang, query)
    result = page.locator(f'#search-results ul.search li:has(a[href$="{target}"]) p.context')
    result.wait_for(timeout=15000)
    snippet = result.inner_text()
    page.goto(f"{base}{lang}/{target}")
    title = page.locator("article h1").first.inner_text().rstrip("#¶ \n")
    lede = page.locator("article section > p").first.inner_text()
    assert " ".join(snippet.split()).startswith(" ".join(f"{title} {lede}".split())[:200]), snippet


def test_copy_button_copies_code_without_output(served_site, chromium):
    base, html = served_site
    context = chromium.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.goto(base + "en/recipes/plot_03_clone_before_inplace.html")
    blocks = page.locator("div.highlight-Python")
    code = blocks.nth(1).locator("pre").inner_text()
    blocks.nth(1).hover()
    blocks.nth(1).locator("button.copybtn").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.strip() == code.strip()
    assert "x.add_(1)" in copied and "RuntimeError: a leaf" not in copied  # no output
    # output blocks get no copy button at all
    assert page.locator("div.sphx-glr-script-out button.copybtn").count() == 0
    page.goto(base + "en/no_grad_guide.html")
    assert page.locator("div.cell_output button.copybtn").count() == 0
    assert page.locator("div.cell_input button.copybtn").count() > 10
    context.close()


# Each copy button's opacity, and whether any line box of its block's code overlaps it
COPY_BUTTONS = """() => [...document.querySelectorAll("div.highlight > button.copybtn")].map((button) => {
  const b = button.getBoundingClientRect();
  const range = document.createRange();
  range.selectNodeContents(button.parentElement.querySelector("pre"));
  const covered = [...range.getClientRects()].filter((r) => r.width > 0
    && r.bottom > b.top + 1 && r.top < b.bottom - 1 && r.right > b.left + 1 && r.left < b.right - 1).length;
  return {opacity: Number(getComputedStyle(button).opacity), covered};
})"""


def test_copy_buttons_show_on_a_touch_screen_without_covering_code(served_site, chromium):
    """A touch screen has no hover (sphinx-copybutton shows its buttons only on hover): on a
    phone with touch (hover: none) every code block's copy button is shown, and no code is
    under it (the first line wraps around it); the reviewer's phone at 390 px found none."""
    base, html = served_site
    context = chromium.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(base + "en/recipes/plot_03_clone_before_inplace.html", wait_until="load")
    assert page.evaluate("matchMedia('(hover: none)').matches")
    page.wait_for_timeout(600)  # the buttons' opacity transition (0.3 s)
    buttons = page.evaluate(COPY_BUTTONS)
    assert len(buttons) > 2, buttons
    assert all(b["opacity"] == 1 and b["covered"] == 0 for b in buttons), buttons
    context.close()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_screenshots(served_site, chromium, lang):
    base, html = served_site
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = chromium.new_context()
    page = context.new_page()
    for name, path, viewport in [
        ("landing", "index.html", (1200, 900)),
        ("recipe", "recipes/plot_05_indexing_and_inplace.html", (1200, 900)),
        ("guide", "no_grad_guide.html", (1200, 900)),
        ("recipe-phone", "recipes/plot_05_indexing_and_inplace.html", (390, 844)),
    ]:
        page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
        page.goto(base + f"{lang}/{path}", wait_until="load")
        target = ARTIFACTS / f"{name}-{lang}.png"
        page.screenshot(path=str(target), full_page=name != "guide")
        assert target.stat().st_size > 10_000
    context.close()


GRAPH_COLOURS = """() => {
  const svg = document.querySelector("figure.autograd-graph svg");
  const fill = (el) => getComputedStyle(el).fill;
  return {
    text: fill(svg.querySelector("g text")),
    box: fill(svg.querySelector("g rect")),
    alert: fill(svg.querySelector(".ag-alert")),
    width: svg.getBoundingClientRect().width,
    drawn: svg.viewBox.baseVal.width,
    figureRight: svg.parentElement.getBoundingClientRect().right,
    figureWidth: svg.parentElement.clientWidth,
    figureScrolls: svg.parentElement.scrollWidth > svg.parentElement.clientWidth,
    viewport: document.documentElement.clientWidth,
    theme: document.body.dataset.theme,
  };
}"""


def _luminance(rgb):
    channels = [int(c) / 255 for c in re.findall(r"\d+", rgb)[:3]]
    return sum(
        w * (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
        for w, c in zip((0.2126, 0.7152, 0.0722), channels)
    )


def _contrast(a, b):
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_graph_pictures_follow_the_theme_and_stay_readable(served_site, chromium, lang):
    """A recipe's first graph (a failing case) in furo's light and dark themes and in "auto"
    under a dark system, at desktop and phone width, on one load of the page (the theme
    toggle's own cycle is test_theme_toggle_cycles_themes): screenshots go to build/test-artifacts/;
    the boxes' text and the changed saved tensor's line keep their contrast (WCAG AA, 4.5:1),
    the picture turns light on dark with the theme (light and dark differ: the control), and
    on a phone it keeps its drawn size in a figure that fits the width and scrolls sideways."""
    base, html = served_site
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    seen = {}
    # one load, then each theme as furo's button sets it (body's data-theme) and each width
    context = chromium.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.goto(base + f"{lang}/recipes/plot_03_clone_before_inplace.html", wait_until="load")
    figure = page.locator("figure.autograd-graph").first
    for theme, system in (("light", "light"), ("dark", "light"), ("auto", "dark")):
        page.emulate_media(color_scheme=system)
        page.evaluate(f"document.body.dataset.theme = {theme!r}")
        for device, (width, height) in (("desktop", (1200, 900)), ("phone", (390, 844))):
            page.set_viewport_size({"width": width, "height": height})
            figure.scroll_into_view_if_needed()
            target = ARTIFACTS / f"graph-{lang}-{theme}-{device}.png"
            figure.screenshot(path=str(target))
            colours = page.evaluate(GRAPH_COLOURS)
            assert colours["theme"] == theme and target.stat().st_size > 2_000
            assert _contrast(colours["text"], colours["box"]) >= 4.5, (theme, device, colours)
            assert _contrast(colours["alert"], colours["box"]) >= 4.5, (theme, device, colours)
            # the figure stays inside the viewport; on a phone the picture keeps its drawn size
            # (labels 12 px, not 7-10 px) and its figure scrolls sideways when it is wider
            assert colours["figureRight"] <= colours["viewport"], (theme, device, colours)
            if device == "phone":
                assert abs(colours["width"] - colours["drawn"]) < 1, (theme, device, colours)
                assert colours["figureScrolls"] == (colours["width"] > colours["figureWidth"] + 1), colours
            else:
                assert colours["width"] <= colours["viewport"], (theme, device, colours)
            seen[theme, device] = colours
    context.close()
    for device in ("desktop", "phone"):
        light, dark, auto = (seen[t, device] for t in ("light", "dark", "auto"))
        assert _luminance(light["text"]) < 0.2 < _luminance(dark["text"]), (light, dark)
        assert (auto["text"], auto["box"], auto["alert"]) == (dark["text"], dark["box"], dark["alert"])
