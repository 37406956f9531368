"""The ranked search for a pasted error message: its data, and its script.

``static/ranked-search.js`` (the search page's template loads it after Sphinx's
searchtools.js, whose search it extends) reads ``_static/error-index.js``, which the errors
page writes with ``write_data``: each message the site shows, with its wordings on other
releases and the pages that show it, and each family of messages with its situations (the
node a message names -> the pages that explain it). As an extension, this module puts
``static/`` among the site's static files.
"""

import json
import re
from pathlib import Path

STATIC = str(Path(__file__).with_name("static"))
SCRIPT = "error-index.js"  # in the output's _static/; the search page loads it

# the node a message names: torch 2.13 prints "Relu", older releases "ReluBackward0" or
# "ReluBackward"; a view error says "Output 0 of SplitBackward0 is a view"
NODE = re.compile(r"\boutput \d+ of ([A-Za-z][A-Za-z0-9]*?)(?:Backward\d*)?\b", re.I)
_SHAPE = re.compile(r"\[torch\.[\w.]+ \[([\d, ]*)\]\]")
_WORDS = re.compile(r"\w+")


def node_of(message):
    """The node a message names, without its ``Backward0``, or None."""
    found = NODE.search(message)
    return found.group(1) if found else None


def rank_of(message):
    """The number of dimensions of the tensor a version error names, or None."""
    found = _SHAPE.search(message)
    return None if found is None else len([d for d in found.group(1).split(",") if d.strip()])


def data(listed, families=(), listing=(), stands_for=None):
    """What the search page reads: {"words": [...], "pages": [...], "entries": [...],
    "families": [...]}, words and pages given by their place in the two lists (a message's
    words once each, lowercased, numbers left out: the search stems them as it stems a
    query).

    ``listed``: the errors page's entries ({kind, message, places: [(doc, ids, title)],
    wordings}). Each entry: [its pages, its wordings, its family's place]; its pages are
    those that show its message, a page of ``listing`` (pages that list messages rather
    than explain them) only where no other page does, and a page of ``stands_for``
    replaced by the page that stands for it. ``families``: [(their entries, [(nodes or
    None, docs, why)])], a situation's ``nodes`` (None: the messages that name none), the
    pages that explain it and its sentence. Each family: {"situations": [[nodes, pages,
    why]], "ranks": {page: [rank, ...]}, "shown": {node: [page, ...]}}: ``ranks`` the
    dimensions of the tensors its messages name on each page, ``shown`` the pages whose run
    printed each node."""
    stands_for = stands_for or {}

    def explaining_first(docs):
        explaining = [d for d in docs if d not in listing]
        return explaining or list(docs)

    words, pages, out, grouped = {}, {}, [], []
    family_of = {}
    for number, (members, situations) in enumerate(families):
        ranks, shown = {}, {}
        for entry in members:
            family_of[id(entry)] = number
            rank, node = rank_of(entry["message"]), node_of(entry["message"])
            for doc, _ids, _title in entry["places"]:
                if doc in listing:
                    continue
                page = pages.setdefault(doc, len(pages))
                if rank is not None:
                    ranks.setdefault(page, []).append(rank)
                if node is not None and page not in shown.setdefault(node.lower(), []):
                    shown[node.lower()].append(page)
        grouped.append(
            {
                "situations": [
                    [
                        None if nodes is None else [n.lower() for n in nodes],
                        [pages.setdefault(d, len(pages)) for d in explaining_first(docs)],
                        why,
                    ]
                    for nodes, docs, why in situations
                ],
                "ranks": {str(k): sorted(set(v)) for k, v in ranks.items()},
                "shown": shown,
            }
        )
    for entry in listed:
        messages = [entry["message"], *(m for m in entry["wordings"] if m != entry["message"])]
        shown_on = list(dict.fromkeys(stands_for.get(doc, doc) for doc, _ids, _title in entry["places"]))
        wordings = []
        for message in messages:
            found = dict.fromkeys(w.lower() for w in _WORDS.findall(f"{entry['kind']}: {message}"))
            wordings.append([words.setdefault(w, len(words)) for w in found if not w.isdigit()])
        shown_on = [pages.setdefault(doc, len(pages)) for doc in explaining_first(shown_on)]
        out.append([shown_on, wordings, family_of.get(id(entry))])
    return {"words": list(words), "pages": list(pages), "entries": out, "families": grouped}


def write_data(outdir, *args, **kwargs):
    """``_static/error-index.js`` of the output folder ``outdir``: ``data(...)`` as a script."""
    path = Path(outdir) / "_static" / SCRIPT
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data(*args, **kwargs), ensure_ascii=False, separators=(",", ":"))
    path.write_text(f"var ERROR_INDEX = {text};\n", encoding="utf-8")


def _static_files(app, config):
    config.html_static_path.append(STATIC)


def setup(app):
    app.connect("config-inited", _static_files)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
