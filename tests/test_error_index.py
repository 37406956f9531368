"""The "Errors and warnings" page (src/autograd_recipes/errors/error_index.py): every error
and warning message a page shows is on it, in both languages, linked to the sections that
show it, with the wordings the matrix recorded on other releases."""

import html as html_text
import json
import re

import pytest
from conftest import LANGUAGES

from autograd_recipes.errors.error_index import SIGHTING, entries, message_key, release_wordings

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
    from autograd_recipes.errors.error_index import claim_wordings

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
    # at the evidence of the run that printed it, which shows the text
    assert old["places"] == [("versions", ["evidence-claims-x"], "")] and old["wordings"] == {
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
    """error-index.js for the search page: an entry's pages (the claims page only where no
    other page shows the message) and its wordings' words, each given by its place in the
    lists; a message only other releases gave points to the errors page."""
    from autograd_recipes.errors.error_index import ERRORS_DOC, search_data
    from autograd_recipes.matrix.matrix_html import VERSIONS_DOC

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
            "kind": "RuntimeError",
            "message": "only a claim shows this",
            "places": [("claims", [], "")],
            "wordings": {},
        },
        {
            "kind": "AttributeError",
            "message": "no attribute 'x'",
            "places": [(VERSIONS_DOC, [], "")],
            "wordings": {},
        },
    ]
    data = search_data(listed)
    assert data["pages"] == ["recipes/plot_02", "claims", ERRORS_DOC]
    assert len(data["words"]) == len(set(data["words"])) and "0" not in data["words"]
    (pages, wordings, family), (claim_pages, _, _), (other_pages, _, _) = data["entries"]
    assert [data["pages"][i] for i in pages] == ["recipes/plot_02"] and family is None
    assert [data["pages"][i] for i in claim_pages] == ["claims"]
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


def entry_blocks(page):
    """[(codes, hrefs)] of the errors page's entries, from its HTML: the texts of the entry's
    <code> elements (its message, then its wordings) and the links it gives, every family's
    folded list in turn; and each family's message block, with the links its family gives."""
    blocks = []
    for family in page.split('<div class="error-family">')[1:]:
        # up to the end of the folded list of messages (the node sections fold before it)
        head, fold, rest = family.partition('<details class="error-wordings"')
        family = head + fold + rest.split("</details>")[0]
        start = family.index('<ul class="error-index')
        items = re.split(r'(?=<li><p><code class="error-message)', family[start:])
        blocks += [
            (
                [text(c) for c in re.findall(r'<code class="error-message[^"]*">(.*?)</code>', item, re.S)],
                re.findall(r'href="([^"]+)"', item),
            )
            for item in items[1:]
        ]
        top = re.search(
            r'<div class="error-message-block[^"]*"><div class="highlight"><pre>(.*?)</pre>', family, re.S
        )
        blocks.append(([text(top.group(1)).strip()], re.findall(r'href="([^"]+)"', family)))
    return blocks


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_message_text_the_page_shows_is_printed_on_a_page_its_entry_links(built_site, lang):
    """No text merged from several runs: each message and each wording of an entry, with its
    shapes and numbers, is printed word for word on one of the pages the entry links (a
    recipe's or notebook's output, a claim's evidence, a run's evidence on the versions page)."""
    project, code, output = built_site
    assert code == 0, output
    root = project / "build/html" / lang
    blocks = entry_blocks((root / "errors.html").read_text(encoding="utf-8"))
    assert len(blocks) >= 10 and any(len(codes) > 1 for codes, _ in blocks)
    pages = {}
    not_printed = []
    for codes, hrefs in blocks:
        linked = []
        for href in hrefs:
            path = href.partition("#")[0]
            if path not in pages:
                pages[path] = " ".join(text((root / path).read_text(encoding="utf-8")).split())
            linked.append(pages[path])
        not_printed += [c for c in codes if not any(" ".join(c.split()) in page for page in linked)]
    assert not not_printed, "\n".join(not_printed)


ASSTRIDED = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [torch.FloatTensor {shape}], which is output 0 of {node}, is at version {v}; "
    "expected version {before} instead. Hint: {hint}"
)


