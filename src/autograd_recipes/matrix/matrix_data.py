"""The torch-versions matrix as data: docs/matrix/torch-<release>.json, one file per release.

``nox -s matrix`` (matrix_runner.py, run inside an environment with that
release installed) writes each file; the ``torch_matrix`` extension reads them
at build time and never installs anything. A file holds its provenance (torch
build, Python, platform, date, the seconds it took) and one result per claim of
docs/claims.toml, per recipe and per notebook page (docs/*.md executed by
myst-nb), each with the ``hash`` of the code that produced it: a claim's
``code`` plus the page cells it ``uses``, a recipe's statements, a notebook's
executed code cells, as syntax trees, so a changed comment, docstring or
sentence of prose changes no hash. A result whose hash differs from today's
code is *stale*: shown as "not checked since the code changed", and only that
claim's, recipe's or notebook's cells are.

An expected error and a check are recorded with their line and their ordinal
(the n-th ``expect_error`` block, the n-th ``assert`` of the file): results are
compared by ordinal, and a page names the line where that block is today
(``current_lines``), so moving code by editing prose keeps every result.

A release that could not be installed or run has ``"status": "not run"`` and
the ``reason``; its cells are shown as not checked.

This module is plain Python (no Sphinx, no torch) so the runner, the extension
and the tests share it.
"""

import ast
import difflib
import hashlib
import json
import re
from pathlib import Path

from autograd_recipes.claims import claims_ledger
from autograd_recipes.project import PROJECT


def __getattr__(name):
    """``MATRIX_DIR`` (docs/matrix), found when first asked for, not at import."""
    if name == "MATRIX_DIR":
        return PROJECT.docs / "matrix"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# what a cell shows: a claim's observed verdict, a recipe's outcome, or why it shows nothing
HOLDS, NOT_HOLD, IN_PART = claims_ledger.VERDICTS
ERROR_CHANGED = "error changed"
ERROR = "error"  # the check itself failed to run on that release
STALE = "not checked"  # recorded for code that has changed since
NOT_RUN = "not run"  # the release could not be installed or run
STATES = (HOLDS, NOT_HOLD, IN_PART, ERROR_CHANGED, ERROR, STALE, NOT_RUN)
SYMBOLS = {
    HOLDS: "✓",
    NOT_HOLD: "✗",
    IN_PART: "◐",
    ERROR_CHANGED: "≠",
    ERROR: "⚠",
    STALE: "?",
    NOT_RUN: "–",
}


# the releases ``nox -s matrix`` runs: the newest patch of every minor release from 2.0
# (``nox -s matrix -- --unlisted`` names a newer one the registry has); the build refuses a
# record of any other (matrix_verify.refused_records)
RELEASES = (
    *("2.0.1", "2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.7.1"),
    *("2.8.0", "2.9.1", "2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0"),
)


def _digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


claim_hash = claims_ledger.code_digest  # the code that produces a claim's verdict
KINDS = ("claims", "recipes", "notebooks")  # the rows of the matrix, in this order
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
HIDDEN_SETUP = "remove-cell"  # a notebook's build setup (kernel plumbing): not run by the matrix


def _parsed(source):
    """The syntax tree of ``source``, or None where it does not parse (a recipe or cell being
    edited, an IPython magic): the build reports that code itself; here it hashes as text."""
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _code_text(source, drop_docstring=False):
    tree = _parsed(source)
    return source if tree is None else _statements(tree, drop_docstring)


def _statements(tree, drop_docstring):
    body = tree.body
    if drop_docstring and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the module docstring: the recipe's title and lede, prose
    return ast.dump(ast.Module(body=body, type_ignores=[]))


def recipe_hash(path):
    """The recipe's statements: its comments (the prose between ``# %%``) and its docstring
    are left out, so a sentence can be mended without marking every release not checked."""
    return _digest(_code_text(Path(path).read_text(encoding="utf-8"), drop_docstring=True))


def recipe_paths(recipes_dir=None):
    return PROJECT.recipes(recipes_dir)


def notebook_paths(docs_dir=None):
    """The executed pages (MyST-NB notebooks) under docs/."""
    return PROJECT.notebooks(docs_dir)


def notebook_cells(path):
    """[(line of the cell's first code line in the file, code, tags)] of the code cells the
    matrix runs: all but the hidden build setup."""
    text = Path(path).read_text(encoding="utf-8")
    cells = []
    for match in CELL.finditer(text):
        body = match.group(1)
        lines = body.splitlines()
        options = [line for line in lines if line.startswith(":")]
        tags = re.findall(
            r"[\w-]+", next((o.split(":", 2)[2] for o in options if o.startswith(":tags:")), "")
        )
        first = text.count("\n", 0, match.start(1)) + 1 + len(options)
        code = "\n".join(lines[len(options) :])
        if HIDDEN_SETUP not in tags:
            cells.append((first, code, tags))
    return cells


