"""``.. recipe-list::``: every recipe of the gallery, linked by its title, with its lede.

The list on the landing page is derived from the recipes themselves, so an eighth
recipe needs only its file and its catalog: each item is the recipe page's title and
the first paragraph of its docstring (its one-sentence lede), both taken from the
recipe's own doctree, which Sphinx has already translated from the recipe's catalog.
The items are filled in when the page is written; the page is read again whenever a
recipe's generated page changes. ``lede`` is also each page's summary (page_summary).
A page with one of sphinx-gallery's mini-galleries is read again when the recipes' uses
change.
"""

from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from autograd_recipes import upstream
from autograd_recipes.i18n.first_gloss import GLOSS
from autograd_recipes.i18n.site_languages import source_language
from autograd_recipes.project import PROJECT


def _without_glosses(node):
    """A recipe glosses a term at its first use on the recipe's page; on the landing page
    the same terms come from several recipes and the page's own text, so glosses go."""
    for text in list(node.findall(nodes.Text)):
        plain = GLOSS.sub("", text.astext())
        if plain != text.astext():
            text.parent.replace(text, nodes.Text(plain))
    return node


class recipe_list(nodes.General, nodes.Element):
    """Where the list goes; replaced when the page is resolved."""


class RecipeList(SphinxDirective):
    def run(self):
        for doc in recipes(self.env):
            self.env.note_dependency(self.env.doc2path(doc))
        return [recipe_list()]


def recipes(env):
    return sorted(d for d in PROJECT.recipe_docnames() if d in env.found_docs)


def lede(env, doc, doctree=None):
    """A page's first paragraph of its own text (a recipe's: its docstring's lede), as
    Sphinx translated it: the first paragraph directly in a section, not one that an
    extension added with a class of its own (the torch versions line, the notebook
    download) nor one inside a note. ``doctree``: the page's, if at hand."""
    for paragraph in (doctree or env.get_doctree(doc)).findall(nodes.paragraph):
        if isinstance(paragraph.parent, nodes.section) and not paragraph["classes"]:
            return paragraph
    raise ValueError(f"{env.doc2path(doc)}: the page has no paragraph after its title")


def _fill(app, doctree, docname):
    for placeholder in list(doctree.findall(recipe_list)):
        if app.builder.format != "html":  # e.g. gettext: the text belongs to the recipes' catalogs
            placeholder.parent.remove(placeholder)
            continue
        items = nodes.bullet_list()
        for doc in recipes(app.env):
            link = nodes.reference("", "", internal=True, refuri=app.builder.get_relative_uri(docname, doc))
            link += nodes.inline("", app.env.titles[doc].astext())
            paragraph = nodes.paragraph("", "", link, nodes.Text(" — "))
            own = lede(app.env, doc).deepcopy()  # docutils' copy: the node, not the doctree above it
            if app.config.language != source_language(app.config):
                _without_glosses(own)
            paragraph.extend(own.children)
            items += nodes.list_item("", paragraph)
        placeholder.replace_self(items)


def _minigallery_source(app, doctree):
    """A page with a mini-gallery (sphinx-gallery's ``minigallery``: the recipes that use a
    name) is read again when the recipes' uses change: sphinx-gallery's backreferences file,
    which it rewrites only then."""
    conf = app.config.sphinx_gallery_conf
    if not conf.get("backreferences_dir") or app.env.docname in recipes(app.env):
        return
    if any(upstream.GALLERY_CARDS_CLASS in raw.astext() for raw in doctree.findall(nodes.raw)):
        path = Path(app.srcdir, conf["backreferences_dir"], "backreferences_all.json")
        app.env.note_dependency(str(path))


def setup(app):
    app.add_node(recipe_list)
    app.add_directive("recipe-list", RecipeList)
    app.connect("doctree-read", _minigallery_source)
    app.connect("doctree-resolved", _fill)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
