"""Which extension stylesheets a page links (src/autograd_recipes/pages/page_stylesheets.py);
tests/test_browser.py checks in Chromium that what a page leaves out styles nothing on it."""

import pytest

from autograd_recipes.pages.page_stylesheets import classes, needed


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
