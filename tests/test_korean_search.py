"""The Korean search language (src/autograd_recipes/search/korean.py) and its JS twin."""

import contextlib
import io
import json
import shutil
import subprocess

import pytest
from sphinx.cmd.build import build_main
from sphinx.search import js_index

from autograd_recipes.search import korean as korean_search

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed: cannot run the JS stemmer")

# (word, expected stem), written by hand.
EXPECTED_STEMS = [
    ("텐서를", "텐서"),
    ("텐서는", "텐서"),
    ("텐서", "텐서"),
    ("텐서들을", "텐서"),
    ("변화도", "기울"),  # the site's term as stemmed: 기울기 → 기울
    ("기울기를", "기울"),
    ("그래디언트", "기울"),  # a transliteration the glossary lists
    ("인플레이스", "제자리"),
    ("에폭마다", "에포크"),  # PyTorch Korea's word
    ("에포크의", "에포크"),
    ("정확도는", "정확도"),
    ("결과", "결과"),
    ("결과가", "결과"),
    ("경로", "경로"),
    ("경로로", "경로"),
    ("정의", "정의"),
    ("정의를", "정의"),
    ("값을", "값을"),
    ("제자리에서", "제자리"),
    ("함수를", "함수"),
    ("연산이", "연산"),
    ("연산으로", "연산"),
    ("텐서입니다", "텐서"),
    ("모델처럼", "모델"),
    # verb forms of one 하다/되다 verb share a stem
    ("저장하기", "저장"),
    ("저장한", "저장"),
    ("저장됩니다", "저장"),
    ("감쇠하는", "감쇠"),
    ("바꾸지", "바꾸"),
    # the PyTorch Korea name of a glossary term is read as the site's term
    ("변화도를", "기울"),
    ("그래디언트를", "기울"),
    ("no_grad", "no_grad"),
    ("requires_grad_", "requires_grad_"),
    ("Gradients", "gradient"),
    ("tensors", "tensor"),
    ("running", "run"),
]

# Mixed words on which the Python and JS stemmers must agree.
AGREEMENT_WORDS = [w for w, _ in EXPECTED_STEMS] + [
    "텐서의",
    "텐서와",
    "결과와",
    "과정과",
    "데이터로",
    "메모리에",
    "그래프에서",
    "버전까지",
    "사용자에게",
    "입력보다",
    "출력이나",
    "복사본만",
    "모듈들",
    "경로도",
    "하나",
    "값",
    "수",
    "뷰",
    "뷰를",
    "인플레이스로",
    "inference_mode",
    "no_grad",
    "autograd",
    "Backward",
    "parameters",
    "computing",
    "detached",
    "in-place",
    "zero_",
    "CUDA",
    "x2",
    "relu",
    "ReLU",
    "optimizer.step",
]

SENTENCES = [
    "텐서를 제자리에서 바꾸는 연산은 변화도를 망칠 수 있다.",
    "`torch.no_grad()`는 추적을 끈다; requires_grad_를 쓰세요. inference_mode(3차원)",
]


