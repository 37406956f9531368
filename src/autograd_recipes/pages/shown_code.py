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

On a translated page the code's comments are in the page's language: each comment
of a shown block is a message of the ``code_comments`` catalog (its template,
``code_comments.pot``, is written by the gettext build from the blocks as shown),
and a translated block must be the same code token for token: only comments differ,
or the build fails naming the block.
"""

import io
import tokenize
from pathlib import Path

import polib
from docutils import nodes
from sphinx.util import logging

from autograd_recipes.hidden_lines import shown
from autograd_recipes.i18n.site_languages import source_language

logger = logging.getLogger(__name__)
PYTHON = {"python", "python3", "ipython", "ipython3", "py"}


CATALOG = "code_comments"


def comments(code):
    """[(start, end, text)] of the comments in ``code`` (text without its ``# ``); [] where
    the code does not tokenize (a fragment: nothing is translated there)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    return [(tok.start, tok.end, tok.string[1:].strip()) for tok in tokens if tok.type == tokenize.COMMENT]


def _code_tokens(code):
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    return [
        (tok.type, tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(code).readline)
        if tok.type not in skip
    ]


def translated(code, translations):
    """``code`` with each comment that has a translation replaced; raises ValueError when the
    result is not the same code token for token (a translation that adds a line or code)."""
    lines = code.split("\n")
    for (row, col), (_end_row, end_col), text in reversed(comments(code)):
        korean = translations.get(text)
        if korean:
            line = lines[row - 1]
            lines[row - 1] = line[:col] + "# " + korean + line[end_col:]
    result = "\n".join(lines)
    if result != code and _code_tokens(result) != _code_tokens(code):
        raise ValueError("the translated block is not the same code (only its comments may differ)")
    return result


def _read_translations(app):
    found = {}
    for folder in app.config.locale_dirs:
        po = Path(app.srcdir, folder, app.config.language, "LC_MESSAGES", f"{CATALOG}.po")
        if po.is_file():
            found.update({e.msgid: e.msgstr for e in polib.pofile(str(po)).translated_entries()})
    return found


def _translations(app):
    if not hasattr(app, "_code_comment_translations"):
        app._code_comment_translations = _read_translations(app)
    return app._code_comment_translations


def _outdated_when_comments_change(app, env, added, changed, removed):
    """Pages read with other comment translations are read again (a page is not left
    with the old comments because its own catalog did not change)."""
    now = sorted(_translations(app).items())
    if getattr(env, "code_comment_translations", None) == now:
        return []
    env.code_comment_translations = now
    return sorted(env.found_docs - set(added) - set(changed) - set(removed))


def _is_python(node):
    return node.get("language", "").lower() in PYTHON


def show_pasteable_code(app, doctree):
    translating = app.config.language != source_language(app.config) and app.builder.name != "gettext"
    for block in list(doctree.findall(nodes.literal_block)):
        if not _is_python(block):
            continue
        code = block.astext()
        text, problem = shown(code)
        if problem:
            logger.warning("hidden lines: line %d of this code block: %s", *problem, location=block)
            continue
        if app.builder.name == "gettext":
            found = _comments_by_doc(app.env).setdefault(app.env.docname, [])
            found += [comment for _start, _end, comment in comments(text) if comment not in found]
        if translating and text.strip():
            try:
                text = translated(text, _translations(app))
            except ValueError as err:
                logger.warning("code comments: %s", err, location=block)
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


def _comments_by_doc(env):
    if not hasattr(env, "code_comments"):
        env.code_comments = {}
    return env.code_comments


def _forget(app, env, docname):
    _comments_by_doc(env).pop(docname, None)


def write_comment_template(app, exception):
    """The gettext build: ``code_comments.pot`` beside the documents' templates."""
    if exception is not None or app.builder.name != "gettext":
        return
    pot = polib.POFile()
    pot.metadata = {"Content-Type": "text/plain; charset=utf-8"}
    where = {}
    for docname, found in sorted(_comments_by_doc(app.env).items()):
        for comment in found:
            where.setdefault(comment, []).append((docname, ""))
    for comment, occurrences in sorted(where.items()):
        pot.append(polib.POEntry(msgid=comment, msgstr="", occurrences=occurrences))
    pot.save(str(Path(app.outdir) / f"{CATALOG}.pot"))


def setup(app):
    app.connect("doctree-read", show_pasteable_code)
    app.connect("env-purge-doc", _forget)
    app.connect("env-get-outdated", _outdated_when_comments_change)
    app.connect("build-finished", write_comment_template)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
