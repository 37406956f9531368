"""One site per language, side by side: ``build/html/<lang>/``.

For every page this adds what links it to its counterparts: the language
switch's links (relative, so they work under any sub-path and from ``file://``),
``<link rel="alternate" hreflang>`` for each language, a canonical link
(Sphinx writes it from ``html_baseurl``, which we point at this language's tree).
The OpenGraph tags, og:locale included, are page_summary's.

The switch is in the sidebar and, on phones, where furo hides the sidebar behind its
menu button, in the top bar (theme/templates/page.html puts it before HEADER_RIGHT's
icons). theme/static/language-switch.js makes its links keep the reader's ``#section``
and search query.
"""

from urllib.parse import urlsplit

from sphinx.util import logging

logger = logging.getLogger(__name__)

HEADER_RIGHT = '<div class="header-right">'  # furo's page.html: the top bar's icons


def _check_furo(app):
    """Warn (an error under -W) when furo's top bar has no HEADER_RIGHT to put the switch before."""
    from pathlib import Path

    import furo

    page = Path(furo.__file__).parent / "theme" / "furo" / "page.html"
    if HEADER_RIGHT not in page.read_text(encoding="utf-8"):
        logger.warning("furo's page.html no longer contains %r: phones get no language switch", HEADER_RIGHT)


def source_language(config):
    """The language the pages are written in: the first of ``site_languages``."""
    return next(iter(config.site_languages))


def _set_baseurl(app, config):
    if config.language not in config.site_languages:
        logger.warning(
            "language %r is not in site_languages %s", config.language, list(config.site_languages)
        )
    address = urlsplit(config.site_url)
    if config.site_url and (address.scheme not in {"http", "https"} or not address.netloc):
        logger.warning(
            "site_url %r (conf.py, or AUTOGRAD_RECIPES_SITE_URL) is not an http(s) address", config.site_url
        )
    elif config.site_url:
        config.html_baseurl = f"{config.site_url.rstrip('/')}/{config.language}/"


def _page_context(app, pagename, templatename, context, doctree):
    config = app.config
    suffix = app.builder.out_suffix
    depth = pagename.count("/")
    to_root = "../" * (depth + 1)  # from this page to build/html/
    links = []
    for code, name in config.site_languages.items():
        links.append(
            {
                "code": code,
                "name": name,
                "current": code == config.language,
                "url": f"{to_root}{code}/{pagename}{suffix}",
            }
        )
    context["language_links"] = links
    context["header_right"] = HEADER_RIGHT
    if config.site_url:
        base = config.site_url.rstrip("/")
        alternates = "".join(
            f'<link rel="alternate" hreflang="{code}" href="{base}/{code}/{pagename}{suffix}" />\n'
            for code in config.site_languages
        )
        source = source_language(config)
        alternates += (
            f'<link rel="alternate" hreflang="x-default" href="{base}/{source}/{pagename}{suffix}" />\n'
        )
        context["metatags"] = context.get("metatags", "") + alternates


def setup(app):
    app.add_config_value("site_languages", {"en": "English"}, "html", types=(dict,))
    app.add_config_value("site_url", "", "html", types=(str,))
    app.connect("config-inited", _set_baseurl)
    app.connect("builder-inited", _check_furo)
    app.connect("html-page-context", _page_context)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
