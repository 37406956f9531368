"""Which extension stylesheets and scripts a page loads (src/autograd_recipes/pages/page_assets.py);
tests/test_browser.py checks in Chromium that a stylesheet a page leaves out styles nothing on
it, and the built pages here that a script a page leaves out has nothing to work on."""

import re

import pytest
from conftest import LANGUAGES

from autograd_recipes import upstream
from autograd_recipes.pages.page_assets import classes, needed


@pytest.mark.parametrize(
    "filename, html, expected",
    [
        # the claims page's evidence blocks carry "output", which myst-nb styles only inside a cell
        ("mystnb.11b398.css", '<pre class="claim-evidence output literal-block">', False),
        ("mystnb.11b398.css", '<div class="cell_output docutils container">', True),
        ("sg_gallery.css", '<div class="sphx-glr-thumbcontainer" tooltip="x">', True),
        ("sg_gallery.css", '<p class="caption">', False),
        ("pygments.css", '<div class="highlight-python notranslate">', True),
        ("_static/copybutton.css", "<p>no code</p>", False),
        ("styles/furo.css", "", True),  # a stylesheet the table does not name: always linked
        ("site.css", "", True),
    ],
)
def test_a_stylesheet_is_linked_where_its_classes_are(filename, html, expected):
    assert needed(filename, classes(html)) is expected


@pytest.mark.parametrize(
    "filename, html, expected",
    [
        ("_static/copybutton.js", '<div class="highlight-python notranslate">', True),
        ("_static/clipboard.min.js", "<p>no code</p>", False),
        ("_static/copybutton.js", "<p>no code</p>", False),
        ("_static/sg-tags.js", '<div class="sphx-glr-thumbcontainer">', False),
        ("_static/searchtools.js", "", True),  # a script the table does not name: always loaded
    ],
)
def test_a_script_is_loaded_where_its_markup_is(filename, html, expected):
    assert needed(filename, classes(html), upstream.OPTIONAL_SCRIPTS) is expected


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_page_that_leaves_a_script_out_has_nothing_for_it(built_site, lang):
    """On every built page: without the copy button's scripts, no code block the buttons go on
    (conf.py's copybutton_selector starts at a highlight-<language> block); without
    sphinx-gallery's tag filter, no tags. Control: the search page leaves them out and a
    recipe page loads the copy button's."""
    project, code, output = built_site
    assert code == 0, output
    site = project / "build" / "html" / lang
    loaded = {}
    for page in sorted(site.rglob("*.html")):
        html = page.read_text(encoding="utf-8")
        scripts = {
            src.split("?")[0].rsplit("/", 1)[-1] for src in re.findall(r'<script[^>]* src="([^"]+)"', html)
        }
        name = page.relative_to(site).as_posix()
        loaded[name] = scripts
        if "copybutton.js" not in scripts:
            assert not re.search(r'class="[^"]*\bhighlight-', html), name
        if "sg-tags.js" not in scripts:
            assert "data-sgtags" not in html and not re.search(r'class="[^"]*\bsphx-glr-tag', html), name
    assert not {"copybutton.js", "clipboard.min.js", "sg-tags.js"} & loaded["search.html"]
    assert "copybutton.js" in loaded["recipes/plot_01_manual_weight_update.html"]