def notebook_hash(path):
    """The statements of the cells the matrix runs, as one program: where a cell is split (a
    failing statement given a cell of its own) or comments change, the hash stays."""
    trees = [_parsed(code) for _, code, _ in notebook_cells(path)]
    if any(tree is None for tree in trees):
        return _digest("\n".join(_code_text(code) for _, code, _ in notebook_cells(path)))
    return _digest(_statements(ast.Module(body=[s for t in trees for s in t.body], type_ignores=[]), False))


def current_hashes(ledger=None, recipes_dir=None, docs_dir=None):
    """{"claims": {id: hash}, "recipes": {name: hash}, "notebooks": {name: hash}} for today's code."""
    return {
        "claims": {c["id"]: claim_hash(c) for c in claims_ledger.load(ledger)},
        "recipes": {p.stem: recipe_hash(p) for p in recipe_paths(recipes_dir)},
        "notebooks": {p.stem: notebook_hash(p) for p in notebook_paths(docs_dir)},
    }


def source_path(kind, name, recipes_dir=None, docs_dir=None):
    """The file a recipe's or a notebook's results come from."""
    if kind == "recipes":
        return next(p for p in recipe_paths(recipes_dir) if p.stem == name)
    return Path(docs_dir or PROJECT.docs) / f"{name}.md"


def _trees(kind, path):
    """[(syntax tree, line offset)] of a recipe's file or a notebook's run cells."""
    if kind == "recipes":
        trees = [(_parsed(Path(path).read_text(encoding="utf-8")), 0)]
    else:
        trees = [(_parsed(code), first - 1) for first, code, _ in notebook_cells(path)]
    return [(tree, offset) for tree, offset in trees if tree is not None]


def block_lines(kind, path):
    """{"expected": [line of each ``with expect_error(...)``], "asserts": [line of each assert]},
    in the file's order: what an ordinal recorded by the matrix runner names."""
    found = {"expected": [], "asserts": []}
    for tree, offset in _trees(kind, path):
        for node in ast.walk(tree):
            if isinstance(node, ast.With) and any(
                isinstance(item.context_expr, ast.Call)
                and getattr(item.context_expr.func, "id", None) == "expect_error"
                for item in node.items
            ):
                found["expected"].append(node.lineno + offset)
            elif isinstance(node, ast.Assert):
                found["asserts"].append(node.lineno + offset)
    return {key: sorted(lines) for key, lines in found.items()}


def current_line(entry, what, lines):
    """The line today of a recorded expected error or check (``what``: "expected" or "asserts"):
    its block's line by ordinal, or the line recorded where the entry has no ordinal."""
    ordinal = entry.get("ordinal")
    if ordinal is not None and 0 <= ordinal < len(lines.get(what, [])):
        return lines[what][ordinal]
    return entry["line"]


def release_key(release):
    """Sort key of "2.10.0" (numeric, so 2.10 comes after 2.9); a local label is ignored."""
    return tuple(int(part) for part in re.findall(r"\d+", release.split("+")[0])[:3])


def data_file(release, matrix_dir=None):
    return Path(matrix_dir or PROJECT.docs / "matrix") / f"torch-{release}.json"


def load_all(matrix_dir=None, skip=()):
    """Every recorded release, oldest first; ``skip``: files left out (refused records)."""
    records = []
    for path in Path(matrix_dir or PROJECT.docs / "matrix").glob("torch-*.json"):
        if path in skip:
            continue
        records.append(json.loads(path.read_text(encoding="utf-8")))
    return sorted(records, key=lambda r: release_key(r["release"]))