def _asstrided(shape, v, node="AsStrided", hint="new"):
    return ASSTRIDED.format(shape=shape, node=node, v=v, before=v - 1, hint=hint)


def _records(runs):
    """Matrix records from {release: {recipe: message}} (one expected error each)."""
    return [
        {
            "release": release,
            "status": "ok",
            "recipes": {
                name: {"expected_errors": [{"ordinal": 0, "type": "RuntimeError", "message": message}]}
                for name, message in by_recipe.items()
            },
        }
        for release, by_recipe in runs.items()
    ]


def test_an_entry_shows_each_text_as_one_named_run_printed_it():
    """The AsStrided error of three recipes (their shapes and versions differ): the entry's
    message is the one its first linked place printed, and each wording is the text one named
    run printed on the named release (the first place's run where it gave that wording), not
    one recipe's shapes with the releases of all of them."""
    recipes = {
        "plot_08_step_between_backwards": ("[8, 1]", 2),
        "plot_10_carried_hidden_state": ("[5, 5]", 3),
        "plot_07_detach_statistics": ("[256, 1]", 2),  # the longest message: not the one shown
    }
    runs = {
        "2.0.1": {n: _asstrided(s, v, "AsStridedBackward0", "old") for n, (s, v) in recipes.items()},
        "2.12.1": {n: _asstrided(s, v, "AsStridedBackward0") for n, (s, v) in recipes.items()},
        "2.13.0": {n: _asstrided(s, v) for n, (s, v) in recipes.items()},
    }
    runs["2.0.1"].pop("plot_08_step_between_backwards")  # not checked there
    records = _records(runs)
    found = [("RuntimeError", _asstrided(s, v), f"recipes/x/{n}", [n], n) for n, (s, v) in recipes.items()]
    (entry,) = entries(found, release_wordings(records, "2.13.0"))
    assert entry["message"] == _asstrided("[8, 1]", 2)
    assert [p[0] for p in entry["places"]][0] == "recipes/x/plot_08_step_between_backwards"
    printed = {
        (("recipes", name), record["release"]): result["expected_errors"][0]["message"]
        for record in records
        for name, result in record["recipes"].items()
    }
    assert len(entry["wordings"]) == 3
    for message, releases in entry["wordings"].items():
        source, release = entry["printed_by"][message]
        assert printed[source, release] == message and release in releases, (message, source, release)
    assert entry["wordings"] == {
        # 2.0.1: plot_08 was not run; the oldest run that gave it, with its own shapes
        _asstrided("[5, 5]", 3, "AsStridedBackward0", "old"): ["2.0.1"],
        _asstrided("[8, 1]", 2, "AsStridedBackward0"): ["2.12.1"],
        _asstrided("[8, 1]", 2): ["2.13.0"],
    }


def test_a_message_cut_short_is_no_wording_of_its_own_where_the_whole_one_was_given():
    """A claim's evidence cuts the no_grad view error short on every release; the recipes
    print it whole on those releases: one wording, so none listed (before, the cut text was
    listed as a second wording on every release)."""
    from autograd_recipes.errors.error_index import claim_wordings

    whole = "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
    cut = whole[:60]
    releases = ["2.0.1", "2.13.0"]
    records = _records({r: {"plot_14": whole} for r in releases})
    for record in records:
        record["claims"] = {"site-view-rules": {"evidence": f"late -> RuntimeError: {cut}"}}
    found = [
        ("RuntimeError", whole, "recipes/plot_14", ["s"], "S"),
        ("RuntimeError", cut, "claims", ["claim-site-view-rules"], "C"),
    ]
    (entry,) = entries(found, claim_wordings(records, release_wordings(records, "2.13.0")))
    assert entry["message"] == whole and entry["wordings"] == {}
    # where the cut text is all a release gave, it stays a wording, with the run that printed it
    records[0]["recipes"] = {}
    (entry,) = entries(found, claim_wordings(records, release_wordings(records, "2.13.0")))
    assert entry["wordings"] == {cut: ["2.0.1", "2.13.0"], whole: ["2.13.0"]}
    assert entry["printed_by"][cut] == (("claims", "site-view-rules"), "2.0.1")


