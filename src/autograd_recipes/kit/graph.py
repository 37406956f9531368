"""The graph autograd recorded for a tensor, as a picture: ``show_graph(t)``.

The recipes (``recipes/…/plot_*.py``) and the notebook pages call ``show_graph(t)`` where a
case is set up, before its backward pass runs. It reads the graph behind ``t`` from the live
objects: the nodes (``t.grad_fn`` and their ``next_functions``), the tensors each node saved
(its ``_saved_*`` attributes) and their versions. A saved tensor that unpacks is at the version
it was saved at; one changed in place since then fails torch's own unpack check, whose message
gives both versions ("is at version 1; expected version 0 instead"): the check backward trips
on. (A ``torch.autograd.graph.saved_tensors_hooks`` pack hook could note the version at save
time, but with a hook torch skips that check, and backward would pass where the page shows
it failing.)

What becomes of the record depends on where the code runs:

* in the site's build, ``pages/graph_figures.py`` has called ``collect()``: the record is kept
  until ``take()`` and drawn into the page, with the page language's labels, and the recipe's
  first failing case becomes its gallery thumbnail;
* in IPython or Jupyter the picture is displayed, with English labels;
* in a plain ``python`` run nothing is shown, unless the environment variable
  ``AUTOGRAD_RECIPES_GRAPHS`` names a folder: each picture is written there as an SVG file,
  ``<script>-<n>.svg``.

Only torch and the standard library are used, so a download that carries this code runs on its
own (torch is imported where a graph is read, not to draw one: the Korean build draws without
it), and the drawing is deterministic: the same graph gives the same bytes (no random ids,
fixed number formats).
"""

import os
import re
import sys
import unicodedata
from html import escape

_pending = []  # while the site is built (collect()), show_graph appends its records here
_collecting = []  # [True] from collect() on (no global statement: the downloads nest this code)
GRAPHS_FOLDER = "AUTOGRAD_RECIPES_GRAPHS"  # a plain run writes its pictures there, if set
MIME = "application/vnd.autograd-recipes.graph+json"  # what a notebook cell's output carries
MAX_NODES = 12  # drawn; a larger graph shows its first ones, from the tensor up, and a count
FAILING = ("fails", "refused")  # verdicts of a case that fails (the gallery thumbnail is one)

_VERSIONS = re.compile(r"is at version (\d+); expected version (\d+) instead")
_OUTPUT_OF = re.compile(r"which is output \d+ of ")
_FREED = "have already been freed"

# English labels and sentences. The site's build passes the page language's (sphinx.po);
# %(name)s placeholders are filled with torch's names, numbers and the recipe's variables.
WORDS = {
    "write": "in-place write",
    "changed": "changed in place, unrecorded",
    "refused": "in-place write refused",
    "allowed": "not recording: write allowed",
    "freed": "freed",
    "more": "%(count)d more nodes",
    "more, one": "%(count)d more node",
    "none": "no graph recorded",
    "tensor": "the tensor",
    "graph": "The graph autograd recorded for %(tensor)s, from its inputs: %(nodes)s.",
    "and more": "%(nodes)s and %(count)d more nodes",
    "and more, one": "%(nodes)s and %(count)d more node",
    "changed by": "%(node)s saved %(slot)s at version %(saved)d; the in-place write %(write)s "
    "changed it to version %(now)d.",
    "changed leaf": "%(node)s saved %(slot)s at version %(saved)d; it was changed in place, "
    "without being recorded, to version %(now)d.",
    "changed other": "%(node)s saved %(slot)s at version %(saved)d; it is now at version %(now)d.",
    "in nodes": "In %(count)d nodes: %(sentence)s",
    "hidden changed": "The nodes not drawn hold %(count)d more changed saved tensors.",
    "hidden changed, one": "The nodes not drawn hold %(count)d more changed saved tensor.",
    "fails": "Backward will fail: it checks the version of every saved tensor.",
    "passes": "Every saved tensor is at the version it was saved at: backward's version check passes "
    "(it sees only writes that bump the version, not writes through .data).",
    "freed verdict": "Backward has run and freed the tensors the graph saved: an in-place write "
    "now breaks nothing.",
    "refused verdict": "%(leaf)s is a leaf that requires grad: autograd refuses to write it in "
    "place while it records.",
    "allowed verdict": "%(leaf)s is a leaf that requires grad, but autograd is not recording: "
    "writing it in place is allowed and adds nothing to the graph.",
    "none verdict": "%(tensor)s has no graph: no operation on it was recorded.",
}


