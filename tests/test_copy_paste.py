"""A reader copies a page's code blocks, in order, into a fresh interpreter: each does what the page
shows below it (prints that output, or raises that error), with no name the page does not define.

Run on the real site's build, in the source language; a translated page must show the same
code (its comments translated) and the same outputs, so it is compared, not run again. The
helpers of the build (``expect_error``, the graph drawing, the checks) run on the page
but are not shown (src/autograd_recipes/pages/shown_code.py), so they are not in what the reader copies.
"""

import code
import io
import re
import sys
import tokenize

import background
import pytest
from conftest import JOBS, LANGUAGES
from copy_paste import normalized, page_blocks, run_pages

from autograd_recipes.matrix import matrix_data
from autograd_recipes.project import PROJECT

PAGES = [f"{PROJECT.recipe_docname(p)}.html" for p in matrix_data.recipe_paths()] + [
    f"{p.stem}.html" for p in matrix_data.notebook_paths()
]


def _difference(block, result):
    measured = "tag_measured" in block["classes"]
    shown = normalized("\n".join(block["outputs"]), measured)
    got = result["stdout"] + (result["error"] or "")
    if normalized(got, measured) == shown:
        return None
    return f"the page shows:\n{shown[:1500]}\npasted, it gives:\n{normalized(got, measured)[:1500]}"


def _pasted(folder, site):
    """Each page's blocks pasted into a fresh interpreter, as soon as the site is built."""
    if site.code != 0:
        return background.Task(lambda: None)
    html = site.project / "build" / "html" / LANGUAGES[0]
    blocks = [page_blocks(html / page) for page in PAGES]

    def work():
        *results, control = run_pages([[b["code"] for b in page] for page in blocks] + [CONTROL], cwd=folder)
        return dict(zip(PAGES, zip(blocks, results))), control

    return background.Task(work)


# the control, run beside the pages: a helper the page hides is a NameError
CONTROL = ["import torch\nprint(torch.ones(1).sum().item())", "show_graph(torch.ones(1))"]
# first: the longest runs that start from the site; started as soon as it is built, they end with the rest
JOBS.register("paste", "pasted", _pasted, after=["site"], first=True)


@pytest.fixture(scope="session")
def pasted(built_site):
    """{page: (its blocks, what each did pasted)}."""
    assert built_site[1] == 0, built_site[2]
    return JOBS.value("paste")[0]


@pytest.mark.parametrize("page", PAGES)
def test_every_code_block_pastes_and_does_what_the_page_shows(pasted, page):
    blocks, results = pasted[page]
    assert len(blocks) >= 3, f"{page}: no code blocks found"
    problems = []
    for number, (block, result) in enumerate(zip(blocks, results), 1):
        difference = _difference(block, result)
        if difference:
            problems.append(f"block {number}:\n{block['code'][:600]}\n{difference}")
    assert not problems, f"{page}: {len(problems)} of {len(blocks)} blocks\n\n" + "\n\n".join(problems)


@pytest.mark.parametrize("lang", LANGUAGES[1:])
@pytest.mark.parametrize("page", PAGES)
def test_a_translated_page_shows_the_code_and_output_that_pasted(built_site, page, lang):
    """A translated page's blocks are the source page's, token for token once comments are
    dropped (its comments are translated), with the same outputs below them: pasted, they do
    what the source page's blocks were shown to do (the test above), so they are not run again."""
    html = built_site[0] / "build" / "html"
    source, translated = (page_blocks(html / code / page) for code in (LANGUAGES[0], lang))
    assert len(translated) == len(source) >= 3, page
    for number, (a, b) in enumerate(zip(source, translated), 1):
        assert code_tokens(b["code"]) == code_tokens(a["code"]), f"{lang}/{page}: block {number}"
        assert b["outputs"] == a["outputs"], f"{lang}/{page}: block {number}'s output"
    assert any(a["code"] != b["code"] for a, b in zip(source, translated)) or not any(
        "#" in a["code"] for a in source
    ), f"{lang}/{page}: no comment translated"


def code_tokens(code):
    """The code's tokens without comments and layout: what runs."""
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    return [(t.type, t.string) for t in tokens if t.type not in skipped]


def test_code_tokens_see_code_not_comments():
    assert code_tokens("x = 1  # one\n") == code_tokens("x = 1  # 하나\n")
    assert code_tokens("x = 1\n") != code_tokens("x = 2\n")


class _ClassicPrompt(code.InteractiveConsole):
    """Python's classic interactive prompt (``python`` with no arguments), compiling only: each
    line is pushed as a paste types it, and what the prompt would refuse is recorded, not run."""

    def __init__(self):
        super().__init__()
        self.errors = []

    def runcode(self, code_object):  # compiling is the check; nothing runs (no torch needed)
        pass

    def showsyntaxerror(self, filename=None, **kwargs):
        kind, value, _ = sys.exc_info()
        self.errors.append(f"{kind.__name__}: {value}")


def prompt_errors(block):
    """What the classic prompt refuses in ``block`` pasted line by line, then an empty line.

    There an indented block (for, with, def, if, ...) ends only at a blank line: an unindented
    line right after it is a SyntaxError, and a blank line inside a body ends it early, so the
    next indented line is an IndentationError. A script or a notebook cell accepts both."""
    prompt = _ClassicPrompt()
    for line in block.rstrip("\n").split("\n") + [""]:
        prompt.push(line)
    return prompt.errors


