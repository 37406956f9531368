"""The torch-versions matrix: recorded data, staleness, the pinned-release check, and the page.

Unit tests on small fixtures (two releases); no build and no other torch. The
fault build (test_build_faults.py) checks that a recorded verdict the live run
contradicts fails a real build.
"""

import json
import re
import shutil
import subprocess
import sys
from html import escape, unescape
from pathlib import Path
from xml.etree import ElementTree

import background
import polib
import pytest
from conftest import JOBS, ROOT

from autograd_recipes import theme
from autograd_recipes.claims import claims_ledger
from autograd_recipes.i18n import first_gloss
from autograd_recipes.matrix import matrix_data, matrix_html, matrix_runner, matrix_verify, torch_matrix
from autograd_recipes.project import PROJECT

CLAIMS = claims_ledger.load()
HASHES = matrix_data.current_hashes()
VERDICTS = {c["id"]: c["verdict"] for c in CLAIMS}
RECIPE = "plot_02_residual_add"
CLAIM = "inplace-reuses-memory"


def record(release, verdicts=None, recipes=None, hashes=HASHES):
    """A data file's content: every claim as the ledger says, every recipe and notebook holding."""
    verdicts = {**VERDICTS, **(verdicts or {})}
    recipe_results = {
        name: {
            "hash": h,
            "expected_errors": [],
            "asserts": [{"line": 1, "text": "ok", "holds": True}],
            "errors": [],
        }
        for name, h in hashes["recipes"].items()
    }
    recipe_results.update(recipes or {})
    return {
        "release": release,
        "torch": release,
        "python": "3.11.7",
        "platform": "Linux-x86_64",
        "date": "2026-11-30T00:00:00Z",
        "status": "ok",
        "claims": {
            i: {
                "hash": hashes["claims"][i],
                "verdict": verdicts[i],
                "evidence": f"evidence of {i} on {release}",
            }
            for i in hashes["claims"]
        },
        "recipes": recipe_results,
        "notebooks": {
            name: {"hash": h, "expected_errors": [], "asserts": [], "errors": []}
            for name, h in hashes["notebooks"].items()
        },
    }


CHANGED_ERROR = {
    "hash": HASHES["recipes"][RECIPE],
    "expected_errors": [
        {
            "line": 86,
            "kind": "RuntimeError",
            "text": "modified by an inplace operation",
            "outcome": "changed",
            "type": "RuntimeError",
            "message": "planted: another message",
        }
    ],
    "asserts": [],
    "errors": [],
}
FLIPPED = "does not hold" if VERDICTS[CLAIM] == "holds" else "holds"
FIXTURE = [record("2.0.1", {CLAIM: FLIPPED}, {RECIPE: CHANGED_ERROR}), record("2.13.0")]


def test_cells_show_each_release():
    old, new = FIXTURE
    assert matrix_data.cell(old, "claims", CLAIM, HASHES)[0] == FLIPPED
    assert matrix_data.cell(new, "claims", CLAIM, HASHES)[0] == VERDICTS[CLAIM]
    assert matrix_data.cell(old, "recipes", RECIPE, HASHES)[0] == matrix_data.ERROR_CHANGED
    assert matrix_data.cell(new, "recipes", RECIPE, HASHES)[0] == matrix_data.HOLDS
    not_run = {"release": "2.5.1", "status": "not run", "reason": "pip install failed"}
    assert matrix_data.cell(not_run, "claims", CLAIM, HASHES)[0] == matrix_data.NOT_RUN


def test_a_changed_claim_marks_only_its_own_cells_not_checked(tmp_path):
    """On a copy of the ledger, one claim's code changes: its cells go stale, no other's."""
    text = (ROOT / "docs" / "claims.toml").read_text(encoding="utf-8")
    start = text.index(f'id = "{CLAIM}"')
    code_at = text.index("code = ", start)
    copy = tmp_path / "claims.toml"
    copy.write_text(
        text[:code_at] + text[code_at:].replace("'''\n", "'''\nchanged = 1\n", 1), encoding="utf-8"
    )
    changed = matrix_data.current_hashes(copy)
    assert changed["claims"][CLAIM] != HASHES["claims"][CLAIM]
    # the control: a comment is not code
    commented = tmp_path / "commented.toml"
    commented.write_text(
        text[:code_at] + text[code_at:].replace("'''\n", "'''\n# changed\n", 1), encoding="utf-8"
    )
    assert matrix_data.current_hashes(commented)["claims"] == HASHES["claims"]
    for release in FIXTURE:
        states = {i: matrix_data.cell(release, "claims", i, changed)[0] for i in HASHES["claims"]}
        assert states[CLAIM] == matrix_data.STALE
        assert all(s != matrix_data.STALE for i, s in states.items() if i != CLAIM)
        assert all(
            matrix_data.cell(release, "recipes", r, changed)[0] != matrix_data.STALE
            for r in HASHES["recipes"]
        )


