"""Run the claims ledger in a process of its own, each claim in a child forked from it, with a time limit.

The claims extension calls ``run_all``; it starts this file as a child process,
so nothing a recipe did to the build's process (torch settings, threads) can
change a claim's evidence, and nothing a claim does can end the build. That process
imports torch once and runs each claim in a child forked from it (forked): whatever a
claim changes (torch's settings, a ``torch.library`` override, a patched function, a mode
left entered, the environment) or starts (a process) ends with its child, so no claim
can fill the evidence of the next, and nothing has to be listed to be put back. A
claim that calls ``sys.exit`` gets an error as its result; one that ends its child
(``os._exit``, a crash, the watchdog) is named with the end of what it printed. Each
claim runs at most its ``timeout`` (ledger field) or the default seconds: then a
``TimeoutError`` naming it, and ``WATCHDOG_GRACE`` seconds later the watchdog ends the
child. Should the process itself die, the remaining claims run in a new one.

Child protocol: ``python -m autograd_recipes.claims.claims_runner --child LEDGER RESULTS
TIMEOUT PARENT_PID [ID...]`` runs the listed claims (all if none) and appends JSON lines to
RESULTS: ``{"start": id}`` before a claim, ``{"id", "verdict", "evidence"}`` after it.
Without ``--child`` (``nox -s claims``): the ledger run on this torch, and the claims whose
verdict differs from the recorded one. The runner imports the ledger; the ledger imports
nothing of the runner.
"""

import faulthandler
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from autograd_recipes.claims import claims_ledger

WATCHDOG_GRACE = 10
# The parent's last resort, for a child stuck outside any claim (importing torch on a
# machine busy with other builds took over 100 s once on CI); each claim has its own limit.
STARTUP_ALLOWANCE = 600
CHILD_ALLOWANCE = 5  # seconds past a claim's watchdog before its child is killed from here


def run_all(ledger, timeout, claims=None):
    """{claim id: (verdict or None, evidence)} for every claim of ``ledger``."""
    claims = claims if claims is not None else claims_ledger.load(ledger)
    return _run(claims, ledger, timeout)


def _run(claims, ledger, timeout):
    from autograd_recipes.project import PROJECT

    pending = [c["id"] for c in claims]
    limits = {c["id"]: float(c.get("timeout", timeout)) for c in claims}
    results = {}
    # the claims' working directory is under build/: a file a claim writes to a relative
    # path does not land in the checkout
    with PROJECT.scratch("claims-") as tmp:
        while pending:
            out = Path(tmp) / f"results-{len(results)}.jsonl"
            deadline = sum(limits[i] + WATCHDOG_GRACE for i in pending) + STARTUP_ALLOWANCE
            try:
                proc = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "autograd_recipes.claims.claims_runner",
                        "--child",
                        str(Path(ledger).resolve()),
                        str(out),
                        str(timeout),
                        str(os.getpid()),  # the runner ends with this process (child_process)
                        *pending,
                    ],
                    capture_output=True,
                    text=True,
                    timeout=deadline,
                    cwd=tmp,
                )
                code, output = proc.returncode, proc.stdout + proc.stderr
            except subprocess.TimeoutExpired as err:
                code = f"killed after {deadline:g} s, its time limit"
                output = str(err.stdout or "") + str(err.stderr or "")
            started = None
            for line in out.read_text(encoding="utf-8").splitlines() if out.exists() else []:
                record = json.loads(line)
                if "start" in record:
                    started = record["start"]
                else:
                    results[record["id"]] = (record["verdict"], record["evidence"])
                    started = None
            if started is not None:  # the process died inside this claim
                tail = "\n".join(output.strip().splitlines()[-15:])
                results[started] = (
                    None,
                    f"claim {started}: its process ended ({_exit_text(code)}) while the claim ran\n{tail}",
                )
            elif code != 0:
                missing = [i for i in pending if i not in results]
                raise RuntimeError(
                    f"the claims process failed ({_exit_text(code)}) before claim "
                    f"{missing[0] if missing else '?'}:\n{output}"
                )
            pending = [i for i in pending if i not in results]
    return results