def write(record, matrix_dir=None):
    path = data_file(record["release"], matrix_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def recipe_state(result):
    """A recipe's outcome from its recorded details."""
    if result.get("errors") or any(not a["holds"] for a in result.get("asserts", [])):
        return NOT_HOLD
    outcomes = {e["outcome"] for e in result.get("expected_errors", [])}
    if "not raised" in outcomes:
        return NOT_HOLD
    return ERROR_CHANGED if "changed" in outcomes else HOLDS


def cell(record, kind, name, hashes):
    """(state, result or None) of one claim, recipe or notebook (``kind``) on one release."""
    if record.get("status") != "ok":
        return NOT_RUN, None
    result = record.get(kind, {}).get(name)
    if result is None or result.get("hash") != hashes[kind].get(name):
        return STALE, result
    if kind == "claims":
        return (result["verdict"] or ERROR), result
    return recipe_state(result), result


def as_shown(state, kind, name, ledger_verdicts):
    """Does the cell's outcome match the page: True, False, or None (unknown)?"""
    if state in (STALE, NOT_RUN):
        return None
    if kind == "claims":
        return state == ledger_verdicts[name]
    return state == HOLDS


def _key(entry):
    """How results of two releases are matched: by ordinal (recorded since ordinals exist)."""
    return entry.get("ordinal", ("line", entry["line"]))


def differences(record, kind, name, hashes, ledger_verdicts, reference=None, lines=None):
    """What a reader of the page would see differ on this release, as (template, values) pairs
    (the extension translates the template): [] when it behaves as shown, None when unknown.

    ``reference`` is the pinned release's record, whose outputs the pages show: an expected
    error that still matches but is worded otherwise than there counts as a difference.
    ``lines`` (``block_lines`` of today's file) turns an ordinal into today's line."""
    state, result = cell(record, kind, name, hashes)
    shown = as_shown(state, kind, name, ledger_verdicts)
    if shown is None:
        return None
    if kind == "claims":
        return [] if shown else [("claim %s: %s (the page says: %s)", (name, state, ledger_verdicts[name]))]
    lines = lines or {}
    pinned = {}
    if reference is not None:
        ref_state, ref_result = cell(reference, kind, name, hashes)
        if ref_state != STALE and ref_result is not None:
            pinned = {_key(e): e.get("message") for e in ref_result.get("expected_errors", [])}
    found = []
    for err in result.get("expected_errors", []):
        line, page_message = current_line(err, "expected", lines), pinned.get(_key(err))
        if err["outcome"] == "changed" and page_message:
            got = f"{err['type']}: {err['message']}"
            here, page = first_difference(got, f"{err['kind']}: {page_message}")
            found.append(
                ("the error at line %d reads differently: %s where the page has %s", (line, here, page))
            )
        elif err["outcome"] == "changed":
            found.append(("the error at line %d reads differently", (line,)))
        elif err["outcome"] == "not raised":
            found.append(("the error at line %d is not raised", (line,)))
        elif (page_message or err.get("message")) != err.get("message"):
            here, page = first_difference(err.get("message", ""), page_message)
            found.append(
                ("the error at line %d is worded differently: %s where the page has %s", (line, here, page))
            )
    for check in result.get("asserts", []):
        if not check["holds"]:
            found.append(("the check at line %d fails", (current_line(check, "asserts", lines),)))
    for err in result.get("errors", []):
        found.append(("line %d raises %s", (err["line"], err["type"])))
    return found


def first_difference(message, page_message, limit=60):
    """The first words that differ between two messages: ("ReluBackward0,", "Relu,")."""
    a, b = message.split(), page_message.split()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            here, page = " ".join(a[i1:i2]) or "—", " ".join(b[j1:j2]) or "—"
            return here[:limit], page[:limit]
    return "—", "—"


def ranges(releases, all_releases):
    """["2.0.1–2.2.2", "2.5.1"]: runs of consecutive entries of ``all_releases``."""
    index = {r: i for i, r in enumerate(all_releases)}
    runs = []
    for release in sorted(releases, key=index.get):
        if runs and index[runs[-1][-1]] == index[release] - 1:
            runs[-1].append(release)
        else:
            runs.append([release])
    return [run[0] if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs]


def page_summary(records, rows, hashes, ledger_verdicts, reference=None, lines=None):
    """For the rows ((kind, name), ...) that a page shows: (releases where all behave as
    shown, [(releases, differences)] grouped by identical differences, releases unknown).

    A release is unknown when one of the rows is stale or the release was not run."""
    checked = [r["release"] for r in records if r.get("status") == "ok"]
    good, unknown, bad = [], [], {}
    for record in records:
        if record.get("status") != "ok":
            continue
        found, missing = [], False
        for kind, name in rows:
            what = differences(
                record, kind, name, hashes, ledger_verdicts, reference, (lines or {}).get((kind, name))
            )
            if what is None:
                missing = True
            else:
                found += what
        if found:
            bad.setdefault(tuple(found), []).append(record["release"])
        elif missing:
            unknown.append(record["release"])
        else:
            good.append(record["release"])
    return (
        ranges(good, checked),
        [(ranges(releases, checked), list(found)) for found, releases in bad.items()],
        ranges(unknown, checked),
    )


def first_changes(records, hashes, ledger_verdicts, reference=None, lines=None):
    """News for readers: every claim or recipe that behaves differently across releases.

    Returns [(kind, name, first release where it changed, page_summary of that row)], in
    row order; "changed" means its differences from the page (none, when it behaves as
    shown) are not the same as on the release checked before it."""
    names = [(kind, n) for kind in KINDS for n in hashes.get(kind, {})]
    news = []
    for kind, name in names:
        previous, first = None, None
        for record in records:
            what = differences(
                record, kind, name, hashes, ledger_verdicts, reference, (lines or {}).get((kind, name))
            )
            if what is None:
                continue
            if previous is not None and what != previous and first is None:
                first = record["release"]
            previous = what
        if first is not None:
            news.append(
                (
                    kind,
                    name,
                    first,
                    page_summary(records, [(kind, name)], hashes, ledger_verdicts, reference, lines),
                )
            )
    return news