def run_node(script, tmp_path, stdin):
    path = tmp_path / "run.js"
    path.write_text(script, encoding="utf-8")
    result = subprocess.run(
        [NODE, str(path)],
        input=json.dumps(stdin),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(result.stdout)


def python_stem(word):
    # As Sphinx's IndexBuilder does: stem, then lowercase.
    return korean_search.SearchKorean({}).stem(word).lower()


@pytest.mark.parametrize(("word", "stem"), EXPECTED_STEMS)
def test_python_stemmer(word, stem):
    assert python_stem(word) == stem


def test_particles_longest_first():
    lengths = [len(p) for p in korean_search.PARTICLES]
    assert lengths == sorted(lengths, reverse=True)


def test_synonyms_come_from_the_glossarys_third_column(tmp_path):
    # the real glossary: PyTorch Korea's words and the transliterations it lists
    assert korean_search.synonyms() == {
        "변화도": "기울",
        "그래디언트": "기울",
        "인플레이스": "제자리",
        "에폭": "에포크",
    }
    glossary = tmp_path / "glossary.csv"
    glossary.write_text(
        '"gradient","기울기","변화도를","x"\n"tensor","텐서","Tensor","x"\n'
        '"layer","계층","계층","x"\n"leaf tensor","리프 텐서","—","x"\n"view","뷰","뷰 (view)","x"\n',
        encoding="utf-8",
    )
    # stemmed on both sides; Latin, dashes, same words and glosses in parentheses are left out
    assert korean_search.synonyms(glossary) == {"변화도": "기울"}


@pytest.mark.parametrize(
    ("word", "stem"),
    [("뷰를", "뷰"), ("뷰는", "뷰"), ("뷰의", "뷰"), ("뷰입니다", "뷰"), ("값을", "값"), ("뷰", None)]
    + [("경로", "경"), ("텐서를", None), ("뷰어", None), ("no_grad", None)],
)
def test_one_syllable_stem(word, stem):
    assert korean_search.one_syllable_stem(word) == stem


def test_split_adds_the_one_syllable_stem_beside_the_word():
    lang = korean_search.SearchKorean({})
    assert words(lang, "뷰를 만든 뷰") == ["뷰를", "만든", "뷰", "뷰"]
    # the word itself is still indexed as it was (a query 뷰를 finds it), and its stem is itself
    assert [lang.stem(w) for w in words(lang, "뷰를 만든")] == ["뷰를", "만든", "뷰"]


def words(lang, text):
    return [w for w in lang.split(text) if not w.startswith(korean_search.BIGRAM)]


def test_split_separates_hangul_from_identifiers():
    lang = korean_search.SearchKorean({})
    assert words(lang, "no_grad를") == ["no_grad", "를"]
    assert words(lang, "`torch.no_grad()`는") == ["torch", "no_grad", "는"]
    assert lang.split("requires_grad_, inference_mode") == ["requires_grad_", "inference_mode"]
    # A lone particle left by the split is not indexed.
    assert not lang.word_filter(lang.stem("를"))


def test_split_adds_the_bigrams_of_each_hangul_word_not_across_its_spaces():
    lang = korean_search.SearchKorean({})
    grams = [w for w in lang.split("연산 그래프(graph)에 저장") if w.startswith("~")]
    assert grams == ["~연산", "~그래", "~래프", "~저장"]
    assert [lang.stem(g) for g in grams] == grams  # bigrams are not stemmed


@needs_node
def test_js_stemmer_and_splitter_agree_with_python(tmp_path):
    assert len(AGREEMENT_WORDS) >= 40
    lang = korean_search.SearchKorean({})
    script = (
        lang.js_stemmer_code
        + lang.js_splitter_code
        + """
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const stemmer = new Stemmer();
console.log(JSON.stringify({
  // As searchtools.js does: lowercase, then stem.
  stems: input.words.map((w) => stemmer.stemWord(w.toLowerCase())),
  splits: input.sentences.map(splitQuery),
}));
"""
    )
    out = run_node(script, tmp_path, {"words": AGREEMENT_WORDS, "sentences": SENTENCES})
    assert dict(zip(AGREEMENT_WORDS, out["stems"])) == {w: python_stem(w) for w in AGREEMENT_WORDS}
    assert out["splits"] == [words(lang, s) for s in SENTENCES]  # queries get no bigrams from the splitter


# Titles avoid the searched words: the index page's toctree repeats them.
PAGES = {
    "index": "색인\n====\n\n.. toctree::\n\n   inplace\n   install\n   counter\n   versions\n   guide\n   checks\n",
    "inplace": (
        "주의\n====\n\n텐서를 제자리에서 바꾸는 연산은 변화도를 망칠 수 있다. no_grad는 추적을 끈다.\n"
    ),
    "install": "안내\n====\n\n이 문서는 패키지 설치 방법을 설명한다.\n",
    # a query of 2-syllable words: 버전 카운터 is on one page, 버전 alone (in the title,
    # which Sphinx scores above the text) on the other
    "counter": "계수\n====\n\n버전 카운터는 뷰를 만들면 늘어난다.\n",
    "versions": "버전 목록\n=========\n\n모든 torch 버전: 버전마다 다르다.\n",
    # 검증 in a section title of one page and in the other's own title: Sphinx scores both
    # 15 and orders them by title (가이드 first); the page named for it should come first
    "guide": "가이드\n======\n\n검증 절차\n----------\n\n절차를 따른다.\n",
    "checks": "검증 안내\n==========\n\n검증은 빠르다.\n",
}


@pytest.fixture(scope="module")
def korean_site(tmp_path_factory):
    src = tmp_path_factory.mktemp("korean_site")
    (src / "conf.py").write_text(
        'extensions = ["autograd_recipes.search.korean"]\nlanguage = "ko"\nproject = "검색 시험"\n',
        encoding="utf-8",
    )
    for name, text in PAGES.items():
        (src / f"{name}.rst").write_text(text, encoding="utf-8")
    out = src / "build"
    log = io.StringIO()
    with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        code = build_main(["-W", "-b", "html", str(src), str(out)])
    return out, code, log.getvalue()


def test_korean_site_index(korean_site):
    out, code, log = korean_site
    assert code == 0, log
    # The label is not translated: "Korean (code: ko)에서 검색 인덱스 덤프 중".
    assert "Korean (code: ko)" in log
    assert "English (code: en)" not in log
    assert "dumping search index in English" not in log

    index = js_index.loads((out / "searchindex.js").read_text(encoding="utf-8"))
    docnames = index["docnames"]

    def docs(term):
        found = set()
        for mapping in (index["terms"], index["titleterms"]):
            files = mapping.get(term, [])
            found |= {docnames[f] for f in ([files] if isinstance(files, int) else files)}
        return found

    for term in ("텐서", "제자리", "기울", "no_grad"):
        assert docs(term) == {"inplace"}, term
    for term in ("텐서를", "변화도를", "no_grad는", "는"):
        assert term not in index["terms"]
    assert docs("설치") == {"install"}
    assert docs("뷰") == {"counter"}  # from 뷰를: a one-syllable word is a term
    assert docs("카운터") == {"counter"}
    assert {"counter", "versions"} <= docs("버전")


@needs_node
def test_built_site_queries_find_the_page(korean_site, tmp_path):
    """Queries go through the built language_data.js as searchtools.js would."""
    out, code, log = korean_site
    assert code == 0, log
    language_data = (out / "_static" / "language_data.js").read_text(encoding="utf-8")
    script = (
        "globalThis.window = globalThis;\n"
        + language_data
        + """
const queries = JSON.parse(require("fs").readFileSync(0, "utf8"));
const stemmer = new Stemmer();
console.log(JSON.stringify(queries.map((q) =>
  splitQuery(q.trim())
    .map((t) => t.toLowerCase())
    .filter((t) => !stopwords.has(t))
    .map((t) => stemmer.stemWord(t)))));
"""
    )
    queries = ["텐서", "텐서는", "제자리에서", "변화도", "no_grad를", "`no_grad()`는", "변화도 연산"]
    terms = run_node(script, tmp_path, queries)
    index = js_index.loads((out / "searchindex.js").read_text(encoding="utf-8"))
    inplace = index["docnames"].index("inplace")
    for query, query_terms in zip(queries, terms):
        assert query_terms, query
        for term in query_terms:
            files = index["terms"].get(term)
            assert files is not None, (query, term)
            assert inplace in ([files] if isinstance(files, int) else files), (query, term)


def search_page_results(out, tmp_path, queries):
    """{query: docnames of its results} from Sphinx's own searchtools.js (its search, not its
    page) and the built language_data.js, in searchtools.js's order (the first shown last)."""
    static = out / "_static"
    script = (
        "globalThis.window = globalThis;\n"
        "globalThis.document = { getElementById: () => null };\n"
        "globalThis._ready = () => {};\n"
        "globalThis.SPHINX_HIGHLIGHT_ENABLED = false;\n"
        + (static / "searchtools.js").read_text(encoding="utf-8")
        + (static / "language_data.js").read_text(encoding="utf-8")
        + (out / "searchindex.js").read_text(encoding="utf-8")
        + """
const queries = JSON.parse(require("fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(queries.map((q) => Search._performSearch(...Search._parseQuery(q)).map((r) => r[0]))));
"""
    )
    return dict(zip(queries, run_node(script, tmp_path, queries)))


@needs_node
def test_search_page_ranks_pages_with_every_word_first(korean_site, tmp_path):
    """Sphinx's own searchtools.js (its search, not its page) and the built language_data.js:
    a page lacking a 2-syllable query word comes after every page that has all of them."""
    out, code, log = korean_site
    assert code == 0, log
    queries = [
        "버전 카운터",
        "카운터 버전",
        "버전",
        "뷰",
        "버전 뷰를",
        "버전카운터",
        "버전카운터는",
        "카운터버전",
    ]
    found = search_page_results(out, tmp_path, queries)
    # results come last first: searchtools.js shows them from the end of the list
    assert found["버전 카운터"][-1] == "counter", found
    assert found["카운터 버전"][-1] == "counter", found
    assert found["버전"][-1] == "versions"  # without the other word, the title ranks first
    assert found["뷰"] == ["counter"]
    assert found["버전 뷰를"][-1] == "counter"
    # typed without the page's space: 전카 is on no page, 카운터버전's 터버 neither
    assert found["버전카운터"] == found["버전카운터는"] == ["counter"]
    assert found["카운터버전"] == ["counter"]


@needs_node
def test_search_page_ranks_a_page_named_for_the_word_above_one_with_it_in_a_section_title(
    korean_site, tmp_path
):
    """Pages Sphinx scores the same (the word in some title of each) are ordered by where
    the word is: the page's own title first, then a section title."""
    out, code, log = korean_site
    assert code == 0, log
    found = search_page_results(out, tmp_path, ["검증", "검증을"])
    assert found["검증"][-2:] == ["guide", "checks"], found  # shown last first
    assert found["검증을"][-2:] == ["guide", "checks"], found
