"""Every "(checked)" opens what its check tried, in the page's language, and shows no claim id."""

import html as html_text
import re

import pytest
from conftest import LANGUAGES

from autograd_recipes.claims import ambient_conditions, claims_ledger

CLAIMS = {c["id"]: c for c in claims_ledger.load()}
LINK = re.compile(r'<a class="claim-link reference internal" href="#(checked-[^"]+)"[^>]*>')
DISCLOSURE = re.compile(
    r'<details class="claim-scope"><summary>(.*?)</summary><div id="([^"]+)">(.*?)</div></details>', re.S
)


def pages(project, lang):
    return sorted((project / "build" / "html" / lang).rglob("*.html"))


@pytest.fixture(scope="module")
def disclosures(built_site):
    """{lang: [(page, link targets, {anchor: (summary, body)})]} for pages with a "(checked)"."""
    project, code, output = built_site
    assert code == 0, output[-3000:]
    found = {}
    for lang in LANGUAGES:
        found[lang] = []
        for page in pages(project, lang):
            text = page.read_text(encoding="utf-8")
            if "claim-link" in text:
                boxes = {anchor: (summary, body) for summary, anchor, body in DISCLOSURE.findall(text)}
                found[lang].append((page, LINK.findall(text), boxes, text))
    return found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_checked_link_opens_a_disclosure_of_its_claim(disclosures, lang):
    linked = 0
    for page, targets, boxes, text in disclosures[lang]:
        assert targets, f"{page.name}: a claim-link that does not point to a disclosure"
        assert text.count('class="claim-link') == len(targets), page.name
        for target in targets:
            assert target in boxes, f"{page.name}: (checked) points to #{target}, which is no disclosure"
            body = boxes[target][1]
            claim_id = re.search(r'claims\.html#claim-([a-z0-9-]+)"', body).group(1)
            assert target.removeprefix("checked-").startswith(claim_id)
            linked += 1
    assert linked >= 50, f"only {linked} (checked) links on the {lang} site"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_disclosure_says_its_claim_scope_and_other_conditions_in_the_page_language(disclosures, lang):
    for page, _targets, boxes, _text in disclosures[lang]:
        for anchor, (summary, body) in boxes.items():
            shown = html_text.unescape(re.sub(r"<[^>]+>", " ", summary + " " + body))
            claim_id = re.search(r'claims\.html#claim-([a-z0-9-]+)"', body).group(1)
            tried = len(ambient_conditions.AMBIENT)
            assert re.search(r"\d", shown) and ("not yet tried" not in shown), (
                f"{page.name}#{anchor}: {shown}"
            )
            hangul = len(re.findall(r"[가-힣]", shown))
            if lang == "ko":
                assert hangul > len(shown) / 10, f"{page.name}#{anchor} is not in Korean: {shown[:300]}"
            else:
                assert hangul == 0, f"{page.name}#{anchor}: {shown[:300]}"
            # a reader never sees the ledger's id; only the link's address carries it
            assert claim_id not in shown, f"{page.name}#{anchor} shows the claim id {claim_id}"
            assert any(str(n) in shown for n in range(tried - 3, tried + 1)), shown


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_page_shows_a_claim_id_as_a_tooltip(disclosures, lang):
    for page, _targets, _boxes, text in disclosures[lang]:
        for match in re.finditer(r'class="claim-link[^>]*>', text):
            assert "title=" not in match.group(0), f"{page.name}: {match.group(0)}"


def test_korean_attaches_the_checked_mark_to_the_word_before_it(disclosures):
    """…못합니다(검증됨). as Korean sets a bracket; English keeps its space."""
    spaced = {"ko": [], "en": []}
    for lang in spaced:
        for page, _targets, _boxes, text in disclosures[lang]:
            spaced[lang] += [page.name for _ in re.finditer(r'[가-힣a-z.,)] <a class="claim-link', text)]
    assert spaced["ko"] == [], spaced["ko"]
    assert spaced["en"], "the English pages lost the space before (checked)"
