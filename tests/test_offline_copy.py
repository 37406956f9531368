"""Each language's offline copy (src/autograd_recipes/publish/offline_copy.py): linked from its landing page
with its size, deterministic, complete, and readable in Chromium with the network off."""

import io
import re
import time
import zipfile

import pytest
from browser_pass import served
from conftest import CONF, EPOCH_2024, LANGUAGES, SITE_URL

from autograd_recipes.publish import offline_copy
from autograd_recipes.publish.site_scan import broken_links

PROJECT = CONF["project"]


def archive(html, lang):
    return html / offline_copy.archive_name(PROJECT, lang)


@pytest.fixture(scope="module")
def html(built_site):
    project, code, output = built_site
    assert code == 0, output
    return project / "build" / "html"


@pytest.fixture(scope="module")
def unpacked(html, tmp_path_factory):
    """{lang: the folder its archive unpacks to}."""
    folders = {}
    for lang in LANGUAGES:
        dest = tmp_path_factory.mktemp(f"offline-{lang}")
        with zipfile.ZipFile(archive(html, lang)) as zip_file:
            zip_file.extractall(dest)
        folders[lang] = dest / offline_copy.archive_folder(PROJECT, lang)
    return folders


@pytest.mark.parametrize("lang", LANGUAGES)
def test_landing_page_links_the_archive_with_its_size(html, lang):
    page = (html / lang / "index.html").read_text(encoding="utf-8")
    name = offline_copy.archive_name(PROJECT, lang)
    assert f'href="../{name}"' in page
    shown = offline_copy.SIZE_SLOT.findall(page)
    size = archive(html, lang).stat().st_size
    assert len(shown) == 1 and shown[0][1] == offline_copy.format_size(size, lang), (shown, size)
    assert shown[0][1] != offline_copy.UNKNOWN_SIZE
    # the size is a build figure, masked by the determinism test
    assert '<span class="measured">' in shown[0][0]


def test_sizes_are_written_as_each_language_writes_them():
    assert offline_copy.format_size(591_835, "en") == "0.6 MB"
    # a space before the unit in Korean too, as the site's other figures (CLDR has none)
    assert offline_copy.format_size(1_234_567, "ko") == "1.2 MB"
    assert offline_copy.format_size(1_234_567, "ko", 2) == "1.23 MB"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_archive_holds_the_language_tree_and_nothing_else(html, lang):
    tree = html / lang
    folder = offline_copy.archive_folder(PROJECT, lang)
    files = sorted(
        p.relative_to(tree).as_posix()
        for p in tree.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(tree).parts)
    )
    with zipfile.ZipFile(archive(html, lang)) as zip_file:
        infos = zip_file.infolist()
    assert [i.filename for i in infos] == [f"{folder}/{f}" for f in files]
    assert f"{folder}/index.html" in {i.filename for i in infos}
    assert not any(i.filename.endswith(offline_copy.archive_name(PROJECT, lang)) for i in infos)
    assert {i.date_time for i in infos} == {time.gmtime(int(EPOCH_2024))[:6]}