def test_every_place_that_prints_a_view_error_is_linked_by_the_entry_of_what_it_printed():
    """torch's words "A view was created in no_grad mode" begin two messages: a view made under
    no_grad, and one of several views (filling a preallocated tensor row by row, the rows from
    unbind) when the viewed tensor does not require grad but the written value does. The
    messages come from running both here; each place is linked from the entry of the message
    it printed, and the two entries stand next to each other."""
    import torch

    w = torch.ones(2, requires_grad=True)
    computed = w * 1
    with torch.no_grad():
        first = computed[0]
    messages = {}
    for case, change in {
        "no_grad": lambda: first.mul_(2),
        "rows": lambda: [row.copy_(w * i) for i, row in enumerate(torch.empty(3, 2))],
        "unbind": lambda: torch.randn(3, 2).unbind(0)[0].copy_(w),
    }.items():
        with pytest.raises(RuntimeError) as err:
            change()
        messages[case] = str(err.value)
    found = [
        ("RuntimeError", messages["no_grad"], "inplace_overview", ["why-care-4"], "Why care, 4"),
        ("RuntimeError", messages["no_grad"], "recipes/plot_14", ["no-grad"], "The other error"),
        ("RuntimeError", messages["rows"], "recipes/plot_14", ["rows"], "Filling rows"),
        ("RuntimeError", messages["unbind"], "recipes/plot_15", ["pieces"], "Pieces"),
        ("RuntimeError", messages["no_grad"][:60], "claims", ["claim-site-view-rules"], "C"),
    ]
    listed = entries(found, {})
    for kind, message, doc, ids, title in found:
        (entry,) = [e for e in listed if message_key(kind, e["message"]) == message_key(kind, message)]
        assert (doc, ids, title) in entry["places"], (message, entry["places"])
    starts = [n for n, e in enumerate(listed) if e["message"].startswith(messages["no_grad"][:60])]
    assert starts == list(range(starts[0], starts[0] + len(starts)))  # next to each other
    rows = next(e for e in listed if e["message"] == messages["rows"])
    if messages["rows"] == messages["no_grad"]:  # a torch that words both alike: one entry
        assert {p[2] for p in rows["places"]} >= {"The other error", "Filling rows", "Pieces"}
    else:
        assert [p[2] for p in rows["places"]] == ["Filling rows", "Pieces"]


def _matrix_state(records, hashes, sentences=None):
    """What the versions page is made from (torch_matrix's state), for claims only."""
    from types import SimpleNamespace

    return SimpleNamespace(
        records=records,
        hashes={"claims": hashes, "recipes": {}, "notebooks": {}},
        verdicts=dict.fromkeys(hashes, "holds"),
        reference=None,
        lines={},
        measured=set(),
        checked=[r["release"] for r in records],
        sentences=sentences or {name: f"The sentence of {name}." for name in hashes},
        pinned=records[-1]["release"],
    )


def _claim_records(evidence_by_release, hashes):
    """Matrix records of claims: {release: {claim: evidence}}, each run of the code ``hashes``
    had then (a claim whose code changed since has another hash today)."""
    return [
        {
            "release": release,
            "status": "ok",
            "claims": {
                name: {"hash": hashes[name], "verdict": "holds", "evidence": text}
                for name, text in by_claim.items()
            },
        }
        for release, by_claim in evidence_by_release.items()
    ]


def _versions_page(state):
    """The versions page's evidence (matrix_html.evidence_html) as HTML, with its anchors."""
    from types import SimpleNamespace

    from autograd_recipes.matrix import matrix_html

    page = matrix_html.evidence_html(state, SimpleNamespace(titles={}))
    return page, set(re.findall(r'id="([^"]+)"', page))


def _shown(state):
    from autograd_recipes.matrix import matrix_html

    return lambda kind, name: matrix_html.evidence_entries(state, kind, name)


