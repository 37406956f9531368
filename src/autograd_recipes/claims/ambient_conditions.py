"""Every claim of the ledger, run again under conditions it does not vary, and where its verdict flips.

A claim's check sweeps the cases its sentence names (its ``scope``); the process around
it is left as the build has it: float32, grad mode on, no autocast, optimizers and
modules as the check builds and calls them. ``AMBIENT`` lists the conditions a reader's
code may bring instead; each run forks a child from this process (torch is imported
once), sets the condition around the whole check (the check's own modes nest inside),
runs it, and reports its verdict. The child ends with its run, so whatever a condition
or a check changes ends with it.

A condition that the check never reaches (an optimizer option where it builds no
optimizer, keyword calls where it calls no module) is "not applicable". Any other run
whose verdict differs from the ledger's, an error included, is a flip. A flip must be
explained in the ledger: by a condition the claim names (its ``conditions``, whose
``covers`` list the ambient conditions; the claim's sentence and the page sentence
that links it then say it, see claim_links), or as out of the claim's domain
(``out_of_domain``, a reason a reviewer can check). ``nox -s conditions`` records the
results in ``docs/conditions/torch-<version>.json``; the claims page reads them, and
the build warns where a record is missing, stale or unexplained.

    python -m autograd_recipes.claims.ambient_conditions [--check ID ...]
"""

import contextlib
import functools
import inspect
import json
import signal
import sys
import tempfile
import time
from pathlib import Path

from autograd_recipes import forked
from autograd_recipes.claims import claims_ledger

TIMEOUT = 60  # seconds per run; the ledger's own ``timeout`` wins
WORKERS = 2


def _default_dtype(dtype_name):
    @contextlib.contextmanager
    def condition(seen):
        import torch

        before = torch.get_default_dtype()
        torch.set_default_dtype(getattr(torch, dtype_name))
        seen.add("applies")
        try:
            yield
        finally:
            torch.set_default_dtype(before)

    return condition


def _mode(make):
    @contextlib.contextmanager
    def condition(seen):
        seen.add("applies")
        with make():
            yield

    return condition


@contextlib.contextmanager
def _autocast(seen):
    import torch

    seen.add("applies")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        yield


def _optimizer_option(option):
    """Every optimizer the check builds gets ``option=True`` unless the check sets it; an
    optimizer class that has no such option is left as it is (then: not applicable)."""

    @contextlib.contextmanager
    def condition(seen):
        import torch

        originals = {}
        for name in dir(torch.optim):
            cls = getattr(torch.optim, name)
            if not (isinstance(cls, type) and issubclass(cls, torch.optim.Optimizer)):
                continue
            if cls is torch.optim.Optimizer or option not in inspect.signature(cls.__init__).parameters:
                continue
            originals[cls] = cls.__init__

            @functools.wraps(cls.__init__)  # its signature stays the class's own
            def init(self, *args, __init=cls.__init__, **kwargs):
                # an optimizer the check builds with one of the two options keeps it
                if kwargs.get("foreach") is None and kwargs.get("fused") is None:
                    kwargs[option] = True
                    seen.add("applies")
                __init(self, *args, **kwargs)

            cls.__init__ = init
        try:
            yield
        finally:
            for cls, init in originals.items():
                cls.__init__ = init

    return condition


@contextlib.contextmanager
def _keyword_calls(seen):
    """Modules called with their positional arguments passed by name, where the module's
    forward names them (a forward taking ``*args`` is called as the check calls it)."""
    import torch

    original = torch.nn.Module.__call__

    def call(self, *args, **kwargs):
        if args:
            try:
                bound = inspect.signature(self.forward).bind(*args, **kwargs)
            except TypeError:
                bound = None
            params = inspect.signature(self.forward).parameters
            by_name = bound is not None and all(
                params[name].kind in (params[name].POSITIONAL_OR_KEYWORD, params[name].KEYWORD_ONLY)
                for name in bound.arguments
            )
            if by_name:
                seen.add("applies")
                return original(self, **bound.arguments)
        return original(self, *args, **kwargs)

    torch.nn.Module.__call__ = call
    try:
        yield
    finally:
        torch.nn.Module.__call__ = original


def _conditions():
    import torch

    return {
        "float64": _default_dtype("float64"),
        "bfloat16": _default_dtype("bfloat16"),
        "autocast": _autocast,
        "no_grad": _mode(torch.no_grad),
        "inference_mode": _mode(torch.inference_mode),
        "grad_disabled": _mode(lambda: torch.set_grad_enabled(False)),
        "foreach": _optimizer_option("foreach"),
        "fused": _optimizer_option("fused"),
        "keywords": _keyword_calls,
    }