def test_archive_leaves_out_images_and_downloads_no_page_uses(tmp_path):
    tree = tmp_path / "en"
    files = {
        "index.html": '<img src="_images/used.svg"><a href="_downloads/abc/guide%20one.ipynb">get</a>',
        "_images/used.svg": "<svg/>",
        "_images/stale.png": "old",  # left by an earlier build
        "_downloads/abc/guide one.ipynb": "{}",
        "_downloads/old/guide.ipynb": "{}",  # left by an earlier build
        "_static/site.css": "body {}",  # not a generated folder: always in
    }
    for name, text in files.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    data = offline_copy.archive_bytes(tree, "copy", EPOCH_2024, SITE_URL)
    with zipfile.ZipFile(io.BytesIO(data)) as zip_file:
        names = {i.filename.removeprefix("copy/") for i in zip_file.infolist()}
    assert names == {"index.html", "_images/used.svg", "_downloads/abc/guide one.ipynb", "_static/site.css"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_archive_is_deterministic(html, lang):
    """Archiving the same pages again gives the published file byte for byte; another
    SOURCE_DATE_EPOCH gives other bytes (the control)."""
    folder = offline_copy.archive_folder(PROJECT, lang)
    again = offline_copy.archive_bytes(html / lang, folder, EPOCH_2024, SITE_URL)
    assert again == archive(html, lang).read_bytes()
    assert offline_copy.archive_bytes(html / lang, folder, int(EPOCH_2024) + 86400, SITE_URL) != again


def test_landing_page_settles_on_its_own_archive_size(html, tmp_path):
    """The size on the landing page is inside the archive it measures: written, archived
    and written again until they agree; the archive on disk is the last one made."""
    import shutil

    site = tmp_path / "html"
    shutil.copytree(html / "en", site / "en")
    index = site / "en" / "index.html"
    index.write_text(
        offline_copy.SIZE_SLOT.sub(
            rf"\g<1>{offline_copy.UNKNOWN_SIZE}\g<3>", index.read_text(encoding="utf-8")
        ),
        encoding="utf-8",
    )
    path, shown = offline_copy.write_offline_copy(site, "en", PROJECT, SITE_URL, EPOCH_2024)
    assert shown == offline_copy.format_size(path.stat().st_size, "en")
    with zipfile.ZipFile(path) as zip_file:
        inside = zip_file.read(f"{offline_copy.archive_folder(PROJECT, 'en')}/index.html").decode("utf-8")
    assert offline_copy.SIZE_SLOT.search(inside).group(2) == shown
    # unchanged (a rebuild that wrote no page): the archive is kept; a page changed, or the
    # archive itself, and it is made again
    made = path.stat().st_mtime_ns
    assert offline_copy.write_offline_copy(site, "en", PROJECT, SITE_URL, EPOCH_2024) == (path, shown)
    assert path.stat().st_mtime_ns == made
    for changed in (site / "en" / "glossary.html", path):
        changed.write_bytes(changed.read_bytes() + b" ")
        again, _ = offline_copy.write_offline_copy(site, "en", PROJECT, SITE_URL, EPOCH_2024)
        assert path.stat().st_mtime_ns != made and zipfile.ZipFile(again).testzip() is None, changed
        made = path.stat().st_mtime_ns
    # a landing page without the directive's paragraph stops the build, naming the page
    index.write_text("<html><body>no offline copy here</body></html>", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{index}: no place for the offline copy's size")):
        offline_copy.write_offline_copy(site, "en", PROJECT, SITE_URL, EPOCH_2024)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_link_of_the_unpacked_copy_resolves(html, unpacked, lang, tmp_path):
    """Inside the copy every relative link resolves; those that leave it (the language
    switch, the download link) point at the published site. The control: the language's
    folder copied as it is has links that lead nowhere."""
    import shutil

    assert broken_links(unpacked[lang]) == []
    index = (unpacked[lang] / "index.html").read_text(encoding="utf-8")
    other = next(code for code in LANGUAGES if code != lang)
    assert f'href="{SITE_URL}{other}/index.html"' in index
    assert f'href="{SITE_URL}{offline_copy.archive_name(PROJECT, lang)}"' in index
    shutil.copytree(html / lang, tmp_path / lang)
    assert any(f"../{other}/index.html" in problem for problem in broken_links(tmp_path / lang))


def test_links_leaving_the_language_folder_are_made_absolute():
    page = (
        '<a href="../../ko/recipes/x.html#top">ko</a> <a href="x.html">same</a> <a href="../x.html">up</a>'
        ' <img src="../../_static/a.png"> <a href="https://other.example/">out</a> <a href="#top">here</a>'
    )
    assert offline_copy.outward_links(page, "en/recipes/y.html", "https://site.example/sub") == (
        '<a href="https://site.example/sub/ko/recipes/x.html#top">ko</a> <a href="x.html">same</a>'
        ' <a href="../x.html">up</a> <img src="https://site.example/sub/_static/a.png">'
        ' <a href="https://other.example/">out</a> <a href="#top">here</a>'
    )


@pytest.mark.parametrize("lang", LANGUAGES)
def test_unpacked_copy_opens_and_navigates_in_chromium_offline(html, unpacked, lang, chromium):
    """From file:// with the browser offline: the landing page loads, a link to another
    page loads that page, and no request leaves file://. The control: the same offline
    context cannot load the site from a local server."""
    from playwright.sync_api import Error

    context = chromium.new_context(offline=True)
    requests, errors = [], []
    context.on("request", lambda request: requests.append(request.url))
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto((unpacked[lang] / "index.html").as_uri())
    assert page.locator("p.offline-copy").count() == 1
    page.click('article a[href="inplace_overview.html"]')
    page.wait_for_url((unpacked[lang] / "inplace_overview.html").as_uri())
    assert page.locator("article h1").count() == 1
    recipe = page.locator('article a[href^="recipes/plot_"]').first  # on to a recipe
    target = (unpacked[lang] / recipe.get_attribute("href")).as_uri()
    recipe.click()
    page.wait_for_url(target)
    assert page.locator("article pre").count() > 0
    assert errors == []
    assert len(requests) > 3 and all(url.startswith("file://") for url in requests), requests
    with served(html) as base, pytest.raises(Error, match="ERR_INTERNET_DISCONNECTED"):
        page.goto(base + f"{lang}/index.html")
    context.close()


@pytest.mark.parametrize("lang, query", [("en", "no_grad"), ("ko", "텐서")])
def test_search_in_the_unpacked_copy_shows_results_without_errors(unpacked, lang, query, chromium):
    """From file:// a browser refuses the fetches Sphinx's search makes for its result
    snippets: the results show without them, and nothing goes to the console. The control:
    the same copy served over HTTP shows snippets."""
    from urllib.parse import quote

    def search(page, url):
        page.goto(f"{url}?q={quote(query)}")
        page.wait_for_function(
            "document.querySelector('#search-results p.search-summary')?.innerText.length > 0", timeout=15000
        )
        page.wait_for_load_state("networkidle")  # any snippet fetch has been answered or failed
        return page.locator("#search-results ul.search li").count(), page.locator(
            "#search-results ul.search li p.context"
        ).count()

    context = chromium.new_context(offline=True)
    page = context.new_page()
    errors = []
    page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    results, snippets = search(page, (unpacked[lang] / "search.html").as_uri())
    assert results >= 3 and snippets == 0
    assert errors == []
    context.close()
    with served(unpacked[lang]) as base:
        context = chromium.new_context()
        results, snippets = search(context.new_page(), base + "search.html")
        context.close()
        assert results >= 3 and snippets > 0
