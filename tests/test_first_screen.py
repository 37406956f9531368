"""A recipe's first screen on a phone shows its lede and the start of its first case.

Chromium at 390 × 844 CSS px (a common phone), both languages: the lede's first
paragraph and the first case's heading start inside the first screen, and the page
opens on its title, not on sphinx-gallery's "Go to the end" note. A screenshot of
each goes to build/test-artifacts/first-screen/.
"""

import pytest
from browser_pass import skip_without_chromium
from conftest import LANGUAGES, RECIPES, ROOT

from autograd_recipes.project import PROJECT

skip_without_chromium(allow_module_level=True)


PHONE = {"width": 390, "height": 844}
SHOTS = ROOT / "build" / "test-artifacts" / "first-screen"


@pytest.fixture(scope="module")
def phone(served_site, chromium):
    base, html = served_site
    context = chromium.new_context(viewport=PHONE, device_scale_factor=1)
    yield base, context.new_page()
    context.close()


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("recipe", [PROJECT.recipe_docname(p) for p in RECIPES])
def test_first_screen_shows_the_lede_and_the_first_case(phone, recipe, lang):
    base, page = phone
    page.goto(f"{base}{lang}/{recipe}.html")
    where = page.evaluate(
        """() => {
            const article = document.querySelector('article[role=main]');
            const top = (el) => el ? el.getBoundingClientRect().top + window.scrollY : null;
            return {
                title: top(article.querySelector('h1')),
                lede: top(article.querySelector('h1 ~ p')),
                firstCase: top(article.querySelector('section section h2')),
                note: !!article.querySelector('.sphx-glr-download-link-note'),
                downloads: !!article.querySelector('.page-downloads a[download]'),
            };
        }"""
    )
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{lang}-{recipe}.png"))
    assert not where["note"], "sphinx-gallery's download note is still on the page"
    assert where["downloads"], "no download line under the lede"
    assert where["title"] is not None and where["title"] < 120, where
    assert where["lede"] is not None and where["lede"] < PHONE["height"] / 2, where
    # the first case's heading, and a line of it, inside the first screen
    assert where["firstCase"] is not None and where["firstCase"] + 40 < PHONE["height"], where


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 2, 0), (2, 0, 1)])
def test_the_parts_under_a_lede_keep_their_order_whatever_adds_them_first(order):
    """The downloads line, a notebook's download and the versions banner
    are added by three extensions at different events: under the lede they stand in first_screen.UNDER_LEDE's
    order, whichever comes first, and the first case stays after them."""
    from docutils import nodes

    from autograd_recipes.pages.first_screen import UNDER_LEDE, add_under_lede, lede_end

    section = nodes.section()
    section += nodes.title("", "A recipe")
    section += nodes.paragraph("", "The lede.")
    section += nodes.paragraph("", "Its second paragraph.")
    section += nodes.literal_block("", "x.add_(1)")
    for number in order:
        add_under_lede(section, nodes.paragraph("", UNDER_LEDE[number], classes=[UNDER_LEDE[number]]))
    assert [child.astext() for child in section.children] == [
        "A recipe",
        "The lede.",
        "Its second paragraph.",
        *UNDER_LEDE,
        "x.add_(1)",
    ]
    assert lede_end(section) == 3  # the parts are not the lede
