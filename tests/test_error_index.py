"""The "Errors and warnings" page (src/autograd_recipes/pages/error_index.py): every error
and warning message a page shows is on it, in both languages, linked to the sections that
show it, with the wordings the matrix recorded on other releases."""

import html as html_text
import json
import re

import pytest
from conftest import LANGUAGES

from autograd_recipes.pages.error_index import SIGHTING, entries, message_key, release_wordings

# an output block of a built page: sphinx-gallery's, or a notebook cell's
OUTPUT_BLOCK = re.compile(
    r'<div class="(?:sphx-glr-script-out[^"]*|output[^"]*)">.*?<pre>(.*?)</pre>'
    r'|<pre class="claim-evidence[^"]*">(.*?)</pre>',  # a claim's evidence (claims page)
    re.S,
)
ITEM = re.compile(r'<li><p><code class="error-message[^"]*">(.*?)</code></p>\s*<p>(.*?)</p>', re.S)


def text(fragment):
    return html_text.unescape(re.sub(r"<[^>]+>", "", fragment))


def shown_messages(root):
    """{(kind, message)} of every output line that shows an error or a warning, read from
    the built pages' HTML (not from the doctrees the page is made from)."""
    found = set()
    for page in sorted(root.rglob("*.html")):
        if page.name == "errors.html" or page.relative_to(root).as_posix().startswith("_"):
            continue
        for output, evidence in OUTPUT_BLOCK.findall(page.read_text(encoding="utf-8")):
            found |= {(m.group(1), m.group(2).strip()) for m in SIGHTING.finditer(text(output or evidence))}
    return found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_message_a_page_shows_is_listed_and_linked(built_site, lang):
    project, code, output = built_site
    assert code == 0, output
    root = project / "build/html" / lang
    shown = shown_messages(root)
    assert len(shown) >= 10, shown  # the check reads real outputs
    page = (root / "errors.html").read_text(encoding="utf-8")
    items = [(text(message), links) for message, links in ITEM.findall(page)]
    listed_keys = {message_key(*message.split(": ", 1)) for message, _ in items}

    def listed(kind, message):  # a message cut short (a claim's evidence) is in the entry it starts
        key = message_key(kind, message)
        return any(k[0] == key[0] and k[1].startswith(key[1]) for k in listed_keys)

    missing = [f"{kind}: {message}" for kind, message in sorted(shown) if not listed(kind, message)]
    assert not missing, "\n".join(missing)
    assert len(items) == len(listed_keys), "two entries for one message"
    for message, links in items:
        targets = re.findall(r'href="([^"]+)"', links)
        # a section's or a claim's anchor; the versions page (other releases' messages) as a whole
        assert targets and all("#" in t or t == "versions.html" for t in targets), (message, links)
        for target in targets:
            path, _, anchor = target.partition("#")
            page = (root / path).read_text(encoding="utf-8")
            assert f'id="{anchor}"' in page if anchor else message.split(": ", 1)[1][:40] in text(page), (
                target
            )


def test_a_message_worded_differently_on_older_releases_lists_each_wording(built_site):
    """Unbind's view error names its node ``UnbindBackward0`` before 2.13 and ``Unbind``
    from 2.13 on (docs/matrix/): the entry lists both, each with its releases."""
    project = built_site[0]
    page = text((project / "build/html/en/errors.html").read_text(encoding="utf-8"))
    start = page.index("RuntimeError: Output 0 of Unbind is a view")
    entry = page[start : page.index("Setting requires_grad=True", start)]  # to the next entry
    assert "2.12.1: RuntimeError: Output 0 of UnbindBackward0 is a view" in entry, entry
    assert "2.13.0, 2.14.1, 2.15.0: RuntimeError: Output 0 of Unbind is a view" in entry, entry