# --- reading the graph ----------------------------------------------------------------------


def record(tensor, *written, names=None):
    """The graph behind ``tensor`` as plain data (JSON-ready), read now.

    ``written``: tensors the case writes in place next; a leaf that requires grad among them is
    marked (autograd refuses the write while it records, allows it when it does not).
    ``names``: {id(tensor): name}; by default the caller's variables (and its modules'
    parameters) give the names."""
    import torch

    if names is None:
        names = _names(sys._getframe(1))
    grad_enabled = torch.is_grad_enabled()
    root = _tensor_label(tensor, names)
    nodes, order = [], []
    top = tensor.grad_fn
    if top is None and tensor.requires_grad:  # a leaf: its node is the AccumulateGrad
        top = _accumulate_grad(tensor)
    if top is not None:
        order = _walk(top)
    index = {fn: i for i, fn in enumerate(order)}
    for fn in order:
        node = {"name": type(fn).__name__, "inputs": [], "saved": [], "leaf": None, "mark": None}
        for child, _ in fn.next_functions:
            if child is not None and index[child] not in node["inputs"]:
                node["inputs"].append(index[child])
        variable = getattr(fn, "variable", None)
        if isinstance(variable, torch.Tensor):
            node["leaf"] = _tensor_label(variable, names)
            node["leaf"]["id"] = id(variable)
        node["saved"] = _saved(fn, names)
        nodes.append(node)
    _mark_writes(tensor, root, nodes, written, grad_enabled)
    shown = nodes[:MAX_NODES]
    for node in shown:
        hidden = [i for i in node["inputs"] if i >= MAX_NODES]
        node["inputs"] = [i for i in node["inputs"] if i < MAX_NODES]
        node["hidden"] = len(hidden)
        if node["leaf"]:
            del node["leaf"]["id"]
    changed = [s for n in nodes for s in n["saved"] if s["state"] == "changed"]
    return {
        "tensor": root,
        "nodes": shown,
        "more": len(nodes) - len(shown),
        "hidden_changed": sum(1 for n in nodes[MAX_NODES:] for s in n["saved"] if s["state"] == "changed"),
        "verdict": _verdict(nodes, changed),
    }


def _counted(key, count):
    """The key of ``WORDS`` for ``count`` things: its ", one" form for one (English has two
    forms; a catalog may translate both the same)."""
    return f"{key}, one" if count == 1 else key


def _walk(top):
    """Nodes from ``top`` breadth first, in next_functions order: the same order every run."""
    order, seen, queue = [], set(), [top]
    while queue:
        fn = queue.pop(0)
        if fn in seen:
            continue
        seen.add(fn)
        order.append(fn)
        queue.extend(child for child, _ in fn.next_functions if child is not None)
    return order


def _accumulate_grad(leaf):
    import torch

    get_edge = getattr(torch.autograd.graph, "get_gradient_edge", None)  # torch >= 2.2
    if get_edge is None:
        return None
    # it finds the edge through a recorded view_as (torch 2.2 and 2.3 always): record it
    with torch.inference_mode(False), torch.enable_grad():
        return get_edge(leaf).node


