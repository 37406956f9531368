"""Read a built site without a browser: resources it loads, links and anchors it has."""

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

OFF_SITE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.I)  # http://, https://, //host
# <link rel=...> values that make the browser fetch the target
LOADING_RELS = {
    "stylesheet",
    "icon",
    "preload",
    "modulepreload",
    "prefetch",
    "manifest",
    "apple-touch-icon",
    "shortcut",
    "dns-prefetch",
    "preconnect",
}


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])


def parse(path):
    parser = _Tags()
    parser.feed(Path(path).read_text(encoding="utf-8"))
    return parser


def loaded_resources(path):
    """(tag, url) of everything an HTML page makes the browser load."""
    found = []
    for tag, attrs in parse(path).tags:
        if tag in {"script", "img", "iframe", "audio", "video", "source", "embed", "track"} and attrs.get(
            "src"
        ):
            found.append((tag, attrs["src"]))
        if tag == "link" and attrs.get("href"):
            rels = set((attrs.get("rel") or "").lower().split())
            if rels & LOADING_RELS:
                found.append((tag, attrs["href"]))
        if tag == "object" and attrs.get("data"):
            found.append((tag, attrs["data"]))
    return found


CSS_URL = re.compile(r"""@import\s+(?:url\()?\s*['"]?([^'")\s;]+)|url\(\s*['"]?([^'")]+)""", re.I)


def _off_site_in(path):
    """[(what, url)] that the HTML or CSS file ``path`` would load from another site."""
    if path.suffix == ".html":
        return [(f"<{tag}>", url) for tag, url in loaded_resources(path) if OFF_SITE.match(url)]
    urls = (
        m.group(1) or m.group(2) for m in CSS_URL.finditer(path.read_text(encoding="utf-8", errors="replace"))
    )
    return [("CSS", url) for url in urls if OFF_SITE.match(url)]


def off_site_loads(site, memo=None):
    """(file, what, url) for every place a built HTML or CSS file would load something from
    another site: what is ``<tag>`` or ``CSS``.

    ``memo``: a JSON file of the findings of an earlier scan, by each file's SHA-256 and
    this module's own, rewritten after the scan: a rebuild rewrites few pages, and a file
    whose bytes and scanner are the same has the same findings, so only the others are read."""
    import hashlib
    import json

    site = Path(site)
    scanner = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    known = {}
    if memo is not None and Path(memo).is_file():
        try:
            saved = json.loads(Path(memo).read_text(encoding="utf-8"))
            known = saved["files"] if saved.get("scanner") == scanner else {}
        except (ValueError, KeyError, TypeError):
            known = {}  # a memo cut short or from elsewhere: scan everything
    found, seen = [], {}
    for path in [*sorted(site.rglob("*.html")), *sorted(site.rglob("*.css"))]:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        entry = known.get(digest)
        loads = [tuple(load) for load in entry] if isinstance(entry, list) else _off_site_in(path)
        seen[digest] = loads
        found += [(path, what, url) for what, url in loads]
    if memo is not None:
        Path(memo).write_text(json.dumps({"scanner": scanner, "files": seen}), encoding="utf-8")
    return found


def off_site_references(site):
    """Every place a built HTML or CSS file would load something from another site."""
    return [f"{path}: {what} loads {url}" for path, what, url in off_site_loads(site)]


def broken_links(site, site_path="/"):
    """Internal links (href/src) in every HTML file that lead to no file or no anchor."""
    site = Path(site)
    problems, ids_cache = [], {}
    for page in sorted(site.rglob("*.html")):
        for _tag, attrs in parse(page).tags:
            for key in ("href", "src"):
                url = attrs.get(key)
                if not url or OFF_SITE.match(url) or url.startswith(("mailto:", "javascript:", "data:")):
                    continue
                parts = urlsplit(url)
                if parts.path.startswith("/"):
                    if not parts.path.startswith(site_path):
                        problems.append(f"{page}: {url} is outside the site")
                        continue
                    target = site / unquote(parts.path[len(site_path) :])
                elif parts.path:
                    target = page.parent / unquote(parts.path)
                else:
                    target = page
                if target.is_dir():
                    target = target / "index.html"
                if not target.exists():
                    problems.append(f"{page}: {url} -> no file {target}")
                    continue
                if parts.fragment and target.suffix == ".html":
                    if target not in ids_cache:
                        ids_cache[target] = parse(target).ids
                    if unquote(parts.fragment) not in ids_cache[target]:
                        problems.append(f"{page}: {url} -> no anchor #{parts.fragment}")
    return problems


def main(argv=None):
    """``python -m autograd_recipes.publish.site_scan build/html [--site-path /base/]``: the
    checks a built site must pass before it is published (the Pages workflow runs it):
    nothing loaded from another site, no internal link or anchor that leads nowhere."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the built site (build/html)")
    parser.add_argument("--site-path", default="/", help="the path the site is served at (default /)")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"site_scan: {args.site}: no built site here (no index.html)", file=sys.stderr)
        return 1
    problems = off_site_references(args.site) + broken_links(args.site, args.site_path)
    for problem in problems:
        print(f"site_scan: {problem}", file=sys.stderr)
    if problems:
        print(f"site_scan: {len(problems)} problem(s); the site is not fit to publish", file=sys.stderr)
        return 1
    print(f"site_scan: {args.site}: no off-site load, every internal link resolves", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
