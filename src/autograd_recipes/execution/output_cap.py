"""Cut what a recipe block, a notebook cell or a claim printed at ``max_output_bytes``, and fail the build.

A recipe that prints 20 MB would publish a 20 MB page in each language. When a
page has been read (``doctree-read``), the output of each recipe code block
(sphinx-gallery's ``sphx-glr-script-out`` literal blocks) and of each notebook
cell (the ``output`` nodes in myst-nb's cell output container) is measured in
UTF-8 bytes. Over ``max_output_bytes`` (conf.py), it is cut to that size on the
page and a warning names where it came from: ``recipes/<name>.py:<line>`` (the
block's first line, from sphinx-gallery's "GENERATED FROM PYTHON SOURCE LINES"
comments) or ``docs/<name>.md:<line>`` (the cell's ``{code-cell}`` line, from
myst-nb's source map), or the claim's ``id`` line in the ledger (a claim's evidence
also feeds the search index, where one huge token costs minutes: claims/claims.py
calls ``cap`` for it). The build runs with -W, so it fails. A page that was cut
is read again on the next build, so a rebuild that changes nothing fails too.

Not covered: myst-nb merges a cell's stream output before any extension sees it,
in time quadratic in the length of a line (myst_nb/core/utils.py, ``\r``
handling): a cell printing a single line of megabytes stalls the build there.
"""

from docutils import nodes
from sphinx.util import logging

from autograd_recipes import read_again, upstream
from autograd_recipes.project import PROJECT

logger = logging.getLogger(__name__)
SOURCE_LINES = upstream.GALLERY_SOURCE_LINES


def _nb_element(node, name):
    return isinstance(node, nodes.Element) and node.get("nb_element") == name


def _size(node):
    if _nb_element(node, "mime_bundle"):  # the page shows one of its renderings
        return max((_size(child) for child in node.children), default=0)
    return len(node.astext().encode())


def _cut(node, keep, note):
    """Keep the first ``keep`` bytes of ``node``'s text, and say so."""
    if _nb_element(node, "mime_bundle"):
        for rendering in node.children:
            for child in list(rendering.children):
                _cut(child, keep, note)
        return
    text = node.astext().encode()[:keep].decode(errors="ignore") + note
    if isinstance(node, nodes.literal_block):
        node[:] = [nodes.Text(text)]
        node.rawsource = text
    else:  # raw HTML cannot be cut anywhere: show the kept text instead
        node.replace_self(nodes.literal_block(text, text, classes=node["classes"]))


def _recipe_source(docname):
    gallery = PROJECT.gallery_dir + "/"
    if docname.startswith(gallery):
        return PROJECT.recipes_dir / (docname.removeprefix(gallery) + ".py")
    return None


def recipe_outputs(app, doctree, docname):
    """(location, what, output nodes) for each recipe code block's output."""
    source = _recipe_source(docname)
    if source is None:
        return
    line = None
    for node in list(doctree.findall(lambda n: isinstance(n, (nodes.comment, nodes.literal_block)))):
        match = SOURCE_LINES.fullmatch(node.astext()) if isinstance(node, nodes.comment) else None
        if match:
            line = match.group(1)
        elif isinstance(node, nodes.literal_block) and upstream.GALLERY_OUTPUT_CLASS in node["classes"]:
            yield (f"{source}:{line}" if line else docname), "this code block", [node]


def notebook_outputs(app, doctree, docname):
    """(location, what, output nodes) for each notebook cell's output."""
    source_map = app.env.metadata[docname].get("source_map") or []
    for cell in list(doctree.findall(lambda n: _nb_element(n, "cell_code"))):
        output = next(cell.findall(lambda n: _nb_element(n, "cell_code_output")), None)
        if output is None:
            continue
        index = cell.get("cell_index")
        line = source_map[index] if index is not None and index < len(source_map) else cell.line
        yield (docname, line), "this cell", list(output.children)


def cap_outputs(app, doctree):
    docname = app.env.docname
    cap(app, docname, [*recipe_outputs(app, doctree, docname), *notebook_outputs(app, doctree, docname)])


def cap(app, docname, found):
    """Cut each output of ``found`` ([(location, what, output nodes)]) whose size passes
    ``max_output_bytes``, with a warning at its location (the claims page calls this for
    its claims' evidence, located at each claim's ``id`` line in the ledger)."""
    limit = app.config.max_output_bytes
    for location, what, outputs in found:
        total = sum(_size(node) for node in outputs)
        if total <= limit:
            continue
        read_again.mark(app.env, "output cut", docname)
        logger.warning(
            "%s printed %s bytes, more than max_output_bytes (%s, conf.py): its output is cut on the page",
            what,
            f"{total:,}",
            f"{limit:,}",
            location=location,
        )
        note = f"\n... [cut: {total:,} bytes printed, max_output_bytes is {limit:,}]\n"
        budget = limit
        for node in outputs:
            size = _size(node)
            if size > budget:
                _cut(node, budget, note)
            budget = max(0, budget - size)


def setup(app):
    app.add_config_value("max_output_bytes", 100_000, "env", types=(int,))
    read_again.keep(app, "output cut")  # a page cut warns again on the next build
    app.connect("doctree-read", cap_outputs, priority=300)  # before anything reads the outputs
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
