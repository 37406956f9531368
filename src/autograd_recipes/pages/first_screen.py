"""A recipe's first screen is its lede and its first case: the downloads are one line under the lede.

What goes under a page's lede is ordered here, in ``UNDER_LEDE``, whichever extension
adds its part and at whichever event: the downloads line (here), a notebook's download
(pages/notebook_download.py), the versions banner (matrix/torch_matrix.py). Each
calls ``add_under_lede``.

sphinx-gallery opens each recipe page with a note, "Go to the end to download the
full example code", above the title; on a phone it fills the first screen, and it
is what a search result quotes. It is removed; in its place, under the lede, one
line links the same downloads (the script and the notebook that sphinx-gallery
writes, and that its footer at the end of the page still offers).
"""

from docutils import nodes
from sphinx import addnodes
from sphinx.locale import _

from autograd_recipes import upstream

NOTE_CLASS = upstream.GALLERY_DOWNLOAD_NOTE_CLASS
FORMATS = upstream.GALLERY_DOWNLOAD_CLASSES


def _downloads(doctree):
    """{suffix: download_reference} of the gallery footer's links."""
    found = {}
    for container in doctree.findall(nodes.container):
        for cls, suffix in FORMATS:
            if cls in container["classes"]:
                ref = next(iter(container.findall(addnodes.download_reference)), None)
                if ref is not None:
                    found[suffix] = ref
    return {suffix: found[suffix] for _cls, suffix in FORMATS if suffix in found}


# the parts under a page's lede, by class, in the order a reader meets them
UNDER_LEDE = ("page-downloads", "notebook-download", "torch-versions")


def _part(node):
    """The ``UNDER_LEDE`` place of a node added under a lede, or None."""
    return next((UNDER_LEDE.index(c) for c in node.get("classes", []) if c in UNDER_LEDE), None)


def lede_end(section):
    """Where a page's lede ends: after the title and the paragraphs right after it, before the
    parts added under it and the first case, cell or subsection."""
    index = 1
    while (
        index < len(section.children)
        and isinstance(section[index], (nodes.paragraph, addnodes.only))
        and _part(section[index]) is None
    ):
        index += 1
    return index


def add_under_lede(section, node):
    """Put ``node`` (its class one of ``UNDER_LEDE``) under the section's lede, after the
    parts that come before it there and before those that come after."""
    place = _part(node)
    index = lede_end(section)
    while index < len(section.children):
        part = _part(section[index])
        if part is None or part > place:
            break
        index += 1
    section.insert(index, node)


def move_downloads_up(app, doctree):
    notes = [
        only
        for only in doctree.findall(addnodes.only)
        if any(NOTE_CLASS in note["classes"] for note in only.findall(nodes.note))
    ]
    if not notes:
        return
    for only in notes:
        only.parent.remove(only)
    downloads = _downloads(doctree)
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None or not downloads:
        return
    line = nodes.paragraph(classes=["page-downloads"])
    line += nodes.Text(_("Download this recipe:") + " ")
    labels = {".py": _("script"), ".ipynb": _("notebook")}
    for number, (suffix, ref) in enumerate(downloads.items()):
        if number:
            line += nodes.Text(" · ")
        link = ref.deepcopy()
        link.children = [nodes.inline("", f"{labels[suffix]} ({suffix})")]
        line += link
    add_under_lede(section, line)


def setup(app):
    app.connect("doctree-read", move_downloads_up)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
