"""The claims ledger: well formed, honest code that can fail (every control), checked by the build."""

import ast
import json
import re
import sys

import pytest
from conftest import LANGUAGES, ROOT, write_ledger

sys.path.insert(0, str(ROOT / "docs" / "_ext"))
import claims_ledger  # noqa: E402

CLAIMS = claims_ledger.load()


def test_ledger_covers_both_articles_and_the_site():
    assert 40 <= len(CLAIMS) <= 90
    assert {c["article"] for c in CLAIMS} == {"inplace", "no_grad", "site"}
    assert {c["verdict"] for c in CLAIMS} == set(claims_ledger.VERDICTS)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c["id"])
def test_claim_code_computes_its_verdict(claim):
    """A verdict assigned only as a constant at the top level could never change."""
    tree = ast.parse(claim["code"])
    top_level_constants = [
        node
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(getattr(t, "id", None) == "verdict" for t in node.targets)
        and isinstance(node.value, ast.Constant)
    ]
    assigns = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "verdict" for t in n.targets)
    ]
    assert assigns, "never sets verdict"
    assert len(top_level_constants) < len(assigns) or any(
        not isinstance(a.value, ast.Constant) for a in assigns
    ), "verdict is a constant"


@pytest.fixture(scope="session")
def shared_build_results(built_site):
    """What the shared build observed for every claim (its claims cache: the build ran each
    claim once, and failed if any verdict differed from the recorded one)."""
    project, code, output = built_site
    assert code == 0, output
    [cache] = (project / "build" / "claims").glob("results-*.json")
    return json.loads(cache.read_text(encoding="utf-8"))


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c["id"])
def test_claim_holds_as_recorded_on_this_torch(shared_build_results, claim):
    observed, evidence = shared_build_results[claim["id"]]
    assert observed == claim["verdict"], evidence
    assert evidence.strip(), "no evidence printed"
    assert "/tmp/" not in evidence and "/work/" not in evidence and "0x" not in evidence


@pytest.fixture(scope="session")
def control_results(tmp_path_factory, timed_controls):
    """Every claim's check run on its control case, the way the build runs claims
    (claims_runner: a process of its own, time limits). The unmeasured ones run in two
    processes side by side; the memory ones after them, alone; the timed ones were timed
    alone before anything else started (conftest: timed_controls)."""
    from concurrent.futures import ThreadPoolExecutor

    import claims_runner

    folder = tmp_path_factory.mktemp("controls")
    plain = [c for c in CLAIMS if not c.get("measured")]
    groups = [plain[0::2], plain[1::2], [c for c in CLAIMS if c.get("measured") == "memory"]]
    ledgers = [
        write_ledger(
            folder / f"controls-{n}.toml", [dict(c, code=claims_ledger.control_code(c)) for c in group]
        )
        for n, group in enumerate(groups)
    ]
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda ledger: claims_runner.run_all(ledger, timeout=60), ledgers[:2]))
    results.append(claims_runner.run_all(ledgers[2], timeout=60))
    return {k: v for part in [*results, timed_controls] for k, v in part.items()}


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c["id"])
def test_claim_check_gives_another_verdict_on_its_control(control_results, claim):
    """The same check, run on a case where the claim must not hold, must say so."""
    observed, evidence = control_results[claim["id"]]
    assert claim["control_verdict"] != claim["verdict"]
    assert observed == claim["control_verdict"], evidence


def test_a_control_that_stops_discriminating_is_reported(tmp_path):
    """On a copy of the ledger, one control made a no-op: the check gives the claim's own verdict."""
    text = (ROOT / "docs" / "claims.toml").read_text()
    start = text.index('id = "leaf-inplace-raises"')
    old = '["x = torch.randn(5, requires_grad=True)", "x = torch.randn(5)"]'
    assert old in text[start : start + 2000]
    copy = tmp_path / "claims.toml"
    copy.write_text(
        text[:start]
        + text[start:].replace(
            old, '["x = torch.randn(5, requires_grad=True)", "x = torch.randn(5, requires_grad=True)"]', 1
        )
    )
    claim = next(c for c in claims_ledger.load(copy) if c["id"] == "leaf-inplace-raises")
    problem = claims_ledger.control_problem(claim)
    assert problem.startswith("claim leaf-inplace-raises: its control gave 'holds', not 'does not hold'"), (
        problem
    )


def test_a_control_may_not_touch_the_verdict_line():
    claim = dict(CLAIMS[0], control=[['verdict = "holds"', 'verdict = "does not hold"']])
    with pytest.raises(claims_ledger.LedgerError, match="a control may change the case, not the verdict"):
        claims_ledger.control_code(claim)


def test_a_control_text_must_occur_once():
    claim = dict(CLAIMS[0], control=[["no such text", "x"]])
    with pytest.raises(claims_ledger.LedgerError, match="occurs 0 times"):
        claims_ledger.control_code(claim)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c["id"])
def test_claim_points_to_an_existing_page(claim):
    page = claim["page"]
    sources = [ROOT / "docs" / f"{page}.rst", ROOT / "docs" / f"{page}.md", ROOT / f"{page}.py"]
    assert any(s.exists() for s in sources), page