def test_a_changed_recipe_marks_only_its_own_cells_not_checked(tmp_path):
    recipes = tmp_path / "recipes"
    shutil.copytree(ROOT / "recipes", recipes)
    path = recipes / f"{RECIPE}.py"
    path.write_text(path.read_text(encoding="utf-8") + "\nchanged = 1\n", encoding="utf-8")
    changed = matrix_data.current_hashes(recipes_dir=recipes)
    states = {r: matrix_data.cell(FIXTURE[1], "recipes", r, changed)[0] for r in HASHES["recipes"]}
    assert states.pop(RECIPE) == matrix_data.STALE
    assert set(states.values()) == {matrix_data.HOLDS}


def test_prose_and_comments_change_no_recipe_or_notebook_hash(tmp_path):
    """Mending a sentence must not mark every release "not checked": the docstring, the
    ``# %%`` prose, comments and a notebook's Markdown are not code; a statement is."""
    recipes, docs = tmp_path / "recipes", tmp_path / "docs"
    shutil.copytree(ROOT / "recipes", recipes)
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("recipes"))
    path = recipes / f"{RECIPE}.py"
    source = path.read_text(encoding="utf-8")
    source = source.replace('"""\n', '"""\nA new sentence of the lede.\n', 1)
    source = source.replace("# %%\n", "# %%\n# A new sentence of prose.\n", 1) + "\n# a closing comment\n"
    path.write_text(source, encoding="utf-8")
    guide = docs / "no_grad_guide.md"
    guide.write_text(
        guide.read_text(encoding="utf-8").replace("\n## ", "\nA new paragraph.\n\n## ", 1), encoding="utf-8"
    )
    hashes = matrix_data.current_hashes(recipes_dir=recipes, docs_dir=docs)
    assert hashes["recipes"] == HASHES["recipes"] and hashes["notebooks"] == HASHES["notebooks"]
    # the control: a statement added to a cell is code
    text = guide.read_text(encoding="utf-8")
    guide.write_text(text.replace("import torch\n", "import torch\nchanged = 1\n", 1), encoding="utf-8")
    changed = matrix_data.current_hashes(recipes_dir=recipes, docs_dir=docs)["notebooks"]
    assert changed["no_grad_guide"] != HASHES["notebooks"]["no_grad_guide"]
    assert changed["inplace_overview"] == HASHES["notebooks"]["inplace_overview"]


def test_results_are_matched_by_ordinal_and_named_by_todays_line():
    """A recorded expected error names the n-th expect_error block; moved by new prose, it is
    named at its line today. Results recorded before ordinals keep their recorded line."""
    lines = matrix_data.block_lines("recipes", ROOT / "recipes" / f"{RECIPE}.py")
    first = lines["expected"][0]
    entry = CHANGED_ERROR["expected_errors"][0]
    moved = dict(CHANGED_ERROR, expected_errors=[dict(entry, line=first - 40, ordinal=0)])
    found = matrix_data.differences(
        record("2.0.1", recipes={RECIPE: moved}), "recipes", RECIPE, HASHES, VERDICTS, lines=lines
    )
    assert found == [("the error at line %d reads differently", (first,))]
    unnumbered = dict(CHANGED_ERROR, expected_errors=[dict(entry, line=first - 40)])
    found = matrix_data.differences(
        record("2.0.1", recipes={RECIPE: unnumbered}), "recipes", RECIPE, HASHES, VERDICTS, lines=lines
    )
    assert found == [("the error at line %d reads differently", (first - 40,))]


