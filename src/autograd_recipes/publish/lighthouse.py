"""Lighthouse scores of the built site: ``python src/autograd_recipes/publish/lighthouse.py [--runs N] [--uncompressed]``.

Serves ``build/html`` on localhost the way GitHub Pages serves it (text files
gzip-compressed for a browser that accepts it, ``Cache-Control: max-age=600``),
then runs Lighthouse (the npm package pinned in package.json: ``npm ci`` first;
its default mobile profile: a mid-range phone, slow 4G and a 4x slower CPU,
simulated) in Chromium (``CHROME_PATH``, /usr/bin/chromium by default) on each
page type in each language of conf.py's ``site_languages``: the landing page, a
recipe, the no_grad guide, the claims page and the torch versions page. Prints the scores as a table
(the median of ``--runs`` runs per page) and exits 1 when a page scores under
``THRESHOLDS``, naming the page, the category and the audits that cost points.
Each run's report is kept in ``build/lighthouse/``. ``nox -s lighthouse`` runs it.

The mobile profile slows the CPU 4x, which Lighthouse calibrates for a host whose CPU
benchmark index is 1500-2000; on a slower or busier host the performance score drops
(Lighthouse then warns, and the table shows the host's index). ``--cpu-slowdown`` sets
the value Lighthouse's docs/throttling.md gives for such a host instead.
"""

import argparse
import functools
import gzip
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
from pathlib import Path

from autograd_recipes.project import PROJECT

LIGHTHOUSE = Path("node_modules", ".bin", "lighthouse")  # under the project's root (npm ci)
REPORTS = Path("build", "lighthouse")  # under the project's root
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
THRESHOLDS = {"performance": 95, "accessibility": 100, "best-practices": 100, "seo": 100}
# what GitHub Pages compresses (text); images and fonts are sent as they are
COMPRESSED = {".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", ".ipynb", ".py", ".inv"}
# as root, Chromium needs --no-sandbox; the rest keeps it off the (closed) network
CHROME_FLAGS = (
    "--headless=new --no-sandbox --disable-background-networking "
    "--disable-component-update --disable-sync --no-first-run"
)


def pages():
    """{page type: page name}: one page of each type, a recipe taken from recipes/plot_*.py."""
    recipe = PROJECT.recipes()[0].stem
    return {
        "landing": "index",
        "recipe": f"recipes/{recipe}",
        "guide": "no_grad_guide",
        "claims": "claims",
        "versions": "versions",  # the widest table: a 75 x 17 matrix
    }


class PagesHandler(http.server.SimpleHTTPRequestHandler):
    """GitHub Pages' way: gzip for text files when the client accepts it, short caching."""

    compress = True

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir() and self.path.split("?")[0].endswith("/"):
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (self.compress and accepts and path.is_file() and path.suffix in COMPRESSED):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return _Body(body)


class _Body:
    """What send_head returns: a file-like object that do_GET copies to the client."""

    def __init__(self, data):
        self.data = data

    def read(self, *_):
        data, self.data = self.data, b""
        return data

    def close(self):
        pass


def serve(folder, compress=True):
    """A server for ``folder`` on a free localhost port, in a thread; returns it (``.server_port``)."""
    handler = type("Handler", (PagesHandler,), {"compress": compress})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(folder))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def lighthouse(url, report, cpu_slowdown=None):
    """Run Lighthouse on ``url``; its JSON report (also written to ``report``)."""
    env = {**os.environ, "CHROME_PATH": os.environ.get("CHROME_PATH", "/usr/bin/chromium")}
    command = [
        str(PROJECT.root / LIGHTHOUSE),
        url,
        "--quiet",
        "--output=json",
        f"--output-path={report}",
        f"--only-categories={','.join(CATEGORIES)}",
        f"--chrome-flags={CHROME_FLAGS}",
    ]
    if cpu_slowdown:
        command.append(f"--throttling.cpuSlowdownMultiplier={cpu_slowdown:g}")
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0 or not report.is_file():
        raise SystemExit(
            f"autograd_recipes.publish.lighthouse: Lighthouse failed on {url}:\n{done.stdout}{done.stderr}"
        )
    return json.loads(report.read_text(encoding="utf-8"))


def scores(report):
    """{category: score out of 100} of a Lighthouse report."""
    return {c: round(report["categories"][c]["score"] * 100) for c in CATEGORIES}


