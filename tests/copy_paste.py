"""What a reader gets by copying a page's code blocks into a fresh interpreter, one after another.

``page_blocks`` reads a built page as the copy button does: each code block's text
(sphinx-copybutton copies a ``pre`` whole when it has no prompts), and the output
the page shows below it (sphinx-gallery's ``sphx-glr-script-out``, myst-nb's
``cell_output``). ``run_pages`` runs each page's blocks in order in a new Python process
(forked from one isolated (``-I``) interpreter that has imported torch), in an empty folder, so that nothing the site has beside its
pages (the site's kit, the build's setup cells) is importable: a name the
page does not define is a NameError, as in the reader's code. Each block's last
expression is shown as the page's runners show it (its repr), and an exception is
what the interpreter would end with: ``Type: message``.
"""

import json
import re
import subprocess
import sys
from html import unescape
from html.parser import HTMLParser

# One interpreter imports torch, then forks a child per page (two at a time): each child runs
# its page's blocks in a fresh namespace in a folder of its own, as a new interpreter would,
# without importing torch again for each page.
_RUNNER = r"""
import ast
import contextlib
import io
import json
import os
import sys
import torch
# the first optimizer made in a process imports torch._dynamo (about 0.8 s): made once here,
# every child has it already; what a block prints does not change
torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
sys.modules["autograd_recipes"] = None  # a reader has not installed this site's package

def run(blocks):
    namespace = {"__name__": "__main__"}
    results = []
    for code in blocks:
        out = io.StringIO()
        error = None
        try:
            tree = ast.parse(code)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            with contextlib.redirect_stdout(out):
                exec(compile(tree, "<pasted>", "exec"), namespace)
                if last is not None:
                    value = eval(compile(ast.Expression(last.value), "<pasted>", "eval"), namespace)
                    if value is not None:
                        print(repr(value))
        except BaseException as err:  # what the reader's interpreter would stop with
            error = f"{type(err).__name__}: {err}"
        results.append({"stdout": out.getvalue(), "error": error})
    return results

pages = json.load(sys.stdin)
running, codes = {}, {}


def reap():
    pid, status = os.wait()
    codes[running.pop(pid)] = os.waitstatus_to_exitcode(status)


for number, blocks in enumerate(pages):
    if len(running) == 2:
        reap()
    folder = str(number)
    os.mkdir(folder)
    pid = os.fork()
    if pid == 0:
        os.chdir(folder)
        code = 1  # unless its results are written whole
        try:
            with open("results.json", "w") as f:
                json.dump(run(blocks), f)
            code = 0
        finally:
            os._exit(code)
    running[pid] = number
while running:
    reap()
with open("exit_codes.json", "w") as f:  # not stdout, which the children share
    json.dump([codes[n] for n in range(len(pages))], f)
"""


class _Blocks(HTMLParser):
    """Code blocks in page order, each with the outputs shown after it and its cell's classes.

    The output of a notebook cell whose code is hidden (``remove-input``) is nobody's:
    a reader has no code to copy for it."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.blocks = []  # {"code", "outputs": [text], "classes": set}
        self._divs = []  # (kind or None, classes) per open div
        self._pre = None  # (kind, [text]) while inside a pre
        self._cell_classes = set()
        self._current = None  # the block the outputs now seen belong to

    def _context(self):
        for kind, _ in reversed(self._divs):
            if kind:
                return kind
        return None

    def handle_starttag(self, tag, attrs):
        classes = set((dict(attrs).get("class") or "").split())
        if tag == "div":
            kind = None
            if classes & {"sphx-glr-script-out", "cell_output"}:
                kind = "out"
            elif any(c.startswith("highlight-") for c in classes) and self._context() is None:
                kind = "code"
            if "cell" in classes:  # a notebook cell: its outputs belong to its own code, if shown
                self._cell_classes = classes
                self._current = None
            self._divs.append((kind, classes))
        elif tag == "pre" and self._context():
            self._pre = (self._context(), [])

    def handle_endtag(self, tag):
        if tag == "div" and self._divs:
            self._divs.pop()
        elif tag == "pre" and self._pre:
            kind, parts = self._pre
            text = "".join(parts)
            if kind == "code":
                self._current = {"code": text, "outputs": [], "classes": set(self._cell_classes)}
                self.blocks.append(self._current)
            elif self._current is not None:  # else the output of a cell whose code is not shown
                self._current["outputs"].append(text)
            self._pre = None

    def handle_data(self, data):
        if self._pre:
            self._pre[1].append(data)


def page_blocks(path):
    parser = _Blocks()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.blocks


def run_pages(pages, cwd, timeout=600):
    """What each page's blocks (a list of code strings per page) did, pasted in order."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", _RUNNER],
        input=json.dumps(pages),
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ended = [n for n, code in enumerate(json.loads((cwd / "exit_codes.json").read_text())) if code != 0]
    assert not ended, f"pages {ended} ended their interpreter before their last block:\n{done.stderr[-3000:]}"
    return [json.loads((cwd / str(n) / "results.json").read_text()) for n in range(len(pages))]


NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?")


def normalized(text, measured=False):
    """Text compared line by line without trailing blanks; a measured cell's figures masked."""
    text = unescape(text)
    if measured:
        text = NUMBER.sub("#", text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())
