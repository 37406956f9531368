"""The autograd graph pictures: the drawer on real graphs, and the pictures on the built site.

The kit's drawer (autograd_recipes/kit/graph.py) reads a graph from live torch objects and draws it; graph_figures
puts the pictures into the recipe and notebook pages and the gallery's thumbnails. The
drawer's tests need torch only; the page tests read the shared build (``built_site``).
"""

import hashlib
import re
import subprocess
import sys
import textwrap

import background
import pytest
import torch
from conftest import FIELD_RECIPES, JOBS, LANGUAGES, RECIPES, ROOT

from autograd_recipes.kit import graph as ag  # the drawer the recipes and the build import
from autograd_recipes.project import PROJECT
from autograd_recipes.publish.bench import first_visit_bytes

HANGUL = re.compile(r"[\uac00-\ud7a3]")
NOTEBOOKS = {"inplace_overview": ROOT / "docs" / "inplace_overview.md"}
PAGE_BUDGET = 250 * 1024  # first visit of a recipe page (src/autograd_recipes/publish/bench.py's budget)


def node(data, name):
    return next(n for n in data["nodes"] if n["name"] == name)


# --- the drawer, on graphs torch records here -------------------------------------------------


def test_a_changed_saved_tensor_is_read_from_torch_and_highlighted():
    x = torch.randn(4, requires_grad=True)
    y = x.exp()  # ExpBackward0 saves its result, y, at version 0
    y.add_(1)  # an in-place write: y is now at version 1
    data = ag.record(y)
    assert [n["name"] for n in data["nodes"]] == ["AddBackward0", "ExpBackward0", "AccumulateGrad"]
    assert node(data, "ExpBackward0")["saved"] == [
        {
            "slot": "result",
            "state": "changed",
            "saved": 0,
            "now": 1,
            "of_leaf": False,
            "write": "AddBackward0",
            "tensor": "y",
        }
    ]
    assert node(data, "AddBackward0")["mark"] == "write"
    assert node(data, "AccumulateGrad")["leaf"] == {"name": "x", "shape": [4], "version": 0}
    assert data["tensor"] == {"name": "y", "shape": [4], "version": 1}
    assert data["verdict"] == "fails"
    picture = ag.svg(data)
    assert re.search(r'<g class="ag-bad"[^>]*>.*?<text[^>]*>ExpBackward0</text>', picture)
    assert '<text x="8" y="32" class="ag-alert">result v0\u2192v1</text>' in picture
    assert re.search(r'<g class="ag-write"[^>]*>.*?AddBackward0.*?class="ag-tag">in-place write<', picture)
    caption = ag.describe(data)
    assert (
        "ExpBackward0 saved result (y) at version 0; the in-place write AddBackward0 changed it to version 1"
        in caption
    )
    assert caption.endswith("Backward will fail: it checks the version of every saved tensor.")
    # the picture says what backward then does
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        y.sum().backward()


def test_the_safe_case_has_no_highlight():
    """Control: clone, then write the clone. Every saved tensor is where it was saved."""
    x = torch.randn(4, requires_grad=True)
    y = x.exp()
    z = y.clone()
    z.add_(1)
    data = ag.record(z)
    assert [n["name"] for n in data["nodes"]] == [
        "AddBackward0",
        "CloneBackward0",
        "ExpBackward0",
        "AccumulateGrad",
    ]
    assert node(data, "ExpBackward0")["saved"] == [{"slot": "result", "state": "ok", "saved": 0, "now": 0}]
    assert all(n["mark"] is None for n in data["nodes"])
    assert data["verdict"] == "passes"
    picture = ag.svg(data)
    assert not re.search(r"ag-(bad|alert|write|changed|refused)", picture)
    assert "backward's version check passes" in ag.describe(data)
    z.sum().backward()  # and backward runs
    assert torch.equal(x.grad, x.detach().exp())


def test_a_leaf_changed_without_recording_is_marked():
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    loss = (w * x).sum()
    with torch.no_grad():
        w.mul_(0.9)
    data = ag.record(loss)
    saved = {s["slot"]: s for s in node(data, "MulBackward0")["saved"]}
    assert saved["self"]["state"] == "changed" and (saved["self"]["saved"], saved["self"]["now"]) == (0, 1)
    assert saved["other"] == {"slot": "other", "state": "ok", "saved": 0, "now": 0, "tensor": "x"}
    leaves = {n["leaf"]["name"]: n["mark"] for n in data["nodes"] if n["leaf"]}
    assert leaves == {"w": "changed", "x": None}
    assert data["verdict"] == "fails"
    assert "it was changed in place, without being recorded, to version 1" in ag.describe(data)


