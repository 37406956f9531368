"""Every interface string our extensions and templates translate has a translation in each sphinx.po."""

import ast
import re
from pathlib import Path

import polib
import pytest
from conftest import LANGUAGES, ROOT

from autograd_recipes import theme
from autograd_recipes.project import PACKAGE

TEMPLATE_CALL = re.compile(r"""_\(\s*(['"])(.+?)\1\s*\)""")


def marked_strings():
    """The literal arguments of ``_()`` in src/autograd_recipes/*.py and src/autograd_recipes/theme/templates/**.html."""
    found = {}
    for path in sorted((ROOT / "src" / "autograd_recipes").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "_"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.setdefault(node.args[0].value, f"{path.name}:{node.lineno}")
    for path in sorted(Path(theme.TEMPLATES).rglob("*.html")):
        for match in TEMPLATE_CALL.finditer(path.read_text(encoding="utf-8")):
            found.setdefault(match.group(2), path.name)
    # the graph pictures' labels: the kit's graph.py's WORDS, each passed to _() by graph_figures
    drawer = PACKAGE / "kit" / "graph.py"
    for node in ast.walk(ast.parse(drawer.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "WORDS":
            for value in ast.literal_eval(node.value).values():
                found.setdefault(value, f"{drawer.name} WORDS")
    return found


def test_the_scan_finds_strings():
    strings = marked_strings()
    assert "Run time when this site was built:" in strings and "Language" in strings
    assert "in-place write" in strings  # a label of the graph pictures


@pytest.mark.parametrize("lang", LANGUAGES[1:])
def test_every_marked_string_is_translated(lang):
    po = polib.pofile(str(ROOT / "locales" / lang / "LC_MESSAGES" / "sphinx.po"))
    translated = {e.msgid for e in po.translated_entries()}
    missing = [f"{where}: {text!r}" for text, where in marked_strings().items() if text not in translated]
    assert missing == [], f"not translated in locales/{lang}/LC_MESSAGES/sphinx.po"
