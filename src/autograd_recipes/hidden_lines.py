"""The lines a recipe or a notebook cell runs but a reader does not see: those between
sphinx-gallery's ``# sphinx_gallery_start_ignore`` and ``# sphinx_gallery_end_ignore``.

``shown`` drops them and dedents the rest (pages/shown_code.py shows that); a marker
without its pair, or one in a block's prose, is a problem named by its line, which the
recipe guard (execution/recipe_guard.py) reports before the recipe runs.
"""

import re
import textwrap

START = re.compile(r"^[ \t]*#\s*sphinx_gallery_start_ignore\s*$")
END = re.compile(r"^[ \t]*#\s*sphinx_gallery_end_ignore\s*$")


def shown(code):
    """``code`` as a reader sees it: marked lines dropped, the rest dedented.

    Returns (text, problem): problem is (1-based line, what is wrong) for a marker without
    its pair, else None."""
    kept, start = [], None
    for number, line in enumerate(code.split("\n"), 1):
        if START.match(line):
            if start is not None:
                return code, (
                    number,
                    f"a second sphinx_gallery_start_ignore before the end of the one at line {start}",
                )
            start = number
        elif END.match(line):
            if start is None:
                return code, (number, "sphinx_gallery_end_ignore without a start")
            start = None
        elif start is None:
            kept.append(line)
    if start is not None:
        return code, (start, "sphinx_gallery_start_ignore without an end")
    return textwrap.dedent("\n".join(kept)).strip("\n"), None


def recipe_problem(source):
    """What is wrong with a recipe's markers, as (line, what), or None.

    Besides pairing, a marker must not sit in a block's prose: sphinx-gallery reads the
    comment lines right after ``# %%`` as text, and a marker there loses its pair."""
    in_prose = False
    for number, line in enumerate(source.split("\n"), 1):
        if line.startswith("# %%"):
            in_prose = True
        elif not line.startswith("#"):
            in_prose = False
        elif in_prose and (START.match(line) or END.match(line)):
            return number, "a hidden-lines marker in the prose of a block; put a blank line before it"
    return shown(source)[1]
