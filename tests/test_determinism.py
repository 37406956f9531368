"""Two cold builds give byte-identical HTML once the figures marked as measured are masked.

The two builds are of the tiny site (tests/tinysite): the plumbing that makes a build
reproducible is the same for every page."""

import re

from conftest import EPOCH_2024  # noqa: F401  (both builds take their dates from it)

MEASURED_SPAN = re.compile(r'(<span class="measured">).*?(</span>)', re.S)
MEASURED_PRE = re.compile(r'(<pre class="[^"]*\bmeasured\b[^"]*">).*?(</pre>)', re.S)
TAG = re.compile(r"<(/?)div\b")


def _mask_measured_cells(html):
    """Blank the outputs of notebook cells tagged ``measured`` (timings, plots of timings)."""
    out, pos = [], 0
    for cell in re.finditer(r'<div class="cell tag_measured[^"]*">', html):
        start = html.find('<div class="cell_output', cell.end())
        if start == -1:
            continue
        depth, end = 0, None
        for tag in TAG.finditer(html, start):
            depth += -1 if tag.group(1) else 1
            if depth == 0:
                end = html.index(">", tag.end()) + 1
                break
        out.append(html[pos:start] + "<!-- measured output -->")
        pos = end
    return "".join(out) + html[pos:]


def masked(html):
    html = MEASURED_SPAN.sub(r"\1#\2", html)
    html = MEASURED_PRE.sub(r"\1#\2", html)
    return _mask_measured_cells(html)


def html_files(project):
    root = project / "build" / "html"
    return {p.relative_to(root).as_posix(): p for p in root.rglob("*.html")}


def test_two_cold_builds_give_identical_html(tiny_site, second_tiny_build):
    """Two cold builds of two copies of the tiny site, both at EPOCH_2024."""
    builds = []
    for project, code, output in (tiny_site, second_tiny_build):
        assert code == 0, output
        builds.append(project)
    first, second = (html_files(p) for p in builds)
    assert first.keys() == second.keys()
    differing = [
        name
        for name in sorted(first)
        if masked(first[name].read_text(encoding="utf-8")) != masked(second[name].read_text(encoding="utf-8"))
    ]
    assert differing == []
    # the masking hid something real: the raw pages do differ (run times at least)
    assert any(first[n].read_bytes() != second[n].read_bytes() for n in first)
    footer = (builds[0] / "build/html/en/index.html").read_text(encoding="utf-8")
    assert "Copyright &#169; 2024" in footer, "SOURCE_DATE_EPOCH was not respected"


def test_masking_hides_only_what_is_marked():
    page = (
        '<p>a <span class="measured">1.2 s</span></p><pre class="claim-evidence output measured">ratio 1.05</pre>'
        '<div class="cell tag_measured docutils container"><div class="cell_input">code</div>'
        '<div class="cell_output docutils container"><div><pre>12 µs</pre></div></div></div><p>after</p>'
    )
    assert masked(page) == (
        '<p>a <span class="measured">#</span></p><pre class="claim-evidence output measured">#</pre>'
        '<div class="cell tag_measured docutils container"><div class="cell_input">code</div>'
        "<!-- measured output --></div><p>after</p>"
    )
