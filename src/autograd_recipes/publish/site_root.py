"""The files above the language trees: ``index.html`` (sends a reader to their language),
``404.html`` (in every language at once, its text from each language's sphinx.po) and
``sitemap.xml`` (every page in every language, with its alternates)."""

import json
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

from autograd_recipes.project import PROJECT

# the 404 page, in every language at once (translated in each language's sphinx.po)
NOT_FOUND_TITLE = "Page not found"
NOT_FOUND_TEXT = "This page does not exist. Start again from the home page:"


def _translated(lang, message):
    import polib

    po_path = PROJECT.root / "locales" / lang / "LC_MESSAGES" / "sphinx.po"
    entry = polib.pofile(str(po_path)).find(message) if po_path.is_file() else None
    return entry.msgstr if entry and entry.msgstr else message


def write_site_root(html, languages):
    """The files above the language trees: index.html, 404.html and sitemap.xml, for the
    languages built (every language of conf.py's ``site_languages`` unless ``--lang``)."""
    config = PROJECT.config
    site_url = config["site_url"].rstrip("/") + "/"
    names, project = config["site_languages"], config["project"]
    source = languages[0]  # where a reader goes whose languages the site lacks: the source, if built
    root = PROJECT.root / "docs" / "_root"
    base = urlsplit(site_url).path  # a 404 page is served at any depth: its links start from here
    fill = {"source": source, "project": escape(project)}
    (html / "index.html").write_text(
        (root / "index.html")
        .read_text(encoding="utf-8")
        .format(
            **fill,
            languages_js=json.dumps(list(languages)),
            alternates="\n".join(
                f'<link rel="alternate" hreflang="{lang}" href="{lang}/index.html">' for lang in languages
            ),
            links="\n".join(
                f'  <li><a href="{lang}/index.html" hreflang="{lang}" lang="{lang}">{escape(names[lang])}</a></li>'
                for lang in languages
            ),
        ),
        encoding="utf-8",
    )
    sections, titles = [], []
    for lang in languages:
        title, text = _translated(lang, NOT_FOUND_TITLE), _translated(lang, NOT_FOUND_TEXT)
        titles.append(title)
        sections.append(
            f'<section lang="{lang}"><h1>{escape(title)}</h1><p>{escape(text)}</p>'
            f'<p><a href="{base}{lang}/index.html" hreflang="{lang}">{escape(project)} ({escape(names[lang])})</a></p>'
            "</section>"
        )
    (html / "404.html").write_text(
        (root / "404.html")
        .read_text(encoding="utf-8")
        .format(**fill, titles=escape(" · ".join(titles)), sections="\n".join(sections)),
        encoding="utf-8",
    )
    tree = html / languages[0]
    pages = sorted(
        p.relative_to(tree).as_posix()
        for p in tree.rglob("*.html")
        if p.name not in {"genindex.html", "search.html"}
        and not p.relative_to(tree).as_posix().startswith("_")
    )
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">',
    ]
    for page in pages:
        for lang in languages:
            lines.append(f"  <url><loc>{escape(site_url + lang + '/' + page)}</loc>")
            for alt in languages:
                lines.append(
                    f'    <xhtml:link rel="alternate" hreflang="{alt}" '
                    f'href="{escape(site_url + alt + "/" + page)}"/>'
                )
            lines.append("  </url>")
    lines.append("</urlset>")
    (html / "sitemap.xml").write_text("\n".join(lines) + "\n", encoding="utf-8")