@pytest.mark.parametrize(
    "one, other, same",
    [
        # the node's name before and from 2.13, and another shape and version: one message
        (
            "one of the variables needed for gradient computation has been modified by an inplace "
            "operation: [torch.FloatTensor [2, 4]], which is output 0 of ReluBackward0, is at version 1",
            "one of the variables needed for gradient computation has been modified by an inplace "
            "operation: [torch.FloatTensor [3]], which is output 0 of Relu, is at version 2",
            True,
        ),
        ("Output 0 of UnbindBackward0 is a view", "Output 1 of Unbind is a view", True),
        # another node is another message; so is another error
        ("Output 0 of Unbind is a view", "Output 0 of Split is a view", False),
        (
            "a leaf Variable that requires grad is being used in an in-place operation.",
            "a view of a leaf Variable that requires grad is being used in an in-place operation.",
            False,
        ),
    ],
)
def test_message_key_makes_alike_what_changes_between_runs_and_releases(one, other, same):
    assert (message_key("RuntimeError", one) == message_key("RuntimeError", other)) is same


def test_entries_group_sightings_and_keep_only_differing_wordings():
    """A wording belongs to the entry of the message its expected error gives on the pinned
    release, even where its hint differs (2.0.1's); another shape is not another wording."""
    found = [
        ("RuntimeError", "Output 0 of Unbind is a view", "a", ["s1"], "S1"),
        ("RuntimeError", "Output 0 of Unbind is a view", "a", ["s1"], "S1"),  # the same place twice
        ("RuntimeError", "Output 1 of Unbind is a view", "b", ["s2"], "S2"),
        ("RuntimeError", "a leaf Variable", "c", ["s3"], "S3"),
    ]

    def record(release, unbind, leaf, status="ok"):
        errors = [
            {"ordinal": 0, "type": "RuntimeError", "message": unbind},
            {"ordinal": 1, "type": "RuntimeError", "message": leaf},
        ]
        return {"release": release, "status": status, "recipes": {"r": {"expected_errors": errors}}}

    records = [
        record("2.0.1", "Output 0 of UnbindBackward0 is a view. Hint: old", "a leaf Variable"),
        record("2.12.1", "Output 0 of UnbindBackward0 is a view", "a leaf Variable"),
        record("2.13.0", "Output 0 of Unbind is a view", "a leaf Variable"),
        record("2.14.1", "Output 2 of Unbind is a view", "a leaf Variable"),  # another number only
        record("2.9.1", "Output 0 of Nothing", "x", status="not run"),
    ]
    listed = entries(found, release_wordings(json.loads(json.dumps(records)), "2.13.0"))
    assert [e["message"] for e in listed] == ["Output 0 of Unbind is a view", "a leaf Variable"]
    assert [p[0] for p in listed[0]["places"]] == ["a", "b"]
    assert listed[0]["wordings"] == {
        "Output 0 of UnbindBackward0 is a view. Hint: old": ["2.0.1"],
        "Output 0 of UnbindBackward0 is a view": ["2.12.1"],
        "Output 0 of Unbind is a view": ["2.13.0", "2.14.1"],
    }
    assert listed[1]["wordings"] == {}  # one wording on every release: nothing to list
    assert release_wordings(records, "2.99.0") == {}  # no record of the pinned release: none


def test_a_message_only_other_releases_gave_is_placed_on_the_versions_page():
    """A claim's evidence on an older release shows a message no page of this build shows:
    it gets an entry placed on the versions page, with its releases; a message the evidence
    cut short joins the entry of the whole message it starts."""
    from autograd_recipes.pages.error_index import claim_wordings

    found = [
        ("RuntimeError", "Output 0 of Unbind is a view and is being modified inplace", "claims", ["c"], "C")
    ]
    records = [
        {
            "release": "2.0.1",
            "status": "ok",
            "claims": {
                "x": {
                    "evidence": "old: AttributeError: module 'torch' "
                    "has no attribute 'accelerator' | unbind: RuntimeError: Output 0 of UnbindBackward0 is a view and is"
                }
            },
        },
        {
            "release": "2.13.0",
            "status": "ok",
            "claims": {
                "x": {
                    "evidence": "unbind: RuntimeError: Output 0 of "
                    "Unbind is a view and is being modified inplace"
                }
            },
        },
    ]
    listed = entries(found, claim_wordings(records), ("versions", ""))
    by_message = {e["message"]: e for e in listed}
    old = by_message["module 'torch' has no attribute 'accelerator'"]
    assert old["places"] == [("versions", [], "")] and old["wordings"] == {
        "module 'torch' has no attribute 'accelerator'": ["2.0.1"]
    }
    unbind = by_message["Output 0 of Unbind is a view and is being modified inplace"]
    assert unbind["wordings"] == {
        "Output 0 of UnbindBackward0 is a view and is": ["2.0.1"],
        "Output 0 of Unbind is a view and is being modified inplace": ["2.13.0"],
    }
    assert len(listed) == 2