def _saved(fn, names):
    """What ``fn`` saved for backward: one entry per saved tensor, with its versions."""
    import torch

    entries = []
    for attr in sorted(a for a in dir(fn) if a.startswith("_saved_")):
        slot = attr[len("_saved_") :]
        try:
            value = getattr(fn, attr)
        except RuntimeError as err:
            message = str(err)
            versions = _VERSIONS.search(message)
            if versions:
                entries.append(
                    {
                        "slot": slot,
                        "state": "changed",
                        "saved": int(versions[2]),
                        "now": int(versions[1]),
                        "of_leaf": not _OUTPUT_OF.search(message),
                    }
                )
            elif _FREED in message:
                entries.append({"slot": slot, "state": "freed"})
            else:
                raise RuntimeError(
                    f"{type(fn).__name__}.{attr}: unexpected error reading it: {message}"
                ) from err
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        tensors = [v for v in values if isinstance(v, torch.Tensor)]
        for i, saved in enumerate(tensors):
            entry = {"slot": slot if len(tensors) == 1 else f"{slot}[{i}]", "state": "ok"}
            entry.update(saved=saved._version, now=saved._version)
            if id(saved) in names:
                entry["tensor"] = names[id(saved)]
            entries.append(entry)
    return entries


def _mark_writes(tensor, root, nodes, written, grad_enabled):
    """Mark the in-place write and the leaves that in-place writes changed or will target."""
    if not nodes:
        return
    # the tensor itself was written in place while autograd recorded: its grad_fn is that write
    # when the node it read (its input 0) saved it and sees it changed to the tensor's version
    first = nodes[0]
    if tensor.grad_fn is not None and tensor._version > 0 and first["inputs"]:
        for entry in nodes[first["inputs"][0]]["saved"]:
            if entry["state"] == "changed" and entry["now"] == tensor._version and not entry["of_leaf"]:
                first["mark"] = "write"
                entry["write"] = first["name"]
                if "name" in root:
                    entry["tensor"] = root["name"]
    # a leaf whose saved copy a consumer sees changed: written while autograd did not record
    for node in nodes:
        for entry in node["saved"]:
            if entry["state"] != "changed" or not entry["of_leaf"]:
                continue
            for i in node["inputs"]:
                leaf = nodes[i]["leaf"]
                if leaf and leaf["version"] == entry["now"]:
                    nodes[i]["mark"] = "changed"
                    if "name" in leaf:
                        entry["tensor"] = leaf["name"]
    targets = list(written) + ([tensor] if tensor.grad_fn is None else [])
    for target in targets:
        if not (target.is_leaf and target.requires_grad):
            continue
        for node in nodes:
            if node["leaf"] and node["leaf"]["id"] == id(target) and node["mark"] is None:
                node["mark"] = "refused" if grad_enabled else "allowed"


def _verdict(nodes, changed):
    marks = {n["mark"] for n in nodes}
    states = {s["state"] for n in nodes for s in n["saved"]}
    if changed:
        return "fails"
    if "refused" in marks:
        return "refused"
    if "freed" in states:
        return "freed"
    if not nodes:
        return "none"
    if "allowed" in marks:
        return "allowed"
    return "passes"


def _names(frame):
    """{id(tensor): name} from a frame's variables (locals first) and its modules' parameters."""
    import torch

    names = {}
    for scope in (frame.f_locals, frame.f_globals):
        for name, value in list(scope.items()):
            if name.startswith("_") or not name.isidentifier():
                continue
            if isinstance(value, torch.Tensor):
                names.setdefault(id(value), name)
            elif isinstance(value, torch.nn.Module):
                for path, param in value.named_parameters():
                    parts = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in path.split("."))
                    names.setdefault(id(param), name + parts)
    return names


def _tensor_label(tensor, names):
    label = {"shape": list(tensor.shape), "version": tensor._version}
    if id(tensor) in names:
        label["name"] = names[id(tensor)]
    return label


# --- the picture ----------------------------------------------------------------------------

FONT = 12  # px
LINE = 16  # px from one text line to the next
PAD = 8  # px inside a box, left and right
GAP_X, GAP_Y, MARGIN = 18, 30, 6


