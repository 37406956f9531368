"""Reader text names no project file, command or claim id: a reader sees sentences and links.

Scanned: the visible text of every built page's article in both languages, code blocks
(``pre``) aside, since those are code. Claim ids live on as anchors (``#claim-<id>``) and
in the build's messages, which are for contributors.
"""

import html
import re

import pytest
from conftest import LANGUAGES

from autograd_recipes.claims import claims_ledger

IDS = sorted((c["id"] for c in claims_ledger.load(claims_ledger.LEDGER)), key=len, reverse=True)
PROJECT_WORDS = re.compile(
    r"claims\.toml|\bnox\s+-s\b|src/autograd_recipes|\bdocs/[\w/]+\.\w+|recipes/\w+\.py|(?<![\w-])(?:"
    + "|".join(map(re.escape, IDS))
    + r")(?![\w-])"
)
ARTICLE = re.compile(r'<article[^>]*role="main"[^>]*>(.*)</article>', re.S)
NOT_TEXT = re.compile(r"<pre.*?</pre>|<script.*?</script>|<style.*?</style>", re.S)


def reader_text(page):
    found = ARTICLE.search(page.read_text(encoding="utf-8"))
    return html.unescape(re.sub(r"<[^>]+>", " ", NOT_TEXT.sub(" ", found.group(1)))) if found else ""


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_reader_text_names_a_file_a_command_or_a_claim_id(built_site, lang):
    site = built_site[0] / "build" / "html" / lang
    named = {}
    for page in sorted(site.rglob("*.html")):
        hits = PROJECT_WORDS.findall(reader_text(page))
        if hits:
            named[str(page.relative_to(site))] = sorted(set(hits))[:5]
    assert not named, f"{len(named)} pages name project files, commands or claim ids: {named}"


def test_the_scan_finds_a_claim_id_and_a_file_in_text():
    """The control: the pattern catches what it is for, and spares a torch name in prose."""
    text = f"see {IDS[0]} and docs/claims.toml; run nox -s docs; torch.no_grad() is fine"
    assert PROJECT_WORDS.findall(text) == [IDS[0], "docs/claims.toml", "nox -s"]


def test_the_404_page_speaks_every_language(built_site):
    """One page for every address that does not exist: each language's reader gets a title and
    a sentence in their language (a Korean reader got English, with only a link in Korean)."""
    page = (built_site[0] / "build" / "html" / "404.html").read_text(encoding="utf-8")
    sections = dict(re.findall(r'<section lang="(\w+)"><h1>([^<]+)</h1>', page))
    assert set(sections) == set(LANGUAGES)
    assert sections["en"] == "Page not found"
    assert all(title != "Page not found" for lang, title in sections.items() if lang != "en"), sections
