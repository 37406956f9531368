"""Run the claims ledger and every recipe on the installed torch; write docs/matrix/torch-<release>.json.

``nox -s matrix`` installs one torch release at a time in an environment of its
own and runs, with that environment's Python::

    python src/autograd_recipes/matrix/matrix_runner.py RELEASE [--install-seconds S] [--out DIR]

The claims run as the build runs them (claims_runner: own process, time
limits). Each recipe runs as a standalone script in a process of its own, its
``# %%`` blocks one after another in one namespace, and so does each notebook
page (docs/*.md executed by myst-nb), its code cells but the hidden build setup
one after another, with two changes that let
it go on after a difference instead of stopping at the first one:
``expect_error`` records what was raised (the same type and message, another
one, or nothing) instead of raising ``AssertionError``, and each ``assert``
records whether it holds. An exception a block did not expect is recorded with
its line, and the next block runs. The recorded results carry the hash of the
code that produced them (matrix_data).

A release that cannot be installed gets a file too, saying why
(``--not-run RELEASE REASON``, which needs no torch).
"""

import argparse
import ast
import contextlib
import datetime
import hashlib
import importlib.metadata
import io
import json
import os
import platform
import re
import subprocess
import sys
import time
import traceback
from pathlib import Path

from autograd_recipes.matrix import matrix_data, matrix_verify

RECIPE_TIMEOUT = 300  # seconds for one recipe on one release
BLOCK = re.compile(r"^# %%", re.M)
_cut = matrix_verify.as_recorded  # kept short, without this machine's paths
# what every environment holds besides the run's requirements: the runner, the installers
ENVIRONMENT_ITSELF = {"autograd-recipes", "pip", "setuptools", "wheel"}