def test_leaf_writes_refused_while_recording_and_allowed_when_not():
    w = torch.zeros(3, requires_grad=True)
    refused, with_graph = ag.record(w), ag.record((w * 2).sum(), w)
    with torch.no_grad():
        allowed = ag.record(w)
    assert [n["mark"] for n in refused["nodes"]] == ["refused"] and refused["verdict"] == "refused"
    assert with_graph["verdict"] == "refused" and node(with_graph, "AccumulateGrad")["mark"] == "refused"
    assert [n["mark"] for n in allowed["nodes"]] == ["allowed"] and allowed["verdict"] == "allowed"
    # what the pictures say is what torch does
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.add_(1)
    with torch.no_grad():
        w.add_(1)


def test_freed_and_absent_graphs():
    x = torch.randn(3, requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    freed = ag.record(loss)
    assert {s["state"] for s in node(freed, "MulBackward0")["saved"]} == {"freed"}
    assert freed["verdict"] == "freed" and 'self <tspan class="ag-tag">freed</tspan>' in ag.svg(freed)
    plain = ag.record(torch.zeros(2))
    assert plain["nodes"] == [] and plain["verdict"] == "none" and "no graph recorded" in ag.svg(plain)


def test_a_large_graph_is_cut_with_a_count():
    x = torch.randn(2, requires_grad=True)
    total = x
    for _ in range(10):
        total = total + x.exp()
    data = ag.record(total)  # 10 AddBackward0, 10 ExpBackward0, 1 AccumulateGrad
    more = 21 - ag.MAX_NODES
    assert len(data["nodes"]) == ag.MAX_NODES and data["more"] == more
    assert f">{more} more nodes<" in ag.svg(data) and f" and {more} more nodes." in ag.describe(data)
    assert f">+{more}<" in ag.svg(data, tags=False)


def test_the_same_change_in_two_nodes_is_said_once_and_counted():
    torch.manual_seed(0)
    linear = torch.nn.Linear(3, 1)
    total = torch.zeros(1)
    for _ in range(2):  # two AddmmBackward0 nodes, each saving the same view of the weight
        total.add_(linear(torch.randn(2, 3, requires_grad=True)).sum())
    with torch.no_grad():
        linear.weight.mul_(0.5)
    caption = ag.describe(ag.record(total))
    assert caption.count("In 2 nodes: AddmmBackward0 saved mat2 at version 1; it is now at version 2.") == 1
    # control: one node, no count (nn.Linear initialised the weight in place: version 1)
    one = torch.zeros(1)
    one.add_(linear(torch.randn(2, 3, requires_grad=True)).sum())
    with torch.no_grad():
        linear.weight.mul_(2.0)
    caption = ag.describe(ag.record(one))
    assert "In " not in caption and caption.count("AddmmBackward0 saved mat2") == 1


def test_one_node_more_is_counted_in_the_singular():
    x = torch.randn(2, requires_grad=True)
    total = x
    for _ in range(6):  # 6 AddBackward0, 6 ExpBackward0, 1 AccumulateGrad: one node over
        total = total + x.exp()
    data = ag.record(total)
    assert data["more"] == 13 - ag.MAX_NODES == 1
    assert ">1 more node<" in ag.svg(data) and " and 1 more node." in ag.describe(data)


def test_saved_tensor_hooks_would_hide_the_failure():
    """Why the drawer reads versions from torch's unpack check instead of a pack hook: with
    any saved_tensors_hooks, torch skips the version check and backward passes."""
    x = torch.randn(3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: (t, t._version), lambda packed: packed[0]):
        y = x.exp()
    y.add_(1)
    y.sum().backward()  # no error
    control = x.exp()
    control.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        control.sum().backward()


DRAW_TWICE = textwrap.dedent(
    """
    import sys
    import torch
    from autograd_recipes.kit import graph as ag
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    total = torch.zeros(1)
    for batch in torch.randn(5, 3, 4):
        total.add_(model(batch).sum())
    with torch.no_grad():
        model[2].weight.mul_(0.5)
    x = torch.randn(5, requires_grad=True)
    y = x.exp()
    y.add_(1)
    for data in (ag.record(total), ag.record(y)):
        sys.stdout.write(ag.figure(data) + ag.svg(data, tags=False, standalone=True))
    """
)


def _draw_twice(folder):
    """Two processes (different hash seeds), side by side, beside the other tests."""

    def work():
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", DRAW_TWICE],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
            )
            for seed in ("1", "2")
        ]
        outputs = [process.communicate(timeout=300) for process in processes]
        return [(process.returncode, *output) for process, output in zip(processes, outputs)]

    return background.Task(work)