def _width(text, code=True):
    """Estimated width of ``text`` in px: Hangul and other wide characters take a full em."""
    narrow = 0.62 if code else 0.6
    return sum(FONT if unicodedata.east_asian_width(c) in "WF" else FONT * narrow for c in text)


def _num(value):
    """Whole pixels, formatted alike every run (and never "-0")."""
    return str(round(value) + 0)


def _version_text(entry, words):
    if entry["state"] == "freed":  # torch's slot name, then our word
        return (entry["slot"], words["freed"])
    if entry["state"] == "changed":
        return f"{entry['slot']} v{entry['saved']}\u2192v{entry['now']}"
    return f"{entry['slot']} v{entry['saved']}"


def _leaf_name(label):
    return label.get("name") or "[" + ", ".join(map(str, label["shape"])) + "]"


def _leaf_text(label):
    return f"{_leaf_name(label)} v{label['version']}"


def _layers(data):
    """Each drawn node's layer: the longest path from the tensor's node (layer 0) to it."""
    nodes = data["nodes"]
    order, seen = [], set()

    def visit(i):  # depth first, consumers before their inputs (nodes are few: no deep recursion)
        if i in seen:
            return
        seen.add(i)
        for j in nodes[i]["inputs"]:
            visit(j)
        order.append(i)

    if nodes:
        visit(0)
    layer = dict.fromkeys(range(len(nodes)), 0)
    for i in reversed(order):
        for j in nodes[i]["inputs"]:
            layer[j] = max(layer[j], layer[i] + 1)
    return layer


def layout(data, words=WORDS, tags=True):
    """Boxes (with their text lines) and edges, placed in layers: inputs on top, the tensor at
    the bottom, arrows in the direction the forward pass ran."""
    nodes = data["nodes"]
    layer = _layers(data)
    items = {}  # key -> {"layer", "lines": [(text, kind)], "w", "h", "kind", "classes"}

    def box(key, level, lines, kind, classes=()):
        width = (
            max(_width(" ".join(t) if k == "freed" else t, k != "tag") for t, k in lines) + 2 * PAD
            if lines
            else 0
        )
        height = len(lines) * LINE + 8 if lines else 0
        items[key] = {
            "layer": level,
            "lines": lines,
            "w": width,
            "h": height,
            "kind": kind,
            "classes": classes,
        }

    for i, node in enumerate(nodes):
        lines = [(node["name"], "name")]
        if node["leaf"]:
            lines.append((_leaf_text(node["leaf"]), "code"))
        lines += [
            (_version_text(s, words), {"changed": "alert", "freed": "freed"}.get(s["state"], "code"))
            for s in node["saved"]
        ]
        if tags and node["mark"]:
            lines.append((words[node["mark"]], "tag"))
        classes = []  # a node holding a changed saved tensor is "ag-bad"; a mark is "ag-<mark>"
        if any(s["state"] == "changed" for s in node["saved"]):
            classes.append("ag-bad")
        if node["mark"]:
            classes.append(f"ag-{node['mark']}")
        box(("n", i), layer[i], lines, "node", classes)
        items["n", i]["hidden"] = bool(node.get("hidden"))
    pill = nodes and nodes[0]["leaf"] is None  # a leaf is named in its own box
    if pill or not nodes:
        lines = [(_leaf_text(data["tensor"]), "code")]
        if not nodes and tags:
            lines.append((words["none"], "tag"))
        box(("t",), -1, lines, "tensor", [])

    # edges, forward: from an input (upper) to the node that used it; long ones get waypoints
    chains = []

    def connect(upper, lower):
        chain = [upper]
        for level in range(items[upper]["layer"] - 1, items[lower]["layer"], -1):
            key = ("d", len(chains), level)
            items[key] = {"layer": level, "lines": [], "w": 0, "h": 0, "kind": "dummy", "classes": ()}
            chain.append(key)
        chains.append(chain + [lower])

    if pill:
        connect(("n", 0), ("t",))
    for i, node in enumerate(nodes):
        for j in node["inputs"]:
            connect(("n", j), ("n", i))
    note = None
    if data["more"]:
        more = data["more"]
        note = (words[_counted("more", more)] % {"count": more}) if tags else f"+{more}"
    return _place(items, _order(items, chains), chains, note)


