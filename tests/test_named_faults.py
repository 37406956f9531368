"""Faults the build used to report without a file or a line, or not at all, each named now.

A byte that is not UTF-8 in a recipe, a claims ledger that is not TOML or repeats a claim's
id, a bare ``%`` in an interface string that the code %-formats: the build refuses them all
before any work, in one pass, by file and line (one small build that stops at once). English
edited without refreshing the Korean catalog, and a recipe that leaves a warnings filter
behind, are named by the Korean build (one small build from the tiny build's outputs). The
functions behind each are also checked alone, without a build. Last, the Pages workflow
publishes nothing that has not passed the lint and the tests.
"""

import re
import warnings
from pathlib import Path

import pytest
from conftest import JOBS, background_build, seeded_tiny
from tiny import RECIPES, TINY, tiny_project

from autograd_recipes import source_text
from autograd_recipes.claims import claims_ledger
from autograd_recipes.execution import torch_state
from autograd_recipes.i18n.check_catalogs import translation_faults


def line_of(path, text):
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def plant(path, old, new):
    source = path.read_text()
    assert old in source, f"{old!r} not in {path.name}"
    path.write_text(source.replace(old, new, 1))


# --- the functions alone -------------------------------------------------------------


def test_a_byte_that_is_not_utf8_is_named_by_file_line_and_column(tmp_path):
    path = tmp_path / "plot_01_x.py"
    path.write_bytes(b'"""A recipe."""\n\n# caf\xe9 in Latin-1\nimport torch\n')
    with pytest.raises(source_text.NotUtf8) as raised:
        source_text.read(path)
    assert str(raised.value) == (
        f"{path}:3: not UTF-8: byte 0xe9 at column 6 (invalid continuation byte); save the file as UTF-8"
    )
    assert source_text.problem(path) == str(raised.value)
    path.write_text("# café\n", encoding="utf-8")
    assert source_text.problem(path) is None


def _ledger(tmp_path, text):
    path = tmp_path / "claims.toml"
    path.write_text(text, encoding="utf-8")
    return path


TINY_LEDGER = (TINY / "docs" / "claims.toml").read_text(encoding="utf-8")
FIRST_CLAIM = TINY_LEDGER[
    TINY_LEDGER.index("[[claim]]") : TINY_LEDGER.index("[[claim]]", 10 + TINY_LEDGER.index("[[claim]]"))
]


def test_a_ledger_that_is_not_toml_is_named_by_file_and_line(tmp_path):
    ledger = _ledger(tmp_path, TINY_LEDGER.replace('verdict = "holds"\n', "verdict = holds\n", 1))
    line = line_of(ledger, "verdict = holds")
    with pytest.raises(claims_ledger.LedgerError) as raised:
        claims_ledger.load(ledger)
    assert str(raised.value) == f"{ledger}:{line}: not valid TOML: Invalid value (column 11)"


def test_a_ledger_that_is_not_utf8_is_named_by_file_and_line(tmp_path):
    ledger = tmp_path / "claims.toml"
    ledger.write_bytes(TINY_LEDGER.encode().replace(b"Example 3", b"Example \xff3", 1))
    line = next(n for n, text in enumerate(TINY_LEDGER.splitlines(), 1) if "Example 3" in text)
    with pytest.raises(
        claims_ledger.LedgerError, match=rf"^{re.escape(str(ledger))}:{line}: not UTF-8: byte 0xff"
    ):
        claims_ledger.load(ledger)


def test_a_claim_without_a_verdict_is_named_by_its_header_line(tmp_path):
    ledger = _ledger(tmp_path, TINY_LEDGER.replace('verdict = "holds"\n', "", 1))
    with pytest.raises(claims_ledger.LedgerError) as raised:
        claims_ledger.load(ledger)
    header = line_of(ledger, "[[claim]]")
    assert str(raised.value) == f"{ledger}:{header}: claim #1 (tiny-leaf-inplace-raises): missing verdict"


