"""The matrix's records as evidence: a record against a new run of its release (``nox -s matrix
-- --verify``), the pinned record against the build's own run, and records no run made.

Unit tests on small records; the fault build (test_build_faults.py) checks that a real build
fails on a pinned record that its run contradicts and on an invented release's record.
"""

import copy
import json

from autograd_recipes.matrix import matrix_data, matrix_envs, matrix_verify

MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
RECORD = {
    "release": "2.13.0",
    "torch": "2.13.0+cpu",
    "status": "ok",
    "python": "3.11.7",
    "platform": "Linux-x86_64",
    "date": "2026-12-01T21:22:33Z",
    "seconds": {"run": 89.0, "install": 17.8},
    "wheel": {"file": "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl", "sha256": "ab" * 32},
    "requirements": ["numpy==2.4.6", "torch==2.13.0+cpu"],
    "command": "nox -s matrix -- 2.13.0",
    "claims": {
        "leaf-raises": {"hash": "c1", "verdict": "holds", "evidence": "add_: raised: True"},
        "faster": {"hash": "c2", "verdict": "holds", "evidence": "no_grad 1.9 ms, grad 3.1 ms"},
    },
    "recipes": {
        "plot_01_leaf": {
            "hash": "r1",
            "expected_errors": [
                {
                    "line": 28,
                    "ordinal": 0,
                    "kind": "RuntimeError",
                    "text": "a leaf Variable",
                    "outcome": "same",
                    "type": "RuntimeError",
                    "message": MESSAGE,
                }
            ],
            "asserts": [{"line": 40, "ordinal": 0, "text": "w.grad is None", "holds": True}],
            "errors": [],
            "output": f"RuntimeError: {MESSAGE}\nCPU threads: 2\ntook 3.2 ms\n",
            "seconds": 1.9,
        }
    },
    "notebooks": {},
}
MEASURED = {"faster"}


def run_with(change):
    run = copy.deepcopy(RECORD)
    change(run)
    return run


def test_a_run_that_gives_the_record_differs_in_nothing_but_dates_lines_and_figures():
    def moved_and_measured(run):
        run.update(
            date="2027-01-04T03:23:00Z", seconds={"run": 120.4}, python="3.11.14", platform="Linux-6.8"
        )
        run["command"] = "nox -s matrix -- --verify 2.13.0"
        recipe = run["recipes"]["plot_01_leaf"]
        recipe["expected_errors"][0]["line"] = 31  # prose above it grew by three lines
        recipe["asserts"][0]["line"] = 43
        recipe["seconds"] = 2.4
        recipe["output"] = f"RuntimeError: {MESSAGE}\nCPU threads: 4\ntook 2.7 ms\n"
        run["claims"]["faster"]["evidence"] = "no_grad 2.2 ms, grad 2.9 ms"  # a measured claim

    run = run_with(moved_and_measured)
    assert matrix_verify.run_differences(RECORD, run, MEASURED) == []
    assert matrix_verify.where_it_ran(RECORD, run) == [
        "python: recorded '3.11.7', this run '3.11.14'",
        "platform: recorded 'Linux-x86_64', this run 'Linux-6.8'",
        "command: recorded 'nox -s matrix -- 2.13.0', this run 'nox -s matrix -- --verify 2.13.0'",
    ]


def test_a_flipped_verdict_is_a_difference_naming_the_claim():
    run = run_with(lambda r: r["claims"]["leaf-raises"].update(verdict="does not hold"))
    assert matrix_verify.run_differences(RECORD, run, MEASURED) == [
        "claims: leaf-raises: verdict: recorded 'holds' where this run has 'does not hold'"
    ]


def test_an_edited_message_is_a_difference_naming_the_entry_and_its_words():
    recorded = copy.deepcopy(RECORD)
    recorded["recipes"]["plot_01_leaf"]["expected_errors"][0]["message"] = MESSAGE.replace(
        "in-place", "inplace"
    )
    assert matrix_verify.run_differences(recorded, RECORD, MEASURED) == [
        "recipes: plot_01_leaf: expected_errors: 1: message: recorded 'inplace' where this run has 'in-place'"
    ]


def test_a_changed_output_a_failing_check_and_another_wheel_are_differences():
    def changed(run):
        run["recipes"]["plot_01_leaf"]["output"] = f"RuntimeError: {MESSAGE}\nCPU threads: 2\nslower\n"
        run["recipes"]["plot_01_leaf"]["asserts"][0]["holds"] = False
        run["wheel"]["sha256"] = "cd" * 32

    found = matrix_verify.run_differences(RECORD, run_with(changed), MEASURED)
    assert found == [
        "recipes: plot_01_leaf: asserts: 1: holds: recorded true, this run false",
        "recipes: plot_01_leaf: output: recorded 'took # ms' where this run has 'slower'",
        f"wheel: sha256: recorded {'ab' * 32!r} where this run has {'cd' * 32!r}",
    ]


def test_results_of_changed_code_and_provenance_an_older_record_lacks_are_not_compared():
    older = {k: v for k, v in RECORD.items() if k not in ("wheel", "requirements", "command")}
    run = run_with(lambda r: r["claims"]["leaf-raises"].update(hash="c1-new", verdict="does not hold"))
    assert matrix_verify.changed_code(older, run) == [("claims", "leaf-raises")]
    assert matrix_verify.run_differences(older, run, MEASURED) == []


