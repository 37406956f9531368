"""What this project relies on in other packages beyond their documented options.

Each name here is one assumption about another package's files, node classes or
internals, so that an upgrade that breaks it fails in one place, with a test
that names the assumption (tests/test_upstream.py checks each one against the
installed versions). The extensions import these instead of reaching into the
packages themselves.
"""

import re
from pathlib import Path

from autograd_recipes.project import PROJECT

# --- sphinx-gallery ------------------------------------------------------------------
#: the class of a code block's captured output in the generated page
GALLERY_OUTPUT_CLASS = "sphx-glr-script-out"
#: the container around the download links at the end of an example's page
GALLERY_FOOTER_CLASS = "sphx-glr-footer"
#: a recipe card, in the raw HTML sphinx-gallery writes for a gallery index or a mini-gallery:
#: the block that opens it, its caption and the description we add below the caption
GALLERY_CARD_CLASS = "sphx-glr-thumbcontainer"
GALLERY_CARD_TITLE_CLASS = "sphx-glr-thumbnail-title"
GALLERY_CARD_DESCRIPTION_CLASS = "sphx-glr-thumbnail-description"
#: the container of a gallery's (or a mini-gallery's) cards
GALLERY_CARDS_CLASS = "sphx-glr-thumbnails"
#: the note above an example's download links, and the link of each download format
GALLERY_DOWNLOAD_NOTE_CLASS = "sphx-glr-download-link-note"
GALLERY_DOWNLOAD_CLASSES = (("sphx-glr-download-python", ".py"), ("sphx-glr-download-jupyter", ".ipynb"))
#: the link to the zip of both, in the footer
GALLERY_ZIP_CLASS = "sphx-glr-download-zip"
#: the placeholder thumbnail sphinx-gallery makes for an example without a picture
GALLERY_THUMBNAIL = "thumb/sphx_glr_{stem}_thumb.png"
#: the comment before each generated block, naming its lines in the example's source
GALLERY_SOURCE_LINES = re.compile(r"GENERATED FROM PYTHON SOURCE LINES (\d+)-\d+")


def gallery_file_config(text):
    """The ``# sphinx_gallery_<name> = <value>`` comments of an example's source, as
    sphinx-gallery reads them (py_source_parser.extract_file_config: any name, the value
    read as a Python literal); ``remove_config_comments`` keeps them off the page."""
    from sphinx_gallery.py_source_parser import extract_file_config

    return extract_file_config(text)


def gallery_notebook(path, gallery_conf, target_dir, outputs=None):
    """The notebook (a dict, nbformat 4) sphinx-gallery makes of the example at ``path``, with
    the hidden lines kept: its blocks as py_source_parser reads them, config comments removed
    as ``remove_config_comments`` asks, through notebook.jupyter_notebook (sphinx-gallery's own
    passes the code through its ignore-block removal first). Each code block is one code cell,
    in order, after ``first_notebook_cell`` if set; ``outputs`` ({a code block's first source
    line: its cell's outputs}) fills them."""
    from sphinx_gallery import notebook, py_source_parser

    blocks = []
    for label, content, line in py_source_parser.split_code_and_text_blocks(str(path))[1]:
        if label == "code" and gallery_conf["remove_config_comments"]:
            content = py_source_parser.remove_config_comments(content)
        blocks.append(py_source_parser.Block(label, content, line))
    made = notebook.jupyter_notebook(blocks, gallery_conf, target_dir)
    if outputs:
        code = [b for b in blocks if b.type == "code"]
        first = int(gallery_conf["first_notebook_cell"] is not None)
        cells = [c for c in made["cells"] if c["cell_type"] == "code"][first : first + len(code)]
        for block, cell in zip(code, cells, strict=True):
            cell["outputs"] = list(outputs.get(block.lineno, []))
    return made


def gallery_code_lines(path):
    """The first source line of each code block of the example at ``path``, in order (the
    ``lineno`` of py_source_parser's blocks, which its page's block comments name)."""
    from sphinx_gallery import py_source_parser

    return [b.lineno for b in py_source_parser.split_code_and_text_blocks(str(path))[1] if b.type == "code"]