def test_a_recorded_verdict_the_live_run_contradicts_is_named_with_both_verdicts():
    pinned = FIXTURE[1]
    observed = {i: (v, f"evidence of {i} on 2.13.0") for i, v in VERDICTS.items()}
    assert matrix_verify.pinned_differences(pinned, observed, {}, HASHES) == []
    observed[CLAIM] = (FLIPPED, "")
    assert matrix_verify.pinned_differences(pinned, observed, {}, HASHES, source="torch-2.13.0.json") == [
        (
            "claims",
            CLAIM,
            f"recorded {VERDICTS[CLAIM]!r} in torch-2.13.0.json, but the live run gives {FLIPPED!r}",
        )
    ]
    observed[CLAIM] = (None, "Traceback")
    assert matrix_verify.pinned_differences(pinned, observed, {}, HASHES) == [
        ("claims", CLAIM, f"recorded {VERDICTS[CLAIM]!r} in the record, but the live run gives 'error'")
    ]


def test_news_names_the_first_release_where_behaviour_changed():
    news = matrix_data.first_changes(FIXTURE, HASHES, VERDICTS)
    assert [(kind, name, release) for kind, name, release, _ in news] == [
        ("claims", CLAIM, "2.13.0"),
        ("recipes", RECIPE, "2.13.0"),
    ]
    three = [FIXTURE[1], record("2.14.1", {CLAIM: FLIPPED})]
    ((kind, name, release, what),) = matrix_data.first_changes(three, HASHES, VERDICTS)
    assert (name, release) == (CLAIM, "2.14.1")
    flipped = [("claim %s: %s (the page says: %s)", (CLAIM, FLIPPED, VERDICTS[CLAIM]))]
    assert what == (["2.13.0"], [(["2.14.1"], flipped)], [])


def test_an_error_worded_otherwise_than_on_the_pinned_release_is_news():
    """The pages show the pinned release's messages: another wording elsewhere is a difference."""
    same = dict(CHANGED_ERROR["expected_errors"][0], outcome="same")
    pinned = record(
        "2.13.0", recipes={RECIPE: dict(CHANGED_ERROR, expected_errors=[dict(same, message="new")])}
    )
    old = record("2.0.1", recipes={RECIPE: dict(CHANGED_ERROR, expected_errors=[dict(same, message="old")])})
    assert matrix_data.differences(old, "recipes", RECIPE, HASHES, VERDICTS) == []
    worded = [("the error at line %d is worded differently: %s where the page has %s", (86, "old", "new"))]
    assert matrix_data.differences(old, "recipes", RECIPE, HASHES, VERDICTS, pinned) == worded
    news = matrix_data.first_changes([old, pinned], HASHES, VERDICTS, pinned)
    assert news == [("recipes", RECIPE, "2.13.0", (["2.13.0"], [(["2.0.1"], worded)], []))]


def test_page_summary_gives_ranges_and_what_differs():
    records = [
        record("2.0.1", recipes={RECIPE: CHANGED_ERROR}),
        record("2.1.2", recipes={RECIPE: CHANGED_ERROR}),
    ]
    records += [record("2.2.2"), record("2.3.1")]
    good, bad, unknown = matrix_data.page_summary(records, [("recipes", RECIPE)], HASHES, VERDICTS)
    assert good == ["2.2.2–2.3.1"]
    assert bad == [(["2.0.1–2.1.2"], [("the error at line %d reads differently", (86,))])]
    assert unknown == []


class FakeBuilder:
    def get_relative_uri(self, source, target):
        return f"{target}.html"


class FakeEnv:
    titles = {}


class FakeState:
    def __init__(self, records):
        self.records, self.hashes, self.verdicts = records, HASHES, VERDICTS
        self.claims = CLAIMS
        self.sentences = torch_matrix.claim_sentences(CLAIMS)  # English: the ledger's own
        self.checked = [r["release"] for r in records if r.get("status") == "ok"]
        self.reference = records[-1]  # the pinned release: the newest of the fixture
        self.measured = {c["id"] for c in CLAIMS if c.get("measured")}
        self.lines = {}  # no ordinals in the fixture: each result names its recorded line


def parse(markup):
    """The page's markup as an element tree: it must be well-formed to parse at all."""
    return ElementTree.fromstring(f"<root>{markup}</root>")


def text(element):
    return "".join(element.itertext())


