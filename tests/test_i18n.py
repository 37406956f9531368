"""Korean catalogs: complete, current with the English, consistent in terminology."""

import csv
import re
import shutil
import subprocess
import sys

import background
import polib
import pytest
from conftest import JOBS, ROOT
from tiny import tiny_project

from autograd_recipes.i18n import first_gloss
from autograd_recipes.i18n.check_catalogs import catalog_problems
from autograd_recipes.i18n.first_gloss import GLOSS  # English in parentheses after a Korean word
from autograd_recipes.project import PROJECT

LOCALE = ROOT / "locales" / "ko" / "LC_MESSAGES"
CATALOGS = sorted(LOCALE.rglob("*.po"))

# (English words in prose, Korean word required) for the terms the glossary fixes
TERMS = [
    (r"\bin[- ]place\b", "제자리"),
    (r"\bgradients?\b", "기울기"),
    (r"\bleaf\b", "리프"),
    (r"\binference\b", "추론"),
    (r"\bparameters?\b", "매개변수"),
    (r"\bcomputational graph\b", "연산 그래프"),
    (r"\bbackward pass\b", "역전파"),
    (r"\bweights?\b", "가중치"),
    (r"\bversion counter\b", "버전 카운터"),
]
# one term per concept: the variant Korean the glossary rules out, and one register
RULED_OUT = [
    ("기울기를 요구", "requires grad: 기울기가 필요한"),
    ("기울기를 필요로", "requires grad: 기울기가 필요한"),
    ("지름길", "shortcut: 숏컷"),
    ("업데이트", "update: 갱신"),
    ("활성화 값", "activations: 활성값"),
    ("다운로드", "download: 내려받기"),
    ("증명:", "proof: 증거"),
    ("정규화 항", "regularization: 규제"),
    ("저희", "the site is 이 사이트, never 저희 or 우리"),
    ("우리", "the site is 이 사이트, never 저희 or 우리"),
    ("세요", "instructions end in -십시오"),
    ("텐서(tensor)", "no English after a word that is English in Hangul"),
    ("뷰(view)", "no English after a word that is English in Hangul"),
    ("버퍼*(buffer)", "no English after a word that is English in Hangul"),
]


def is_heading(msgid):
    """A title or heading: short, and not ending like a sentence."""
    return len(msgid) < 90 and "\n" not in msgid and not re.search(r"[.:?!)]\s*$", msgid)


# code, roles, and quoted messages (torch's own English error text) are not prose
INLINE_CODE = re.compile(r"``.*?``|`[^`]*`|:\w+:`[^`]*`|\{\w+\}`[^`]*`|\"[^\"]*\"")


# code written without backticks, as in the claims' scopes: dotted names (nn.Parameter,
# weights.add_), calls and names ending in an underscore are not prose
BARE_CODE = re.compile(r"\b\w+(?:\.\w+)+(?:\([^)]*\))?|\b\w+\([^)]*\)|\b\w+_(?!\w)")


def prose(msgid):
    return BARE_CODE.sub(" ", INLINE_CODE.sub(" ", msgid))


def test_catalogs_exist_for_every_document():
    names = {p.relative_to(LOCALE).with_suffix("").as_posix() for p in CATALOGS}
    sources = {
        p.relative_to(ROOT / "docs").with_suffix("").as_posix()
        for p in (ROOT / "docs").glob("*")
        if p.suffix in {".rst", ".md"}
    }
    sources |= set(PROJECT.recipe_docnames())
    assert sources <= names, sorted(sources - names)


