"""A Korean search language for Sphinx's HTML search (``language = "ko"``).

Sphinx ships none, so a Korean build would fall back to English and index words
with their particles attached (텐서는, 텐서를): searching 텐서 would find neither.
conf.py loads this extension; Sphinx calls ``split``/``stem`` while it indexes,
and the browser runs the same rules from korean_stemmer.js (put into
language_data.js here) on what a reader types.

Stemming rule, shared by the index (Python) and the query (korean_stemmer.js):

* A Hangul token loses the longest particle in ``PARTICLES`` it ends with, then
  the longest verb ending in ``ENDINGS`` (저장하기, 저장한, 저장됩니다 → 저장),
  each only if at least 2 syllables remain. So 텐서를 → 텐서, while 경로, 결과,
  정의 keep their last syllable.
* A Hangul token that is another name for one of the site's terms (the third
  column of docs/glossary.csv: PyTorch Korea's word, e.g. 변화도 or 에폭, or a
  transliteration other Korean texts use, e.g. 그래디언트 or 인플레이스) is read as
  the site's term (the first word of the second column, stemmed: 기울기 → 기울),
  on both sides.
* Any other token is English: lowercased and stemmed like Sphinx's ``en``.

Compounds typed without the page's space (연산그래프) and forms the rules miss:
each Hangul word is also indexed as overlapping syllable pairs (bigrams, stored
with a ``~`` prefix so they never mix with words), as written. A query word that
is not an indexed word is looked up by its bigrams: a page holds it when the
bigrams it holds cover every syllable, each next pair starting one or two
syllables on (so 산그 in 연산그래프, where the reader left out a space, need not be
on the page); such matches rank below word matches. Pairs across the spaces
between words are not indexed: they would double the Korean index, which the
search page loads whole.
The stemmer is a heuristic: it may over-strip a 3+ syllable noun (어레이 → 어레),
but as queries are stemmed the same way, that word is still found.

One-syllable nouns (뷰): stripping never leaves one syllable (경로, 결과 would
lose theirs), and Sphinx's searchtools.js matches only words of 3+ characters
partially, so a query 뷰 would miss 뷰를, 뷰는. The index therefore also holds,
beside the word, the syllable before a particle that makes up the rest of a
two-or-more-syllable word (뷰를 → 뷰를 and 뷰; 경로 → 경로 and 경, harmless); a
one-syllable query word is itself, so it finds them.

Queries of several words: searchtools.js lets a page miss any query word shorter
than 3 characters (meant for English "a", "of"), which for Korean's 2-syllable
words (버전 카운터) turned the query into an OR. korean_stemmer.js ranks the pages
holding every Hangul query word (and every other word Sphinx requires) first.
Pages Sphinx scores the same (it takes a page's best word alone, and orders ties by
title) are ordered by where the query words are: in the page's own title, then in one
of its section titles (koreanTitlesFirst, from the index's titles and alltitles).

The "no results" text of the search page: Sphinx's searchtools.js shows
``Documentation.gettext("Your search did not match any documents…")`` from
_static/translations.js, a copy of Sphinx's own Korean catalog, which speaks of
categories the page does not have. ``_no_results`` puts the project's Korean
from locales/ko/LC_MESSAGES/sphinx.po into that copy after the build.
"""

import csv
import functools
import json
import re
from pathlib import Path

from sphinx import package_dir
from sphinx.locale import _
from sphinx.search import SearchLanguage
from sphinx.search.en import SearchEnglish

from autograd_recipes.project import PROJECT

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
# Endings of 하다/되다/시키다 verbs and a few common endings of other verbs.
_VERB = "기 는 지 고 면 며 여 서 야 도 려면 려고 면서 는데 던 ㄴ다 니다 습니다 었습니다 였습니다 세요 십시오 므로".split()
ENDINGS = sorted(
    {
        *(f"하{e}" for e in _VERB),
        *(f"되{e}" for e in _VERB),
        *(f"시키{e}" for e in _VERB),
        *"한 할 함 해 했 합니다 했다 했습니다 한다 해서 해야 해도 했으므로 된 될 됨 돼 됐 됩니다 된다 되어 되었 되었습니다 "
        "시킨 시킬 시킵니다 하 되 시키".split(),
        *"기 지 므로 으므로 는데 습니다 니다 세요 십시오 려면 면서".split(),
    }
    - {"하ㄴ다", "되ㄴ다", "시키ㄴ다"},
    key=lambda p: (-len(p), p),
)
MIN_STEM = 2  # syllables that must remain after stripping
BIGRAM = "~"  # prefix of bigram terms: a query splitter never yields it


@functools.cache
def synonyms(path=None):
    """{other Korean name, as stemmed: the site's term}, from the glossary's third column
    (PyTorch Korea's word, or a transliteration in the rows that say so)."""
    path = path or PROJECT.docs / "glossary.csv"
    with open(path, encoding="utf-8") as f:
        rows = list(csv.reader(f))
    out = {}
    for row in rows:
        ours, theirs = row[1].split()[0], row[2].split(" (")[0]
        if re.fullmatch(f"[{chr(0xAC00)}-{chr(0xD7A3)}]+", theirs) and theirs != ours:
            # both as the stemmer leaves them: 변화도 → 기울 (기울기 loses its 기 as 저장하기 does)
            out[_strip(_strip(theirs, PARTICLES), ENDINGS)] = _strip(_strip(ours, PARTICLES), ENDINGS)
    return out