def _exit_text(code):
    if isinstance(code, int) and code < 0:
        return f"killed by signal {-code}"
    return f"exit {code}" if isinstance(code, int) else str(code)


def _child(ledger, out, timeout, ids):
    import torch

    from autograd_recipes import forked

    # the first optimizer made in a process imports torch._dynamo (about 1 s): made once
    # here, every claim's child has it already; what a check sees does not change
    torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # this process reaps its children itself
    wanted = set(ids)
    claims = [c for c in claims_ledger.load(ledger) if not wanted or c["id"] in wanted]
    with open(out, "a", encoding="utf-8") as results:
        for number, claim in enumerate(claims):
            limit = float(claim.get("timeout", timeout))
            results.write(json.dumps({"start": claim["id"]}) + "\n")
            results.flush()
            answer, printed = (Path(out).with_name(f"{Path(out).stem}.{number}.{s}") for s in ("json", "log"))

            def work(claim=claim, limit=limit, answer=answer, printed=printed):
                with open(printed, "w", encoding="utf-8") as log:  # what a child that dies printed
                    os.dup2(log.fileno(), 1)
                    os.dup2(log.fileno(), 2)
                answer.write_text(json.dumps(_run_one(claim, limit)), encoding="utf-8")

            code = forked.run(work, limit + WATCHDOG_GRACE + CHILD_ALLOWANCE)
            try:
                verdict, evidence = json.loads(answer.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                how = _exit_text(code) if code is not None else f"killed after {limit + WATCHDOG_GRACE:g} s"
                tail = "\n".join(_read(printed).strip().splitlines()[-15:])
                verdict, evidence = (
                    None,
                    f"claim {claim['id']}: its process ended ({how}) while the claim ran\n{tail}",
                )
            results.write(json.dumps({"id": claim["id"], "verdict": verdict, "evidence": evidence}) + "\n")
            results.flush()


def _read(path):
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _run_one(claim, limit):
    def on_timeout(signum, frame):
        raise TimeoutError(
            f"claim {claim['id']} still running after {limit:g} s "
            "(its timeout, or claims_timeout in conf.py); stopped"
        )

    signal.signal(signal.SIGALRM, on_timeout)
    signal.setitimer(signal.ITIMER_REAL, limit)
    faulthandler.dump_traceback_later(limit + WATCHDOG_GRACE, exit=True)
    try:
        return claims_ledger.run(claim)
    except SystemExit as exit_:  # not an Exception: run() lets it through
        return None, f"claim {claim['id']} called sys.exit({exit_.code!r})\n"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        faulthandler.cancel_dump_traceback_later()


def main(argv=None):
    """``nox -s claims``: run the ledger (default: docs/claims.toml) as the build does (a
    process of its own, time limits) on this torch, and list the claims whose verdict
    differs from the recorded one; exit 1 if any does."""
    import torch

    argv = sys.argv[1:] if argv is None else argv
    ledger = Path(argv[0]) if argv else claims_ledger.LEDGER
    claims = claims_ledger.load(ledger)
    observed = run_all(ledger, timeout=60, claims=claims)
    differing = []
    for claim in claims:
        verdict, evidence = observed[claim["id"]]
        if verdict != claim["verdict"]:
            differing.append((claim["id"], claim["verdict"], verdict or "error", evidence))
    print(f"torch {torch.__version__}: {len(claims)} claims, {len(differing)} differ from the ledger")
    if differing:
        print(f"{'claim':<34} {'recorded':<15} {'observed':<15}")
        for claim_id, recorded, observed, evidence in differing:
            print(f"{claim_id:<34} {recorded:<15} {observed:<15}")
            if observed == "error":
                print("    " + evidence.strip().splitlines()[-1])
    return 1 if differing else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:  # the child protocol above
        from autograd_recipes.child_process import end_with_parent

        end_with_parent(sys.argv[5])
        _child(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[6:])
    else:
        sys.exit(main())