def test_a_duplicate_claim_id_is_named_by_both_header_lines(tmp_path):
    ledger = _ledger(tmp_path, TINY_LEDGER + "\n" + FIRST_CLAIM)
    headers = [n for n, text in enumerate(ledger.read_text().splitlines(), 1) if text == "[[claim]]"]
    with pytest.raises(claims_ledger.LedgerError) as raised:
        claims_ledger.load(ledger)
    assert str(raised.value) == (
        f"{ledger}:{headers[-1]}: claim #{len(headers)} (tiny-leaf-inplace-raises): duplicate id "
        f"(its first claim: {ledger}:{headers[0]})"
    )


BARE_PERCENT = "a bare % in msgstr, which the code's % formatting fails on (write %% for a percent sign)"


@pytest.mark.parametrize(
    "msgid, msgstr, faults",
    [
        (
            "download all pages in %s as one ZIP file",
            "%s 페이지 전체를 ZIP 파일 하나로(%) 내려받기",
            [BARE_PERCENT],
        ),
        ("%(count)d%% of claims", "주장의 %(count)d%%", []),  # %% is a percent sign
        ("%(count)d claims", "주장 %(count)d개 (%)", [BARE_PERCENT]),
        ("Offline copy:", "오프라인 사본(%):", []),  # not %-formatted: a % is text
    ],
)
def test_a_bare_percent_in_a_formatted_interface_string_is_a_fault(msgid, msgstr, faults):
    assert translation_faults(msgid, msgstr, interface=True) == faults
    if not faults and "%(" in msgid:
        assert msgstr % {"count": 3}  # the rule's control: this msgstr does format


def test_a_warnings_filter_left_behind_is_named_and_put_back():
    before = torch_state.snapshot()
    filters = list(warnings.filters)
    try:
        warnings.simplefilter("error")
        changed = torch_state.check_and_restore(before)
        assert warnings.filters == filters
    finally:
        warnings.filters[:] = filters
    assert changed == ["warnings filters: 'error' for Warning added"]
    assert torch_state.changes(before, torch_state.snapshot()) == []


def test_a_filter_a_library_sets_for_itself_is_kept_and_not_reported():
    class LibraryWarning(UserWarning):  # a library's own class, as sympy's SymPyDeprecationWarning
        pass

    before = torch_state.snapshot()
    filters = list(warnings.filters)
    try:
        warnings.filterwarnings("once", category=LibraryWarning)
        assert torch_state.check_and_restore(before) == []
        assert warnings.filters[0][2] is LibraryWarning
    finally:
        warnings.filters[:] = filters


# --- the build refuses, before any work, every fault it would crash on -----------------

BAD_BYTE_RECIPE = RECIPES[1]
PERCENT_MSGID = "download all pages in %s as one ZIP file"


def _refused(folder):
    """The tiny site with a recipe that is not UTF-8, a claim id used twice and a bare % in
    sphinx.po: each would crash Sphinx later, naming neither file nor line."""
    project = tiny_project(folder / "project")
    recipe = project / BAD_BYTE_RECIPE
    recipe.write_bytes(recipe.read_bytes().replace(b"# A view shares", b"# A vi\xffew shares", 1))
    ledger = project / "docs" / "claims.toml"
    ledger.write_text(ledger.read_text() + "\n" + FIRST_CLAIM)
    po = project / "locales/ko/LC_MESSAGES/sphinx.po"
    plant(po, "ZIP 파일 하나로 내려받기", "ZIP 파일 하나로(%) 내려받기")
    return background_build(project)


JOBS.register("refused before building", "refused_build", _refused)


@pytest.fixture(scope="module")
def refused_build():
    return JOBS.result("refused before building")