OUTPUT = f"w = tensor([0.5, -0.5])\nRuntimeError: {MESSAGE}\nafter\n"
HASHES = {"claims": {"leaf-raises": "c1", "faster": "c2"}, "recipes": {"plot_01_leaf": "r1"}, "notebooks": {}}


def test_the_pinned_record_of_a_page_is_what_the_builds_run_printed():
    outputs = {("recipes", "plot_01_leaf"): OUTPUT}
    assert matrix_verify.pinned_differences(RECORD, {}, outputs, HASHES) == []
    assert matrix_verify.pinned_differences(RECORD, {}, {}, HASHES) == []  # a page this build did not run


def test_an_edited_pinned_message_a_failing_check_and_an_error_differ_from_the_builds_run():
    edited = copy.deepcopy(RECORD)
    recipe = edited["recipes"]["plot_01_leaf"]
    recipe["expected_errors"][0]["message"] = MESSAGE.replace("in-place operation.", "in-place write.")
    recipe["asserts"][0]["holds"] = False
    recipe["errors"] = [{"line": 52, "type": "KeyError", "message": "'w'"}]
    lines = {("recipes", "plot_01_leaf"): {"expected": [30], "asserts": [44]}}
    found = matrix_verify.pinned_differences(
        edited, {}, {("recipes", "plot_01_leaf"): OUTPUT}, HASHES, lines=lines, source="torch-2.13.0.json"
    )
    assert found == [
        (
            "recipes",
            "plot_01_leaf",
            "the expected error at line 30 reads 'write.' in torch-2.13.0.json where the live run has 'operation.'",
        ),
        (
            "recipes",
            "plot_01_leaf",
            "the check at line 44 is recorded as failing in torch-2.13.0.json, but it holds in the live run",
        ),
        (
            "recipes",
            "plot_01_leaf",
            "line 52 is recorded as raising KeyError in torch-2.13.0.json, but the live run raises "
            "nothing the page does not expect",
        ),
    ]


def test_a_pinned_claims_evidence_is_compared_unless_it_is_measured():
    observed = {"leaf-raises": ("holds", "add_: raised: False"), "faster": ("holds", "no_grad 9 ms")}
    assert matrix_verify.pinned_differences(RECORD, observed, {}, HASHES, MEASURED) == [
        ("claims", "leaf-raises", "its evidence reads 'True' in the record where the live run has 'False'")
    ]


def write(folder, name, record):
    (folder / name).write_text(json.dumps(record), encoding="utf-8")
    return folder / name


def test_a_record_of_a_release_the_matrix_does_not_run_or_whose_names_disagree_is_refused(tmp_path):
    good = write(tmp_path, "torch-2.13.0.json", RECORD)
    invented = write(tmp_path, "torch-2.16.0.json", dict(RECORD, release="2.16.0", torch="2.16.0+cpu"))
    renamed = write(tmp_path, "torch-2.12.1.json", RECORD)
    rebuilt = write(tmp_path, "torch-2.14.1.json", dict(RECORD, release="2.14.1"))
    found = dict(matrix_verify.refused_records(tmp_path))
    assert good not in found
    assert found == {
        invented: "torch 2.16.0 is not a release nox -s matrix runs (matrix_data.RELEASES: 2.0.1 … 2.15.0), "
        "so no run made this record",
        renamed: "its file name says 2.12.1, its 'release' '2.13.0'",
        rebuilt: "its file name and 'release' say 2.14.1, its 'torch' '2.13.0+cpu'",
    }


def test_the_site_records_are_runs_of_the_releases_the_matrix_runs():
    assert matrix_verify.refused_records() == []
    recorded = sorted(p.stem.removeprefix("torch-") for p in matrix_data.MATRIX_DIR.glob("torch-*.json"))
    assert sorted(matrix_data.RELEASES) == recorded


def test_a_newer_release_on_the_registry_is_named_as_missing_from_the_list():
    listed = "torch (2.16.0)\nAvailable versions: 2.16.0, 2.15.0, 2.14.1, 2.14.0, 2.13.0+cpu, 2.0.1, 1.13.1\n"
    assert matrix_envs.unlisted(listed) == ["2.16.0"]
    assert matrix_envs.unlisted(listed.replace("2.16.0, ", "")) == []
    assert matrix_envs.unlisted("ERROR: no matching distribution") is None


def test_verifying_installs_the_build_a_record_names():
    """A record made with PyPI's build (its run reports a CUDA label) is verified with that build,
    not the CPU build a CPU index beside PyPI would offer for ``==``; a CPU record with its own."""
    from autograd_recipes.matrix.matrix_envs import wanted_torch

    assert wanted_torch("2.12.1", {"torch": "2.12.1+cu130"}) == "torch===2.12.1"
    assert wanted_torch("2.13.0", {"torch": "2.13.0+cpu"}) == "torch==2.13.0+cpu"
    assert wanted_torch("2.14.1", {"wheel": {"file": "torch-2.14.1+cpu-cp311-cp311-linux_x86_64.whl"}}) == (
        "torch==2.14.1+cpu"
    )
    assert wanted_torch("2.15.0", None) == "torch==2.15.0"