_HANGUL = "\uac00-\ud7a3"  # precomposed syllables
_HANGUL_WORD = re.compile(f"^[{_HANGUL}]+$")
# Hangul runs, or runs of other word characters (so no_grad를 → no_grad, 를).
_WORD = re.compile(f"[{_HANGUL}]+|[^\\W{_HANGUL}]+")
_HANGUL_RUN = re.compile(f"[{_HANGUL}]+")

# The same splitter for queries typed in the browser (overrides searchtools.js's).
_JS_SPLITTER = rf"""
var splitQuery = (query) =>
  query.match(/[{_HANGUL}]+|(?:(?![{_HANGUL}])[\p{{Letter}}\p{{Number}}_])+/gu) || [];
"""


def _js_stemmer():
    """Sphinx's minified English stemmer, our word lists, then korean_stemmer.js."""
    minified = Path(package_dir, "search", "minified-js")
    data = {
        "KOREAN_PARTICLES": PARTICLES,
        "KOREAN_ENDINGS": ENDINGS,
        "KOREAN_SYNONYMS": synonyms(),
        "KOREAN_MIN_STEM": MIN_STEM,
        "KOREAN_BIGRAM": BIGRAM,
    }
    return "\n".join(
        (
            (minified / "base-stemmer.js").read_text(encoding="utf-8"),
            (minified / "english-stemmer.js").read_text(encoding="utf-8"),
            *(f"var {name} = {json.dumps(value, ensure_ascii=False)};" for name, value in data.items()),
            Path(__file__).with_name("korean_stemmer.js").read_text(encoding="utf-8"),
        )
    )


def _strip(word, suffixes):
    for suffix in suffixes:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem if len(stem) >= MIN_STEM else word
    return word


_PARTICLE_SET = frozenset(PARTICLES)


def one_syllable_stem(word):
    """The first syllable of a Hangul ``word`` whose rest is a particle (뷰를 → 뷰), else None."""
    if len(word) >= 2 and _HANGUL_WORD.match(word) and word[1:] in _PARTICLE_SET:
        return word[0]
    return None


def strip_particle(word):
    """``word`` without its longest particle, if MIN_STEM syllables remain."""
    return _strip(word, PARTICLES)


@functools.lru_cache(maxsize=65536)  # the index stems each word of every page: few distinct ones
def stem_hangul(word):
    """Particle, then verb ending, stripped; another name read as the site's term."""
    stem = _strip(strip_particle(word), ENDINGS)
    return synonyms().get(stem, stem)


def bigrams(text):
    """``~``-prefixed syllable pairs of ``text`` (at least one: a lone syllable stands alone)."""
    return [BIGRAM + text[i : i + 2] for i in range(max(1, len(text) - 1))]


class SearchKorean(SearchLanguage):
    lang = "ko"
    language_name = "Korean"
    # Lone particles (를, 는 left by the splitter) are noise, in index and query alike.
    stopwords = SearchEnglish.stopwords | set(_BASE_PARTICLES)
    js_splitter_code = _JS_SPLITTER

    def __init__(self, options):
        super().__init__(options)
        self._english = SearchEnglish(options)

    @property
    def js_stemmer_code(self):
        """No js_stemmer_rawcode: Sphinx then inlines this in language_data.js (made when a
        build asks for it: the synonyms come from the project's glossary)."""
        return _js_stemmer()

    def split(self, input):
        """Words, the one-syllable stem of each word that has one (one_syllable_stem), then
        the bigrams of each Hangul word of two or more syllables."""
        words = _WORD.findall(input)
        words += [stem for stem in map(one_syllable_stem, words) if stem]
        for word in _HANGUL_RUN.findall(input):
            if len(word) > 1:  # a lone syllable is a particle, or a word indexed as itself
                words += sorted(set(bigrams(word)))
        return words

    def stem(self, word):
        if word.startswith(BIGRAM):
            return word
        if _HANGUL_WORD.match(word):
            return stem_hangul(word)
        return self._english.stem(word)


def _no_results(app, exception):
    """The project's Korean for searchtools.js's "no results" text, into _static/translations.js."""
    if exception or app.builder.format != "html" or app.config.language != SearchKorean.lang:
        return
    path = Path(app.outdir) / "_static" / "translations.js"
    if not path.is_file():
        return
    english = (
        "Your search did not match any documents. Please make sure that all words are "
        "spelled correctly and that you've selected enough categories."
    )
    korean = str(
        _(
            "Your search did not match any documents. Please make sure that all words are spelled correctly and that you've selected enough categories."
        )
    )
    if korean == english:
        return
    text = path.read_text(encoding="utf-8")
    start, end = text.index("{"), text.rindex("}") + 1
    catalog = json.loads(text[start:end])
    catalog["messages"][english] = korean
    path.write_text(
        text[:start] + json.dumps(catalog, ensure_ascii=False, indent=4) + text[end:], encoding="utf-8"
    )


def setup(app):
    app.add_search_language(SearchKorean)
    app.connect("build-finished", _no_results)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
