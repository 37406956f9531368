"""What makes a matrix record evidence: it agrees with a run of the same code, and a run made it.

- ``pinned_differences``: the build runs the pinned release itself, so every entry of that
  release's record must be what the build's own run gives: each claim's verdict and evidence
  (a measured claim's evidence aside: its figures differ per run), each recipe's and
  notebook's expected errors (outcome, type, message), checks and unexpected errors, read
  from the outputs the build's run printed (``expect_error`` prints each error it caught).
- ``run_differences``: a record against a new run of its release in its environment
  (``nox -s matrix -- --verify RELEASE``): every field, but for dates, seconds, line
  numbers, a measured claim's evidence, the figures of an output, and where it ran
  (Python, platform, the command: reported, not compared).
- ``refused_records``: a file no run of ``nox -s matrix`` made: a release the session does
  not run (``matrix_data.RELEASES``), or a file name, ``release`` and ``torch`` that disagree.

Plain Python, as matrix_data: the build, the runner and the tests share it.
"""

import json
import re
import sys
from pathlib import Path

from autograd_recipes.matrix import matrix_data
from autograd_recipes.project import PROJECT

MAX_TEXT = 4000  # characters a record keeps of an output, an error message or evidence
CUT = "\n[…]"  # what ends a text cut at MAX_TEXT
FIGURE = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")  # a run's measured figures, thread counts
NOT_COMPARED = {"date", "rerun", "seconds", "line"}  # dates, measured seconds, line numbers
WHERE_IT_RAN = ("python", "platform", "command")  # reported beside the differences
PROVENANCE = ("wheel", "requirements")  # compared where the record has them (older ones do not)
ENTRY_LISTS = ("expected_errors", "asserts", "errors")


def as_recorded(text, prefix=None):
    """``text`` as a record keeps it: short, and without this machine's paths (the checkout,
    the environment ``prefix``, by default the running Python's)."""
    text = text.replace((prefix or sys.prefix) + "/", "<env>/").replace(str(PROJECT.root) + "/", "")
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + CUT


def _words(recorded, other, source):
    here, there = matrix_data.first_difference(recorded, other)
    return f"{here!r} in {source} where the live run has {there!r}"


# --- the pinned release against the build's own run -------------------------------------


def pinned_differences(record, observed, outputs, hashes, measured=(), lines=None, source="the record"):
    """[(kind, name, what differs)] between the pinned release's ``record`` and the build's run.

    ``observed``: {claim id: (verdict or None, evidence)} (the claims extension's run);
    ``outputs``: {(kind, name): what the page's run printed} for the recipes and notebooks
    this build ran (a page not run here is not compared); ``measured``: the claims whose
    evidence holds figures of the run; ``lines``: {(kind, name): block_lines of today's file},
    naming an entry by today's line; ``source``: the record's file name, for the messages.
    Results of code changed since the record are not compared."""
    found = []
    for claim_id, (verdict, evidence) in sorted(observed.items()):
        result = record.get("claims", {}).get(claim_id)
        if result is None or result.get("hash") != hashes["claims"].get(claim_id):
            continue
        if result["verdict"] != verdict:
            recorded, live = result["verdict"] or matrix_data.ERROR, verdict or matrix_data.ERROR
            what = f"recorded {recorded!r} in {source}, but the live run gives {live!r}"
            found.append(("claims", claim_id, what))
        elif claim_id not in measured and result.get("evidence") != as_recorded(evidence):
            words = _words(result.get("evidence", ""), as_recorded(evidence), source)
            found.append(("claims", claim_id, f"its evidence reads {words}"))
    for kind in ("recipes", "notebooks"):
        for name, result in sorted(record.get(kind, {}).items()):
            if result.get("hash") != hashes[kind].get(name) or (kind, name) not in outputs:
                continue
            where = (lines or {}).get((kind, name), {})
            for what in _page_differences(result, outputs[(kind, name)], where, source):
                found.append((kind, name, what))
    return found


def _page_differences(result, output, lines, source):
    """What the record of one recipe or notebook says that its run in this build did not print.

    The build stops at an expected error that is not raised as the page says, a failing
    check or any other error; so in a build that goes on, each expected error was raised as
    expected and printed ``Type: message``, in the file's order, each check held, and nothing
    else was raised."""
    found, searched = [], 0
    for err in result.get("expected_errors", []):
        line = matrix_data.current_line(err, "expected", lines)
        if err.get("outcome") != "same" or err.get("type") != err.get("kind"):
            got = f"{err['type']}: …" if "type" in err else "nothing raised"
            found.append(
                f"the expected error at line {line} is recorded as {err.get('outcome')!r} ({got}) in "
                f"{source}, but the live run raises the {err.get('kind')} the page expects"
            )
            continue
        printed = f"{err['type']}: {err.get('message', '').removesuffix(CUT)}"
        at = output.find(printed, searched)
        if at >= 0:
            searched = at + len(printed)
            continue
        start = output.find(f"{err['type']}: ", searched)
        live = output[start:].split("\n", 1)[0] if start >= 0 else "nothing"
        found.append(f"the expected error at line {line} reads {_words(printed, live, source)}")
    for check in result.get("asserts", []):
        if not check.get("holds"):
            line = matrix_data.current_line(check, "asserts", lines)
            found.append(
                f"the check at line {line} is recorded as failing in {source}, but it holds in the live run"
            )
    for err in result.get("errors", []):
        found.append(
            f"line {err.get('line')} is recorded as raising {err.get('type')} in {source}, "
            "but the live run raises nothing the page does not expect"
        )
    return found