def test_the_prompt_check_refuses_what_the_classic_prompt_refuses():
    """The control: an unindented line right after a ``with`` block, and a blank line inside a
    ``def``'s body, are refused; with a blank line after the block, and the body joined, they paste."""
    after_with = "with open('f') as f:\n    text = f.read()\nprint(text)"
    assert prompt_errors(after_with) == ["SyntaxError: invalid syntax (<console>, line 3)"]
    assert prompt_errors(after_with.replace("\nprint", "\n\nprint")) == []
    blank_in_def = "def f(x):\n    y = x + 1\n\n    return y\n\n\nprint(f(1))"
    assert prompt_errors(blank_in_def)[0].startswith("IndentationError: unexpected indent")
    assert prompt_errors(blank_in_def.replace("1\n\n    return", "1\n    return")) == []
    # what a script accepts: both compile whole
    compile(after_with, "<script>", "exec")
    compile(blank_in_def, "<script>", "exec")


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_every_shown_block_pastes_into_the_interactive_prompt(built_site, page, lang):
    """A reader may paste a block into ``python`` with no arguments, not only a script or a
    notebook: each shown block must compile there as it does in a file (blank lines as the
    prompt needs them: after each indented block, none inside one). A translated page's
    blocks differ only in their comments, so they are checked as cheaply."""
    assert built_site[1] == 0, built_site[2]
    blocks = page_blocks(built_site[0] / "build" / "html" / lang / page)
    assert len(blocks) >= 3, f"{lang}/{page}: no code blocks found"
    problems = []
    for number, block in enumerate(blocks, 1):
        errors = prompt_errors(block["code"])
        if errors:
            first_lines = "\n".join(block["code"].split("\n")[:8])
            problems.append(f"block {number}: {errors[0]}\n{first_lines}")
    assert not problems, (
        f"{lang}/{page}: {len(problems)} of {len(blocks)} blocks do not paste into the interactive prompt\n\n"
        + "\n\n".join(problems)
    )


BUILD_HELPERS = re.compile(r"\b(expect_error|show_graph|autograd_recipes)\b")


@pytest.mark.parametrize("page", PAGES)
def test_no_shown_block_uses_the_builds_helpers(built_site, page):
    """The build's check of an error and its drawing of a graph run hidden: a reader's code has
    neither, so a block that names one does not paste (the old pages' first block defined them)."""
    blocks = page_blocks(built_site[0] / "build" / "html" / "en" / page)
    named = [b["code"][:300] for b in blocks if BUILD_HELPERS.search(b["code"])]
    assert not named, f"{page}: {len(named)} shown blocks use the build's helpers:\n\n" + "\n\n".join(named)


@pytest.fixture(scope="session")
def pasted_control(pasted):
    """What the control blocks did, pasted beside the pages (a fixture of the job's, so that
    the test waits for it with the other tests that do, not early in the run)."""
    return JOBS.value("paste")[1]


def test_a_name_the_page_does_not_define_is_caught(pasted_control):
    """The control: the runner has nothing of the site's, so a helper the page hides is a NameError."""
    results = pasted_control
    assert results[0] == {"stdout": "1.0\n", "error": None}
    assert results[1]["error"] == "NameError: name 'show_graph' is not defined"


def test_a_translated_block_differs_only_in_its_comments():
    """Korean pages show the code with Korean comments (the code_comments catalog); the code
    itself must stay token for token, so a translation that smuggles in a line is refused."""
    from autograd_recipes.pages import shown_code

    code = "y = x.exp()  # exp saves y for its backward\nprint(y)"
    korean = shown_code.translated(
        code, {"exp saves y for its backward": "exp는 역전파를 위해 y를 저장합니다"}
    )
    assert korean == "y = x.exp()  # exp는 역전파를 위해 y를 저장합니다\nprint(y)"
    with pytest.raises(ValueError, match="not the same code"):
        shown_code.translated(code, {"exp saves y for its backward": "note\ny = 0"})
    assert shown_code.translated("if x:\n", {"x": "y"}) == "if x:\n"  # a fragment: left as it is


def test_hidden_lines_pair_up_and_stay_out_of_prose():
    """The markers' checks, which name the line: paired markers hide their lines and the rest is
    dedented; an unpaired marker, or one in a block's prose (sphinx-gallery would read it as
    text and lose the pair), is reported with its line."""
    from autograd_recipes import hidden_lines

    start, end = "# sphinx_gallery_start_ignore", "# sphinx_gallery_end_ignore"
    code = f"{start}\nwith check():\n    {end}\n    w.add_(1)"
    assert hidden_lines.shown(code) == ("w.add_(1)", None)
    assert hidden_lines.shown(f"x = 1\n{start}\ny = 2")[1] == (
        2,
        "sphinx_gallery_start_ignore without an end",
    )
    assert hidden_lines.shown(f"{end}\nx = 1")[1] == (1, "sphinx_gallery_end_ignore without a start")
    prose = f"# %%\n# Some prose\n{start}\nx = 1\n{end}\n"
    assert hidden_lines.recipe_problem(prose)[0] == 3
    assert hidden_lines.recipe_problem(prose.replace("prose\n", "prose\n\n")) is None