def _order(items, chains):
    """Items of each layer, left to right: first met first, then barycentre sweeps."""
    first = {}
    for key in items:
        if key[0] == "n":
            first[key] = key[1]
        elif key[0] == "d":
            first[key] = chains[key[1]][0][1] + 0.5
        else:
            first[key] = -1
    levels = sorted({item["layer"] for item in items.values()})
    rows = {
        level: sorted((k for k in items if items[k]["layer"] == level), key=first.get) for level in levels
    }
    above, below = _neighbours(items, chains)

    def sweep(level_order, neighbours):
        for level in level_order:
            position = {k: p for other in rows.values() for p, k in enumerate(other)}

            def key(k, position=position):
                near = neighbours[k]
                return (sum(position[n] for n in near) / len(near) if near else position[k], first[k])

            rows[level] = sorted(rows[level], key=key)

    for _ in range(2):
        sweep(levels[1:], below)  # upwards: order each layer by the items below it
        sweep(list(reversed(levels[:-1])), above)
    return rows


def _neighbours(items, chains):
    above, below = {k: [] for k in items}, {k: [] for k in items}
    for chain in chains:
        for upper, lower in zip(chain, chain[1:]):
            below[upper].append(lower)
            above[lower].append(upper)
    return above, below


def _pack(desired, widths):
    """Left edges as close to ``desired`` as the order and GAP_X allow (least squares, by
    pooling neighbours that would overlap into blocks placed at their mean)."""
    blocks = []  # [first index, last index, left edge of the first]

    def offset(start, j):
        return sum(widths[start:j]) + GAP_X * (j - start)

    for i, want in enumerate(desired):
        blocks.append([i, i, want])
        while len(blocks) > 1:
            (a0, a1, ax), (_, b1, bx) = blocks[-2], blocks[-1]
            if bx >= ax + offset(a0, a1 + 1):
                break
            left = sum(desired[j] - offset(a0, j) for j in range(a0, b1 + 1)) / (b1 - a0 + 1)
            blocks[-2:] = [[a0, b1, left]]
    return [x + offset(start, j) for start, end, x in blocks for j in range(start, end + 1)]