def provenance(release, **extra):
    record = {
        "release": release,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    record.update(extra)
    return record


def environment(wheel=None, command=None):
    """What a later run needs to make this one again: the torch wheel installed (its file
    name and SHA-256, of the file pip installed), every distribution in the environment with
    its version (the lock ``--verify`` installs with), the command."""
    found = {}
    if wheel is not None:
        digest = hashlib.sha256()
        with open(wheel, "rb") as file:
            for chunk in iter(lambda: file.read(1 << 20), b""):
                digest.update(chunk)
        found["wheel"] = {"file": Path(wheel).name, "sha256": digest.hexdigest()}
    found["requirements"] = sorted(
        {
            f"{dist.metadata['Name']}=={dist.version}"
            for dist in importlib.metadata.distributions()
            if dist.metadata["Name"] not in ENVIRONMENT_ITSELF
        },
        key=str.lower,
    )
    if command is not None:
        found["command"] = command
    return found


# --- one recipe, in its own process ----------------------------------------------------


class _Asserts(ast.NodeTransformer):
    """``assert test, msg`` -> ``__matrix_assert__(test, line, "test")``: recorded, not raised."""

    def __init__(self, source, offset=0):
        self.source, self.offset = source, offset  # offset: the code's first line in its file, less 1

    def visit_Assert(self, node):
        text = ast.get_source_segment(self.source, node.test) or ""
        call = ast.Call(
            func=ast.Name("__matrix_assert__", ast.Load()),
            args=[node.test, ast.Constant(node.lineno + self.offset), ast.Constant(text)],
            keywords=[],
        )
        return ast.copy_location(ast.Expr(call), node)


def _blocks(path):
    """The recipe's top-level statements grouped by ``# %%`` block, as compiled code objects."""
    source = path.read_text(encoding="utf-8")
    tree = _Asserts(source).visit(ast.parse(source, str(path)))
    ast.fix_missing_locations(tree)
    starts = [source.count("\n", 0, m.start()) + 1 for m in BLOCK.finditer(source)]
    groups = {}
    for stmt in tree.body:
        block = sum(1 for s in starts if s <= stmt.lineno)
        groups.setdefault(block, []).append(stmt)
    return [
        (stmts[0].lineno, compile(ast.Module(body=stmts, type_ignores=[]), str(path), "exec"))
        for _, stmts in sorted(groups.items())
    ]


def _cells(path):
    """The notebook's code cells that the matrix runs (matrix_data.notebook_cells), compiled with
    the page's own line numbers."""
    compiled = []
    for first, code, _tags in matrix_data.notebook_cells(path):
        try:
            parsed = ast.parse(code, str(path))
        except SyntaxError as err:  # recorded as the cell's error, as running it would be
            parsed = ast.parse(f"raise SyntaxError({str(err.msg)!r})")
        tree = _Asserts(code, first - 1).visit(parsed)
        ast.fix_missing_locations(tree)
        ast.increment_lineno(tree, first - 1)
        compiled.append((first, compile(tree, str(path), "exec")))
    return compiled


class _Display:
    """IPython.display, where IPython is not installed (the matrix's environments hold torch
    alone): a cell that shows HTML runs, and shows nothing."""

    class HTML:
        def __init__(self, data=None):
            self.data = data

    @staticmethod
    def display(*objects, **options):
        pass


def _without_ipython():
    import types

    try:
        import IPython.display  # noqa: F401
    except ImportError:
        package, display = types.ModuleType("IPython"), types.ModuleType("IPython.display")
        display.HTML, display.display = _Display.HTML, _Display.display
        package.display, package.get_ipython = display, lambda: None  # no shell: show_graph shows nothing
        sys.modules.setdefault("IPython", package)
        sys.modules.setdefault("IPython.display", display)


def run_recipe(path):
    """{"expected_errors": [...], "asserts": [...], "errors": [...], "output": text}."""
    return _run_blocks(path, "recipes", _blocks(path))


def run_notebook(path):
    """The same for a notebook page: its code cells, one after another, in one namespace."""
    _without_ipython()
    return _run_blocks(path, "notebooks", _cells(path))


def _run_blocks(path, kind, blocks):
    import torch

    record = {"expected_errors": [], "asserts": [], "errors": []}
    lines = matrix_data.block_lines(kind, path)

    class ExpectError:
        """Drop-in for the recipes' ``expect_error``: records instead of raising."""

        def __init__(self, kind, text):
            self.kind, self.text = kind, text
            self.line = sys._getframe(1).f_lineno

        def __enter__(self):
            return self

        def __exit__(self, kind, err, tb):
            if kind is not None and not issubclass(kind, Exception):
                return False
            entry = {"line": self.line, "kind": self.kind.__name__, "text": self.text}
            if self.line in lines["expected"]:
                entry["ordinal"] = lines["expected"].index(self.line)
            if err is None:
                entry["outcome"] = "not raised"
            else:
                same = type(err) is self.kind and self.text in str(err)
                entry.update(
                    outcome="same" if same else "changed", type=type(err).__name__, message=_cut(str(err))
                )
                print(f"{type(err).__name__}: {err}")
            record["expected_errors"].append(entry)
            return True

    def check(value, line, text):
        entry = {"line": line, "text": text, "holds": bool(value)}
        if line in lines["asserts"]:
            entry["ordinal"] = lines["asserts"].index(line)
        record["asserts"].append(entry)

    # the kit's import binds the double, so an expected error in the block of that import is
    # recorded as the later ones are (they find the double in the namespace too, below)
    import autograd_recipes.kit as kit

    kit.expect_error = ExpectError
    namespace = {"__name__": "__main__", "__file__": str(path), "__matrix_assert__": check}
    out = io.StringIO()
    torch.manual_seed(0)
    with contextlib.redirect_stdout(out):
        for start, code in blocks:
            try:
                exec(code, namespace)
            except Exception as err:
                found = [f.lineno for f in traceback.extract_tb(err.__traceback__) if f.filename == str(path)]
                record["errors"].append(
                    {
                        "line": found[-1] if found else start,
                        "type": type(err).__name__,
                        "message": _cut(str(err)),
                    }
                )
            if "expect_error" in namespace and namespace["expect_error"] is not ExpectError:
                namespace["expect_error"] = ExpectError
    record["output"] = _cut(out.getvalue())
    return record


def _in_child(flag, path):
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "autograd_recipes.matrix.matrix_runner", flag, str(path)],
            capture_output=True,
            text=True,
            timeout=RECIPE_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        result = {"errors": [{"line": 0, "type": "TimeoutError", "message": f"over {RECIPE_TIMEOUT} s"}]}
    else:
        try:
            result = json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-10:])
            message = f"its process ended (exit {proc.returncode}): {tail}"
            result = {"errors": [{"line": 0, "type": "ProcessError", "message": _cut(message)}]}
    result.setdefault("expected_errors", [])
    result.setdefault("asserts", [])
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


