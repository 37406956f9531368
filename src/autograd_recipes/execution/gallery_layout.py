"""Every ``.py`` file of the recipes' folder is a recipe that runs, in a section the gallery shows.

sphinx-gallery publishes every ``.py`` file of the gallery's folder and of its sections as a
page and a card, but runs only those that ``filename_pattern`` matches (conf.py: the
``plot_`` prefix). A ``helpers.py`` beside the recipes becomes a recipe page whose code shows
no output, and a ``plot_x.py`` misnamed ``x.py`` is published unrun. A subfolder is a section
only with a header file (``README.rst``), and sections do not nest (``nested_sections`` is
False): sphinx-gallery leaves any other folder and its recipes out of the gallery without a
word. Each of these is a warning naming the file or folder (an error under -W), before
sphinx-gallery reads the folder.

Code that several recipes share goes in the kit (src/autograd_recipes/kit/), not beside the
recipes: every recipe imports the kit in its hidden line, and each download carries the kit's
code (kit/standalone.py), so it still runs alone; a module beside the recipes would be in no
download. The error message says so.
"""

import re
from pathlib import Path

from sphinx.util import logging

from autograd_recipes.project import PROJECT

logger = logging.getLogger(__name__)


def problems(recipes_dir, gallery_conf, root):
    """The gallery's unrun and unshown ``.py`` files, as messages naming each file or folder
    relative to ``root``: what sphinx-gallery publishes without running, then the folders it skips."""
    recipes_dir = Path(recipes_dir)
    sections = PROJECT.sections(recipes_dir)
    prefix = PROJECT.recipe_prefix

    def shown(path):
        return path.relative_to(root).as_posix()

    def published(path):  # sphinx-gallery matches its patterns against the whole path, as here
        return re.search(gallery_conf["ignore_pattern"], str(path)) is None

    found = []
    for section in sections:
        for path in sorted(section.glob("*.py")):
            if published(path) and not re.search(gallery_conf["filename_pattern"], str(path)):
                found.append(
                    f"{shown(path)}: sphinx-gallery publishes this file as a recipe page and a card but "
                    f"never runs it (its code would show no output): only files named {prefix}*.py run. "
                    f"If it is a recipe, rename it {prefix}<number>_<name>.py; if it is code that recipes "
                    f"share, move it out of {shown(section)}/ into the kit (src/autograd_recipes/kit/), whose "
                    "code each download carries"
                )
    skipped = {}
    for path in sorted(recipes_dir.rglob("*.py")):
        parts = path.relative_to(recipes_dir).parts
        if path.parent not in sections and published(path) and not any(p.startswith(".") for p in parts):
            skipped.setdefault(path.parent, []).append(path)
    for folder, files in skipped.items():
        count = f"{len(files)} .py file{'s' if len(files) > 1 else ''}"
        if folder.parent == recipes_dir:
            example = next((shown(PROJECT.gallery_header(s)) for s in sections[1:]), None)
            found.append(
                f"{shown(folder)}/: a folder of recipes without a README.rst: sphinx-gallery leaves it and "
                f"its {count} out of the gallery without a word. Give it a README.rst (the section's "
                f"heading and a sentence{f', as {example} has' if example else ''}), or move its "
                f"recipes into {shown(recipes_dir)}/"
            )
        else:
            found.append(
                f"{shown(folder)}/: the gallery's sections are the folders right under "
                f"{shown(recipes_dir)}/ (conf.py's nested_sections is False): sphinx-gallery leaves "
                f"this folder's {count} out of the gallery without a word. Move them into a section's folder"
            )
    return found


def _check(app, config):
    conf = config.sphinx_gallery_conf
    recipes_dir = (Path(app.srcdir) / conf["examples_dirs"]).resolve()
    for problem in problems(recipes_dir, conf, Path(app.confdir).resolve()):
        # the path goes in the message: Sphinx would read a location without a line as a docname
        logger.warning(problem, type="gallery_layout")


def setup(app):
    # after sphinx-gallery fills in its defaults (priority 10): ignore_pattern
    app.connect("config-inited", _check, priority=600)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