def test_a_message_cut_short_joins_the_one_whole_message_it_starts():
    whole = "Output 0 of Unbind is a view and is being modified inplace. This view is the output"
    one, other = (
        "modified by an inplace operation: output 0 of Add",
        "modified by an inplace operation: output 0 of Exp",
    )
    found = [
        ("RuntimeError", whole, "overview", ["a"], "A"),
        ("RuntimeError", "Output 0 of Unbind is a view and is", "claims", ["c"], "C"),  # starts one: joins
        ("RuntimeError", one, "r1", ["b"], "B"),
        ("RuntimeError", other, "r2", ["d"], "D"),
        ("RuntimeError", "modified by an inplace", "claims", ["e"], "E"),  # starts two: stays apart
    ]
    listed = {e["message"]: [p[0] for p in e["places"]] for e in entries(found, {})}
    assert listed == {
        whole: ["overview", "claims"],
        one: ["r1"],
        other: ["r2"],
        "modified by an inplace": ["claims"],
    }


def test_the_search_data_lists_each_word_and_page_once_and_sends_the_versions_page_to_this_one():
    """error-index.js for the search page: an entry's pages and its wordings' words, each given
    by its place in the lists; a message only other releases gave points to the errors page."""
    from autograd_recipes.evidence.matrix_html import VERSIONS_DOC
    from autograd_recipes.pages.error_index import ERRORS_DOC, search_data

    listed = [
        {
            "kind": "RuntimeError",
            "message": "output 0 of Add is at version 1",
            "places": [("recipes/plot_02", ["s"], "t"), ("claims", [], "")],
            "wordings": {
                "output 0 of AddBackward0 is at version 1": ["2.0.1"],
                "output 0 of Add is at version 1": [],
            },
        },
        {
            "kind": "AttributeError",
            "message": "no attribute 'x'",
            "places": [(VERSIONS_DOC, [], "")],
            "wordings": {},
        },
    ]
    data = search_data(listed)
    assert data["pages"] == ["claims", "recipes/plot_02", ERRORS_DOC]
    assert len(data["words"]) == len(set(data["words"])) and "0" not in data["words"]
    (pages, wordings), (other_pages, _) = data["entries"]
    assert [data["pages"][i] for i in pages] == ["claims", "recipes/plot_02"]
    assert [data["pages"][i] for i in other_pages] == [ERRORS_DOC]
    assert [[data["words"][i] for i in w] for w in wordings] == [
        ["runtimeerror", "output", "of", "add", "is", "at", "version"],
        ["runtimeerror", "output", "of", "addbackward0", "is", "at", "version"],
    ]


def test_the_search_page_loads_the_entries_where_there_is_an_errors_page(built_site, tiny_site):
    """The real site's search page loads error-index.js, which its build wrote; the tiny site
    has no errors page, and its search page loads no file that does not exist."""
    for project, expected in ((built_site[0], True), (tiny_site[0], False)):
        for lang in LANGUAGES:
            html = project / "build" / "html" / lang
            page = (html / "search.html").read_text(encoding="utf-8")
            assert ('src="_static/error-index.js' in page) is expected, (project, lang)
            assert (html / "_static" / "error-index.js").is_file() is expected, (project, lang)
