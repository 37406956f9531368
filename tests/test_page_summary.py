"""Every page's summary for search results and link previews (src/autograd_recipes/pages/page_summary.py)."""

import html as html_text
import re

import polib
import pytest
from conftest import LANGUAGES, RECIPES, ROOT

from autograd_recipes.pages.page_summary import DESCRIPTION_WIDTH, shorten, width
from autograd_recipes.project import PROJECT

HANGUL = re.compile(r"[\uac00-\ud7a3]")
DESCRIPTION = re.compile(r'<meta name="description" content="([^"]*)" />')


def pages(project, lang):
    """{page name: its HTML} of every page of ``lang``'s site."""
    root = project / "build/html" / lang
    return {
        p.relative_to(root).with_suffix("").as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*.html"))
        if not p.relative_to(root).as_posix().startswith("_")
    }


def meta(page, prop):
    found = re.findall(rf'<meta property="{prop}" content="([^"]*)" />', page)
    return html_text.unescape(found[0]) if len(found) == 1 else found


def text(fragment):
    return " ".join(html_text.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def first_paragraph(page):
    """The text of the first paragraph of the page's own (no class: not an extension's line)."""
    article = page[page.index("<h1") :]
    return text(re.search(r"<p>(.*?)</p>", article, re.S).group(1))


def explicit_descriptions():
    """{page: its English ``.. meta:: :description:``} from the reST sources.

    The gallery's page is built from its README (sphinx-gallery writes it as the gallery's index).
    """
    sources = {path.stem: path for path in (ROOT / "docs").glob("*.rst")}
    sources[f"{PROJECT.gallery_dir}/index"] = PROJECT.recipes_dir / "README.rst"
    found = {}
    for name, path in sorted(sources.items()):
        match = re.search(
            r"^\.\. meta::\n   :description: (.*?)\n\n", path.read_text(encoding="utf-8"), re.S | re.M
        )
        if match:
            found[name] = " ".join(match.group(1).split())
    return found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_has_one_plain_description_in_its_language(built_site, lang):
    project, code, output = built_site
    assert code == 0, output
    site = pages(project, lang)
    assert {"index", "claims", "no_grad_guide", PROJECT.recipe_docname(RECIPES[0]), "search"} <= set(site)
    for name, page in site.items():
        found = DESCRIPTION.findall(page)
        assert len(found) == 1, f"{lang}/{name}: {len(found)} meta descriptions"
        description = html_text.unescape(found[0])
        assert description and "<" not in description and "``" not in description, f"{lang}/{name}"
        assert meta(page, "og:description") == description, f"{lang}/{name}: og:description"
        assert bool(HANGUL.search(description)) == (lang != "en"), f"{lang}/{name}: {description!r}"
        assert 'translated="' not in page, f"{lang}/{name}: an attribute of Sphinx's translation"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_description_is_the_pages_first_paragraph_cut_on_a_boundary(built_site, lang):
    project, code, output = built_site
    site = pages(project, lang)
    explicit = explicit_descriptions()
    checked = [n for n in site if n not in explicit and n not in {"search", "genindex"}]
    # the landing and gallery pages have their own (explicit) descriptions
    assert {"no_grad_guide", "inplace_overview", *PROJECT.recipe_docnames()} <= set(checked)
    for name in checked:
        description = meta(site[name], "og:description")
        paragraph = first_paragraph(site[name])
        assert width(description) <= DESCRIPTION_WIDTH, f"{lang}/{name}: {description!r}"
        if description.endswith("…"):  # cut between words
            rest = paragraph[len(description) - 1 :]
            assert paragraph.startswith(description[:-1]) and not rest[0].isalnum(), name
        else:  # whole sentences
            assert paragraph == description or paragraph.startswith(description + " "), name
            assert description[-1] in ".!?", f"{lang}/{name}: {description!r}"
    # control: a page's description is not another page's first paragraph
    first, second = PROJECT.recipe_docnames()[:2]
    assert not first_paragraph(site[second]).startswith(meta(site[first], "og:description").rstrip("…"))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_explicit_description_is_the_pages_field_translated(built_site, lang):
    project, code, output = built_site
    site = pages(project, lang)
    explicit = explicit_descriptions()
    assert {"claims", "index", "recipes/index"} <= set(explicit)
    for name, english in explicit.items():
        if lang == "en":
            expected = english
        else:
            catalog = polib.pofile(str(ROOT / "locales" / lang / "LC_MESSAGES" / f"{name}.po"))
            expected = catalog.find(english).msgstr
        assert meta(site[name], "og:description") == expected, f"{lang}/{name}"
        # control: the page's first paragraph would have given another summary
        assert shorten(first_paragraph(site[name])) != expected


@pytest.mark.parametrize("lang", LANGUAGES)
def test_titles_in_link_previews_are_text(built_site, lang):
    project, code, output = built_site
    site = pages(project, lang)
    for recipe in RECIPES:
        page = site[PROJECT.recipe_docname(recipe)]
        heading = text(re.search(r"<h1>(.*?)<a class=\"headerlink\"", page, re.S).group(1))
        assert meta(page, "og:title") == f"{heading} - Autograd Recipes"
        assert "<code" not in meta(page, "og:title") and "<code" in page  # the page's title has markup


def test_shorten_keeps_whole_sentences_or_words():
    assert shorten("One  short\nsentence.") == "One short sentence."
    first = "A first sentence that is long enough to fill at least half of the width on its own."
    long = f"{first} And a second one, also long, which would no longer fit in the width of the summary."
    assert shorten(long) == first  # whole sentences
    short_then_long = "Short. " + "word " * 60
    cut = shorten(short_then_long)
    assert cut.endswith("…") and width(cut) <= DESCRIPTION_WIDTH and cut[:-1] == cut[:-1].rstrip()
    assert short_then_long.startswith(cut[:-1] + " ")  # between words, not inside one


def test_a_hangul_syllable_takes_two_columns():
    assert width("가나") == 4 and width("ab") == 2
    korean = "가" * 79 + "."  # 159 columns: fits
    assert shorten(korean) == korean
    longer = "가" * 40 + " " + "나" * 40 + "."  # 163 columns: cut between the words
    assert shorten(longer) == "가" * 40 + "…"