def test_malformed_ledger_is_reported_with_the_claim(tmp_path):
    bad = tmp_path / "claims.toml"
    text = (ROOT / "docs" / "claims.toml").read_text()
    bad.write_text(text.replace('verdict = "holds"', 'verdict = "mostly"', 1))
    with pytest.raises(
        claims_ledger.LedgerError, match=r"claim #1 \(leaf-inplace-raises\): verdict 'mostly'"
    ):
        claims_ledger.load(bad)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_claims_page_shows_every_claim_with_evidence(built_site, lang):
    project, code, output = built_site
    assert code == 0, output
    page = (project / "build/html" / lang / "claims.html").read_text(encoding="utf-8")
    boxes = re.findall(
        r'<div class="claim verdict-[\w-]+ docutils container" id="claim-([\w-]+)">(.*?)</pre>', page, re.S
    )
    assert [b[0] for b in boxes] == [c["id"] for c in CLAIMS]
    import torch

    assert torch.__version__ in page


def test_pages_link_to_the_claims_they_settle(built_site):
    project, code, output = built_site
    page = (project / "build/html/en/recipes/plot_05_indexing_and_inplace.html").read_text(encoding="utf-8")
    assert 'href="../claims.html#claim-index-add-inplace-raises"' in page


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("claim", [c for c in CLAIMS if c["article"] == "site"], ids=lambda c: c["id"])
def test_each_site_claim_is_linked_from_its_page(built_site, claim, lang):
    project, code, output = built_site
    page = (project / "build/html" / lang / f"{claim['page']}.html").read_text(encoding="utf-8")
    depth = claim["page"].count("/")
    assert f'href="{"../" * depth}claims.html#claim-{claim["id"]}"' in page


TIMED_CLAIM = {
    "id": "planted-timed",
    "article": "site",
    "section": "s",
    "claim": "c",
    "verdict": "holds",
    "page": "index",
    "measured": "time",
    "code": 'print("timed live")\nverdict = "holds"\n',
    "control": [['"timed live"', '"x"']],
    "control_verdict": "does not hold",
}


def test_builds_read_timed_claims_from_the_run_alone_while_the_code_is_the_same(tmp_path, monkeypatch):
    import claims_runner

    ledger = write_ledger(tmp_path / "claims.toml", [TIMED_CLAIM])
    timed = tmp_path / "timed.json"
    monkeypatch.delenv(claims_runner.TIMED_ENV, raising=False)
    assert claims_runner.time_alone(ledger, 10, timed) == {"planted-timed": ("holds", "timed live\n")}
    record = json.loads(timed.read_text())
    record["planted-timed"]["evidence"] = "from the run alone\n"
    timed.write_text(json.dumps(record))
    monkeypatch.setenv(claims_runner.TIMED_ENV, str(timed))
    assert claims_runner.run_all(ledger, 10) == {"planted-timed": ("holds", "from the run alone\n")}
    # the control: once the claim's code changes, the build times it itself
    changed = write_ledger(
        tmp_path / "changed.toml", [dict(TIMED_CLAIM, code=TIMED_CLAIM["code"] + "# changed\n")]
    )
    assert claims_runner.run_all(changed, 10) == {"planted-timed": ("holds", "timed live\n")}
    # and an unmeasured claim is never taken from the file
    plain = write_ledger(tmp_path / "plain.toml", [{k: v for k, v in TIMED_CLAIM.items() if k != "measured"}])
    assert claims_runner.run_all(plain, 10) == {"planted-timed": ("holds", "timed live\n")}


def test_an_unknown_kind_of_measurement_is_refused(tmp_path):
    ledger = write_ledger(tmp_path / "claims.toml", [dict(TIMED_CLAIM, measured="speed")])
    with pytest.raises(claims_ledger.LedgerError, match=r"planted-timed\): measured 'speed' is not one of"):
        claims_ledger.load(ledger)


def test_a_timed_claim_that_ends_in_an_error_is_timed_again(tmp_path, monkeypatch):
    import claims_runner

    monkeypatch.delenv(claims_runner.TIMED_ENV, raising=False)
    count = tmp_path / "count"
    code = (
        f"import pathlib\ncount = pathlib.Path({str(count)!r})\n"
        "n = int(count.read_text()) if count.exists() else 0\ncount.write_text(str(n + 1))\n"
        "if n == 0:\n    raise RuntimeError('still undecided (planted)')\n"
        "print('decided on attempt', n + 1)\nverdict = 'holds'\n"
    )
    timed = write_ledger(tmp_path / "timed.toml", [dict(TIMED_CLAIM, code=code)])
    assert claims_runner.run_all(timed, 10) == {"planted-timed": ("holds", "decided on attempt 2\n")}
    # the control: an unmeasured claim's error is its result, not tried again
    count.unlink()
    plain = {k: v for k, v in TIMED_CLAIM.items() if k != "measured"}
    verdict, evidence = claims_runner.run_all(
        write_ledger(tmp_path / "plain.toml", [dict(plain, code=code)]), 10
    )["planted-timed"]
    assert verdict is None and "still undecided (planted)" in evidence and count.read_text() == "1"
