"""The claims ledger (docs/claims.toml): the source articles' claims and the site's own, and running them.

Each claim's ``code`` runs against the installed torch in a fresh namespace
(with ``torch`` imported); what it prints is the evidence, and it must set
``verdict`` to one of VERDICTS. A claim may name helper cells of a page in
``uses`` ("page.md#tag"): their source runs first in the same namespace, so the
ledger measures with the page's own method (one timing rule, one memory meter).

Every check must be able to fail. Its ``control`` is a list of
``[old, new]`` text substitutions that turn the claim's case into one where
the claim must not hold (or, for a claim that does not hold, one where it
does); ``run_control`` runs the same check on that case, and
``control_problem`` says what is wrong when the check does not then return
``control_verdict``. A substitution may change the case only: never a line
that sets ``verdict``.

Used by the ``claims`` Sphinx extension at build time, by tests/test_claims.py
(which runs every control), and on its own to check another torch version:

    python docs/_ext/claims_ledger.py [LEDGER]    # table of differing verdicts; exit 1 if any
"""

import contextlib
import hashlib
import io
import json
import re
import sys
import tomllib
import traceback
from pathlib import Path

LEDGER = Path(__file__).resolve().parents[1] / "claims.toml"
VERDICTS = ("holds", "does not hold", "holds in part")
MEASURED = ("time", "memory")  # what a measured claim's evidence measures (field `measured`)
ARTICLES = ("inplace", "no_grad", "site")  # "site": a statement of this site's own pages
FIELDS = ("id", "article", "section", "claim", "verdict", "page", "code", "control", "control_verdict")
CELL = re.compile(r"```\{code-cell\} ipython3\n(.*?)```", re.S)


class LedgerError(ValueError):
    """The ledger itself is malformed (a missing field, an unknown verdict...)."""


def load(path=LEDGER):
    with open(path, "rb") as f:
        claims = tomllib.load(f)["claim"]
    seen = set()
    for number, claim in enumerate(claims, 1):
        where = f"{path}: claim #{number} ({claim.get('id', '?')})"
        missing = [k for k in FIELDS if not claim.get(k)]
        if missing:
            raise LedgerError(f"{where}: missing {', '.join(missing)}")
        for key in ("verdict", "control_verdict"):
            if claim[key] not in VERDICTS:
                raise LedgerError(f"{where}: {key} {claim[key]!r} is not one of {VERDICTS}")
        if claim.get("measured", MEASURED[0]) not in MEASURED:
            raise LedgerError(f"{where}: measured {claim['measured']!r} is not one of {MEASURED}")
        if claim["article"] not in ARTICLES:
            raise LedgerError(f"{where}: article {claim['article']!r} is not one of {ARTICLES}")
        if claim["id"] in seen:
            raise LedgerError(f"{where}: duplicate id")
        seen.add(claim["id"])
    return claims


def page_cell(ref):
    """The source of the code cell tagged TAG in docs/PAGE (``ref`` = "PAGE#TAG")."""
    page, tag = ref.split("#")
    for cell in CELL.findall((LEDGER.parent / page).read_text(encoding="utf-8")):
        if re.search(rf"^:tags: \[.*\b{tag}\b.*\]$", cell, re.M):
            return "\n".join(line for line in cell.splitlines() if not line.startswith(":"))
    raise LedgerError(f"no code cell tagged {tag!r} in docs/{page}")


def code_digest(claim):
    """The code that produces a claim's verdict, hashed: its own code and the page cells it uses."""
    used = [page_cell(ref) for ref in claim.get("uses", [])]
    text = json.dumps({"code": claim["code"], "uses": used}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def control_code(claim):
    """The claim's code with its control substitutions applied (each must match exactly once)."""
    code = claim["code"]
    for old, new in claim["control"]:
        if code.count(old) != 1:
            raise LedgerError(f"claim {claim['id']}: control text {old!r} occurs {code.count(old)} times")
        start = code.index(old)
        end = code.find("\n", start + len(old))
        lines = code[code.rfind("\n", 0, start) + 1 : None if end == -1 else end]
        if "verdict" in lines or "verdict" in new:
            raise LedgerError(f"claim {claim['id']}: a control may change the case, not the verdict")
        code = code.replace(old, new)
    return code


def _execute(claim, code):
    import torch

    torch.manual_seed(0)
    namespace = {"torch": torch, "__name__": f"claim_{claim['id']}"}
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), torch.random.fork_rng():
            for ref in claim.get("uses", []):
                exec(compile(page_cell(ref), f"<{ref}>", "exec"), namespace)
            exec(compile(code, f"<claim {claim['id']}>", "exec"), namespace)
    except Exception:
        return None, out.getvalue() + traceback.format_exc(limit=-1)
    verdict = namespace.get("verdict")
    return (verdict if verdict in VERDICTS else None), out.getvalue()


def run(claim):
    """Run one claim's code; return (observed verdict or None, evidence text)."""
    return _execute(claim, claim["code"])


def run_control(claim):
    """Run the same check on the claim's control case; return (verdict or None, evidence)."""
    return _execute(claim, control_code(claim))


def control_problem(claim):
    """None when the check returns control_verdict on its control case; else what went wrong."""
    if claim["control_verdict"] == claim["verdict"]:
        return f"claim {claim['id']}: control_verdict equals verdict: its control shows nothing"
    observed, evidence = run_control(claim)
    if observed == claim["control_verdict"]:
        return None
    last = evidence.strip().splitlines()[-1] if evidence.strip() else "(no output)"
    return (
        f"claim {claim['id']}: its control gave {observed or 'an error'!r}, not "
        f"{claim['control_verdict']!r}: the check does not discriminate ({last})"
    )


def main(argv=None):
    """Run the ledger as the build does (claims_runner: own process, time limits)."""
    import claims_runner
    import torch

    argv = sys.argv[1:] if argv is None else argv
    ledger = Path(argv[0]) if argv else LEDGER
    claims = load(ledger)
    observed = claims_runner.run_all(ledger, timeout=60, claims=claims)
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
    sys.exit(main())