JOBS.register("draw twice", "two_drawings", _draw_twice)


two_drawings = JOBS.fixture("draw twice")


def test_two_runs_draw_the_same_bytes(two_drawings):
    """Two processes (different hash seeds) draw the same graphs, a cut one among them, alike."""
    runs = []
    for code, stdout, stderr in two_drawings:
        assert code == 0, stderr
        runs.append(stdout)
    assert runs[0] == runs[1] and runs[0].count("<svg") == 4 and "more nodes" in runs[0]


# --- the pictures on the built site -----------------------------------------------------------


def calls(path):
    """How many pictures a recipe or notebook draws: its show_graph lines."""
    return len(re.findall(r"^\s*show_graph\(", path.read_text(encoding="utf-8"), re.M))


def figures(page):
    return re.findall(r'<figure class="autograd-graph">(.*?)</figure>', page, re.S)


PAGES = [(f"{PROJECT.recipe_docname(r)}.html", r) for r in RECIPES] + [
    (f"{n}.html", p) for n, p in NOTEBOOKS.items()
]


def svg_texts(figure, tags):
    """The picture's texts: our words (``tags``, class ag-tag) or torch's names and numbers."""
    svg = re.search(r"<svg.*?</svg>", figure, re.S).group(0)
    if tags:
        return re.findall(r'class="ag-tag">([^<]*)<', svg)
    texts = re.findall(r"<text([^>]*)>(.*?)</text>", svg)
    return [re.sub(r"<tspan[^>]*>.*?</tspan>", "", body) for attrs, body in texts if "ag-tag" not in attrs]