def test_faults_sphinx_would_crash_on_are_refused_together_by_file_and_line(refused_build):
    project, code, output = refused_build.project, refused_build.code, refused_build.output
    assert code == 1, output
    recipe = project / BAD_BYTE_RECIPE
    bad_line, column = next(
        (n, t.index(b"\xff") + 1) for n, t in enumerate(recipe.read_bytes().splitlines(), 1) if b"\xff" in t
    )
    headers = [
        n
        for n, t in enumerate((project / "docs/claims.toml").read_text().splitlines(), 1)
        if t == "[[claim]]"
    ]
    po = project / "locales/ko/LC_MESSAGES/sphinx.po"
    import polib

    entry = polib.pofile(str(po)).find(PERCENT_MSGID)
    build = "autograd_recipes.publish.build: "
    for line in (
        f"{build}{BAD_BYTE_RECIPE}:{bad_line}: not UTF-8: byte 0xff at column {column} (invalid start byte); "
        "save the file as UTF-8",
        f"{build}docs/claims.toml:{headers[-1]}: claim #{len(headers)} (tiny-leaf-inplace-raises): "
        f"duplicate id (its first claim: docs/claims.toml:{headers[0]})",
        f"{build}{po}:{entry.linenum}: {BARE_PERCENT}: {PERCENT_MSGID!r}",
        f"{build}the sources and the ko catalogs have the problems above; not building",
    ):
        assert line in output.splitlines(), f"{line!r} not in:\n{output}"
    assert "Traceback" not in output and "please report" not in output.lower(), output
    assert not (project / "build" / "html").exists(), "it should refuse before building anything"


# a ledger that is not TOML, and one whose claim has no verdict: each stops the ledger's reading,
# so each has a build of its own (refused before Sphinx starts: a fraction of a second)
LEDGER_FAULTS = {
    "not TOML": (
        ('verdict = "holds"\n', "verdict = holds\n"),
        "verdict = holds",
        "not valid TOML: Invalid value (column 11)",
    ),
    "no verdict": (
        ('verdict = "holds"\n', ""),
        "[[claim]]",
        "claim #1 (tiny-leaf-inplace-raises): missing verdict",
    ),
}


def _ledger_fault(fault):
    def prepare(folder):
        project = tiny_project(folder / "project")
        plant(project / "docs" / "claims.toml", *LEDGER_FAULTS[fault][0])
        return background_build(project)

    return prepare


for _fault in LEDGER_FAULTS:
    JOBS.register(f"ledger {_fault}", "ledger_fault_builds", _ledger_fault(_fault))


@pytest.fixture(scope="module")
def ledger_fault_builds():
    return {fault: JOBS.result(f"ledger {fault}") for fault in LEDGER_FAULTS}


@pytest.mark.parametrize("fault", LEDGER_FAULTS)
def test_a_ledger_the_build_cannot_read_is_refused_naming_file_and_line(ledger_fault_builds, fault):
    result = ledger_fault_builds[fault]
    _change, marker, message = LEDGER_FAULTS[fault]
    line = line_of(result.project / "docs" / "claims.toml", marker)
    assert result.code == 1, result.output
    assert (
        f"autograd_recipes.publish.build: docs/claims.toml:{line}: {message}" in result.output.splitlines()
    ), result.output
    assert "Traceback" not in result.output and not (result.project / "build" / "html").exists(), (
        result.output
    )


# --- the Korean build names drift and a recipe's leftover warnings filter ----------------

DRIFTED_PAGE = tuple(
    f"A {size} site: one notebook, :doc:`tiny_notebook`, and two recipes:" for size in ("tiny", "small")
)
DRIFTED_RECIPE = ("# The update raises.", "# The update raises at once.")
FILTER_RECIPE = RECIPES[1]