#: a code block's captured output in the page sphinx-gallery generates (gen_rst.CODE_OUTPUT):
#: the output's lines indented by four spaces (blank lines left as they are)
GALLERY_OUTPUT_BLOCK = re.compile(
    r"^\.\. rst-class:: sphx-glr-script-out\n\n \.\. code-block:: none\n\n((?:(?:    .*|[ \t]*)\n)*)", re.M
)
GALLERY_BLOCK_HEADER = re.compile(r"^\.\. GENERATED FROM PYTHON SOURCE LINES (\d+)-\d+\n", re.M)


def gallery_block_pages(rst):
    """{first source line of a block: its part of the page} of the reST sphinx-gallery generates
    for an example (gen_rst.rst_blocks: every block but the title's opens with its
    ``GENERATED FROM PYTHON SOURCE LINES`` comment, a code block followed by what it output)."""
    parts = GALLERY_BLOCK_HEADER.split(rst)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts), 2)}


def gallery_printed(part):
    """The text a block printed, as its part of the page shows it (trailing blank lines gone), or
    None if it printed nothing."""
    found = GALLERY_OUTPUT_BLOCK.search(part)
    if found is None:
        return None
    lines = [line.removeprefix("    ") if line.strip() else "" for line in found.group(1).split("\n")]
    return "\n".join(lines).rstrip("\n") + "\n"


def gallery_md5_file(gallery_conf, fname):
    """sphinx-gallery skips an example whose ``<its page's folder>/<name>.py.md5`` matches its
    source (gen_rst.md5sum_is_current); removing the file makes the next build run it."""
    recipes = Path(gallery_conf["src_dir"]) / gallery_conf["examples_dirs"]
    docname = PROJECT.recipe_docname(PROJECT.recipe_named(fname, recipes), recipes)
    return Path(gallery_conf["src_dir"]) / f"{docname}.py.md5"


def gallery_run_example(fname, target_dir, src_dir, gallery_conf):
    """sphinx-gallery's making of one example's page, run included (gen_rst.generate_file_rst:
    the unit its parallel mode hands to worker processes, gallery_conf with it): (intro,
    title, (seconds, memory), out_vars with "passing" or "formatted_exception")."""
    from sphinx_gallery.gen_rst import generate_file_rst

    return generate_file_rst(fname, target_dir, src_dir, gallery_conf)


def gallery_output_current(source, target):
    """Whether sphinx-gallery would skip the example ``source`` whose copy in the gallery is
    ``target``: ``<target>.md5`` holds the checksum of the source's text (md5sum_is_current;
    the copy is the source's, made again by ``_replace_md5`` whenever they differ)."""
    from sphinx_gallery.utils import get_md5sum

    md5 = Path(f"{target}.md5")
    return md5.is_file() and md5.read_text() == get_md5sum(source, mode="t")


def gallery_mark_current(source, target):
    """Write the checksum that makes sphinx-gallery skip ``source`` (its md5 file, returned)."""
    from sphinx_gallery.utils import get_md5sum

    md5 = Path(f"{target}.md5")
    md5.write_text(get_md5sum(source, mode="t"))
    return md5


def gallery_first_image(images):
    """The first picture path an example's ``ImagePathIterator`` handed out (its ``paths``
    list, not a documented attribute): sphinx-gallery makes the example's thumbnail from it."""
    return images.paths[0]


def gallery_section_folders(gallery):
    """Where sphinx-gallery writes the files of a generated gallery's examples: the folder of
    each section (the gallery's own, a subfolder per subsection), each with its image folders."""
    sections = [Path(gallery) / s.relative_to(PROJECT.recipes_dir) for s in PROJECT.sections()]
    return [f for s in sections for f in (s, *(s / i for i in GALLERY_IMAGE_FOLDERS))]


def gallery_md5_files(gallery_dir):
    """Every example's md5 file in a generated gallery folder, section by section."""
    return [p for folder in gallery_section_folders(gallery_dir) for p in sorted(folder.glob("*.py.md5"))]


def gallery_cost_file(srcdir, docname):
    """``<gallery dir>/<name>.cost.json``: the last run's ``{"time": seconds, ...}``, kept when
    an unchanged example is skipped (gen_rst._write_cached_cost)."""
    return Path(srcdir) / f"{docname}.cost.json"


