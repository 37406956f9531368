"""The code a page shows is the code a reader pastes: hidden lines are not shown, nor their indent.

A recipe or a notebook cell runs lines a reader does not need: the build's check of
an expected error (``with expect_error(...):``), the drawing of a graph. They sit
between sphinx-gallery's markers::

    # sphinx_gallery_start_ignore
    with expect_error(RuntimeError, "a leaf Variable that requires grad"):
    # sphinx_gallery_end_ignore
        w.add_(1)

sphinx-gallery drops such lines from a recipe's blocks; this module drops them from
notebook cells too (myst-nb shows a cell as written), so one convention serves both.
What is left of a block that a hidden ``with`` opened is indented as a whole; it is
shown dedented, so that it pastes at the top level of the reader's code. The
downloadable script and notebook keep every line: they show how the build checks.

A start marker without its end marker fails the build, naming the file and line.
"""

import re
import textwrap

from docutils import nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)
START = re.compile(r"^[ \t]*#\s*sphinx_gallery_start_ignore\s*$")
END = re.compile(r"^[ \t]*#\s*sphinx_gallery_end_ignore\s*$")
PYTHON = {"python", "python3", "ipython", "ipython3", "py"}


def shown(code):
    """``code`` as a reader sees it: marked lines dropped, the rest dedented.

    Returns (text, problem): problem names the 1-based line of a marker without its pair."""
    kept, start = [], None
    for number, line in enumerate(code.split("\n"), 1):
        if START.match(line):
            if start is not None:
                return (
                    code,
                    f"line {number}: a second sphinx_gallery_start_ignore before the end of the one at line {start}",
                )
            start = number
        elif END.match(line):
            if start is None:
                return code, f"line {number}: sphinx_gallery_end_ignore without a start"
            start = None
        elif start is None:
            kept.append(line)
    if start is not None:
        return code, f"line {start}: sphinx_gallery_start_ignore without an end"
    return textwrap.dedent("\n".join(kept)).strip("\n"), None


def recipe_problem(source):
    """What is wrong with a recipe's markers, as "line N: ...", or None.

    Besides pairing, a marker must not sit in a block's prose: sphinx-gallery reads the
    comment lines right after ``# %%`` as text, and a marker there loses its pair."""
    in_prose = False
    for number, line in enumerate(source.split("\n"), 1):
        if line.startswith("# %%"):
            in_prose = True
        elif not line.startswith("#"):
            in_prose = False
        elif in_prose and (START.match(line) or END.match(line)):
            return f"line {number}: a hidden-lines marker in the prose of a block; put a blank line before it"
    return shown(source)[1]


def _is_python(node):
    return node.get("language", "").lower() in PYTHON


def show_pasteable_code(app, doctree):
    for block in list(doctree.findall(nodes.literal_block)):
        if not _is_python(block):
            continue
        code = block.astext()
        text, problem = shown(code)
        if problem:
            logger.warning("hidden lines: %s of this code block", problem, location=block)
            continue
        if text == code:
            continue
        if not text.strip():  # every line hidden: no empty box on the page
            parent = block.parent
            parent.remove(block)
            if isinstance(parent, nodes.container) and not parent.children:
                parent.parent.remove(parent)
            continue
        block.children = [nodes.Text(text)]
        # Sphinx highlights a literal block only when its rawsource is its text
        block.rawsource = text


def setup(app):
    app.connect("doctree-read", show_pasteable_code)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