SPLIT_WHOLE = (
    "Output 0 of {node} is a view and is being modified inplace. This view is the output of a "
    "function that returns multiple views. Such functions do not allow the output views to be "
    "modified inplace. You should replace the inplace operation by an out-of-place one."
)


def test_a_run_the_versions_page_shows_no_evidence_of_gives_no_wording_and_no_anchor():
    """A claim whose code changed since the matrix ran it is "not checked" on the versions
    page, which then has no evidence block (no ``#evidence-claims-…``) for it: its recorded
    messages are no wording here, and nothing links that anchor; a claim the matrix ran on
    today's code still gives its wordings, linked to its block. (Before, the errors page
    listed the changed claim's old texts, linked to an anchor the versions page never made.)"""
    from autograd_recipes.errors.error_index import claim_wordings
    from autograd_recipes.matrix.matrix_html import evidence_id

    recorded = {"fresh": "h1", "changed": "old"}  # the hashes the matrix ran
    records = _claim_records(
        {
            "2.0.1": {
                "fresh": "unbind -> RuntimeError: " + SPLIT_WHOLE.format(node="UnbindBackward0"),
                "changed": "split -> RuntimeError: "
                + SPLIT_WHOLE.format(node="SplitBackward0")
                + " | old -> AttributeError: module 'torch' has no attribute 'gone'",
            },
            "2.13.0": {
                "fresh": "unbind -> RuntimeError: " + SPLIT_WHOLE.format(node="Unbind"),
                "changed": "split -> RuntimeError: " + SPLIT_WHOLE.format(node="Split"),
            },
        },
        recorded,
    )
    state = _matrix_state(records, {"fresh": "h1", "changed": "new"})  # today's code
    page, anchors = _versions_page(state)
    assert evidence_id("claims", "fresh") in anchors and evidence_id("claims", "changed") not in anchors
    found = [
        ("RuntimeError", SPLIT_WHOLE.format(node="Unbind"), "claims", ["claim-fresh"], "C"),
        ("RuntimeError", SPLIT_WHOLE.format(node="Split"), "claims", ["claim-changed"], "C"),
    ]
    listed = entries(found, claim_wordings(records, shown=_shown(state)), ("versions", ""))
    by_message = {e["message"]: e for e in listed}
    assert set(by_message) == {SPLIT_WHOLE.format(node="Unbind"), SPLIT_WHOLE.format(node="Split")}
    assert by_message[SPLIT_WHOLE.format(node="Split")]["wordings"] == {}  # none: not checked
    unbind = by_message[SPLIT_WHOLE.format(node="Unbind")]
    assert unbind["wordings"] == {
        SPLIT_WHOLE.format(node="UnbindBackward0"): ["2.0.1"],
        SPLIT_WHOLE.format(node="Unbind"): ["2.13.0"],
    }
    for entry in listed:  # every anchor of the versions page that an entry would link exists
        linked = [ids[0] for doc, ids, _title in entry["places"] if doc == "versions"]
        linked += [evidence_id(*source) for source, _release in entry["printed_by"].values()]
        assert set(linked) <= anchors, (entry["message"], linked)
        for message in entry["printed_by"]:  # and it shows the text
            assert f"RuntimeError: {message}" in page, message


