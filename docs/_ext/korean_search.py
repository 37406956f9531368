"""A Korean search language for Sphinx's HTML search (``language = "ko"``).

Sphinx ships none, so a Korean build falls back to English and indexes words
with their particles attached (텐서는, 텐서를): searching 텐서 finds neither.

Stemming rule, shared by the index (Python) and the query (korean_stemmer.js):

* A Hangul token loses the longest particle/ending in ``PARTICLES`` it ends with,
  but only if at least 2 syllables remain; otherwise it stays whole. So 텐서를 →
  텐서 and 제자리에서 → 제자리, while 경로, 결과, 정의 keep their last syllable.
* Any other token is English: lowercased and stemmed like Sphinx's ``en``.

The stemmer is a heuristic: it may over-strip a 3+ syllable noun (어레이 → 어레),
but as queries are stemmed the same way, that word is still found.
"""

import json
import re
from pathlib import Path

from sphinx import package_dir
from sphinx.search import SearchLanguage
from sphinx.search.en import SearchEnglish

_BASE_PARTICLES = (
    "은 는 이 가 을 를 의 에 로 와 과 만 나 "
    "에서 에게 한테 으로 로서 로써 으로서 으로써 까지 부터 보다 처럼 만큼 마다 "
    "이나 이며 이고 이다 입니다 이란 이라는 이라고 라는 라고 하고 "
    "에는 에서는 으로는 로는 와는 과는 까지는 부터는 와의 과의 에서의 으로의 로의 "
    "에도 에서도 으로도 로도 만을 만은"
).split()
# 도 alone is left out on purpose: it ends many nouns (변화도, 정확도, 유사도).
# 들 marks plurals: 텐서들을 → 텐서.
PARTICLES = sorted(
    {*_BASE_PARTICLES, "들", *("들" + p for p in _BASE_PARTICLES)},
    key=lambda p: (-len(p), p),  # longest match first
)
MIN_STEM = 2  # syllables that must remain after stripping

_HANGUL = "\uac00-\ud7a3"  # precomposed syllables
_HANGUL_WORD = re.compile(f"^[{_HANGUL}]+$")
# Hangul runs, or runs of other word characters (so no_grad를 → no_grad, 를).
_WORD = re.compile(f"[{_HANGUL}]+|[^\\W{_HANGUL}]+")

# The same splitter for queries typed in the browser (overrides searchtools.js's).
_JS_SPLITTER = rf"""
var splitQuery = (query) =>
  query.match(/[{_HANGUL}]+|(?:(?![{_HANGUL}])[\p{{Letter}}\p{{Number}}_])+/gu) || [];
"""


def _js_stemmer():
    """Sphinx's minified English stemmer, the particle list, then our ``Stemmer``."""
    minified = Path(package_dir, "search", "minified-js")
    return "\n".join(
        (
            (minified / "base-stemmer.js").read_text(encoding="utf-8"),
            (minified / "english-stemmer.js").read_text(encoding="utf-8"),
            f"var KOREAN_PARTICLES = {json.dumps(PARTICLES, ensure_ascii=False)};",
            f"var KOREAN_MIN_STEM = {MIN_STEM};",
            Path(__file__).with_name("korean_stemmer.js").read_text(encoding="utf-8"),
        )
    )


def strip_particle(word):
    """``word`` without its longest particle, if MIN_STEM syllables remain."""
    for particle in PARTICLES:
        if word.endswith(particle):
            stem = word[: -len(particle)]
            return stem if len(stem) >= MIN_STEM else word
    return word


class SearchKorean(SearchLanguage):
    lang = "ko"
    language_name = "Korean"
    # Lone particles (를, 는 left by the splitter) are noise, in index and query alike.
    stopwords = SearchEnglish.stopwords | set(_BASE_PARTICLES)
    # No js_stemmer_rawcode: Sphinx then inlines js_stemmer_code in language_data.js.
    js_stemmer_code = _js_stemmer()
    js_splitter_code = _JS_SPLITTER

    def __init__(self, options):
        super().__init__(options)
        self._english = SearchEnglish(options)

    def split(self, input):
        return _WORD.findall(input)

    def stem(self, word):
        if _HANGUL_WORD.match(word):
            return strip_particle(word)
        return self._english.stem(word)


def setup(app):
    app.add_search_language(SearchKorean)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