# the ambient conditions, by id, in the words the records and pages use (sphinx.po has the Korean)
AMBIENT = {
    "float64": "default dtype float64",
    "bfloat16": "default dtype bfloat16",
    "autocast": "CPU autocast to bfloat16",
    "no_grad": "inside torch.no_grad()",
    "inference_mode": "inside torch.inference_mode()",
    "grad_disabled": "inside torch.set_grad_enabled(False)",
    "foreach": "optimizers built with foreach=True",
    "fused": "optimizers built with fused=True",
    "keywords": "modules called with keyword arguments",
}


def _run_in_child(claim, condition_id, out, limit):
    """In the forked child: run the claim under the condition, write the result, exit."""

    def on_timeout(signum, frame):
        raise TimeoutError(f"claim {claim['id']} under {condition_id}: still running after {limit:g} s")

    signal.signal(signal.SIGALRM, on_timeout)
    signal.setitimer(signal.ITIMER_REAL, limit)
    seen = set()
    try:
        condition = _conditions()[condition_id]
        holder = {}

        def enter():
            holder["cm"] = condition(seen)
            holder["cm"].__enter__()

        try:
            verdict, evidence = claims_ledger.run(claim, after_setup=enter)
        finally:
            if "cm" in holder:
                holder["cm"].__exit__(None, None, None)
        result = {"verdict": verdict, "applies": "applies" in seen, "evidence": evidence}
    except BaseException as err:  # noqa: BLE001 - the child reports whatever ended its run
        result = {"verdict": None, "applies": True, "evidence": f"{type(err).__name__}: {err}"}
    Path(out).write_text(json.dumps(result), encoding="utf-8")


