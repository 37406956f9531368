"""Every claim tried under conditions it does not vary: the record is current, each flip is
explained, a sample still gives what was recorded, and each condition reaches a check."""

import json
import os
import sys

import background
import pytest
from conftest import JOBS, ROOT

from autograd_recipes.claims import ambient_conditions, claims_ledger
from autograd_recipes.project import torch_version

CLAIMS = claims_ledger.load()
VOCABULARY = claims_ledger.load_vocabulary()
RELEASE = torch_version().split("+")[0]
RECORD = ambient_conditions.read_record(RELEASE)
# re-run by the tests: every claim that names a condition (its page sentences are checked
# against those conditions, so its flips must be as recorded); ``nox -s conditions -- --verify``
# re-runs them all
SAMPLE = sorted(c["id"] for c in CLAIMS if c.get("conditions"))


def test_every_claim_was_tried_for_its_current_code_and_each_flip_is_explained():
    assert RECORD is not None, f"no docs/conditions/torch-{RELEASE}.json: run nox -s conditions"
    problems = ambient_conditions.problems(CLAIMS, RECORD, VOCABULARY)
    assert problems == [], "\n".join(f"{claim_id}: {what}" for claim_id, what in problems)


def _sample(folder):
    command = [sys.executable, "-m", "autograd_recipes.claims.ambient_conditions", "--verify", *SAMPLE]
    return background.Build(ROOT, command, dict(os.environ), timeout=600), {}


JOBS.register("ambient sample", "ambient_sample", _sample)


@pytest.fixture(scope="session")
def ambient_sample():
    return JOBS.result("ambient sample")


def test_a_sample_of_claims_gives_its_recorded_verdicts_again(ambient_sample):
    assert len(SAMPLE) >= 5
    assert ambient_sample.code == 0, ambient_sample.output[-5000:]
    assert f"{len(SAMPLE)} claims x {len(ambient_conditions.AMBIENT)} conditions" in ambient_sample.output


PROBE = {
    "id": "probe",
    "verdict": "holds",
    "code": (
        "lin = torch.nn.Linear(2, 1)\n"
        "opt = torch.optim.SGD(lin.parameters(), lr=0.1)\n"
        "class Probe(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x\n"
        "calls = []\n"
        "probe = Probe()\n"
        "probe.register_forward_pre_hook(lambda m, a, k: calls.append(bool(k)), with_kwargs=True)\n"
        "probe(torch.ones(1))\n"
        "plain = (torch.get_default_dtype() == torch.float32 and torch.is_grad_enabled()\n"
        "         and not torch.is_inference_mode_enabled() and not torch.is_autocast_enabled('cpu')\n"
        "         and not opt.defaults['foreach'] and not opt.defaults['fused'] and calls == [False])\n"
        "print(torch.get_default_dtype(), torch.is_grad_enabled(), opt.defaults['foreach'], calls)\n"
        "verdict = 'holds' if plain else 'does not hold'\n"
    ),
}


BARE = dict(PROBE, id="bare", code="verdict = 'holds' if torch.is_grad_enabled() else 'does not hold'\n")
SLEEPING = {"id": "sleeps", "verdict": "holds", "timeout": 1, "code": "import time\ntime.sleep(30)\n"}
# The runner forks a child per run: from a small interpreter of its own, beside the other
# tests, not from this one (large, with threads of its own).
PROBE_RUNS = """
import json, sys
from autograd_recipes.claims import ambient_conditions
probe, bare, sleeping = json.loads(sys.argv[2])
runs = {
    "probe": ambient_conditions.run_all([probe])["probe"],
    "bare": ambient_conditions.run_all([bare], ["foreach", "fused", "keywords", "no_grad"])["bare"],
    "sleeps": ambient_conditions.run_all([sleeping], ["float64"])["sleeps"],
}
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump(runs, out)
"""


def _probe_runs(folder):
    out = folder / "runs.json"
    command = [sys.executable, "-c", PROBE_RUNS, str(out), json.dumps([PROBE, BARE, SLEEPING])]
    return background.Build(ROOT, command, dict(os.environ), timeout=300), {"runs": out}


