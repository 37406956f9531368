"""``.. error-family::`` and ``.. error-situation::``: the errors page's entries, one per
family of messages, written as prose by the page (its meaning and its fix, translated as
any page text is) and filled with the messages the site's runs printed.

A family claims the messages its ``:match:`` pattern (a regular expression, searched from
the start of ``Kind: message``) matches. Every message the error index lists belongs to
exactly one family, and every family has a message: a new message, or a pattern that
matches nothing or too much, fails the build naming the errors page's line.

A family whose messages name the node that saved a tensor (``... which is output 0 of
ReluBackward0``) sorts them into situations: ``.. error-situation:: PAGE [PAGE ...]``
with ``:nodes:`` (node names as torch 2.13 prints them, without ``Backward0``; older
releases' ``ReluBackward0`` and ``ReluBackward`` are the same node) and a sentence saying
what happened, or ``:nodes: (none)`` for the messages that name no node (the changed
tensor is a leaf: a parameter or an input). The pages a situation names come first; a
page whose run printed one of its nodes joins it. Each page a situation names must show
a message of its family, and each node a page shows must be in a situation: the runs
decide, the prose only explains. The search page reads the situations
(search/ranked.py): a pasted message lands on the pages of its node's situation,
and the result says why.
"""

import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from autograd_recipes.search import ranked
from autograd_recipes.search.ranked import node_of

logger = logging.getLogger(__name__)

NO_NODE = "(none)"  # :nodes: of a situation whose messages name no node


# the code that writes the errors page and its search data: a change to it writes them again
MAKERS = (Path(__file__), Path(__file__).with_name("error_index.py"), Path(ranked.__file__))


class error_family(nodes.General, nodes.Element):
    """A family's prose; the build adds its messages, pages and wordings."""


class error_situation(nodes.General, nodes.Element):
    """A situation's sentence; the build adds its nodes and its pages' links. In HTML, a
    disclosure whose summary is its nodes (``situation_nodes``): a reader picks the node
    of the message they have, and the page stays a few screens on a phone."""


class situation_nodes(nodes.Part, nodes.TextElement):
    """The node names of a situation, the summary of its disclosure."""


class ErrorFamily(SphinxDirective):
    has_content = True
    option_spec = {"match": directives.unchanged_required}

    def run(self):
        pattern = self.options["match"]
        try:
            re.compile(pattern)
        except re.error as err:
            raise self.error(f"error-family: :match: is no regular expression ({err}): {pattern!r}") from err
        for path in sorted(Path(self.config.torch_matrix_dir).glob("*.json")):
            self.env.note_dependency(str(path))  # its wordings come from the matrix
        for path in MAKERS:
            self.env.note_dependency(str(path))
        family = error_family(match=pattern)
        self.set_source_info(family)
        self.state.nested_parse(self.content, self.content_offset, family)
        return [family]


class ErrorSituation(SphinxDirective):
    required_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = {"nodes": directives.unchanged_required}

    def run(self):
        names = self.options["nodes"].split()
        situation = error_situation(
            docs=self.arguments[0].split(),
            nodes=[] if names == [NO_NODE] else names,
            no_node=names == [NO_NODE],
        )
        self.set_source_info(situation)
        self.state.nested_parse(self.content, self.content_offset, situation)
        return [situation]


def assign(families, listed):
    """{id(family): [entry, ...]} for the ``error_family`` nodes of a page, each entry of
    ``listed`` (error_index.entries) in the one family whose pattern matches it; a message
    no family or two families match, or a family no message matches, is a warning (the
    build's -W makes it an error) naming the family's line."""
    found = {id(f): [] for f in families}
    for entry in listed:
        text = f"{entry['kind']}: {entry['message']}"
        matching = [f for f in families if re.match(f["match"], text)]
        if len(matching) != 1:
            which = "no family matches" if not matching else f"{len(matching)} families match"
            logger.warning(
                "%s this message; give it one error-family: %s",
                which,
                text[:160],
                location=matching[1] if len(matching) > 1 else (families[0] if families else None),
            )
        if matching:
            found[id(matching[0])].append(entry)
    for family in families:
        if not found[id(family)]:
            logger.warning(
                "error-family matches no message the site shows: %r", family["match"], location=family
            )
    return found


def situations(family, members):
    """[(situation node, [doc, ...])] of a family: each situation's pages, those it names
    first, then the pages whose run printed one of its nodes (a message naming none, for
    the no-node situation). A page it names that shows none of the family's messages, and a
    node a page shows that no situation lists, are warnings naming the line."""
    shown = {}  # node (lowercase; None: no node) -> [doc, ...] in the entries' order
    pages = []
    for entry in members:
        node = node_of(entry["message"])
        for doc, _ids, _title in entry["places"]:
            shown.setdefault(node.lower() if node else None, [])
            if doc not in shown[node.lower() if node else None]:
                shown[node.lower() if node else None].append(doc)
            pages.append(doc)
    listed = []
    covered = set()
    for situation in family.findall(error_situation):
        docs = list(situation["docs"])
        for doc in docs:
            if doc not in pages:
                logger.warning(
                    "error-situation names %s, which shows no message of this family",
                    doc,
                    location=situation,
                )
        keys = [None] if situation["no_node"] else [n.lower() for n in situation["nodes"]]
        for key in keys:
            covered.add(key)
            docs += [d for d in shown.get(key, []) if d not in docs]
        listed.append((situation, docs))
    if listed:
        for key, docs in shown.items():
            if key not in covered:
                name = NO_NODE if key is None else key
                logger.warning(
                    "node %s, which %s shows, is in no error-situation of this family",
                    name,
                    docs[0],
                    location=family,
                )
    return listed


def _visit(css_class):
    def visit(self, node):
        self.body.append(self.starttag(node, "div", CLASS=css_class))

    return visit


def _depart(self, node):
    self.body.append("</div>\n")


def _visit_situation(self, node):
    self.body.append(self.starttag(node, "div", CLASS="error-situation") + "<details>")


def _depart_situation(self, node):
    self.body.append("</details></div>\n")


def _visit_summary(self, node):
    self.body.append(self.starttag(node, "summary", "", CLASS="error-nodes"))


def _depart_summary(self, node):
    self.body.append("</summary>\n")


def setup(app):
    app.add_node(error_family, html=(_visit("error-family"), _depart))
    app.add_node(error_situation, html=(_visit_situation, _depart_situation))
    app.add_node(situation_nodes, html=(_visit_summary, _depart_summary))
    app.add_directive("error-family", ErrorFamily)
    app.add_directive("error-situation", ErrorSituation)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
