"""The no_grad guide: its key behaviours, its saved-bytes counter, memory meter, timing rule, and its page."""

import re

import pytest
import torch
from conftest import RECIPES, ROOT

from autograd_recipes.project import PROJECT

GUIDE = ROOT / "docs" / "no_grad_guide.md"


def guide_cell(tag):
    """The source of the guide's code cell carrying ``tag`` (one source: the page's own code)."""
    cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)```", GUIDE.read_text(), re.S)
    for cell in cells:
        if re.search(rf"^:tags: \[.*\b{tag}\b.*\]$", cell, re.M):
            return "\n".join(line for line in cell.splitlines() if not line.startswith(":"))
    raise LookupError(f"no cell tagged {tag} in {GUIDE.name}")


@pytest.fixture(scope="module")
def meter():
    namespace = {}
    exec(guide_cell("memory-meter"), namespace)
    return namespace["allocated"]


@pytest.fixture(scope="module")
def rule():
    namespace = {}
    exec(guide_cell("timing-rule"), namespace)
    return namespace


def test_memory_meter_sees_an_allocation_and_none_for_in_place(meter):
    x, y = torch.ones(128, 128), torch.ones(128, 128)
    assert meter(lambda: x + y) == (128 * 128 * 4, 128 * 128 * 4)  # peak, and held: the result
    assert meter(lambda: x.add_(y)) == (0, 0)


def test_memory_meter_sees_what_tracking_keeps(meter):
    layer = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Tanh())
    x = torch.randn(32, 64)
    tracked = meter(lambda: layer(x))
    with torch.no_grad():
        untracked = meter(lambda: layer(x))
    # tanh's input is freed without tracking; with it, the output is saved (and held) anyway
    assert untracked[1] == 32 * 64 * 4 and tracked[1] >= untracked[1]


def test_decision_rule_on_its_boundaries(rule):
    decide = rule["decide"]
    assert decide(1.11, 1.5) == "faster"
    assert decide(0.5, 0.9) == "slower"
    assert decide(0.95, 1.05) == "no difference"
    assert decide(1.05, 1.2) == "inconclusive" and decide(0.8, 1.0) == "inconclusive"


def test_speedup_interval_on_known_samples(rule):
    base = [2.0 + 0.01 * (i % 5) for i in range(30)]
    other = [1.0 + 0.005 * (i % 5) for i in range(30)]
    ratio, low, high = rule["speedup"](base, other)
    assert 1.95 < low <= ratio <= high < 2.05
    assert rule["decide"](low, high) == "faster"


def test_timing_rule_does_not_call_a_mode_faster_than_itself(rule):
    """The control of the timing rule: the same work under two names is never 'faster'."""
    import contextlib

    layer = torch.nn.Linear(16, 16)
    x = torch.randn(1, 16)
    samples = rule["time_modes"](
        lambda: layer(x), {"a": contextlib.nullcontext, "b": contextlib.nullcontext}, rounds=20, block=0.005
    )
    ratio, low, high = rule["speedup"](samples["a"], samples["b"])
    assert rule["decide"](low, high) in {"no difference", "inconclusive"}, (ratio, low, high)
    assert torch.get_num_threads() >= 1  # the thread count was restored


@pytest.fixture(scope="module")
def saved_bytes():
    namespace = {}
    exec(guide_cell("saved-bytes-counter"), namespace)
    return namespace["saved_bytes"]


def test_saved_bytes_of_one_linear_layer_is_its_input(saved_bytes):
    # Linear(4, 3) on a (2, 4) float32 input that does not require grad:
    # addmm saves only the input (to compute the weight's gradient): 2 * 4 * 4 bytes.
    layer = torch.nn.Linear(4, 3)
    assert saved_bytes(layer, torch.randn(2, 4)) == 32


def test_saved_bytes_counts_the_weight_when_the_input_requires_grad(saved_bytes):
    layer = torch.nn.Linear(4, 3)
    # now the weight (3 * 4 * 4 bytes) is saved too, for the input's gradient
    assert saved_bytes(layer, torch.randn(2, 4, requires_grad=True)) == 32 + 48


def test_saved_bytes_counts_each_storage_once(saved_bytes):
    x = torch.randn(10, requires_grad=True)
    # x is saved by both multiplications; it holds 40 bytes once
    assert saved_bytes(lambda t: (t * t) * t, x) == 40 + 40  # x, and the product t*t


def test_nothing_is_saved_without_tracking(saved_bytes):
    layer = torch.nn.Linear(4, 3)
    for mode in (torch.no_grad, torch.inference_mode):
        with mode():
            assert saved_bytes(layer, torch.randn(2, 4)) == 0


def test_guide_page_has_outputs_benchmark_table_plot_and_memory(built_site):
    project, code, output = built_site
    assert code == 0, output
    page = (project / "build/html/en/no_grad_guide.html").read_text(encoding="utf-8")
    assert "<math" in page and not re.search(r"<script[^>]*mathjax", page, re.I)
    table = re.search(r"<table class='benchmark'>.*?grad / no_grad \[95% CI\].*?</table>", page, re.S)
    assert (
        table and len(re.findall(r"<tr", table.group(0))) == 6
    )  # header + small MLP + 3 batch sizes + control
    # every label in both languages, from the one run; site.css shows the page's
    row = "<span lang='en'>small MLP, batch 1</span><span lang='ko'>작은 MLP, 배치 1</span>"
    assert row in table.group(0)
    assert "기울기 추적 모드 / no_grad [95% 신뢰 구간]" in table.group(0)
    decisions = re.findall(
        r"\] <span lang='en'>(faster|slower|no difference|inconclusive)</span><span lang='ko'>",
        table.group(0),
    )
    assert len(decisions) == 10
    # the method's control, twice the work with tracking off, must read slower in both columns
    control = re.search(r"<tr><th scope='row'><span lang='en'>control: .*?</tr>", table.group(0), re.S)
    assert control and control.group(0).count("<span lang='en'>slower</span>") == 2, control
    assert "1 intra-op thread" in page
    memory = re.search(r"<table class='benchmark memory'>.*?</table>", page, re.S)
    assert memory and len(re.findall(r"<tr", memory.group(0))) == 10  # header + 3 batches x 3 modes
    memory_table = memory.group(0)
    assert "peak, one pass, bytes" in memory_table and "순전파 1회의 최대 메모리(바이트)" in memory_table
    assert re.search(r"<p lang='en'>At batch 32, the peak of one pass was", page)
    assert re.search(r"<p lang='ko'>배치 32에서 한 번의 순전파 중 최대 메모리는", page)
    assert re.search(
        r"<p lang='en'>For the small MLP \(batch 1\), no_grad was (faster|slower|not measurably|inconclusive)",
        page,
    )
    # the chart: inline SVG per language, no image file
    for lang, title in (("en", "speed-up over grad mode"), ("ko", "기울기 추적 모드 대비 속도 향상")):
        assert re.search(rf"<div lang='{lang}'><svg [^>]*role='img'[^>]*>.*?{title}", page, re.S)
    # the only images are the mini-galleries' recipe thumbnails (graph pictures of their own)
    images = re.findall(r'<img [^>]*src="([^"]+)"', page.split("<article", 1)[1])
    assert all(re.fullmatch(r"_images/sphx_glr_plot_\w+_thumb\.svg", src) for src in images), images
    assert not list((project / "build/html/jupyter_execute").rglob("*.png"))
    assert re.search(r"batch 32: grad [\d,]+ bytes, no_grad 0 bytes, inference_mode 0 bytes", page)
    assert "torch 2.13.0" in page and "CPU threads:" in page
    assert "no_grad_guide.ipynb" in page  # download


def test_generated_sentences_show_in_the_page_language_only(built_site):
    project, code, output = built_site
    css = (project / "build/html/en/_static/site.css").read_text(encoding="utf-8")
    assert (
        'html:not([lang="ko"]) .generated [lang="ko"], html[lang="ko"] .generated [lang="en"] { display: none; }'
        in css
    )
    assert re.search(
        r'<html [^>]*lang="ko"', (project / "build/html/ko/no_grad_guide.html").read_text(encoding="utf-8")
    )


def test_build_report_lists_every_executed_page(built_site):
    project, code, output = built_site
    page = (project / "build/html/en/build_report.html").read_text(encoding="utf-8")
    rows = re.findall(r"<tr class=\"row-(?:odd|even)\">(.*?)</tr>", page, re.S)
    names = [re.search(r'href="([^"#]+)\.html', r).group(1) for r in rows if "href=" in r]
    recipes = [PROJECT.recipe_docname(p) for p in RECIPES]
    assert sorted(names) == sorted(["inplace_overview", "no_grad_guide", *recipes])
    guide_row = next(r for r in rows if "no_grad_guide" in r)
    seconds = re.search(r'class="measured">([\d.]+) (m?s)<', guide_row)
    assert seconds, guide_row
    assert float(seconds.group(1)) > 0, (
        guide_row
    )  # its budget is checked by `nox -s bench`, on a quiet machine
    assert "2.13.0" in guide_row and ">ok<" in guide_row.replace("<p>", "").replace("</p>", "")


@pytest.fixture(scope="module")
def words(rule):
    """The generator of the timing sentences (the page's cell tagged timing-words)."""
    namespace = dict(rule, case_ko=lambda case: case.replace("convnet", "합성곱 신경망"))
    exec(guide_cell("timing-words"), namespace)
    return namespace


@pytest.mark.parametrize(
    "interval, english",
    [
        ((1.03, 1.03), "faster, by less than 10%"),  # a tight interval just above 1: measurable, small
        ((1.01, 1.02), "faster, by less than 10%"),
        ((0.95, 0.97), "slower, by less than 10%"),
        ((0.97, 1.06), "not measurably different from grad mode"),  # 1 inside: no measurable difference
        ((1.0, 1.0), "not measurably different from grad mode"),  # equal figures
        ((1.2, 1.3), "faster than grad mode by more than 10%"),
        ((0.5, 0.55), "slower than grad mode by more than 10%"),
        ((1.10, 1.30), "faster, by 10% to 30%: whether by more than 10% is undecided"),  # the boundary itself
        ((1.08, 1.14), "faster, by 8% to 14%: whether by more than 10% is undecided"),  # leaves out 1
        ((0.85, 0.95), "slower, by 5% to 15%: whether by more than 10% is undecided"),
        ((0.95, 1.2), "inconclusive against grad mode on this build"),  # 1 inside, and past the band
    ],
)
def test_timing_words_follow_from_the_interval(words, interval, english):
    assert words["words"](*interval)[0] == english


def test_timing_words_group_cases_by_model(words):
    names = ["convnet, batch 1", "convnet, batch 8", "small MLP, batch 1"]
    assert words["grouped"](names) == "convnet (batch 1, 8) and the small MLP (batch 1)"
    assert words["grouped"](names[:2], korean=True) == "합성곱 신경망(배치 1·8)"


@pytest.mark.parametrize(
    "case, english, korean",
    [
        ("small MLP, batch 1", "small MLP (batch 1)", "small MLP(배치 1)"),
        (
            "control: convnet, batch 8, run twice",
            "control (convnet, batch 8, run twice)",
            "대조군(합성곱 신경망, batch 8, run twice)",
        ),
    ],
)
def test_timing_sentences_name_a_case_as_a_phrase(words, case, english, korean):
    """A sentence opens with the case as a phrase, never "case: ..." chained to its verdict."""
    assert words["named"](case) == english
    assert words["named"](case, korean=True) == korean