def _place(items, rows, chains, note):
    levels = sorted(rows, reverse=True)  # top layer first
    above, below = _neighbours(items, chains)
    left = {}
    for level in levels:  # first: each layer packed from the left
        left.update(zip(rows[level], _pack([0] * len(rows[level]), [items[k]["w"] for k in rows[level]])))

    def centre(k):
        return left[k] + items[k]["w"] / 2

    for sweep in range(8):  # then each item moved towards its neighbours, alternately down and up
        for level in levels if sweep % 2 == 0 else list(reversed(levels)):
            row = rows[level]
            near = [above[k] + below[k] for k in row]
            want = [
                (sum(centre(n) for n in ns) / len(ns) if ns else centre(k)) - items[k]["w"] / 2
                for k, ns in zip(row, near)
            ]
            left.update(zip(row, _pack(want, [items[k]["w"] for k in row])))
    shift = MARGIN - min(left.values())
    width = max(left[k] + items[k]["w"] for k in items) + shift + MARGIN
    y = MARGIN + (LINE if note else 0)
    row_height = {level: max(items[k]["h"] for k in rows[level]) or LINE for level in levels}
    for level in levels:
        for key in rows[level]:
            item = items[key]
            item["x"], item["y"] = left[key] + shift, y + (row_height[level] - item["h"]) / 2
            item["row"] = (y, y + row_height[level])
        y += row_height[level] + GAP_Y
    height = y - GAP_Y + MARGIN
    # where each edge leaves its upper box and reaches its lower one: spread along the side
    leaving, arriving = {}, {}
    for n, chain in enumerate(chains):
        leaving.setdefault(chain[0], []).append(n)
        arriving.setdefault(chain[-1], []).append(n)

    def spread(key, edges, towards):
        item = items[key]
        other = {n: items[chains[n][towards]] for n in edges}
        edges = sorted(edges, key=lambda n: (other[n]["x"] + other[n]["w"] / 2, n))
        step = min(12, item["w"] / (len(edges) + 1))
        middle = item["x"] + item["w"] / 2
        return {n: middle + (i - (len(edges) - 1) / 2) * step for i, n in enumerate(edges)}

    starts, ends = {}, {}
    for key, edges in leaving.items():
        starts.update(spread(key, edges, 1))
    for key, edges in arriving.items():
        ends.update(spread(key, edges, -2))
    paths = []
    for n, chain in enumerate(chains):
        upper, lower = items[chain[0]], items[chain[-1]]
        points = [(starts[n], upper["y"] + upper["h"])]
        for key in chain[1:-1]:
            points += [(items[key]["x"], items[key]["row"][0]), (items[key]["x"], items[key]["row"][1])]
        points.append((ends[n], lower["y"]))
        paths.append(points)
    boxes = [items[k] for level in levels for k in rows[level] if items[k]["kind"] != "dummy"]
    return {"width": width, "height": height, "boxes": boxes, "paths": paths, "note": note}


def _arrow(points):
    (x0, y0), (x1, y1) = points[-2], points[-1]
    length = max(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5, 1e-9)
    dx, dy = (x1 - x0) / length, (y1 - y0) / length
    bx, by = x1 - 7 * dx, y1 - 7 * dy
    corners = [(x1, y1), (bx - 3.5 * dy, by + 3.5 * dx), (bx + 3.5 * dy, by - 3.5 * dx)]
    return "M" + "L".join(f"{_num(x)} {_num(y)}" for x, y in corners) + "Z"


# The colours of a picture outside the site (a file, a notebook): light or dark by the reader's
# system. On the site, site.css has the same rules with the theme's colours.
STYLE = (
    ".ag{color:#1a1a1a;--ag-page:#fff;--ag-bg:#f3f3f3;--ag-alert:#c62828;--ag-write:#b45309}"
    "@media (prefers-color-scheme:dark){.ag{color:#e6e6e6;--ag-page:#1a1a1a;--ag-bg:#2a2a2a;"
    "--ag-alert:#ff8a80;--ag-write:#ffb74d}}"
    ".ag-bg{fill:var(--ag-page)}.ag text{fill:currentColor;font:12px ui-monospace,monospace}"
    ".ag g text:first-of-type{font-weight:600}.ag .ag-tag{font-family:sans-serif;font-style:italic}"
    ".ag g rect{fill:var(--ag-bg);stroke:currentColor;stroke-opacity:.55}"
    ".ag-edge{fill:none;stroke:currentColor;stroke-opacity:.6}.ag-dashed{stroke-dasharray:4 3}"
    ".ag-head{fill:currentColor;fill-opacity:.6}"
    ".ag .ag-bad rect,.ag .ag-refused rect{stroke:var(--ag-alert);stroke-opacity:1;stroke-width:2.5}"
    ".ag .ag-alert,.ag .ag-refused .ag-tag{fill:var(--ag-alert);font-weight:600}"
    ".ag .ag-write rect,.ag .ag-changed rect{stroke:var(--ag-write);stroke-opacity:1;stroke-width:2.5;"
    "stroke-dasharray:6 3}.ag .ag-write .ag-tag,.ag .ag-changed .ag-tag{fill:var(--ag-write)}"
)