def table_rows(markup):
    """{row name: [(cell class, its words, its number or None)]} of the table's rows."""
    rows = {}
    for tr in parse(markup).iter("tr"):
        header = tr.find("th[@scope='row']")
        if header is None:
            continue
        cells = []
        for td in tr.findall("td"):
            (words,) = td.findall("span")  # exactly one: the state in words
            sup = td.find("sup")
            cells.append((td.get("class"), words.text, None if sup is None else sup.text))
        # keyed by what the row's link points to: the claim's box, or the recipe's or guide's page
        href = header.find("a").get("href")
        rows[href.split("#claim-")[1] if "#claim-" in href else href.removesuffix(".html").split("/")[-1]] = (
            cells
        )
    return rows


def evidence_entries(markup):
    """{details id: [(the entry's releases and states, its evidence)]} under the table."""
    return {
        details.get("id"): [(li.text, li.find("pre").text) for li in details.iter("li")]
        for details in parse(markup).iter("details")
    }


def test_the_matrix_page_renders_the_data_it_is_given():
    html = matrix_html.table_html(FakeState(FIXTURE), FakeBuilder(), "versions", FakeEnv())
    assert html.count('<th scope="col"') == 1 + len(FIXTURE)
    assert ">2.0.1</th>" in html and ">2.13.0</th>" in html
    rows = table_rows(html)
    assert list(rows) == [name for kind in matrix_data.KINDS for name in HASHES[kind]]
    assert all(len(cells) == len(FIXTURE) for cells in rows.values())
    assert "<pre>" not in html and "evidence of" not in html  # the evidence is under the table
    assert html.count('class="changed differs"') == 1
    assert html.count(' differs"') == 2  # the flipped claim and the changed error, on 2.0.1 only
    assert f'href="claims.html#claim-{CLAIM}"' in html
    assert f'href="#{matrix_html.evidence_id("claims", CLAIM)}"' in html
    # a claim's row is named by its sentence, linked to its box; its evidence link is apart
    claim = next(c for c in CLAIMS if c["id"] == CLAIM)
    assert (
        f'<th scope="row"><a class="row-name" href="claims.html#claim-{CLAIM}">{escape(claim["claim"])}</a>'
        f'<a class="evidence" href="#{matrix_html.evidence_id("claims", CLAIM)}">evidence</a></th>'
    ) in html
    assert not any(f">{c['id']}<" in html for c in CLAIMS)  # no id as a row's text
    # how each release was run: in words after the table, not only in a tooltip
    assert "title=" not in html and "<li>2.0.1: torch 2.0.1 · Python 3.11.7 · Linux-x86_64" in html


def test_each_cell_says_its_state_and_whether_it_differs_in_words():
    rows = table_rows(matrix_html.table_html(FakeState(FIXTURE), FakeBuilder(), "versions", FakeEnv()))
    # every release printed its own evidence for a claim in this fixture: numbered 1 and 2
    assert rows[CLAIM] == [
        (matrix_html.CLASSES[FLIPPED] + " differs", f"{FLIPPED}, differs from the page, evidence ", "1"),
        (matrix_html.CLASSES[VERDICTS[CLAIM]], f"{VERDICTS[CLAIM]}, evidence ", "2"),
    ]
    assert rows[RECIPE] == [
        ("changed differs", "error changed, differs from the page, evidence ", "1"),
        ("ok", "holds, evidence ", "2"),
    ]
    # a recipe that printed the same on both releases: its cells say their state, unnumbered
    assert rows["plot_01_manual_weight_update"] == [("ok", "holds", None)] * 2
    every = {words.split(",")[0] for cells in rows.values() for _, words, _ in cells}
    assert every <= set(matrix_data.STATES)