def test_every_text_an_entry_shows_is_printed_where_it_links_not_by_a_changed_run():
    """The split error on the errors page of a build where a recipe and a claim had just
    changed: the recipe's page prints the whole message, the claims page the claim's cut
    one; the matrix's records of both are of their old code (the versions page shows no
    evidence of them). Each text the entries show is printed by a page the entry links;
    before, the entry showed the old runs' ``SplitBackward0`` texts, printed nowhere."""
    from autograd_recipes.errors.error_index import claim_wordings

    whole, cut = SPLIT_WHOLE.format(node="Split"), SPLIT_WHOLE.format(node="SplitWithSizes")[:60]
    records = _records(
        {
            "2.0.1": {"plot_14": SPLIT_WHOLE.format(node="SplitBackward0")},
            "2.13.0": {"plot_14": whole},
        }
    )
    for record in records:
        node = "SplitWithSizesBackward0" if record["release"] == "2.0.1" else "SplitWithSizes"
        record["recipes"]["plot_14"]["hash"] = "old"
        evidence = f"split_with_sizes -> RuntimeError: {SPLIT_WHOLE.format(node=node)[:50]}"
        record["claims"] = {"view-rules": {"hash": "old", "verdict": "holds", "evidence": evidence}}
    state = _matrix_state(records, {"view-rules": "new"})
    state.hashes["recipes"] = {"plot_14": "new"}
    shown = _shown(state)
    printed = {  # what each page prints
        "recipes/plot_14": [whole],
        "claims": [cut],
        "versions": [_versions_page(state)[0]],
    }
    found = [
        ("RuntimeError", whole, "recipes/plot_14", ["s"], "S"),
        ("RuntimeError", whole[:60], "claims", ["claim-view-rules"], "C"),
        ("RuntimeError", cut, "claims", ["claim-view-rules"], "C"),
    ]
    wordings = claim_wordings(records, release_wordings(records, "2.13.0", shown=shown), shown)
    listed = entries(found, wordings, ("versions", ""))
    assert [e["message"] for e in listed] == [whole, cut]
    for entry in listed:
        docs = {doc for doc, _ids, _title in entry["places"]} | {"versions" for _ in entry["printed_by"]}
        for message in [entry["message"], *entry["wordings"]]:
            assert any(message in text for doc in docs for text in printed[doc]), message


def test_a_wording_the_versions_page_cuts_off_is_not_listed():
    """The versions page cuts a run's evidence after matrix_html.EVIDENCE_CHARS: a message
    past the cut is printed on no page, so it is no wording and no entry of its own (before,
    it was listed, named after a run whose evidence does not show it)."""
    from autograd_recipes.errors.error_index import claim_wordings
    from autograd_recipes.matrix.matrix_html import EVIDENCE_CHARS

    late = "AttributeError: module 'torch' has no attribute 'late'"
    evidence = {"2.0.1": "x" * EVIDENCE_CHARS + " | " + late, "2.13.0": "y: " + late.replace("late", "soon")}
    records = [
        {"release": release, "status": "ok", "claims": {"x": {"evidence": text}}}
        for release, text in evidence.items()
    ]
    listed = entries([], claim_wordings(records), ("versions", ""))
    assert [e["message"] for e in listed] == ["module 'torch' has no attribute 'soon'"]


@pytest.mark.parametrize(
    "lang, title, sentence",
    [
        (
            "en",
            "Claims, checked",
            "With grad mode on, two view rules raise an error even when nothing will read the old "
            "value: changing in place an output of unbind, split or chunk.",
        ),
        (
            "ko",
            "검증한 주장",
            "기울기 모드가 켜져 있으면 두 가지 뷰 규칙이 오류를 냅니다. 이전 값을 아무도 읽지 "
            "않아도 unbind, split, chunk의 출력을 제자리에서 바꾸면 오류가 납니다.",
        ),
    ],
)
def test_a_claim_that_printed_a_wording_is_named_by_its_sentence_never_its_id(lang, title, sentence):
    """The run of a claim is named for readers as the versions page names its row: the
    claims page's title and the claim's sentence in the page's language, shortened; its id
    is no reader text (before: "Claims, checked › site-view-rules")."""
    from types import SimpleNamespace

    from docutils import nodes

    from autograd_recipes.errors.error_index import CLAIM_LABEL_WIDTH, _source_label
    from autograd_recipes.pages.page_summary import width

    env = SimpleNamespace(titles={"claims": nodes.title("", title)})
    label = _source_label(env, ("claims", "site-view-rules"), {"site-view-rules": sentence})
    assert "site-view-rules" not in label
    assert label.startswith(f"{title} › ")
    said = label.removeprefix(f"{title} › ")  # whole sentences, else whole words and "…"
    assert sentence.startswith(said.removesuffix("…"))
    assert width(said) <= CLAIM_LABEL_WIDTH < width(sentence)