def costs(report, category):
    """The audits that cost ``category`` points: title, and the shown value where there is one."""
    audits = report["audits"]
    found = []
    for ref in report["categories"][category]["auditRefs"]:
        audit = audits[ref["id"]]
        if ref["weight"] and audit["score"] is not None and audit["score"] < 1:
            shown = f" ({audit['displayValue']})" if audit.get("displayValue") else ""
            found.append(f"{ref['id']}: {audit['title']}{shown}")
    if category == "performance":  # what the metrics point at
        for key in ("render-blocking-resources", "unused-css-rules", "unused-javascript"):
            audit = audits.get(key)
            if audit and audit.get("details", {}).get("overallSavingsMs"):
                found.append(f"{key}: {audit['title']} ({audit.get('displayValue', '')})")
    return found


def below(table):
    """The (row, category, score) under THRESHOLDS."""
    return [
        (row, category, score)
        for row, row_scores in table.items()
        for category, score in row_scores.items()
        if score < THRESHOLDS[category]
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=PROJECT.root / "build" / "html", help="the built site")
    parser.add_argument("--runs", type=int, default=1, help="runs per page; the median counts")
    parser.add_argument("--uncompressed", action="store_true", help="serve without gzip (for comparison)")
    parser.add_argument("--page", choices=pages(), action="append", help="only these page types")
    parser.add_argument(
        "--cpu-slowdown",
        type=float,
        help="the mobile profile's CPU slowdown (default 4, for a host whose benchmark index is "
        "1500-2000); on a slower host, the value Lighthouse's docs/throttling.md gives for it",
    )
    args = parser.parse_args(argv)
    if not (PROJECT.root / LIGHTHOUSE).is_file():
        sys.exit(f"autograd_recipes.publish.lighthouse: {LIGHTHOUSE} is missing: run `npm ci` first")
    languages = PROJECT.languages
    for lang in languages:
        for name in pages().values():
            if not (args.html / lang / f"{name}.html").is_file():
                sys.exit(
                    f"autograd_recipes.publish.lighthouse: {args.html / lang / name}.html is missing: build the site first"
                )
    reports = PROJECT.root / REPORTS
    shutil.rmtree(reports, ignore_errors=True)
    reports.mkdir(parents=True)
    server = serve(args.html, compress=not args.uncompressed)
    table, reports, benchmarks, warnings = {}, {}, [], set()
    try:
        for lang in languages:
            for kind, name in pages().items():
                if args.page and kind not in args.page:
                    continue
                url = f"http://127.0.0.1:{server.server_port}/{lang}/{name}.html"
                runs = [
                    lighthouse(url, reports / f"{lang}-{kind}-{n + 1}.json", args.cpu_slowdown)
                    for n in range(args.runs)
                ]
                benchmarks += [r["environment"]["benchmarkIndex"] for r in runs]
                warnings.update(w for r in runs for w in r.get("runWarnings", []))
                runs.sort(key=lambda r: r["categories"]["performance"]["score"])
                reports[(lang, kind)] = runs[len(runs) // 2]  # the median run by performance
                table[(lang, kind)] = {c: statistics.median(scores(r)[c] for r in runs) for c in CATEGORIES}
                print(f"{lang} {kind}: {table[(lang, kind)]}", file=sys.stderr)
    finally:
        server.shutdown()
    served = "uncompressed" if args.uncompressed else "gzip"
    version = reports[next(iter(reports))]["lighthouseVersion"]
    slowdown = f", CPU slowdown {args.cpu_slowdown:g}x" if args.cpu_slowdown else ""
    print(f"Lighthouse {version}, mobile profile{slowdown}, served {served}, median of {args.runs} run(s);")
    # the mobile profile's 4x CPU slowdown assumes a host of 1500-2000 (docs/throttling.md
    # of Lighthouse): a slower or busier host scores lower on the CPU-bound metrics
    print(f"this host's CPU benchmark index: median {statistics.median(benchmarks):.0f}\n")
    print("| page | " + " | ".join(CATEGORIES) + " |")
    print("| --- |" + " --- |" * len(CATEGORIES))
    for (lang, kind), row in table.items():
        print(f"| {lang} {kind} | " + " | ".join(f"{row[c]:g}" for c in CATEGORIES) + " |")
    for warning in sorted(warnings):
        print(f"\nLighthouse: {warning}")
    failed = below(table)
    for (lang, kind), category, score in failed:
        print(f"\n{lang} {kind} ({pages()[kind]}.html): {category} {score:g} < {THRESHOLDS[category]}")
        for line in costs(reports[(lang, kind)], category):
            print(f"  {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