# --- one release ----------------------------------------------------------------------


def run_release(release, install_seconds=None, reuse=None, made=None):
    """The release's record: every claim, recipe and notebook run on the installed torch.

    ``reuse``: an earlier record of the same torch build (``--stale``), whose results for code
    that has not changed since are kept; only the rest runs, and the record says when."""
    import torch

    from autograd_recipes.claims import claims_ledger, claims_runner

    started = time.monotonic()
    record = provenance(release, torch=torch.__version__, status="ok", **(made or {}))
    hashes = matrix_data.current_hashes()
    kept = {kind: {} for kind in matrix_data.KINDS}
    if reuse is not None:
        for kind in matrix_data.KINDS:
            for name, result in reuse.get(kind, {}).items():
                if result.get("hash") == hashes[kind].get(name):
                    kept[kind][name] = result
        record["date"] = reuse["date"]
        record["rerun"] = {
            "date": provenance(release)["date"],
            "rows": sum(len(h) for h in hashes.values()) - sum(len(k) for k in kept.values()),
        }
    claims = [c for c in claims_ledger.load() if c["id"] not in kept["claims"]]
    observed = claims_runner.run_all(claims_ledger.LEDGER, timeout=180, claims=claims) if claims else {}
    record["claims"] = dict(kept["claims"])
    for c in claims:
        record["claims"][c["id"]] = {
            "hash": matrix_data.claim_hash(c),
            "verdict": observed[c["id"]][0],
            "evidence": _cut(observed[c["id"]][1]),
        }
    record["claims"] = {name: record["claims"][name] for name in hashes["claims"]}  # the ledger's order
    for kind, flag, paths, digest in (
        ("recipes", "--recipe", matrix_data.recipe_paths(), matrix_data.recipe_hash),
        ("notebooks", "--notebook", matrix_data.notebook_paths(), matrix_data.notebook_hash),
    ):
        record[kind] = {}
        for path in paths:
            if path.stem in kept[kind]:
                record[kind][path.stem] = kept[kind][path.stem]
                continue
            result = _in_child(flag, path)
            result["hash"] = digest(path)
            record[kind][path.stem] = result
    record["seconds"] = {"run": round(time.monotonic() - started, 1)}
    if install_seconds is not None:
        record["seconds"]["install"] = round(install_seconds, 1)
    return record


def changed_verdicts(record, previous, ledger_verdicts):
    """Claims whose verdict on this release differs from the one recorded before for it (same
    code), or, for a release recorded for the first time, from the ledger's verdict. Results
    recorded with another build of the release (+cu121 then +cpu, say) are not compared: a
    verdict that depends on the build (an accelerator) is no change of the release."""
    if previous is not None and previous.get("torch") != record.get("torch"):
        return []
    found = []
    for claim_id, result in record["claims"].items():
        before = (previous or {}).get("claims", {}).get(claim_id)
        if before is not None and before.get("hash") == result["hash"]:
            expected, source = before["verdict"], "recorded before"
        elif previous is None:
            expected, source = ledger_verdicts.get(claim_id), "the ledger"
        else:
            continue
        if result["verdict"] != expected:
            found.append(f"claim {claim_id}: {result['verdict'] or 'an error'} (was {expected} in {source})")
    return found