def test_evidence_shared_by_releases_is_shown_once_and_differing_evidence_per_release():
    """2.0.1 and 2.1.2 print the same evidence for a claim, 2.13.0 its own, 2.5.1 was not run."""
    records = [record("2.0.1"), record("2.1.2"), record("2.13.0", {CLAIM: FLIPPED})]
    for old in records[:2]:
        for result in old["claims"].values():
            result["evidence"] = result["evidence"].replace(old["release"], "an old release")
    records.insert(2, {"release": "2.5.1", "status": "not run", "reason": "pip install failed"})
    state = FakeState(records)
    rows = table_rows(matrix_html.table_html(state, FakeBuilder(), "versions", FakeEnv()))
    evidence = matrix_html.evidence_html(state, FakeEnv())
    entries = evidence_entries(evidence)

    shared, own = f"evidence of {CLAIM} on an old release", f"evidence of {CLAIM} on 2.13.0"
    assert entries[matrix_html.evidence_id("claims", CLAIM)] == [
        (f"torch 2.0.1–2.1.2 · {VERDICTS[CLAIM]}", shared),
        (f"torch 2.13.0 · {FLIPPED}", own),
    ]
    assert evidence.count(shared) == 1 and evidence.count(own) == 1
    assert [number for _, _, number in rows[CLAIM]] == ["1", "1", None, "2"]
    assert rows[CLAIM][2] == ("not-run", "release not run", None)
    # a row whose releases all printed the same: one entry, its cells unnumbered
    recipe = "plot_01_manual_weight_update"
    assert entries[matrix_html.evidence_id("recipes", recipe)] == [
        ("torch 2.0.1–2.13.0 · holds", "line 1: assert ok: holds")
    ]
    assert [number for _, _, number in rows[recipe]] == [None] * 4
    # every row links to its evidence, and every entry is a row's
    assert set(entries) == {
        matrix_html.evidence_id(kind, name) for kind in matrix_data.KINDS for name in HASHES[kind]
    }


def test_the_stylesheet_draws_each_state_as_its_symbol():
    """The cells carry words and a class; the symbol of the key is drawn by site.css."""
    css = (Path(theme.STATIC) / "site.css").read_text(encoding="utf-8")
    for state, symbol in matrix_data.SYMBOLS.items():
        rule = re.search(
            rf'table\.torch-matrix td\.{matrix_html.CLASSES[state]}::before \{{ content: "(.*?)"; content: "(.*?)" / ""; \}}',
            css,
        )
        assert rule, state
        drawn = {re.sub(r"\\([0-9A-Fa-f]{1,6})", lambda m: chr(int(m[1], 16)), g) for g in rule.groups()}
        assert drawn == {symbol}, state
    assert re.search(r"table\.torch-matrix td > span \{[^}]*clip-path: inset\(50%\)", css)


def test_claim_sentences_come_from_the_claims_catalog_as_the_claims_page_shows_them(tmp_path):
    """A translated sentence's reST escapes are undone (the claims page parses the msgstr); an
    untranslated or fuzzy one stays English (as Sphinx leaves it); English reads the ledger."""
    first, second, third = CLAIMS[:3]
    catalog = polib.POFile()
    catalog.append(polib.POEntry(msgid=first["claim"], msgstr="리프에 add\\_ 와 \\*= 를 쓰면 오류가 납니다."))
    catalog.append(polib.POEntry(msgid=second["claim"], msgstr="흐릿한 번역", flags=["fuzzy"]))
    catalog.save(str(tmp_path / "claims.po"))
    sentences = torch_matrix.claim_sentences(CLAIMS, tmp_path / "claims.po")
    assert sentences[first["id"]] == "리프에 add_ 와 *= 를 쓰면 오류가 납니다."
    assert sentences[second["id"]] == second["claim"] and sentences[third["id"]] == third["claim"]
    assert torch_matrix.claim_sentences(CLAIMS) == {c["id"]: c["claim"] for c in CLAIMS}
    # with Sphinx's smart quotes, as the claims page: typographic quotes and ellipses
    plain = {c["id"]: c["claim"] for c in CLAIMS}
    plain[first["id"]] = "It says 'a leaf...' here."
    smart = torch_matrix.claim_sentences([dict(first, claim=plain[first["id"]])], None, ("qDe", "en"))
    assert smart == {first["id"]: "It says \u2018a leaf\u2026\u2019 here."}


def test_a_claims_news_names_it_once_by_its_sentence():
    """In the news a claim's row is its sentence; its difference is said without its id."""
    news = matrix_html.news(FakeState(FIXTURE), FakeBuilder(), "versions", FakeEnv())
    markup = "".join(node.astext() for node in news)  # the raw links and the words
    claim = next(c for c in CLAIMS if c["id"] == CLAIM)
    assert escape(claim["claim"]) in markup and CLAIM not in markup.replace(f"#claim-{CLAIM}", "")
    assert "First changed on torch 2.13.0." in markup
    assert f"its check reads “{FLIPPED}” where the page says “{VERDICTS[CLAIM]}”." in markup


