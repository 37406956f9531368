"""The errors page's groups (src/autograd_recipes/errors/error_families.py): every message in
exactly one family, situations that the runs decide, and the page a reader uses, in both
languages."""

import logging
import re

import pytest
from conftest import LANGUAGES
from docutils import nodes

from autograd_recipes.errors.error_families import assign, error_family, error_situation, situations
from autograd_recipes.search.ranked import node_of


@pytest.mark.parametrize(
    "message, node",
    [
        ("[torch.FloatTensor [3]], which is output 0 of ReluBackward0, is at version 1", "Relu"),
        ("[torch.cuda.FloatTensor [3]], which is output 0 of ReluBackward, is at version 1", "Relu"),
        ("[torch.FloatTensor [3]], which is output 0 of Relu, is at version 1", "Relu"),
        ("Output 1 of SplitWithSizesBackward0 is a view and is being modified inplace.", "SplitWithSizes"),
        ("[torch.FloatTensor [4, 8]], which is output 0 of TBackward, is at version 2", "T"),
        ("[torch.cuda.FloatTensor [1, 1024, 1, 1]] is at version 2; expected version 1", None),
    ],
)
def test_node_of_reads_a_node_name_of_any_torch_generation(message, node):
    assert node_of(message) == node


def _family(pattern, *situation_args, line=10):
    family = error_family(match=pattern)
    family.source, family.line = "docs/errors.rst", line
    for number, (docs, names) in enumerate(situation_args):
        situation = error_situation(docs=docs, nodes=[] if names is None else names, no_node=names is None)
        situation.source, situation.line = "docs/errors.rst", line + 5 + number
        situation += nodes.paragraph("", "what happened")
        family += situation
    return family


def _entry(message, *docs, kind="RuntimeError"):
    return {"kind": kind, "message": message, "places": [(d, ["s"], "t") for d in docs], "wordings": {}}


VERSION = "one of the variables needed for gradient computation has been modified by an inplace operation: "


def _where(location):
    """A warning's location as "file:line": a node before Sphinx's logging formats it, a
    string after (once a test in the process has set Sphinx's logging up)."""
    return f"{location.source}:{location.line}" if isinstance(location, nodes.Node) else location


def _warnings(caplog):
    return [
        (r.getMessage(), _where(getattr(r, "location", None)))
        for r in caplog.records
        if r.levelno >= logging.WARNING
    ]


def test_each_message_goes_to_the_one_family_that_matches_it(caplog):
    version = _family("^RuntimeError: one of the variables")
    leaf = _family("^RuntimeError: a leaf Variable", line=30)
    listed = [
        _entry(VERSION + "[torch.FloatTensor [3]] is at version 1", "recipes/plot_06"),
        _entry(
            "a leaf Variable that requires grad is being used in an in-place operation.", "recipes/plot_01"
        ),
    ]
    with caplog.at_level(logging.WARNING):
        found = assign([version, leaf], listed)
    assert found[id(version)] == [listed[0]] and found[id(leaf)] == [listed[1]]
    assert _warnings(caplog) == []


@pytest.mark.parametrize(
    "patterns, message, expected",
    [
        (["^RuntimeError: a leaf"], "nothing matches this", "no family matches this message"),
        (["^RuntimeError: one", "^RuntimeError: one of"], VERSION + "[…]", "2 families match this message"),
    ],
)
def test_a_message_in_no_family_or_in_two_is_an_error_naming_the_page_line(
    caplog, patterns, message, expected
):
    families = [_family(p, line=10 + 20 * n) for n, p in enumerate(patterns)]
    with caplog.at_level(logging.WARNING):
        assign(families, [_entry(message, "recipes/plot_01")])
    warnings = [(m, loc) for m, loc in _warnings(caplog) if expected in m]
    assert len(warnings) == 1, _warnings(caplog)
    text, location = warnings[0]
    assert message[:40] in text and location.endswith(("docs/errors.rst:10", "docs/errors.rst:30"))


def test_a_family_that_matches_no_message_is_an_error(caplog):
    stale = _family("^RuntimeError: a message torch no longer prints", line=42)
    with caplog.at_level(logging.WARNING):
        assign([stale], [])
    ((text, location),) = _warnings(caplog)
    assert "matches no message" in text and location.endswith("docs/errors.rst:42")