# --- Sphinx's searchtools.js ---------------------------------------------------------
# search/static/ranked-search.js and search/korean_stemmer.js extend Search.performTermsSearch
# (searchTerms, excludedTerms) -> [[docname, title, anchor, descr, score, filename, kind]],
# ranked-search.js also Search._parseQuery(query) -> [query, searchTerms, ...]; they read
# Search._index's terms, titleterms, filenames, docnames and titles, Scorer.term and
# SearchResultKind.text. tests/test_browser.py's pasted-message and Korean search tests
# fail in Chromium when searchtools.js changes them.

# --- the extensions' stylesheets -------------------------------------------------------
#: stylesheet file name (its start: myst-nb's carries a hash) -> the class prefixes its rules
#: select (pages/page_assets.py links each only where they are; tests/test_browser.py
#: checks in Chromium that no rule of one left out matches an element of the page)
OPTIONAL_STYLESHEETS = {
    "mystnb.": ("cell", "pasted-", "linenos"),  # cell, cell_input, cell_output
    "sg_gallery.css": ("sphx-glr",),
    "pygments.css": ("highlight",),
    "copybutton.css": ("highlight",),
}
#: the extensions' scripts that serve only their own markup, by the start of the file's name,
#: and the class prefixes their code selects (sphinx-copybutton's buttons go on highlighted
#: code, sphinx-gallery's tag filter on the tags of a gallery's cards)
OPTIONAL_SCRIPTS = {
    "clipboard.min.js": ("highlight",),
    "copybutton.js": ("highlight",),
    "sg-tags.js": ("sphx-glr-tag",),
}

# --- myst-nb and jupyter-cache -------------------------------------------------------
#: what an extension's setup() imports beyond its own module (myst_nb's imports its Sphinx
#: part there): a language's build imports these ahead, while the previous one builds
SETUP_IMPORTS = ("myst_nb.sphinx_ext",)
#: myst-nb writes executed notebooks and their images to ``<outdir>/../jupyter_execute``
MYST_NB_OUTPUT_FOLDER = "jupyter_execute"


def notebook_exec_data(env, docname):
    """myst-nb's record of a notebook's execution ({"runtime", "succeeded", ...}) or None."""
    from myst_nb.sphinx_ import NbMetadataCollector

    return NbMetadataCollector.get_exec_data(env, docname)


def read_notebook(path, env, text):
    """The notebook myst-nb's reader makes of a MyST Markdown page (no outputs)."""
    from myst_nb.core.read import create_nb_reader

    return create_nb_reader(str(path), env.myst_config, env.mystnb_config, text).read(text)


def is_notebook_text(text):
    from myst_nb.core.read import is_myst_markdown_notebook

    return is_myst_markdown_notebook(text)


def cached_outputs(cache_path, notebook):
    """``notebook`` with the outputs of its cached run (jupyter-cache), or None."""
    from jupyter_cache import get_cache

    try:
        return get_cache(cache_path).merge_match_into_notebook(notebook)[1]
    except KeyError:  # no executed copy matches this source
        return None


# --- what sphinx-gallery generates per example, and Sphinx per document ---------------
#: a picture sphinx-gallery's scrapers save for an example (``sphx_glr_<stem>_001.svg``) or
#: its card's thumbnail (``thumb/sphx_glr_<stem>_thumb.svg``), in ``<gallery dir>/images/``
GALLERY_IMAGE_NAME = re.compile(r"sphx_glr_(?P<stem>.+)_(?:\d{3}|thumb)\.\w+")
#: the folders under a gallery folder where those pictures are
GALLERY_IMAGE_FOLDERS = ("images", "images/thumb")


def gallery_file_stem(name, prefix):
    """The example a file in a generated gallery folder was made from (``plot_x.rst``,
    ``plot_x.py.md5``, ``plot_x.codeobj.json``, ``sphx_glr_plot_x_001.svg``…), or None for
    a file no example made (the index, the execution-environment stamp)."""
    found = GALLERY_IMAGE_NAME.fullmatch(name)
    stem = found["stem"] if found else name.split(".", 1)[0]
    return stem if stem.startswith(prefix) else None


#: Sphinx's HTML builder keeps each page's source under ``_sources/<docname><suffix>.txt``,
#: and the files of ``download`` and ``image`` under ``_downloads/`` and ``_images/``
SPHINX_SOURCES_FOLDER, SPHINX_DOWNLOADS_FOLDER, SPHINX_IMAGES_FOLDER = "_sources", "_downloads", "_images"