def test_a_measured_claims_releases_are_grouped_by_state_not_by_figures():
    """Timings and allocator figures differ on every run: one entry per state, the first's text."""
    measured = next(c["id"] for c in CLAIMS if c.get("measured"))
    records = [record(r) for r in ("2.0.1", "2.1.2", "2.13.0")]
    for r in records:
        r["claims"][measured]["evidence"] = f"ratio measured on {r['release']}"
    cells, entries = matrix_html._row(FakeState(records), "claims", measured)
    assert entries == [("ratio measured on 2.0.1", ["2.0.1", "2.1.2", "2.13.0"])]
    # the control: an unmeasured claim with the same differing texts gets an entry per text
    plain = next(c["id"] for c in CLAIMS if not c.get("measured"))
    for r in records:
        r["claims"][plain]["evidence"] = f"printed on {r['release']}"
    assert len(matrix_html._row(FakeState(records), "claims", plain)[1]) == 3


def test_the_recorded_matrix_is_light():
    """The real data: each row's distinct evidence once, and the page a fraction of the 435 KB that
    one copy of the evidence per cell made it."""
    records = matrix_data.load_all()
    state = FakeState(records)
    state.reference = next((r for r in records if r["release"] == "2.13.0"), records[-1])
    table = matrix_html.table_html(state, FakeBuilder(), "versions", FakeEnv())
    evidence = matrix_html.evidence_html(state, FakeEnv())
    for entries in evidence_entries(evidence).values():
        assert len({pre for _, pre in entries}) == len(entries)
    markup = table + evidence
    # a row (a claim named by its sentence, a recipe, a guide) across 16 releases: at most
    # 3 KB and 55 elements (75 rows were 200 KB and 4,000 elements when one copy of the
    # evidence per cell made the page 435 KB; 2.72 KB a row once the recipes showed the
    # four messages readers paste most, each worded differently on older releases)
    rows = sum(len(h) for h in matrix_data.current_hashes().values())
    assert len(markup.encode("utf-8")) < 3_000 * rows
    assert sum(1 for _ in parse(markup).iter()) < 55 * rows


def test_a_recipe_page_line_says_where_it_behaves_as_shown():
    line = matrix_html.page_line(
        FakeState(FIXTURE), [("recipes", RECIPE)], FakeBuilder(), f"recipes/{RECIPE}"
    )
    markup = line.astext()
    assert (
        '<p class="torch-versions-line">Behaves as shown on torch 2.13.0. Differs on 2.0.1. <a href='
        in markup
    )
    # each difference a sentence, behind a disclosure
    assert (
        "<summary>What differs</summary><ul><li>On torch 2.0.1, the error at line 86 reads differently.</li>"
        in markup
    )


def _planted_recipe_run(folder):
    """The runner's recipe mode on a planted recipe, beside the other tests."""
    recipe = folder / "plot_planted.py"
    source = (ROOT / "recipes" / f"{RECIPE}.py").read_text(encoding="utf-8")
    helpers_end = source.index(
        "# sphinx_gallery_end_ignore\n", source.index("from autograd_recipes.kit import")
    )
    checker = source[
        : helpers_end + len("# sphinx_gallery_end_ignore\n")
    ]  # imports and the kit's hidden import
    recipe.write_text(
        checker
        # an expected error in the block of the kit's import, recorded as the later ones are
        + 'with expect_error(TypeError, "planted in the first block"):\n    raise TypeError("other")\n'
        + "# %%\n"
        + 'with expect_error(RuntimeError, "another text"):\n    torch.ones(2).view(3)\n'
        + 'with expect_error(ValueError, "never"):\n    pass\n'
        + "assert 1 + 1 == 3\n"
        + "# %%\nraise KeyError('planted')\n"
        + "# %%\nprint('last block ran')\nassert True\n",
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "autograd_recipes.matrix.matrix_runner", "--recipe", str(recipe)]
    return background.Task(lambda: subprocess.run(command, capture_output=True, text=True, timeout=300))


JOBS.register("planted recipe run", "planted_recipe_run", _planted_recipe_run)


planted_recipe_run = JOBS.fixture("planted recipe run")


