"""The ledger of the source articles' claims (docs/claims.toml), and running it.

Each claim's ``code`` runs against the installed torch in a fresh namespace
(with ``torch`` imported); what it prints is the evidence, and it must set
``verdict`` to one of VERDICTS. Used by the ``claims`` Sphinx extension at build
time, and on its own to check another torch version:

    python docs/_ext/claims_ledger.py [LEDGER]    # table of differing verdicts; exit 1 if any
"""

import contextlib
import io
import sys
import tomllib
import traceback
from pathlib import Path

LEDGER = Path(__file__).resolve().parents[1] / "claims.toml"
VERDICTS = ("holds", "does not hold", "holds in part")
ARTICLES = ("inplace", "no_grad")
FIELDS = ("id", "article", "section", "claim", "verdict", "page", "code")


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
        if claim["verdict"] not in VERDICTS:
            raise LedgerError(f"{where}: verdict {claim['verdict']!r} is not one of {VERDICTS}")
        if claim["article"] not in ARTICLES:
            raise LedgerError(f"{where}: article {claim['article']!r} is not one of {ARTICLES}")
        if claim["id"] in seen:
            raise LedgerError(f"{where}: duplicate id")
        seen.add(claim["id"])
    return claims


def run(claim):
    """Run one claim's code; return (observed verdict or None, evidence text)."""
    import torch

    torch.manual_seed(0)
    namespace = {"torch": torch, "__name__": f"claim_{claim['id']}"}
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), torch.random.fork_rng():
            exec(compile(claim["code"], f"<claim {claim['id']}>", "exec"), namespace)
    except Exception:
        return None, out.getvalue() + traceback.format_exc(limit=-1)
    verdict = namespace.get("verdict")
    return (verdict if verdict in VERDICTS else None), out.getvalue()


def main(argv=None):
    """Run the ledger as the build does (claims_runner: own process, time limits)."""
    import torch

    import claims_runner

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
