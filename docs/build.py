"""Build the site: ``python docs/build.py [--lang en|ko] [--gettext] [sphinx-build options]``.

The one place that knows how the site is built; ``nox -s docs``, the tests and
the benchmarks all call it. Output: ``build/html/<lang>/`` for each language,
and ``build/html/index.html``, which sends a reader to their language. English
is built first: it runs the recipes and notebooks, and the Korean build reuses
their results (sphinx-gallery's md5 check, myst-nb's jupyter-cache).
A non-zero exit means the site is not fit to publish (warnings count).
"""

import argparse
import os
import runpy
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
LANGUAGES = ("en", "ko")
FALLBACK_EPOCH = "1795996800"  # 2026-11-30, used outside a git checkout


def source_date_epoch():
    """Respect SOURCE_DATE_EPOCH; else the last commit's time, so a commit builds alike."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return os.environ["SOURCE_DATE_EPOCH"]
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%ct"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        out = ""
    return out or FALLBACK_EPOCH


def sphinx(builder, lang, outdir, extra=()):
    from sphinx.cmd.build import build_main

    os.environ["SOURCE_DATE_EPOCH"] = source_date_epoch()
    return build_main([
        "-b", builder, "-W", "--keep-going", "-q",
        "-c", str(ROOT),
        "-d", str(ROOT / "build" / "doctrees" / f"{builder}-{lang}"),
        "-D", f"language={lang}",
        *extra,
        str(ROOT / "docs"),
        str(outdir),
    ])


def build_html(languages=LANGUAGES, extra=()):
    from check_catalogs import catalog_problems

    # a message left untranslated or a catalog missing would show English on a Korean page, and a
    # translation with other code, targets, numbers or markup would change it: refuse, before any work
    for lang in languages:
        problems = [] if lang == "en" else catalog_problems(ROOT / "locales" / lang / "LC_MESSAGES")
        for problem in problems:
            print(f"docs/build.py: {problem}", file=sys.stderr)
        if problems:
            print(f"docs/build.py: the {lang} catalogs have the problems above; not building", file=sys.stderr)
            return 1
    html = ROOT / "build" / "html"
    for lang in languages:
        start = time.perf_counter()
        code = sphinx("html", lang, html / lang, extra)
        print(f"docs/build.py: {lang} built in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        if code:
            print(f"docs/build.py: the {lang} build failed (exit {code})", file=sys.stderr)
            return code
    write_site_root(html, languages)
    return 0


def write_site_root(html, languages):
    """The files above the language trees: index.html, 404.html and sitemap.xml."""
    site_url = runpy.run_path(str(ROOT / "conf.py"))["site_url"].rstrip("/") + "/"
    root = ROOT / "docs" / "_root"
    (html / "index.html").write_text((root / "index.html").read_text(encoding="utf-8"), encoding="utf-8")
    # a 404 page is served at any depth: its links start from the site's path
    page_404 = (root / "404.html").read_text(encoding="utf-8")
    (html / "404.html").write_text(page_404.replace("{base}", urlsplit(site_url).path), encoding="utf-8")
    tree = html / languages[0]
    pages = sorted(
        p.relative_to(tree).as_posix() for p in tree.rglob("*.html")
        if p.name not in {"genindex.html", "search.html"} and not p.relative_to(tree).as_posix().startswith("_")
    )
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
             'xmlns:xhtml="http://www.w3.org/1999/xhtml">']
    for page in pages:
        for lang in languages:
            lines.append(f"  <url><loc>{escape(site_url + lang + '/' + page)}</loc>")
            for alt in languages:
                lines.append(f'    <xhtml:link rel="alternate" hreflang="{alt}" '
                             f'href="{escape(site_url + alt + "/" + page)}"/>')
            lines.append("  </url>")
    lines.append("</urlset>")
    (html / "sitemap.xml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def build_gettext(extra=()):
    """Message templates (.pot) of the English source, for ``nox -s i18n``."""
    return sphinx("gettext", "en", ROOT / "build" / "gettext", extra)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", choices=LANGUAGES, action="append",
                        help="build only this language (repeatable); default: all")
    parser.add_argument("--gettext", action="store_true", help="write .pot templates instead")
    args, extra = parser.parse_known_args(argv)
    if args.gettext:
        return build_gettext(extra)
    return build_html(tuple(args.lang or LANGUAGES), extra)


if __name__ == "__main__":
    sys.exit(main())