def test_a_recipe_records_each_expected_error_and_check_without_stopping(planted_recipe_run):
    """The runner's recipe mode on a planted recipe: a changed message (in the block that imports
    the kit too), a missing error, a failed assert and an unexpected error are all recorded, and
    the blocks after them still run."""
    assert planted_recipe_run.returncode == 0, planted_recipe_run.stderr
    out = planted_recipe_run.stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert [e["outcome"] for e in result["expected_errors"]] == ["changed", "changed", "not raised"]
    assert [e["type"] for e in result["expected_errors"][:2]] == ["TypeError", "RuntimeError"]
    assert [(a["text"], a["holds"]) for a in result["asserts"]] == [("1 + 1 == 3", False), ("True", True)]
    assert [e["type"] for e in result["errors"]] == ["KeyError"]
    assert "last block ran" in result["output"]
    assert matrix_data.recipe_state(result) == matrix_data.NOT_HOLD


def test_a_new_release_fails_strict_runs_naming_the_claim():
    new = FIXTURE[0]
    assert matrix_runner.changed_verdicts(new, None, VERDICTS) == [
        f"claim {CLAIM}: {FLIPPED} (was {VERDICTS[CLAIM]} in the ledger)"
    ]
    assert matrix_runner.changed_verdicts(new, new, VERDICTS) == []
    recorded = record("2.0.1")
    assert matrix_runner.changed_verdicts(new, recorded, VERDICTS) == [
        f"claim {CLAIM}: {FLIPPED} (was {VERDICTS[CLAIM]} in recorded before)"
    ]
    assert matrix_runner.changed_verdicts(new, dict(recorded, torch="2.0.1+cu117"), VERDICTS) == []