JOBS.register("ambient probes", "probe_runs_result", _probe_runs)


@pytest.fixture(scope="module")
def probe_runs(probe_runs_result):
    assert probe_runs_result.code == 0, probe_runs_result.output
    return json.loads(probe_runs_result.extra["runs"].read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def probe_runs_result():
    return JOBS.result("ambient probes")


def test_each_ambient_condition_reaches_the_check_it_wraps(probe_runs):
    """A check that looks at everything the runner changes sees each change, and a check
    that builds no optimizer and calls no module finds those conditions not applicable."""
    runs = probe_runs["probe"]
    assert {cid: run["verdict"] for cid, run in runs.items()} == dict.fromkeys(
        ambient_conditions.AMBIENT, "does not hold"
    ), runs
    assert {cid: run["applies"] for cid, run in probe_runs["bare"].items()} == {
        "foreach": False,
        "fused": False,
        "keywords": False,
        "no_grad": True,
    }


def test_a_check_that_hangs_under_a_condition_is_ended_and_reported(probe_runs):
    [run] = probe_runs["sleeps"].values()
    assert run["verdict"] is None
    assert "still running after 1 s" in run["evidence"]


CLAIM = {
    "id": "c",
    "verdict": "holds",
    "conditions": ["grad-mode-on"],
    "out_of_domain": {"float64": "no-graph"},
}


def flipped(evidence="", verdict="does not hold"):
    return {"verdict": verdict, "applies": True, "evidence": evidence}


@pytest.mark.parametrize(
    "runs, claim, kind, detail",
    [
        ({"no_grad": flipped()}, CLAIM, "condition", "grad-mode-on"),
        (
            {"float64": flipped("RuntimeError: element 0 of tensors does not require grad")},
            CLAIM,
            "reason",
            "no-graph",
        ),
        ({"float64": flipped("some other output")}, CLAIM, "unexplained", "does not print"),
        ({"float64": {"verdict": "holds", "applies": True}}, CLAIM, "unexplained", "does not change there"),
        ({"autocast": flipped(verdict=None)}, CLAIM, "unexplained", "'an error', not 'holds'"),
        ({"fused": {"verdict": None, "applies": False}}, dict(CLAIM, out_of_domain={}), "not applicable", ""),
        ({"bfloat16": {"verdict": "holds", "applies": True}}, dict(CLAIM, out_of_domain={}), "same", ""),
    ],
    ids=["named", "reason", "reason-not-printed", "stale-reason", "error", "not-applicable", "same"],
)
def test_each_flip_is_named_justified_or_reported(runs, claim, kind, detail):
    [cid] = runs
    got_kind, got_detail = ambient_conditions.explain(claim, runs, VOCABULARY)[cid]
    assert got_kind == kind and detail in got_detail, (got_kind, got_detail)


def test_a_claim_whose_code_changed_is_reported_as_not_tried():
    claim = next(c for c in CLAIMS if c["id"] == "leaf-inplace-raises")
    changed = dict(claim, code=claim["code"] + "\nprint('one more line')\n")
    assert ambient_conditions.problems([changed], RECORD, VOCABULARY) == [
        ("leaf-inplace-raises", "not tried under the ambient conditions for its current code")
    ]


def test_the_ledger_refuses_an_unknown_condition_or_reason(tmp_path):
    ledger = tmp_path / "claims.toml"
    text = (ROOT / "docs" / "claims.toml").read_text(encoding="utf-8")
    ledger.write_text(text.replace('conditions = ["grad-mode-on"]', 'conditions = ["grad-mode-of"]', 1))
    with pytest.raises(claims_ledger.LedgerError, match=r"conditions \['grad-mode-of'\] are not"):
        claims_ledger.load(ledger)
    ledger.write_text(text.replace('= "no-graph"', '= "no-grahp"', 1))
    with pytest.raises(claims_ledger.LedgerError, match="'no-grahp' is not a \\[reason.ID\\] table"):
        claims_ledger.load(ledger)
