"""The torch-versions matrix as data: docs/matrix/torch-<release>.json, one file per release.

``nox -s matrix`` (matrix_runner.py, run inside an environment with that
release installed) writes each file; the ``torch_matrix`` extension reads them
at build time and never installs anything. A file holds its provenance (torch
build, Python, platform, date, the seconds it took) and one result per claim of
docs/claims.toml and per recipe, each with the ``hash`` of the code that
produced it: a claim's ``code`` plus the page cells it ``uses``, a recipe's
file. A result whose hash differs from today's code is *stale*: shown as "not
checked since the code changed", and only that claim's or recipe's cells are.

A release that could not be installed or run has ``"status": "not run"`` and
the ``reason``; its cells are shown as not checked.

This module is plain Python (no Sphinx, no torch) so the runner, the extension
and the tests share it.
"""

import difflib
import hashlib
import json
import re
from pathlib import Path

import claims_ledger

DOCS = Path(__file__).resolve().parents[1]
MATRIX_DIR = DOCS / "matrix"
RECIPES_DIR = DOCS.parent / "recipes"
RECIPE_GLOB = "plot_*.py"

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


def _digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


claim_hash = claims_ledger.code_digest  # the code that produces a claim's verdict


def recipe_hash(path):
    return _digest(Path(path).read_text(encoding="utf-8"))


def recipe_paths(recipes_dir=RECIPES_DIR):
    return sorted(Path(recipes_dir).glob(RECIPE_GLOB))


def current_hashes(ledger=claims_ledger.LEDGER, recipes_dir=RECIPES_DIR):
    """{"claims": {id: hash}, "recipes": {name: hash}} for today's code."""
    return {
        "claims": {c["id"]: claim_hash(c) for c in claims_ledger.load(ledger)},
        "recipes": {p.stem: recipe_hash(p) for p in recipe_paths(recipes_dir)},
    }


def release_key(release):
    """Sort key of "2.10.0" (numeric, so 2.10 comes after 2.9); a local label is ignored."""
    return tuple(int(part) for part in re.findall(r"\d+", release.split("+")[0])[:3])


def data_file(release, matrix_dir=MATRIX_DIR):
    return Path(matrix_dir) / f"torch-{release}.json"


def load_all(matrix_dir=MATRIX_DIR):
    """Every recorded release, oldest first."""
    records = []
    for path in Path(matrix_dir).glob("torch-*.json"):
        records.append(json.loads(path.read_text(encoding="utf-8")))
    return sorted(records, key=lambda r: release_key(r["release"]))


def write(record, matrix_dir=MATRIX_DIR):
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
    """(state, result or None) of one claim ("claims") or recipe ("recipes") on one release."""
    if record.get("status") != "ok":
        return NOT_RUN, None
    result = record.get(kind, {}).get(name)
    if result is None or result.get("hash") != hashes[kind].get(name):
        return STALE, result
    if kind == "recipes":
        return recipe_state(result), result
    return (result["verdict"] or ERROR), result


def as_shown(state, kind, name, ledger_verdicts):
    """Does the cell's outcome match the page: True, False, or None (unknown)?"""
    if state in (STALE, NOT_RUN):
        return None
    if kind == "recipes":
        return state == HOLDS
    return state == ledger_verdicts[name]


def differences(record, kind, name, hashes, ledger_verdicts, reference=None):
    """What a reader of the page would see differ on this release, as (template, values) pairs
    (the extension translates the template): [] when it behaves as shown, None when unknown.

    ``reference`` is the pinned release's record, whose outputs the pages show: an expected
    error that still matches but is worded otherwise than there counts as a difference."""
    state, result = cell(record, kind, name, hashes)
    shown = as_shown(state, kind, name, ledger_verdicts)
    if shown is None:
        return None
    if kind == "claims":
        return [] if shown else [("claim %s: %s (the page says: %s)", (name, state, ledger_verdicts[name]))]
    pinned = {}
    if reference is not None:
        ref_state, ref_result = cell(reference, kind, name, hashes)
        if ref_state != STALE and ref_result is not None:
            pinned = {e["line"]: e.get("message") for e in ref_result.get("expected_errors", [])}
    found = []
    for err in result.get("expected_errors", []):
        if err["outcome"] == "changed" and pinned.get(err["line"]):
            got = f"{err['type']}: {err['message']}"
            here, page = first_difference(got, f"{err['kind']}: {pinned[err['line']]}")
            found.append(
                (
                    "the error at line %d reads differently: %s where the page has %s",
                    (err["line"], here, page),
                )
            )
        elif err["outcome"] == "changed":
            found.append(("the error at line %d reads differently", (err["line"],)))
        elif err["outcome"] == "not raised":
            found.append(("the error at line %d is not raised", (err["line"],)))
        elif pinned.get(err["line"], err.get("message")) != err.get("message"):
            here, page = first_difference(err.get("message", ""), pinned[err["line"]])
            found.append(
                (
                    "the error at line %d is worded differently: %s where the page has %s",
                    (err["line"], here, page),
                )
            )
    for check in result.get("asserts", []):
        if not check["holds"]:
            found.append(("the check at line %d fails", (check["line"],)))
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


def page_summary(records, rows, hashes, ledger_verdicts, reference=None):
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
            what = differences(record, kind, name, hashes, ledger_verdicts, reference)
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


def first_changes(records, hashes, ledger_verdicts, reference=None):
    """News for readers: every claim or recipe that behaves differently across releases.

    Returns [(kind, name, first release where it changed, page_summary of that row)], in
    row order; "changed" means its differences from the page (none, when it behaves as
    shown) are not the same as on the release checked before it."""
    names = [("claims", n) for n in hashes["claims"]] + [("recipes", n) for n in hashes["recipes"]]
    news = []
    for kind, name in names:
        previous, first = None, None
        for record in records:
            what = differences(record, kind, name, hashes, ledger_verdicts, reference)
            if what is None:
                continue
            if previous is not None and what != previous and first is None:
                first = record["release"]
            previous = what
        if first is not None:
            news.append(
                (kind, name, first, page_summary(records, [(kind, name)], hashes, ledger_verdicts, reference))
            )
    return news


def live_mismatches(record, observed, hashes):
    """Claims whose recorded verdict for the pinned release differs from the live run.

    ``observed``: {claim id: (verdict or None, evidence)} from the build's own run.
    Returns [(claim id, recorded verdict, live verdict)]; stale results are not compared."""
    found = []
    for claim_id, (verdict, _evidence) in sorted(observed.items()):
        result = record.get("claims", {}).get(claim_id)
        if result is None or result.get("hash") != hashes["claims"].get(claim_id):
            continue
        if result["verdict"] != verdict:
            found.append((claim_id, result["verdict"] or ERROR, verdict or ERROR))
    return found