@pytest.mark.parametrize(
    "path", sorted((ROOT / "docs" / "matrix").glob("torch-*.json")), ids=lambda p: p.stem
)
def test_recorded_data_has_its_provenance(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    assert path.name == f"torch-{data['release']}.json"
    assert {"release", "python", "platform", "date", "status"} <= set(data)
    if data["status"] == "ok":
        assert data["torch"].split("+")[0] == data["release"]
        assert all(r["hash"] for r in [*data["claims"].values(), *data["recipes"].values()])
        assert "/work/" not in path.read_text(encoding="utf-8")
    else:
        assert data["reason"]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_built_pages_carry_the_matrix(built_site, lang):
    """On the shared build: the versions page has its table, the landing page names the releases,
    and every recipe page and both article pages carry their generated version line."""
    project = built_site[0]
    html = project / "build" / "html" / lang
    versions = (html / "versions.html").read_text(encoding="utf-8")
    recorded = [p.stem.removeprefix("torch-") for p in (ROOT / "docs" / "matrix").glob("torch-*.json")]
    assert 'class="torch-matrix"' in versions and all(f">{r}</th>" in versions for r in recorded)
    assert 'class="torch-matrix-evidence"' in versions
    # at most 4 KB a row, the whole page: one copy of the evidence per cell made 75 rows 435 KB
    # (5.8 KB a row); the Korean page, its sentences three bytes a syllable, is 3.6 KB a row
    # with the claims whose evidence differs on many releases
    rows = sum(len(h) for h in matrix_data.current_hashes().values())
    assert len(versions.encode("utf-8")) < 4_000 * rows
    assert 'class="torch-matrix-summary"' in (html / "index.html").read_text(encoding="utf-8")
    pages = [f"{PROJECT.recipe_docname(p)}.html" for p in matrix_data.recipe_paths()]
    for page in pages + [f"{p.stem}.html" for p in matrix_data.notebook_paths()]:
        text = (html / page).read_text(encoding="utf-8")
        assert text.count('class="torch-versions-line"') == 1, page


CLAIM_BOX = re.compile(r'id="claim-([\w-]+)">\s*<p class="claim-text">(.*?)</p>', re.S)
ROW_NAME = re.compile(
    r'<th scope="row"><a class="row-name" href="claims\.html#claim-([\w-]+)">(.*?)</a>', re.S
)


def words_of(markup):
    """What a reader reads of ``markup``: no tags, entities read, spaces as one."""
    return " ".join(unescape(re.sub(r"<[^>]*>", " ", markup)).split())


def sentence_of(markup):
    """``words_of`` without English glosses, which each page gives at its own first use."""
    return words_of(first_gloss.GLOSS.sub("", markup))


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_versions_page_names_claims_by_their_sentences_in_its_language(built_site, lang):
    """No reader text of the versions page is a claim's id: each claim's row (and its evidence
    entry) is named by the claim's sentence as the claims page of the same language shows it,
    in Korean on the Korean page, and links to that claim's box there."""
    html = built_site[0] / "build" / "html" / lang
    versions = (html / "versions.html").read_text(encoding="utf-8")
    shown = {
        i: sentence_of(t) for i, t in CLAIM_BOX.findall((html / "claims.html").read_text(encoding="utf-8"))
    }
    assert set(shown) == {c["id"] for c in CLAIMS}
    article = versions.split("<article", 1)[1].split("</article>", 1)[0]
    # the evidence is shown as the check printed it: a traceback names "<claim id>" as its file
    article = re.sub(r"<pre>.*?</pre>", "", article, flags=re.S)
    assert [c["id"] for c in CLAIMS if c["id"] in words_of(article)] == []
    rows = {i: sentence_of(t) for i, t in ROW_NAME.findall(versions)}
    assert rows == shown
    summaries = [
        sentence_of(t)
        for t in re.findall(r'<details id="evidence-claims-[\w-]+"><summary>(.*?)</summary>', versions)
    ]
    assert summaries == [shown[c["id"]] for c in CLAIMS]
    if lang == "ko":
        assert all(re.search("[\uac00-\ud7a3]", t) for t in rows.values())


def _release_read(folder):
    code = (
        "import sys; from autograd_recipes.matrix import torch_matrix; "
        "release = torch_matrix.torch_release(); print(release, 'torch' in sys.modules); "
        "import torch; print(torch.__version__.split('+')[0])"
    )
    command = [sys.executable, "-c", code]
    return background.Task(lambda: subprocess.run(command, cwd=ROOT, capture_output=True, text=True))


JOBS.register("release read", "release_read", _release_read)


release_read = JOBS.fixture("release read")


def test_torch_release_is_read_without_importing_torch(release_read):
    assert release_read.returncode == 0, release_read.stderr
    read, imported_before, imported = release_read.stdout.split()
    assert read == imported and imported_before == "False"


def test_code_that_does_not_parse_is_hashed_as_text_and_has_no_block_lines(tmp_path):
    """A recipe being edited, or a notebook cell with an IPython magic, must not stop the build:
    its hash is its text (so it still changes with the code), and it names no line."""
    recipe = tmp_path / "plot_broken.py"
    recipe.write_text('"""Broken\n======\n"""\nx = torch.zeros(1\n', encoding="utf-8")
    assert matrix_data.recipe_hash(recipe) != matrix_data.recipe_hash(ROOT / "recipes" / f"{RECIPE}.py")
    assert matrix_data.block_lines("recipes", recipe) == {"expected": [], "asserts": []}
    page = tmp_path / "magic.md"
    page.write_text(
        "---\nfile_format: mystnb\n---\n\n```{code-cell} ipython3\n%timeit 1 + 1\n```\n\n"
        '```{code-cell} ipython3\nwith expect_error(RuntimeError, "x"):\n    pass\n```\n',
        encoding="utf-8",
    )
    assert matrix_data.notebook_paths(tmp_path) == [page]
    assert matrix_data.block_lines("notebooks", page) == {"expected": [10], "asserts": []}
    before = matrix_data.notebook_hash(page)
    page.write_text(
        page.read_text(encoding="utf-8").replace("%timeit 1 + 1", "%timeit 2 + 2"), encoding="utf-8"
    )
    assert matrix_data.notebook_hash(page) != before


def test_quoted_words_keep_a_trailing_comma_or_period_outside_the_quotes():
    """The banner quotes the differing words without the comma or period that ends them
    both (“AsStridedBackward0”, not “AsStridedBackward0,”); one that is itself the
    difference, or all a word has, stays."""
    assert matrix_html.quoted_words("AsStridedBackward0,", "AsStrided,") == (
        "AsStridedBackward0",
        "AsStrided",
    )
    assert matrix_html.quoted_words(
        "set_detect_anomaly(True).", "set_detect_anomaly(True, check_nan=False)."
    ) == (
        "set_detect_anomaly(True)",
        "set_detect_anomaly(True, check_nan=False)",
    )
    assert matrix_html.quoted_words("UnbindBackward0", "Unbind") == ("UnbindBackward0", "Unbind")
    assert matrix_html.quoted_words("x,", "x.") == ("x,", "x.")
    assert matrix_html.quoted_words("—", "Relu,") == ("—", "Relu")
    assert matrix_html.quoted_words(",", "Relu,") == (",", "Relu,")