@pytest.mark.parametrize("page_path, source", PAGES, ids=[p for p, _ in PAGES])
def test_every_page_has_its_graphs_with_a_text_alternative_in_its_language(built_site, page_path, source):
    """Each show_graph of the recipe (or notebook) is a picture on its page in every language,
    labelled by its caption; our words follow the page's language, torch's names stay."""
    project, code, output = built_site
    assert code == 0, output
    pages = {
        lang: (project / "build" / "html" / lang / page_path).read_text(encoding="utf-8")
        for lang in LANGUAGES
    }
    found = {lang: figures(page) for lang, page in pages.items()}
    source_lang = LANGUAGES[0]
    assert calls(source) >= 1 and all(len(f) == calls(source) for f in found.values()), page_path
    failing = []
    for n, english in enumerate(found[source_lang], 1):
        failing.append(bool(re.search(r"v\d+\u2192v\d+|ag-refused", english)))
        for lang in LANGUAGES:
            figure = found[lang][n - 1]
            ident = f"autograd-graph-{n}"
            assert f'role="img" aria-labelledby="{ident}"' in figure and "http" not in figure, figure
            caption = re.search(rf'<figcaption id="{ident}">(.*?)</figcaption>', figure, re.S).group(1)
            ours = re.sub(
                r"<code>.*?</code>", "", caption
            )  # torch's names and the recipe's variables are code
            assert "<code>" in caption and ours.strip(), caption
            # torch's names, the variables and the versions are the same picture in every language
            assert svg_texts(figure, tags=False) == svg_texts(english, tags=False)
            assert re.findall(r"<code>.*?</code>", caption) == re.findall(
                r"<code>.*?</code>", re.search(r"<figcaption.*?</figcaption>", english, re.S).group(0)
            )
            if lang == source_lang:
                assert not HANGUL.search(figure), figure
            else:  # ours in the page's language
                assert HANGUL.search(ours) and not re.search(
                    r"\b(the|saved|graph|version|recorded)\b", ours
                ), ours
                tags = svg_texts(figure, tags=True)
                assert all(HANGUL.search(t) for t in tags) and len(tags) == len(
                    svg_texts(english, tags=True)
                ), tags
    # the article's recipes and the notebooks draw a failing case and a safe one; a field recipe
    # whose pitfall is no saved tensor or leaf write (a hook's view, a thread's grad mode) draws
    # its graphs without a failing mark, and one whose pitfall is, draws a safe case beside it
    assert not all(failing), "a safe case"
    if source not in FIELD_RECIPES:
        assert any(failing), "a failing case"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_gallery_shows_one_distinct_graph_thumbnail_per_recipe(built_site, lang):
    project, code, output = built_site
    assert code == 0, output
    html = project / "build" / "html" / lang / "recipes"
    sources = re.findall(
        r'<img [^>]*src="([^"]+_thumb\.[a-z]+)"', (html / "index.html").read_text(encoding="utf-8")
    )
    assert len(sources) == len(RECIPES)
    thumbnails = [(html / src).resolve() for src in sources]
    assert [t.name for t in thumbnails] == [f"sphx_glr_{r.stem}_thumb.svg" for r in RECIPES]
    contents = [t.read_text(encoding="utf-8") for t in thumbnails]
    assert len({hashlib.sha256(c.encode()).hexdigest() for c in contents}) == len(RECIPES)
    for recipe, content in zip(RECIPES, contents):
        # a graph with a node: ReluBackward0, or CompiledFunctionBackward (no number)
        assert content.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
        assert re.search(r"[A-Z]\w*Backward\d*<", content), recipe.stem
        page = (project / "build/html" / LANGUAGES[0] / f"{PROJECT.recipe_docname(recipe)}.html").read_text(
            encoding="utf-8"
        )
        # the recipe's first failing case, or its first picture where it draws none (a node's
        # class, not the stylesheet's rules for it)
        failing = re.compile(r'class="[^"]*\bag-(?:bad|refused)\b')
        shows_failing = any(failing.search(f) for f in figures(page))
        assert bool(failing.search(content)) == shows_failing, recipe.stem
        # the same file on every language's gallery: no words of ours in it
        assert not HANGUL.search(content) and not any(w in content for w in ("in-place write", "freed"))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_recipe_pages_with_their_pictures_stay_within_the_page_budget(built_site, lang):
    project, code, output = built_site
    assert code == 0, output
    html = project / "build" / "html" / lang
    weights = {r.stem: first_visit_bytes(html, f"{PROJECT.recipe_docname(r)}.html")[0] for r in RECIPES}
    assert max(weights.values()) <= PAGE_BUDGET, weights


def test_notebooks_carry_the_record_and_myst_nb_finds_the_renderer():
    """A notebook cell's display carries the record under MIME (with English HTML and text for
    Jupyter); the renderer registered by src/autograd_recipes's dist-info turns that, and only that, into
    the node the page draws."""
    from importlib.metadata import entry_points

    from autograd_recipes.pages import graph_figures

    x = torch.randn(2, requires_grad=True)
    first, second = ag.Graph(ag.record(x.exp())), ag.Graph(ag.record(x.sin()))
    bundle = first._repr_mimebundle_()
    assert bundle[ag.MIME] == first.data and bundle["text/plain"] == ag.describe(first.data)
    assert "<style>" in bundle["text/html"] and 'id="autograd-graph-' in bundle["text/html"]
    assert first.ident != second.ident  # two pictures in one notebook: two caption ids
    (renderer,) = [
        ep.load() for ep in entry_points(group="myst_nb.mime_renderers") if ep.name == "autograd-graph"
    ]
    assert renderer is graph_figures.NotebookGraphs
    assert renderer.mime_priority_overrides == [("*", ag.MIME, 0)]

    class Output:
        def __init__(self, mime_type, content):
            self.mime_type, self.content = mime_type, content

    (node,) = renderer.handle_mime(None, Output(ag.MIME, first.data), inline=False)
    assert isinstance(node, graph_figures.graph_figure) and node["data"] == first.data
    assert renderer.handle_mime(None, Output("text/html", bundle["text/html"]), inline=False) is None