def test_situations_take_the_pages_whose_run_printed_their_nodes_and_the_runs_overrule_the_prose(caplog):
    family = _family(
        "^RuntimeError: one of",
        (["recipes/plot_08"], ["AsStrided", "T"]),
        (["recipes/plot_04"], ["Relu"]),
        (["recipes/plot_06"], None),
    )
    members = [
        _entry(
            VERSION + "[torch.FloatTensor [4, 8]], which is output 0 of AsStrided, is at version 2",
            "recipes/plot_08",
            "recipes/plot_10",
        ),
        _entry(
            VERSION + "[torch.FloatTensor [4]], which is output 0 of Relu, is at version 1", "recipes/plot_02"
        ),
        _entry(VERSION + "[torch.FloatTensor [3]] is at version 1", "recipes/plot_06", "claims"),
    ]
    with caplog.at_level(logging.WARNING):
        listed = situations(family, members)
    # the pages a situation names first, then those whose run printed one of its nodes
    assert [docs for _s, docs in listed] == [
        ["recipes/plot_08", "recipes/plot_10"],
        ["recipes/plot_04", "recipes/plot_02"],
        ["recipes/plot_06", "claims"],
    ]
    # plot_04 shows no message of the family: the prose named a page the runs do not back
    ((text, location),) = _warnings(caplog)
    assert "recipes/plot_04" in text and "shows no message of this family" in text
    assert location.endswith("docs/errors.rst:16")  # the situation's line


def test_a_node_a_page_shows_that_no_situation_lists_is_an_error(caplog):
    family = _family("^RuntimeError: one of", (["recipes/plot_08"], ["AsStrided"]))
    members = [
        _entry(VERSION + "[…], which is output 0 of AsStrided, is at version 2", "recipes/plot_08"),
        _entry(
            VERSION + "[…], which is output 0 of CudnnBatchNormBackward0, is at version 1", "recipes/plot_99"
        ),
    ]
    with caplog.at_level(logging.WARNING):
        situations(family, members)
    ((text, location),) = _warnings(caplog)
    assert (
        "node cudnnbatchnorm" in text
        and "recipes/plot_99" in text
        and location.endswith("docs/errors.rst:10")
    )


FAMILY_SECTION = re.compile(r'<section id="([^"]+)">\s*<h2>(.*?)</h2>(.*?)</section>', re.S)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_errors_page_is_one_group_per_family_each_with_its_message_meaning_fix_and_pages(
    built_site, lang
):
    """Built: a jump list linking every group first; each group has its message in a block
    with a copy button, its meaning and fix in this page's language, links to the pages
    that explain it (each situation folded under its nodes), and every printed message folded
    in a closed disclosure."""
    project, code, output = built_site
    assert code == 0, output
    page = (project / "build/html" / lang / "errors.html").read_text(encoding="utf-8")
    sections = FAMILY_SECTION.findall(page)
    assert len(sections) >= 10, [s[0] for s in sections]
    jump = re.search(r'<nav class="contents[^"]*error-jump[^"]*"[^>]*>(.*?)</nav>', page, re.S)
    assert jump, "no jump list"
    assert [h.lstrip("#") for h in re.findall(r'href="(#[^"]+)"', jump.group(1))] == [s[0] for s in sections]
    assert page.index("error-jump") < page.index('class="error-family"')
    for anchor, _title, body in sections:
        family = body.split('<details class="error-wordings">')[0]
        block = re.search(
            r'<div class="error-message-block highlight-text[^"]*"><div class="highlight"><pre>(.*?)</pre>',
            family,
            re.S,
        )
        assert block and re.match(r"\w+(Error|Warning): ", re.sub(r"<[^>]+>", "", block.group(1))), anchor
        prose = re.sub(r"<pre>.*?</pre>|<code.*?</code>", "", family, flags=re.S)
        if lang == "ko":
            assert re.search(r"[가-힣]{2,}", re.sub(r"<[^>]+>", "", prose)), (anchor, "no Korean")
        assert re.search(r'<a class="reference internal" href="(?!#)[^"]+"', family), (
            anchor,
            "no page linked",
        )
        assert '<details class="error-wordings"><summary>' in body and "<details open" not in body, anchor
    # each situation folded under its nodes: the page stays a few screens on a phone
    situations = re.findall(
        r'<div class="error-situation">\s*(<details[^>]*>)<summary class="error-nodes">', page
    )
    assert len(situations) == page.count('<div class="error-situation">') >= 4, situations
    assert set(situations) == {"<details>"}, situations
    first_title = re.sub(r"<[^>]+>", "", sections[0][1])
    assert "one of the variables needed" in re.sub(r"<[^>]+>", "", sections[0][2])  # the version error first
    assert first_title