def svg(data, words=WORDS, tags=True, standalone=False, labelledby=None):
    """The picture as SVG text. ``tags=False``: none of our words, only torch's names and
    numbers (the gallery thumbnail, shown in every language). ``standalone``: its own colours
    (light or dark by the reader's system), for a file or a notebook; on the site, site.css
    gives the colours of the page's theme."""
    placed = layout(data, words, tags)
    width, height = _num(placed["width"]), _num(placed["height"])
    label = f' role="img" aria-labelledby="{escape(labelledby)}"' if labelledby else ' aria-hidden="true"'
    namespace = ' xmlns="http://www.w3.org/2000/svg"' if standalone else ""  # HTML needs none; a file does
    out = [
        f'<svg{namespace} class="ag" viewBox="0 0 {width} {height}" width="{width}" height="{height}"{label}>'
    ]
    if standalone:
        out.append(f'<style>{STYLE}</style><rect class="ag-bg" width="{width}" height="{height}"/>')
    if placed["note"]:
        out.append(f'<text x="{MARGIN}" y="{MARGIN + 11}" class="ag-tag">{escape(placed["note"])}</text>')
    edges = "".join("M" + "L".join(f"{_num(x)} {_num(y)}" for x, y in points) for points in placed["paths"])
    heads = "".join(_arrow(points) for points in placed["paths"])
    if edges:
        out.append(f'<path class="ag-edge" d="{edges}"/><path class="ag-head" d="{heads}"/>')
    stubs = "".join(  # inputs not drawn: a dashed stub into the box
        f"M{_num(b['x'] + b['w'] - 10)} {_num(b['y'] - 14)}v14" for b in placed["boxes"] if b.get("hidden")
    )
    if stubs:
        out.append(f'<path class="ag-edge ag-dashed" d="{stubs}"/>')
    for item in placed["boxes"]:
        radius = item["h"] / 2 if item["kind"] == "tensor" else 4
        classes = f' class="{" ".join(item["classes"])}"' if item["classes"] else ""
        out.append(
            f'<g{classes} transform="translate({_num(item["x"])} {_num(item["y"])})">'
            f'<rect width="{_num(item["w"])}" height="{_num(item["h"])}" rx="{_num(radius)}"/>'
        )
        for n, (text, kind) in enumerate(item["lines"]):  # torch's names in monospace, our words not
            if kind == "freed":
                text = f'{escape(text[0])} <tspan class="ag-tag">{escape(text[1])}</tspan>'
            else:
                text = escape(text)
            kind = f' class="ag-{kind}"' if kind in ("alert", "tag") else ""
            out.append(f'<text x="{PAD}" y="{16 + LINE * n}"{kind}>{text}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)


# --- the text alternative -------------------------------------------------------------------


def describe(data, words=WORDS, html=False):
    """What the picture shows, in sentences made from the same record: its text alternative.
    ``html``: escaped, with torch's names and the recipe's variables as ``<code>``."""
    nodes, sentences = data["nodes"], []
    text = escape if html else str

    def code(name):
        return f"<code>{escape(name)}</code>" if html else name

    tensor = code(data["tensor"]["name"]) if "name" in data["tensor"] else text(words["tensor"])

    def say(key, **values):
        sentences.append(text(words[key]) % values)

    if nodes:
        layer = _layers(data)
        order = sorted(range(len(nodes)), key=lambda i: (-layer[i], i))
        listed = ", ".join(
            code(nodes[i]["name"]) + (f" ({code(_leaf_name(nodes[i]['leaf']))})" if nodes[i]["leaf"] else "")
            for i in order
        )
        if data["more"]:
            more = data["more"]
            listed = text(words[_counted("and more", more)]) % {"nodes": listed, "count": more}
        say("graph", tensor=tensor, nodes=listed)
    said = {}
    for node in nodes:
        leaves = [nodes[i]["leaf"] for i in node["inputs"] if nodes[i]["mark"] == "changed"]
        for entry in node["saved"]:
            if entry["state"] != "changed":
                continue
            slot = code(entry["slot"]) + (f" ({code(entry['tensor'])})" if "tensor" in entry else "")
            values = {"node": code(node["name"]), "slot": slot, "saved": entry["saved"], "now": entry["now"]}
            if "write" in entry:
                key, values["write"] = "changed by", code(entry["write"])
            elif entry["of_leaf"] and leaves:
                key = "changed leaf"
            else:
                key = "changed other"
            sentence = text(words[key]) % values
            said[sentence] = said.get(sentence, 0) + 1  # the same change in several nodes: once, counted
    sentences += [
        sentence if count == 1 else text(words["in nodes"]) % {"count": count, "sentence": sentence}
        for sentence, count in said.items()
    ]
    if data["hidden_changed"]:
        say(_counted("hidden changed", data["hidden_changed"]), count=data["hidden_changed"])
    verdict = data["verdict"]
    if verdict in ("refused", "allowed"):
        marked = next(n for n in nodes if n["mark"] == verdict)
        say(f"{verdict} verdict", leaf=code(_leaf_name(marked["leaf"])))
    elif verdict == "none":
        say("none verdict", tensor=tensor)
    else:
        say({"fails": "fails", "passes": "passes", "freed": "freed verdict"}[verdict])
    return " ".join(sentences)


def figure(data, words=WORDS, ident="autograd-graph", standalone=False):
    """``<figure>``: the picture, labelled by its caption, the text alternative."""
    caption = describe(data, words, html=True)
    return (
        f'<figure class="autograd-graph">{svg(data, words, standalone=standalone, labelledby=ident)}'
        f'<figcaption id="{escape(ident)}">{caption}</figcaption></figure>'
    )


# --- showing it -----------------------------------------------------------------------------


def mimebundle(data, ident):
    """What Jupyter is given to display a record: the record itself, its figure, its sentences."""
    return {
        MIME: data,
        "text/html": figure(data, ident=ident, standalone=True),
        "text/plain": describe(data),
    }


class Graph:
    """A record that IPython and Jupyter display: the site's notebook pages read ``MIME``."""

    shown = 0  # pictures made in this process: each caption gets an id of its own

    def __init__(self, data):
        self.data = data
        Graph.shown += 1
        self.ident = f"autograd-graph-{Graph.shown}"

    def _repr_mimebundle_(self, include=None, exclude=None):
        return mimebundle(self.data, self.ident)

    def __repr__(self):
        return describe(self.data)

    def save(self, folder):
        """Write the picture as ``<script>-<n>.svg`` in ``folder`` (made if missing)."""
        script = os.path.splitext(os.path.basename(sys.argv[0] or "graph"))[0] or "graph"
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{script}-{Graph.shown}.svg")
        with open(path, "w", encoding="utf-8") as file:
            file.write(svg(self.data, standalone=True))


def collect():
    """From now on, ``show_graph`` keeps its records for ``take()`` instead of showing them."""
    _collecting[:] = [True]


def take():
    """The records ``show_graph`` kept since the last ``take()``, in order (none unless collecting)."""
    records, _pending[:] = list(_pending), []
    return records


def show_graph(tensor, *written):
    """Draw the graph autograd recorded for ``tensor``, as it is now (call it before backward).

    ``written``: tensors the case then writes in place; a leaf among them that requires grad is
    marked as the write's target. In the site's build the picture goes into the page; in
    IPython or Jupyter it is displayed; in a plain script it is written to the folder that
    ``AUTOGRAD_RECIPES_GRAPHS`` names, if set."""
    data = record(tensor, *written, names=_names(sys._getframe(1)))
    if _collecting:
        _pending.append(data)
        return
    ipython = sys.modules.get("IPython")
    if ipython is not None and ipython.get_ipython() is not None:
        ipython.display.display(Graph(data))
    elif os.environ.get(GRAPHS_FOLDER):
        Graph(data).save(os.environ[GRAPHS_FOLDER])
