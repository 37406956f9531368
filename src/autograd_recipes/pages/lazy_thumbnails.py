"""What a page loads: the recipe cards' thumbnails only when the reader nears them.

Every card of sphinx-gallery (the gallery index, and the mini-galleries of the guide
and the overview) shows its recipe's graph picture (graph_figures). Their images are
marked ``loading="lazy"``: the mini-galleries sit below the first screen, and a page's
first paint then does not share a slow connection with them (Lighthouse counted them
against the guide's largest paint). A card in view still loads at once, as on the
gallery index.
"""

from docutils import nodes

from autograd_recipes import upstream


def _lazy_thumbnails(app, doctree, docname):
    if app.builder.format != "html":
        return
    opened = False  # inside a card: between its opening raw block and its caption
    for node in list(doctree.findall(lambda n: isinstance(n, (nodes.raw, nodes.image)))):
        if isinstance(node, nodes.raw):
            if upstream.GALLERY_CARD_CLASS in node.astext():
                opened = True
            elif upstream.GALLERY_CARD_TITLE_CLASS in node.astext():
                opened = False
        elif opened:
            node["loading"] = "lazy"


def setup(app):
    app.connect("doctree-resolved", _lazy_thumbnails)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
