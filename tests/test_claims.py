"""The claims ledger: well formed, honest code that can fail (every control), checked by the build."""

import ast
import json
import os
import re
import sys

import background
import pytest
from conftest import JOBS, LANGUAGES, ROOT, write_ledger

from autograd_recipes.claims import claims_ledger

CLAIMS = claims_ledger.load()


def test_ledger_covers_both_articles_and_the_site():
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


def test_every_claims_evidence_is_printed_and_the_same_on_any_machine(shared_build_results):
    """The build fails when a verdict differs from the ledger's; what it does not check is
    the evidence a claim prints: some, and nothing that changes from machine to machine or
    run to run (a temporary path, the checkout's path, an object's address)."""
    assert set(shared_build_results) == {c["id"] for c in CLAIMS}
    for claim, (_observed, evidence) in shared_build_results.items():
        assert evidence.strip(), f"{claim}: no evidence printed"
        assert "/tmp/" not in evidence and "/work/" not in evidence and "0x" not in evidence, (
            claim,
            evidence,
        )


# Every claim's check run on its control case, the way the build runs claims (claims_runner:
# a process of its own, time limits), in two processes side by side, beside the other tests
# from the start of the run: no verdict rests on a timing, so the machine's load changes none.
CONTROLS = """
import json
import sys
from concurrent.futures import ThreadPoolExecutor

from autograd_recipes.claims import claims_runner

out, *ledgers = sys.argv[1:]
with ThreadPoolExecutor(len(ledgers)) as pool:
    results = list(pool.map(lambda ledger: claims_runner.run_all(ledger, timeout=180), ledgers))
with open(out, "w", encoding="utf-8") as f:
    json.dump({k: v for part in results for k, v in part.items()}, f)
"""


def _controls(folder):
    ledgers = [
        write_ledger(
            folder / f"controls-{n}.toml", [dict(c, code=claims_ledger.control_code(c)) for c in group]
        )
        for n, group in enumerate((CLAIMS[0::2], CLAIMS[1::2]))
    ]
    out = folder / "controls.json"
    command = [sys.executable, "-c", CONTROLS, str(out), *map(str, ledgers)]
    return background.Build(ROOT, command, dict(os.environ), timeout=900), {"results": out}


JOBS.register("controls", "control_results", _controls)


@pytest.fixture(scope="session")
def control_results():
    result = JOBS.result("controls")
    assert result.code == 0, result.output
    found = json.loads(result.extra["results"].read_text(encoding="utf-8"))
    return {claim_id: tuple(value) for claim_id, value in found.items()}


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c["id"])
def test_claim_check_gives_another_verdict_on_its_control(control_results, claim):
    """The same check, run on a case where the claim must not hold, must say so, without an
    error (a control that makes the check raise shows nothing about torch)."""
    observed, evidence = control_results[claim["id"]]
    assert claim["control_verdict"] != claim["verdict"]
    assert observed is not None, f"the control made the check fail to run:\n{evidence}"
    assert observed == claim["control_verdict"], evidence


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c["id"])
def test_a_control_uses_only_names_torch_has(claim):
    """A control that renames an attribute or invents a function only breaks the check."""
    assert claims_ledger.missing_names(claims_ledger.control_code(claim)) == []


def test_a_control_that_invents_a_name_is_reported():
    claim = next(c for c in CLAIMS if c["id"] == "inference-mode-since-1-9")
    invented = dict(claim, control=[["torch.inference_mode()\ndef", "torch.inference_mode_()\ndef"]])
    problem = claims_ledger.control_problem(invented)
    assert problem == (
        "claim inference-mode-since-1-9: its control uses names torch does not have (torch.inference_mode_): "
        "a control must present a real case, not break the check"
    )
    assert claims_ledger.missing_names('hasattr(torch.accelerator, "cpu_peak_memory")') == [
        "torch.accelerator.cpu_peak_memory"
    ]


def test_a_control_that_makes_the_check_raise_is_reported():
    claim = next(c for c in CLAIMS if c["id"] == "leaf-inplace-raises")
    raising = dict(claim, control=[["forms = {", "forms = None.x or {"]])
    problem = claims_ledger.control_problem(raising)
    assert problem.startswith(
        "claim leaf-inplace-raises: its control gave 'an error', not 'does not hold'"
    ), problem
    assert "AttributeError" in problem


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c["id"])
def test_each_claim_states_its_scope_and_its_control_case(claim):
    for field in ("scope", "control_case"):
        text = claim[field]
        assert len(text) >= 40 and not text.endswith(" "), (field, text)