def run_all(claims, condition_ids=None, workers=WORKERS, timeout=TIMEOUT):
    """{claim id: {condition id: {"verdict", "applies", "evidence"}}}; each run in a forked child."""
    import torch  # imported once here, inherited by every child

    # the first optimizer made in a process imports torch._dynamo (1.5 s here): made once
    # here, no child pays for it again; what a check sees does not change
    torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)

    # children are reaped here: a parent that ignores SIGCHLD (a shell's background job) would
    # let the kernel reap them first, and waitpid would find none
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    condition_ids = list(condition_ids or AMBIENT)
    tasks = [(claim, cid) for claim in claims for cid in condition_ids]
    results = {claim["id"]: {} for claim in claims}
    running = {}
    with tempfile.TemporaryDirectory(prefix="ambient-") as tmp:
        while tasks or running:
            while tasks and len(running) < workers:
                claim, cid = tasks.pop(0)
                out = Path(tmp) / f"{claim['id']}.{cid}.json"
                limit = float(claim.get("timeout", timeout))
                pid = forked.start(functools.partial(_run_in_child, claim, cid, out, limit))
                running[pid] = (claim, cid, out, time.monotonic() + limit + 10)
            # only this runner's children: the process may have others (a test run's builds)
            ended = [(child, code) for child in list(running) if (code := forked.ended(child)) is not None]
            if not ended:
                now = time.monotonic()
                for child, (*_, deadline) in list(running.items()):
                    if now > deadline:
                        ended.append((child, forked.kill(child)))
                if not ended:
                    time.sleep(0.01)
                    continue
            for pid, status in ended:  # each is reaped now, its process group ended
                claim, cid, out, _ = running.pop(pid)
                try:
                    result = json.loads(out.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    result = {
                        "verdict": None,
                        "applies": True,
                        "evidence": f"the run ended (exit {status})",
                    }
                results[claim["id"]][cid] = result
    return results


EVIDENCE_KEPT = 2000  # characters of a flipped run's evidence kept in the record


def records_dir():
    """docs/conditions: one record per torch release."""
    return claims_ledger.ledger_path().parent / "conditions"


def record_path(version, folder=None):
    return Path(folder or records_dir()) / f"torch-{version}.json"


def make_record(claims, results, version):
    """The record of one run: per claim its code's digest and, per ambient condition, the
    verdict (None: an error), whether the condition applied, and a flipped run's evidence."""
    entries = {}
    for claim in claims:
        runs = {}
        for cid in AMBIENT:
            result = results[claim["id"]].get(cid)
            if result is None:
                continue
            run = {"verdict": result["verdict"], "applies": result["applies"]}
            if result["applies"] and result["verdict"] != claim["verdict"]:
                run["evidence"] = result["evidence"][-EVIDENCE_KEPT:]
            runs[cid] = run
        entries[claim["id"]] = {"code": claims_ledger.code_digest(claim), "runs": runs}
    return {"torch": version, "conditions": AMBIENT, "claims": entries}


def read_record(version, folder=None):
    """The record for torch ``version``, or None."""
    try:
        return json.loads(record_path(version, folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def explain(claim, runs, vocabulary):
    """{ambient id: (kind, detail)} for one claim's recorded runs. kind: "same", "not
    applicable", "condition" (detail: the condition the claim names), "reason" (detail: the
    reason id), or "unexplained" (detail: what is wrong)."""
    covering = {
        cid: name for name in claim.get("conditions", []) for cid in vocabulary["condition"][name]["covers"]
    }
    out_of_domain = claim.get("out_of_domain", {})
    explained = {}
    for cid, run in runs.items():
        flipped = run["applies"] and run["verdict"] != claim["verdict"]
        if not run["applies"]:
            explained[cid] = ("not applicable", "")
        elif not flipped:
            explained[cid] = ("same", "")
        elif cid in covering:
            explained[cid] = ("condition", covering[cid])
        elif cid in out_of_domain:
            reason = vocabulary["reason"][out_of_domain[cid]]
            if reason.get("evidence", "") in run.get("evidence", ""):
                explained[cid] = ("reason", out_of_domain[cid])
            else:
                explained[cid] = (
                    "unexplained",
                    f"out_of_domain gives reason {out_of_domain[cid]!r}, but the run does not print "
                    f"{reason['evidence']!r}",
                )
        else:
            got = run["verdict"] or "an error"
            explained[cid] = (
                "unexplained",
                f"{AMBIENT[cid]}: {got!r}, not {claim['verdict']!r}; name a condition that covers "
                f"{cid!r} in its sentence and `conditions`, or give an `out_of_domain` reason",
            )
    for cid, reason in out_of_domain.items():
        if explained.get(cid, ("same",))[0] in ("same", "not applicable"):
            explained[cid] = (
                "unexplained",
                f"out_of_domain {cid} = {reason!r}, but its verdict does not change there",
            )
    return explained


def problems(claims, record, vocabulary):
    """[(claim id, what is wrong)]: claims with no record of their current code, and flips
    no condition or reason explains."""
    found = []
    for claim in claims:
        entry = (record or {}).get("claims", {}).get(claim["id"])
        if entry is None or entry["code"] != claims_ledger.code_digest(claim):
            found.append((claim["id"], "not tried under the ambient conditions for its current code"))
            continue
        for kind, detail in explain(claim, entry["runs"], vocabulary).values():
            if kind == "unexplained":
                found.append((claim["id"], detail))
    return found


def differences(claims, record, results):
    """[(claim id, ambient id, recorded, observed)] where a new run disagrees with the record."""
    found = []
    for claim in claims:
        entry = (record or {}).get("claims", {}).get(claim["id"], {"runs": {}})
        for cid, result in results[claim["id"]].items():
            recorded = entry["runs"].get(cid)
            observed = {"verdict": result["verdict"], "applies": result["applies"]}
            if recorded is None or {k: recorded[k] for k in observed} != observed:
                found.append((claim["id"], cid, recorded, observed))
    return found


def main(argv=None):
    """``--record``: run every claim under every ambient condition and write the record;
    ``--verify [ID ...]``: run again and compare with the record; exit 1 on a difference
    or an unexplained flip."""
    import torch

    argv = sys.argv[1:] if argv is None else argv
    ids = [a for a in argv if not a.startswith("--")]
    claims = [c for c in claims_ledger.load() if not ids or c["id"] in ids]
    vocabulary = claims_ledger.load_vocabulary()
    version = torch.__version__.split("+")[0]
    started = time.monotonic()
    results = run_all(claims)
    print(f"{len(claims)} claims x {len(AMBIENT)} conditions in {time.monotonic() - started:.0f} s")
    code = 0
    if "--verify" in argv:
        for claim_id, cid, recorded, observed in differences(claims, read_record(version), results):
            print(f"{claim_id} under {cid}: recorded {recorded}, observed {observed}")
            code = 1
        return code
    record = make_record(claims, results, version)
    if "--record" in argv:
        if ids:  # a partial run updates those claims only
            old = read_record(version) or {"claims": {}}
            record["claims"] = {**old["claims"], **record["claims"]}
        records_dir().mkdir(exist_ok=True)
        record_path(version).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    flips = 0
    for claim in claims:
        for cid, (kind, detail) in explain(claim, record["claims"][claim["id"]]["runs"], vocabulary).items():
            if kind in ("condition", "reason", "unexplained"):
                flips += 1
                print(f"{claim['id']:<42} {cid:<15} {kind:<12} {detail}")
                code |= kind == "unexplained"
    print(f"{flips} flips; {'some unexplained' if code else 'each explained'}")
    return code


if __name__ == "__main__":
    sys.exit(main())
