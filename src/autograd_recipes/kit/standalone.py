"""A page's download with the kit's code in place of its import: it runs alone.

A recipe or a notebook cell imports the kit in one hidden line,
``from autograd_recipes.kit import expect_error, show_graph``. A reader's download has no
package to import from, so ``script`` puts the code of each kit module that defines a name
of that line in its place, each module as the body of a function that returns the names:
the module's globals (``WORDS``, ``layout``, …) stay out of the reader's namespace, where a
variable of the same name would change them. The hidden-line markers go too: a download is
read as plain code.
"""

import ast
import functools
import io
import re
import tokenize
from pathlib import Path

from autograd_recipes import hidden_lines
from autograd_recipes.kit import PARTS

IMPORT = re.compile(r"^[ \t]*from autograd_recipes\.kit import (?P<names>\w+(?:[ \t]*,[ \t]*\w+)*)[ \t]*$")
KIT = Path(__file__).resolve().parent


def _indented(source):
    """``source`` indented by four spaces, except the lines inside a string that spans lines
    and is not a docstring (their text is the string's value: an indent would change it)."""
    docstrings = {
        node.body[0].value.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
        and isinstance(node.body[0].value.value, str)
    }
    inside = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if (
            token.type == tokenize.STRING
            and token.end[0] > token.start[0]
            and token.start[0] not in docstrings
        ):
            inside.update(range(token.start[0] + 1, token.end[0] + 1))
    return "".join(
        line if number in inside or not line.strip() else "    " + line
        for number, line in enumerate(source.splitlines(keepends=True), 1)
    )


def kit_code(names):
    """The code that defines ``names`` (names of ``PARTS``) without importing the package."""
    return _kit_code(tuple(names))


@functools.cache  # a build asks once per page: the same few lists of names
def _kit_code(names):
    unknown = [n for n in names if n not in PARTS]
    if unknown:
        raise ValueError(f"the kit has no {', '.join(unknown)} (it has {', '.join(PARTS)})")
    modules = [m for m in dict.fromkeys(PARTS.values()) if any(PARTS[n] == m for n in names)]
    parts = ["# autograd_recipes.kit, copied in so that this file runs alone (the site's helpers)\n"]
    for module in modules:
        defined = [n for n in names if PARTS[n] == module]
        source = (KIT / f"{module}.py").read_text(encoding="utf-8")
        parts.append(
            f"\n\ndef _kit_{module}():\n{_indented(source)}\n    return {', '.join(defined)}\n\n\n"
            f"{', '.join(defined)} = _kit_{module}()\n"
        )
    parts.append("# end of autograd_recipes.kit\n")
    return "".join(parts)


def imported_names(line):
    """The names a line imports from the kit, or None for another line."""
    match = IMPORT.match(line)
    return [n.strip() for n in match["names"].split(",")] if match else None


def _lines(code):
    """(line, the names it imports from the kit or None) for each line of ``code`` but the
    hidden-line markers: a download is read as plain code."""
    return [
        (line, imported_names(line))
        for line in code.split("\n")
        if not (hidden_lines.START.match(line) or hidden_lines.END.match(line))
    ]


def without_kit_import(code):
    """(names, code): the names ``code`` imports from the kit, and ``code`` without that line
    and without the hidden-line markers."""
    lines = _lines(code)
    names = [name for _, found in lines if found for name in found]
    return names, "\n".join(line for line, found in lines if found is None)


def script(source):
    """``source`` as a download: the kit's code in place of its import line, no markers."""
    lines = [line if found is None else kit_code(found).rstrip("\n") for line, found in _lines(source)]
    return re.sub(r"\n{4,}", "\n\n\n", "\n".join(lines))


# what the kit's cell of a notebook download says, for each name it defines
CELL_SAYS = {
    "expect_error": "`expect_error` checks that a failing case raises the error the page shows",
    "show_graph": "`show_graph` draws the graph autograd recorded",
}


def kit_cell_text(names):
    """The markdown before the kit's cell: what it defines, and to run it first."""
    listed = " and ".join(f"`{name}`" for name in names)
    return (
        f"The site's {'helpers' if len(names) > 1 else 'helper'}, {listed}, copied in so that this "
        f"notebook runs alone: run this cell first. {'; '.join(CELL_SAYS[n] for n in names)}."
    )


def notebook_cells(cells):
    """A notebook's cells (dicts, nbformat 4) as a download: the kit's code in a cell of its
    own, its source collapsed, before the first cell that imports it; the import line and the
    hidden-line markers gone from every code cell."""
    out, names, first = [], [], None
    for cell in cells:
        if cell["cell_type"] == "code":
            source = cell["source"]
            text = "".join(source) if isinstance(source, list) else source
            found, text = without_kit_import(text)
            if found and first is None:
                first = len(out)
            names += [n for n in found if n not in names]
            cell = {**cell, "source": re.sub(r"\n{3,}", "\n\n", text).strip("\n")}
        out.append(cell)
    if first is not None:
        code = kit_code(names)  # first: it names a name the kit lacks
        kit = [
            {"cell_type": "markdown", "metadata": {}, "source": kit_cell_text(names)},
            {
                "cell_type": "code",
                "execution_count": None,
                "metadata": {"jupyter": {"source_hidden": True}},
                "outputs": [],
                "source": code.strip("\n"),
            },
        ]
        out[first:first] = kit
    return out