def entry_line(path, kind=None, name=None):
    """The line of ``path`` (a record) where entry ``name`` of ``kind`` starts, or where its
    ``release`` is said (no ``kind``); 1 where the file is not laid out one key a line."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    keys = [f'"{kind}": {{', f'"{name}": {{'] if kind else ['"release": ']
    at = 0
    for key in keys:
        at = next((n for n in range(at, len(lines)) if lines[n].strip().startswith(key)), None)
        if at is None:
            return 1
    return at + 1


# --- a record against a new run of its release -------------------------------------------


def _comparable(record, measured):
    """The record without what differs from run to run by nature (NOT_COMPARED, WHERE_IT_RAN,
    a measured claim's evidence, an output's figures)."""
    kept = {}
    for key, value in record.items():
        if key in NOT_COMPARED or key in WHERE_IT_RAN:
            continue
        if key in matrix_data.KINDS:
            value = {name: _entry(key, name, result, measured) for name, result in value.items()}
        kept[key] = value
    return kept


def _entry(kind, name, result, measured):
    entry = {key: value for key, value in result.items() if key not in NOT_COMPARED}
    if kind == "claims" and name in measured:
        entry.pop("evidence", None)
    if "output" in entry:
        entry["output"] = FIGURE.sub("#", entry["output"])
    for key in ENTRY_LISTS:
        if key in entry:
            entry[key] = [{k: v for k, v in item.items() if k not in NOT_COMPARED} for item in entry[key]]
    return entry


def _shown(value):
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 160 else text[:160] + "…"


def _diff(path, recorded, run, found):
    if isinstance(recorded, dict) and isinstance(run, dict):
        for key in sorted(set(recorded) | set(run), key=str):
            if key not in run:
                found.append(f"{path}{key}: recorded {_shown(recorded[key])}, absent from this run")
            elif key not in recorded:
                found.append(f"{path}{key}: absent from the record, this run has {_shown(run[key])}")
            else:
                _diff(f"{path}{key}: ", recorded[key], run[key], found)
    elif isinstance(recorded, list) and isinstance(run, list) and len(recorded) == len(run):
        for index, (a, b) in enumerate(zip(recorded, run)):
            _diff(f"{path}{index + 1}: ", a, b, found)
    elif recorded != run:
        if isinstance(recorded, str) and isinstance(run, str):
            # a text by its first differing words; a file name, version or digest whole
            words = len(recorded.split()) > 1 or len(run.split()) > 1
            here, there = matrix_data.first_difference(recorded, run) if words else (recorded, run)
            found.append(f"{path}recorded {here!r} where this run has {there!r}")
        else:
            found.append(f"{path}recorded {_shown(recorded)}, this run {_shown(run)}")


def run_differences(recorded, run, measured=()):
    """[what differs] between a ``recorded`` record and a new ``run`` of its release: each as
    "recipes: plot_x: expected_errors: 1: message: recorded 'a' where this run has 'b'".
    Provenance the record lacks (it predates it) is not asked of it."""
    run = {key: value for key, value in run.items() if key not in PROVENANCE or key in recorded}
    recorded, run = dict(recorded), dict(run)
    for kind, name in changed_code(recorded, run):
        recorded[kind] = {n: r for n, r in recorded[kind].items() if n != name}
        run[kind] = {n: r for n, r in run[kind].items() if n != name}
    found = []
    _diff("", _comparable(recorded, measured), _comparable(run, measured), found)
    return found


def changed_code(recorded, run):
    """[(kind, name)] of the results whose code changed since the record (their hashes
    differ): a new run of other code is no check of the record, so they are not compared."""
    return [
        (kind, name)
        for kind in matrix_data.KINDS
        for name, result in recorded.get(kind, {}).items()
        if name in run.get(kind, {}) and run[kind][name].get("hash") != result.get("hash")
    ]


def where_it_ran(recorded, run):
    """[what differs in where the two ran] (Python, platform, the command): not differences
    of the results, but said beside them."""
    return [
        f"{key}: recorded {recorded.get(key)!r}, this run {run.get(key)!r}"
        for key in WHERE_IT_RAN
        if key in recorded and recorded[key] != run.get(key)
    ]


# --- records no run made -----------------------------------------------------------------


def refused_records(matrix_dir=None, releases=None):
    """[(path, why)] for each record under ``matrix_dir`` that no run of ``nox -s matrix``
    made: its release is not one the session runs (``releases``, by default
    matrix_data.RELEASES), or its file name, ``release`` and ``torch`` disagree."""
    releases = matrix_data.RELEASES if releases is None else releases
    found = []
    for path in sorted(Path(matrix_dir or matrix_data.MATRIX_DIR).glob("torch-*.json")):
        named = path.stem.removeprefix("torch-")
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as err:
            found.append((path, f"not JSON ({err})"))
            continue
        release, torch = record.get("release"), record.get("torch")
        if named not in releases:
            found.append(
                (
                    path,
                    f"torch {named} is not a release nox -s matrix runs (matrix_data.RELEASES: "
                    f"{releases[0]} … {releases[-1]}), so no run made this record",
                )
            )
        elif release != named:
            found.append((path, f"its file name says {named}, its 'release' {release!r}"))
        elif record.get("status") == "ok" and (torch or "").split("+")[0] != named:
            found.append((path, f"its file name and 'release' say {named}, its 'torch' {torch!r}"))
    return found
