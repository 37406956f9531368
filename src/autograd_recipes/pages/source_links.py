"""On every page: a link to the file to edit on the repository, and a prefilled issue.

The file to edit is the one a contributor changes to change the page:

* a page of the source language: its ``.rst``/``.md`` under ``docs/``, or, for a page
  sphinx-gallery generates, the recipe ``recipes/<name>.py`` (the gallery's index: its
  header file, ``recipes/README.rst``);
* a translated page: its catalog, ``locales/<lang>/LC_MESSAGES/<page>.po``.

The link is furo's own edit button (``source_edit_link``, a theme option, which furo
puts into every page's context as ``theme_source_edit_link``): this extension sets it
for each page, since no single pattern covers all three kinds of file. The footer
(theme/templates/page.html) repeats it as text, beside "report a problem": a new issue
on the repository whose title and body carry the page's address, its language and the
torch version the page was built with.

The repository and branch come from conf.py's ``site_repository`` and ``site_branch``
(set by the Pages workflow; see README). A page whose file is not in the checkout
fails the build (a warning, an error under -W), naming the page and the path.
"""

import re
from html import unescape
from importlib.metadata import version
from pathlib import Path
from urllib.parse import quote, urlencode

from sphinx.locale import _  # Korean for these strings: locales/ko/LC_MESSAGES/sphinx.po
from sphinx.util import logging

from autograd_recipes.i18n.site_languages import source_language
from autograd_recipes.project import GALLERY_HEADERS, PROJECT

logger = logging.getLogger(__name__)

TAG = re.compile(r"<[^>]+>")
REPOSITORY = re.compile(r"[A-Za-z0-9-]+/[A-Za-z0-9._-]+")  # GitHub's owner/name


def github(config):
    return f"https://github.com/{config.site_repository}"


def _galleries(app):
    """(generated folder, source folder) pairs of sphinx-gallery, as paths under srcdir."""
    return [((Path(app.srcdir) / PROJECT.gallery_dir).resolve(), PROJECT.recipes_dir)]


def source_file(app, pagename):
    """The file of the repository that a page of the source language is made from, or
    None for a page with no source (genindex, search)."""
    if pagename not in app.env.all_docs:
        return None
    path = Path(app.env.doc2path(pagename)).resolve()
    for generated, source in _galleries(app):
        if path.is_relative_to(generated):
            rel = path.relative_to(generated)
            names = GALLERY_HEADERS if rel.stem == "index" else (rel.stem + ".py",)
            found = [source / rel.parent / n for n in names if (source / rel.parent / n).is_file()]
            return found[0] if found else source / rel.parent / names[0]
    return path


def edit_path(app, pagename):
    """The page's file to edit, relative to the repository root (conf.py's folder), or None."""
    root = Path(app.confdir).resolve()
    if app.config.language == source_language(app.config):
        path = source_file(app, pagename)
    elif pagename in app.env.all_docs:
        locales = Path(app.config.locale_dirs[0])
        locales = locales if locales.is_absolute() else Path(app.srcdir) / locales
        path = (locales / app.config.language / "LC_MESSAGES" / f"{pagename}.po").resolve()
    else:
        path = None
    if path is None:
        return None
    if not path.is_file() or not path.is_relative_to(root):
        logger.warning(
            "page %s: its file to edit, %s, is not in the repository; the page would link to nothing",
            pagename,
            path,
            location=pagename,
        )
        return None
    return path.relative_to(root).as_posix()


def edit_url(config, path):
    return f"{github(config)}/edit/{quote(config.site_branch)}/{quote(path)}"


def report_url(config, page_url, title):
    """A new issue on the repository, its title and body filled in."""
    body = "\n".join(
        [
            f"{_('Page')}: {page_url}",
            f"{_('Language')}: {config.language}",
            f"torch: {version('torch')}",
            "",
            _("Describe what is wrong and what you expected:"),
            "",
        ]
    )
    query = urlencode({"title": _("Problem on the page “%s”") % title, "body": body}, quote_via=quote)
    return f"{github(config)}/issues/new?{query}"


def _page_context(app, pagename, templatename, context, doctree):
    config = app.config
    # Sphinx's own pages have their title in their template, not in the context
    own = {"search": _("Search"), "genindex": _("Index")}
    title = unescape(TAG.sub("", context.get("title") or own.get(pagename, pagename)))
    page_url = context.get("pageurl") or pagename + app.builder.out_suffix
    context["report_url"] = report_url(config, page_url, title)
    path = edit_path(app, pagename)
    if path is None:
        return
    url = edit_url(config, path)
    # furo's edit button: its template formats the option with the page's file name, and
    # the quoted URL has no braces for format() to read
    context["theme_source_edit_link"] = url
    context["edit_url"] = url
    own = config.language == source_language(config)
    context["edit_text"] = _("Edit this page") if own else _("Edit this translation")


def _check_config(app, config):
    if not REPOSITORY.fullmatch(config.site_repository):
        logger.warning(
            "site_repository %r (conf.py, or AUTOGRAD_RECIPES_REPOSITORY) is not a GitHub "
            "repository's owner/name",
            config.site_repository,
        )
    if not config.site_branch:
        logger.warning("site_branch (conf.py, or AUTOGRAD_RECIPES_BRANCH) is empty")


def setup(app):
    app.add_config_value("site_repository", "", "html", types=(str,))
    app.add_config_value("site_branch", "main", "html", types=(str,))
    app.connect("config-inited", _check_config)
    app.connect("html-page-context", _page_context)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