def _drifted(folder, tiny):
    """English edited on a page and in a recipe with the Korean catalogs left as they were, and
    a recipe that leaves ``warnings.simplefilter("error")`` behind; Korean only (the English
    build would stop at the recipe first)."""
    project = seeded_tiny(folder / "project", tiny.project)
    plant(project / "docs/index.rst", *DRIFTED_PAGE)
    plant(project / RECIPES[0], *DRIFTED_RECIPE)
    plant(
        project / FILTER_RECIPE,
        "import torch\n",
        'import torch\nimport warnings\n\nwarnings.simplefilter("error")\n',
    )
    return background_build(project, "--lang", "ko")


JOBS.register("drift and a warnings filter", "drift_build", _drifted, after=["tiny"])


@pytest.fixture(scope="module")
def drift_build():
    return JOBS.result("drift and a warnings filter")


@pytest.mark.parametrize(
    "source, catalog, edit",
    [
        ("docs/index.rst", "index.po", DRIFTED_PAGE),
        (RECIPES[0], f"{Path(RECIPES[0]).with_suffix('.po')}", DRIFTED_RECIPE),
    ],
)
def test_english_changed_without_its_catalog_fails_the_korean_build_naming_it(
    drift_build, source, catalog, edit
):
    project, code, output = drift_build.project, drift_build.code, drift_build.output
    assert code != 0, output
    line = line_of(project / source, edit[1])
    msgid = edit[1].removeprefix("# ")
    expected = (
        f"{source}:{line}: WARNING: English changed or added since locales/ko/LC_MESSAGES/{catalog} was "
        f"refreshed: no ko for {msgid!r}"
    )
    found = [text for text in output.splitlines() if text.startswith(expected)]
    assert found, f"{expected!r} not in:\n{output}"
    assert "so the ko page shows it in English; run nox -s i18n, then translate it" in found[0]


def test_recipe_that_leaves_a_warnings_filter_is_named_and_the_build_goes_on(drift_build):
    project, code, output = drift_build.project, drift_build.code, drift_build.output
    assert code == 1, output
    assert (
        f"WARNING: {FILTER_RECIPE}: a recipe must leave the process and the checkout as it found them: it "
        "changed global state (warnings filters: 'error' for Warning added); it was put back"
    ) in output, output
    # the filter was put back: nothing later (Sphinx's own deprecation warnings) crashed on it
    assert "Traceback" not in output and "please report" not in output.lower(), output
    assert (project / "build/html/ko/index.html").is_file(), "the build stopped before the pages were written"


def test_the_copied_catalogs_are_the_tiny_sites():
    """The drift build's control: without the edits, these messages have their Korean."""
    import polib

    index = polib.pofile(str(TINY / "locales/ko/LC_MESSAGES/index.po"))
    recipe = polib.pofile(str(TINY / "locales/ko/LC_MESSAGES" / Path(RECIPES[0]).with_suffix(".po")))
    assert any(e.msgid.startswith(DRIFTED_PAGE[0]) and e.msgstr for e in index)
    assert recipe.find(DRIFTED_RECIPE[0].removeprefix("# ")).msgstr


# --- publishing waits for the checks --------------------------------------------------


def test_the_site_is_published_only_after_the_lint_and_the_tests_pass():
    import yaml
    from conftest import ROOT

    jobs = yaml.safe_load((ROOT / ".github/workflows/pages.yml").read_text(encoding="utf-8"))["jobs"]
    needs = jobs["deploy"]["needs"]
    gates = [name for name in ([needs] if isinstance(needs, str) else needs) if name in jobs]
    runs = [step.get("run", "") for name in gates for step in jobs[name]["steps"]]
    assert ".ci/run" in runs, f"deploy needs {gates}, none of which runs .ci/run (the lint and the tests)"
    assert "python3 -m nox -s lint\npython3 -m nox -s tests" in (ROOT / ".ci/run").read_text()
    # the checks job reads the repository and nothing else
    gate = next(name for name in gates if ".ci/run" in [s.get("run") for s in jobs[name]["steps"]])
    assert jobs[gate]["permissions"] == {"contents": "read"}