def verify(release, path, recorded, install_seconds, made, out):
    """Run ``release`` again and compare the run with its record (``path``): 1 on a difference
    (each named on stderr), 0 when the run gives what the record says."""
    from autograd_recipes.claims import claims_ledger

    if recorded is None:
        print(f"{path}: no record of a run of torch {release} to verify", file=sys.stderr)
        return 1
    run = run_release(release, install_seconds, made=made)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(run, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    measured = {c["id"] for c in claims_ledger.load() if c.get("measured")}
    for kind, name in matrix_verify.changed_code(recorded, run):
        print(f"{path}: {kind}: {name}: not compared (its code changed since the record)")
    for line in matrix_verify.where_it_ran(recorded, run):
        print(f"{path}: ran elsewhere: {line}")
    found = matrix_verify.run_differences(recorded, run, measured)
    for line in found:
        print(f"{path}: {line}", file=sys.stderr)
        if os.environ.get("GITHUB_ACTIONS"):  # an annotation on the job's summary
            print(f"::error title=torch {release} differs from its record::{line}")
    print(f"torch {release}: {len(found)} difference(s) from {path} (this run: {out})")
    return 1 if found else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", nargs="?")
    parser.add_argument("--install-seconds", type=float)
    parser.add_argument("--out", default=str(matrix_data.MATRIX_DIR))
    parser.add_argument("--recipe", help="(child) run one recipe, print its result as JSON")
    parser.add_argument(
        "--notebook", help="(child) run one notebook page's code cells, print the result as JSON"
    )
    parser.add_argument("--not-run", metavar="REASON", help="record that RELEASE could not be installed")
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when a claim's verdict changed (named on stderr)"
    )
    parser.add_argument(
        "--stale",
        action="store_true",
        help="run only what changed since RELEASE's recorded results (same torch build); keep the rest",
    )
    parser.add_argument("--wheel", help="the torch wheel file installed (its name and SHA-256 are recorded)")
    parser.add_argument("--command", help="the command that made the run (recorded)")
    parser.add_argument(
        "--verify",
        metavar="RUN",
        help="compare the run with RELEASE's record instead of writing it; write the run to RUN; "
        "exit 1 on a difference",
    )
    args = parser.parse_args(argv)
    if args.recipe:
        print(json.dumps(run_recipe(Path(args.recipe).resolve()), ensure_ascii=False))
        return 0
    if args.notebook:
        print(json.dumps(run_notebook(Path(args.notebook).resolve()), ensure_ascii=False))
        return 0
    if args.not_run:
        path = matrix_data.data_file(args.release, args.out)
        if path.exists() and json.loads(path.read_text(encoding="utf-8")).get("status") == "ok":
            print(f"torch {args.release} not run ({args.not_run}); its earlier results stay in {path}")
            return 0
        matrix_data.write(provenance(args.release, status="not run", reason=args.not_run), args.out)
        return 0
    from autograd_recipes.claims import claims_ledger

    previous_path = matrix_data.data_file(args.release, args.out)
    previous = json.loads(previous_path.read_text(encoding="utf-8")) if previous_path.exists() else None
    if previous is not None and previous.get("status") != "ok":
        previous = None
    import torch

    made = environment(args.wheel, args.command)
    if args.verify:
        return verify(args.release, previous_path, previous, args.install_seconds, made, Path(args.verify))
    same_build = previous is not None and previous.get("torch") == torch.__version__
    record = run_release(
        args.release, args.install_seconds, reuse=previous if args.stale and same_build else None, made=made
    )
    path = matrix_data.write(record, args.out)
    ledger = {c["id"]: c["verdict"] for c in claims_ledger.load()}
    changed = changed_verdicts(record, previous, ledger)
    states = [matrix_data.recipe_state(r) for r in record["recipes"].values()]
    pages = [matrix_data.recipe_state(r) for r in record["notebooks"].values()]
    verdicts = [c["verdict"] for c in record["claims"].values()]
    print(
        f"torch {record['torch']}: {sum(v == ledger[i] for i, v in zip(record['claims'], verdicts))}"
        f"/{len(verdicts)} claims as the ledger says, "
        f"{states.count(matrix_data.HOLDS)}/{len(states)} recipes and "
        f"{pages.count(matrix_data.HOLDS)}/{len(pages)} notebook pages as shown; wrote {path}"
    )
    for line in changed:
        print(line, file=sys.stderr)
        if os.environ.get("GITHUB_ACTIONS"):  # an annotation on the job's summary
            print(f"::error title=torch {args.release}::{line}")
    return 1 if changed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