def test_catalogs_are_complete_without_fuzzy_or_obsolete():
    assert catalog_problems(LOCALE) == []


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="msgfmt (Debian package gettext) not installed")
@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda p: p.relative_to(LOCALE).as_posix())
def test_msgfmt_accepts_catalog(catalog):
    result = subprocess.run(
        ["msgfmt", "--check", "--statistics", "-o", "/dev/null", str(catalog)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "untranslated" not in result.stderr and "fuzzy" not in result.stderr, result.stderr


def _gettext(folder, site):
    """The message templates of the built site, beside the other tests."""
    command = [sys.executable, "-m", "autograd_recipes.publish.build", "--gettext", "--no-color"]
    return background.Task(lambda: subprocess.run(command, cwd=site.project, capture_output=True, text=True))


JOBS.register("gettext", "site_templates", _gettext, after=["site"])


@pytest.fixture(scope="module")
def site_templates(built_site):
    assert built_site[1] == 0, built_site[2]
    return built_site[0], JOBS.value("gettext")


def test_catalogs_match_the_current_english(site_templates):
    project, result = site_templates
    assert result.returncode == 0, result.stderr
    pots = project / "build" / "gettext"
    assert catalog_problems(project / "locales/ko/LC_MESSAGES", pots) == []
    # measured figures never become messages to translate
    for pot in pots.rglob("*.pot"):
        for entry in polib.pofile(str(pot)):
            assert not re.search(r"running time|\d+\.\d+ m?s\b", entry.msgid), (pot, entry.msgid)


def test_an_untranslated_message_is_reported(tmp_path):
    project = tiny_project(tmp_path / "project")
    po_path = project / "locales/ko/LC_MESSAGES/recipes/plot_01_leaf_update.po"
    po = polib.pofile(str(po_path))
    victim = next(e for e in po if e.msgid.startswith("The fix"))
    victim.msgstr = ""
    po.save()
    line = polib.pofile(str(po_path)).find(victim.msgid).linenum  # saving re-wraps lines
    problems = catalog_problems(project / "locales/ko/LC_MESSAGES")
    assert problems == [f"{po_path}:{line}: untranslated: {victim.msgid[:70]!r}"]


def test_changed_english_is_reported_as_drift(tiny_site, tmp_path):
    project, code, output = tiny_site
    copy = tmp_path / "project"
    shutil.copytree(project, copy)
    page = copy / "docs" / "index.rst"
    page.write_text(page.read_text().replace("A tiny site:", "A small site:", 1))
    result = subprocess.run(
        [sys.executable, "-m", "autograd_recipes.publish.build", "--gettext"],
        cwd=copy,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    problems = catalog_problems(copy / "locales/ko/LC_MESSAGES", copy / "build" / "gettext")
    assert any("English changed, no Korean for: 'A small site:" in p for p in problems), problems
    assert any("Korean for English that is gone: 'A tiny site:" in p for p in problems), problems


# the page catalogs: prose, where terms and glosses follow the glossary
# pages' prose; code comments are terse notes beside code, glossed by the page's prose around them
PROSE_CATALOGS = [c for c in CATALOGS if c.stem not in {"sphinx", "glossary", "code_comments"}]


def glossary():
    with open(ROOT / "docs" / "glossary.csv", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_terms_checked_here_are_the_glossarys():
    korean_by_english = {row[0]: row[1] for row in glossary()}
    for english, korean in [
        ("in-place operation", "제자리"),
        ("gradient", "기울기"),
        ("leaf tensor", "리프"),
        ("inference", "추론"),
        ("parameter", "매개변수"),
        ("computational graph", "연산 그래프"),
        ("backward pass", "역전파"),
        ("weight", "가중치"),
        ("version counter", "버전 카운터"),
    ]:
        assert korean in korean_by_english[english]
    assert len(TERMS) == 9


@pytest.mark.parametrize("catalog", PROSE_CATALOGS, ids=lambda p: p.relative_to(LOCALE).as_posix())
def test_korean_uses_the_glossary_terms(catalog):
    wrong = []
    for entry in polib.pofile(str(catalog)):
        for english, korean in TERMS:
            if re.search(english, prose(entry.msgid), re.I) and korean not in entry.msgstr:
                wrong.append(f"{english} -> {korean}: {entry.msgstr[:80]!r}")
        if "변화도" in entry.msgstr:
            wrong.append(f"uses 변화도 (glossary: 기울기): {entry.msgstr[:80]!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("catalog", PROSE_CATALOGS, ids=lambda p: p.relative_to(LOCALE).as_posix())
def test_first_use_of_a_term_gives_the_english(catalog):
    # headings are repeated wherever the page is linked: the English goes in the body
    text = "\n".join(e.msgstr for e in polib.pofile(str(catalog)) if not is_heading(e.msgid))
    missing = []
    for english, korean in TERMS:
        first = text.find(korean)
        if first == -1:
            continue
        following = text[first : first + len(korean) + 30]
        if not re.search(r"\(\s*(" + english + r")", following, re.I):
            missing.append(f"{korean}: {following!r}")
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda p: p.relative_to(LOCALE).as_posix())
def test_korean_avoids_ruled_out_variants_and_glossed_headings(catalog):
    wrong = []
    for entry in polib.pofile(str(catalog)):
        for variant, rule in RULED_OUT:
            if variant in entry.msgstr and variant not in entry.msgid:
                wrong.append(f"{variant!r} ({rule}): {entry.msgstr[:80]!r}")
        if (
            catalog.stem not in {"sphinx", "glossary"}
            and is_heading(entry.msgid)
            and GLOSS.search(entry.msgstr)
        ):
            wrong.append(f"English in a heading: {entry.msgstr!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("catalog", PROSE_CATALOGS, ids=lambda p: p.relative_to(LOCALE).as_posix())
def test_english_glosses_a_term_once_per_page(catalog):
    glosses = [g.lower() for e in polib.pofile(str(catalog)) for g in GLOSS.findall(e.msgstr)]
    assert not [g for g in set(glosses) if glosses.count(g) > 1 and "operation" not in g], glosses


# --- what the built page shows: a gloss once per page (src/autograd_recipes/i18n/first_gloss.py) ----------


@pytest.mark.parametrize(
    "text, seen, expected",
    [
        ("역전파(backward pass)와 역전파(backward pass)", set(), "역전파(backward pass)와 역전파"),
        ("제자리(in-place) ReLU", {"in-place operation"}, "제자리 ReLU"),  # a shorter form
        ("추론 모드(inference mode)", {"inference"}, "추론 모드"),  # a longer form
        (
            "중간값(Intermediate Values)",
            {"intermediate values"},
            "중간값(Intermediate Values)",
        ),  # a quoted title
        ("텐서(requires_grad_)", {"requires"}, "텐서(requires_grad_)"),  # code, not a gloss
        ("batch (weight)", {"weight"}, "batch (weight)"),  # English before it: no gloss
    ],
)
def test_a_gloss_is_dropped_after_its_first_use(text, seen, expected):
    assert first_gloss.drop_repeats(text, set(seen)) == expected


def test_a_gloss_in_raw_html_is_dropped_outside_code_only():
    seen = {"weight"}
    markup = (
        "<p>가중치(weight)</p><code>가중치(weight)</code><pre><b>가중치(weight)</b></pre><br/>가중치(weight)"
    )
    assert first_gloss.drop_repeats_in_html(markup, seen) == (
        "<p>가중치</p><code>가중치(weight)</code><pre><b>가중치(weight)</b></pre><br/>가중치"
    )


def test_every_korean_page_glosses_a_term_once(built_site):
    """The pages that put many translated units together (recipe cards, the claims page,
    the versions matrix) show each gloss at its first use only."""
    project, code, output = built_site
    repeated = {}
    for page in sorted((project / "build/html/ko").rglob("*.html")):
        text = re.sub(
            r"<(code|pre|script|style|svg)\b.*?</\1>", " ", page.read_text(encoding="utf-8"), flags=re.S
        )
        body = re.sub(r"<[^>]+>", "", text.split("<article", 1)[-1])  # not the head's meta description
        glosses = [g.lower() for g in first_gloss.GLOSS.findall(body)]
        if twice := sorted({g for g in glosses if glosses.count(g) > 1}):
            repeated[page.name] = twice
    assert not repeated, repeated