def test_a_claim_without_a_scope_is_refused(tmp_path):
    ledger = write_ledger(tmp_path / "claims.toml", [{k: v for k, v in CLAIMS[0].items() if k != "scope"}])
    with pytest.raises(claims_ledger.LedgerError, match=r"claim #1 \(leaf-inplace-raises\): missing scope"):
        claims_ledger.load(ledger)


def test_the_code_hash_ignores_comments_and_blank_lines():
    claim = CLAIMS[0]
    commented = dict(claim, code="# a comment\n\n" + claim["code"].replace("\n", "  # note\n", 1))
    assert claims_ledger.code_digest(commented) == claims_ledger.code_digest(claim)
    changed = dict(claim, code=claim["code"].replace("torch.randn(3)", "torch.randn(4)", 1))
    assert claims_ledger.code_digest(changed) != claims_ledger.code_digest(claim)


def test_a_control_that_stops_discriminating_is_reported(tmp_path):
    """On a copy of the ledger, one control made a no-op: the check gives the claim's own verdict."""
    text = (ROOT / "docs" / "claims.toml").read_text()
    start = text.index('id = "leaf-inplace-raises"')
    old = '"forms = {\\"nn.init.zeros_\\": torch.nn.init.zeros_,"'
    assert old in text[start : start + 3000]
    copy = tmp_path / "claims.toml"
    copy.write_text(
        text[:start] + text[start:].replace(old, '"forms = {\\"add_\\": lambda t: t.add_(1),"', 1)
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
    settled = [
        c for c in CLAIMS if c["page"] == "recipes/plot_05_indexing_and_inplace" and c["article"] != "site"
    ]
    found = re.search(r'<p class="claims-settled">(.*?)</p>', page, re.S)
    assert found, "no line of the claims this page settles"
    text = re.sub(r"<[^>]+>", "", found.group(1))
    assert f"settled on this page: {len(settled)} (" in text, text  # counted, never listed by id
    assert 'href="../claims.html#claims-of-the-source-articles"' in found.group(1)
    claims_page = (project / "build/html/en/claims.html").read_text(encoding="utf-8")
    assert 'id="claims-of-the-source-articles"' in claims_page  # the link lands somewhere
    assert not any(c["id"] in text for c in settled)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("claim", [c for c in CLAIMS if c["article"] == "site"], ids=lambda c: c["id"])
def test_each_site_claim_is_linked_from_its_page(built_site, claim, lang):
    project, code, output = built_site
    page = (project / "build/html" / lang / f"{claim['page']}.html").read_text(encoding="utf-8")
    depth = claim["page"].count("/")
    assert f'href="{"../" * depth}claims.html#claim-{claim["id"]}"' in page


def test_an_unknown_kind_of_measurement_is_refused(tmp_path):
    ledger = write_ledger(tmp_path / "claims.toml", [dict(CLAIMS[0], measured="speed")])
    with pytest.raises(
        claims_ledger.LedgerError, match=r"leaf-inplace-raises\): measured 'speed' is not one of"
    ):
        claims_ledger.load(ledger)


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.get("measured") == "time"], ids=lambda c: c["id"])
@pytest.mark.parametrize("other_mode_slower", [1 / 100, 100], ids=["far-faster", "far-slower"])
def test_no_verdict_rests_on_a_timing(claim, other_mode_slower):
    """A claim about speed decides on counts: timings as far apart as any load could push them
    (the second mode 100 times faster, then 100 times slower) leave its verdict as recorded."""
    import torch

    namespace = {"torch": torch}
    for ref in claim.get("uses", []):
        exec(claims_ledger.page_cell(ref), namespace)

    def time_modes(fn, modes, rounds=40, block=0.025):
        first, *others = modes
        return {first: [1e-3] * rounds} | {m: [1e-3 * other_mode_slower] * rounds for m in others}

    namespace["time_modes"] = time_modes  # the page's timing rule, given timings of any load
    exec(compile(claim["code"], claim["id"], "exec"), namespace)
    assert "time_modes(" in claim["code"]
    assert namespace["verdict"] == claim["verdict"]


def test_a_claims_code_runs_in_a_module_that_imports_by_its_name():
    """torch.compile looks a traced function's module up by name on some releases (2.1 to 2.12);
    a claim's namespace is such a module while it runs, and gone from sys.modules after."""
    code = (
        "import importlib\n"
        "module = importlib.import_module(__name__)\n"
        "verdict = 'holds' if module.torch is torch and module.__dict__ is globals() else 'does not hold'\n"
    )
    verdict, evidence = claims_ledger.run({"id": "importable", "code": code})
    assert verdict == "holds", evidence
    assert "claim_importable" not in sys.modules
