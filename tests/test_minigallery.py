"""From a section of the guide or the overview to the recipes that use what it explains:
sphinx-gallery's mini-galleries (``.. minigallery:: torch.no_grad``), from what the recipes'
code really uses."""

import ast
import html as html_text
import re

import pytest
from conftest import LANGUAGES, RECIPES, ROOT

from autograd_recipes.project import PROJECT

HANGUL = re.compile(r"[\uac00-\ud7a3]")


def galleries():
    """[(page, name)] of every mini-gallery in the sources."""
    found = []
    for path in sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "docs").glob("*.rst")):
        for name in re.findall(r"^\.\. minigallery:: (\S+)$", path.read_text(encoding="utf-8"), re.M):
            found.append((path.stem, name))
    return found


def uses(recipe, name):
    """Whether ``recipe``'s code refers to ``name`` (a dotted name such as torch.no_grad),
    read from its syntax tree with its imports resolved: not the way sphinx-gallery finds it."""
    tree = ast.parse(recipe.read_text(encoding="utf-8"))
    aliases = {}  # a name in the recipe -> the dotted name it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.split(".")[0]
                aliases[alias.asname or head] = alias.name if alias.asname else head
        elif isinstance(node, ast.ImportFrom) and node.module:
            aliases.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    for node in ast.walk(tree):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.insert(0, node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in aliases:
            dotted = ".".join([aliases[node.id], *parts])
            if dotted == name or dotted.startswith(name + "."):
                return True
    return False


def card_section(page, name):
    """The HTML of the section whose heading names ``name`` and that holds recipe cards."""
    for start in (m.start() for m in re.finditer(r"<section id=", page)):
        section = page[start : page.index("</section>", start)]
        heading = re.search(r"<h3>(.*?)</h3>", section, re.S)
        if (
            heading
            and f'<span class="pre">{name}</span>' in heading.group(1)
            and "sphx-glr-thumbnails" in section
        ):
            return section
    return None


def test_the_sources_have_the_guides_no_grad_gallery():
    assert ("no_grad_guide", "torch.no_grad") in galleries()
    # the oracle tells users from others
    assert uses(ROOT / "recipes/plot_01_manual_weight_update.py", "torch.no_grad")
    assert not uses(ROOT / "recipes/plot_03_clone_before_inplace.py", "torch.no_grad")


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(("page", "name"), galleries())
def test_minigallery_links_exactly_the_recipes_that_use_the_name(built_site, lang, page, name):
    project, code, output = built_site
    assert code == 0, output
    html = (project / "build/html" / lang / f"{page}.html").read_text(encoding="utf-8")
    section = card_section(html, name)
    assert section, f"{lang}/{page}: no cards under a heading naming {name}"
    linked = re.findall(
        r'class="sphx-glr-thumbcontainer".*?href="recipes/((?:\w+/)?plot_\w+)\.html"', section, re.S
    )
    users = [PROJECT.recipe_docname(r).removeprefix("recipes/") for r in RECIPES if uses(r, name)]
    assert users and linked == users, f"{lang}/{page}: {name}"
    for path in linked:
        assert (project / "build/html" / lang / "recipes" / f"{path}.html").is_file()
    if name == "torch.no_grad":  # control: a recipe that does not use it is not there
        assert "plot_03_clone_before_inplace" in [r.stem for r in RECIPES]
        assert "plot_03_clone_before_inplace" not in linked


CARD = re.compile(
    r'href="recipes/((?:\w+/)?plot_\w+)\.html".*?sphx-glr-thumbnail-title">([^<]*)<.*?'
    r'sphx-glr-thumbnail-description">([^<]*)<',
    re.S,
)


def title_of(project, lang, stem):
    recipe = (project / "build/html" / lang / "recipes" / f"{stem}.html").read_text(encoding="utf-8")
    heading = re.search(r"<h1>(.*?)<a class=\"headerlink\"", recipe, re.S).group(1)
    return " ".join(html_text.unescape(re.sub(r"<[^>]+>", "", heading)).split())


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(("page", "name"), galleries())
def test_minigallery_cards_read_in_the_pages_language(built_site, lang, page, name):
    project, code, output = built_site
    section = card_section((project / "build/html" / lang / f"{page}.html").read_text(encoding="utf-8"), name)
    heading = re.search(r"<h3>(.*?)<a class=\"headerlink\"", section, re.S).group(1)
    cards = CARD.findall(section)
    assert cards
    assert len(cards) == section.count('class="sphx-glr-thumbcontainer"')  # each has its description
    for stem, caption, description in cards:
        # the caption is the recipe page's own title, in this language (sphinx-gallery writes English)
        assert html_text.unescape(caption) == title_of(project, lang, stem), f"{lang}/{page}: {stem}"
        assert bool(HANGUL.search(html_text.unescape(description))) == (lang != "en"), (
            f"{lang}/{page}: {stem}"
        )
    if lang == "en":  # control: the source language keeps sphinx-gallery's English
        assert heading.startswith("Recipes using ") and not HANGUL.search(section)
    else:
        assert HANGUL.search(heading) and "Recipes" not in heading and "\\" not in heading, heading


@pytest.mark.parametrize(("page", "name"), galleries())
def test_card_thumbnails_load_lazily(built_site, page, name):
    project, code, output = built_site
    section = card_section((project / "build/html/en" / f"{page}.html").read_text(encoding="utf-8"), name)
    images = re.findall(r"<img [^>]*>", section)
    assert images and all('loading="lazy"' in image for image in images), images


def test_only_card_images_are_made_lazy():
    """lazy_thumbnails' rule on a doctree of its own: an image outside a card keeps loading at once."""
    from types import SimpleNamespace

    from docutils import nodes
    from docutils.utils import new_document

    from autograd_recipes.pages.lazy_thumbnails import _lazy_thumbnails

    doctree = new_document("test")
    card = [
        nodes.raw("", '<div class="sphx-glr-thumbcontainer" tooltip="t">', format="html"),
        nodes.image(uri="card.png"),
        nodes.raw("", '<div class="sphx-glr-thumbnail-title">T</div></div>', format="html"),
    ]
    doctree += [*card, nodes.image(uri="figure.png")]
    _lazy_thumbnails(SimpleNamespace(builder=SimpleNamespace(format="html")), doctree, "page")
    assert [image.get("loading") for image in doctree.findall(nodes.image)] == ["lazy", None]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_cards_describe_their_recipes_in_text_not_in_a_tooltip(built_site, lang):
    """sphinx-gallery puts a card's description in a ``tooltip`` attribute (no HTML, and
    never shown on a touch screen): no page has one, and every card of the gallery index
    shows its recipe's first paragraph, in the page's language (gallery_cards)."""
    project, code, output = built_site
    assert code == 0, output
    site = project / "build/html" / lang
    with_tooltip = [p.name for p in site.rglob("*.html") if "tooltip=" in p.read_text(encoding="utf-8")]
    assert with_tooltip == []
    index = (site / "recipes/index.html").read_text(encoding="utf-8")
    cards = re.findall(
        r'class="sphx-glr-thumbcontainer".*?href="((?:\w+/)?plot_\w+)\.html".*?sphx-glr-thumbnail-description">([^<]*)<',
        index,
        re.S,
    )
    assert [path for path, _ in cards] == [
        PROJECT.recipe_docname(r).removeprefix("recipes/") for r in RECIPES
    ]
    for stem, description in cards:
        text = html_text.unescape(description)
        assert len(text) > 20 and bool(HANGUL.search(text)) == (lang != "en"), f"{lang}: {stem}: {text!r}"
