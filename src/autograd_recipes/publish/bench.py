"""Measure the build: ``python src/autograd_recipes/publish/bench.py`` (``nox -s bench``).

Works on a fresh copy of the project in a temporary folder, so your tree and
caches are untouched. Prints wall times, how many recipes and notebooks each
build executed, the Korean build's share of the English build, page weight per
page type, and checks the budgets (exit 1 if one fails). Then it runs the test suite in
the checkout (as `nox -s tests` does), on the same machine, and budgets it against the
cold build. Machines here differ threefold in speed (importing torch takes 1.0 CPU second
on one, 2.7 on another), so every time budget is a ratio of times this one run measured.
"""

import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polib

from autograd_recipes.project import EXECUTION_LOG_VARIABLE, PROJECT
from autograd_recipes.publish.site_scan import CSS_URL, OFF_SITE, loaded_resources

NOT_COPIED = shutil.ignore_patterns(
    "build", ".git", ".nox", "node_modules", "__pycache__", ".pytest_cache", "*.mo"
)
LANG_TIME = re.compile(r"autograd_recipes\.publish\.build: (\w+) built in ([\d.]+) s")
PAGE_TYPES = {
    "landing": "index.html",
    "overview": "inplace_overview.html",
    "recipe": "recipes/plot_05_indexing_and_inplace.html",
    "gallery": "recipes/index.html",  # a graph thumbnail per recipe
    "guide": "no_grad_guide.html",
    "claims": "claims.html",
    "search": "search.html",  # loads the language's searchindex.js
}
# the budgets, as ratios of times this one run measures
SUITE_TO_COLD = 5.0  # the test suite, at most this many cold builds (both languages)
TRANSLATION_SHARE = 0.25  # the Korean build, at most this share of the English one
NO_CHANGE_SHARE = 0.12  # a rebuild that changes nothing, at most this share of the cold build


def build(project, log):
    """Run one `nox -s docs`-equivalent build; return (seconds, per-language seconds, executions)."""
    log.write_text("")
    env = {**os.environ, EXECUTION_LOG_VARIABLE: str(log), "NO_COLOR": "1"}
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "autograd_recipes.publish.build"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if result.returncode:
        sys.exit(f"bench: build failed:\n{result.stdout}{result.stderr}")
    output = result.stdout + result.stderr
    recipes = [line.split(" ", 1)[1] for line in log.read_text().splitlines() if line.startswith("recipe ")]
    notebooks = output.count("Executing notebook with kernel")
    per_lang = {lang: float(s) for lang, s in LANG_TIME.findall(output)}
    return seconds, per_lang, recipes, notebooks


def first_visit_bytes(html_root, page):
    """Bytes a first visit downloads: the HTML and every local file it loads (and CSS url()s)."""
    seen, total, kinds = set(), 0, {}

    def add(path, kind):
        nonlocal total
        path = path.resolve()
        if path in seen or not path.is_file():
            return
        seen.add(path)
        size = path.stat().st_size
        total += size
        kinds[kind] = kinds.get(kind, 0) + size
        if path.suffix == ".css":
            for match in CSS_URL.finditer(path.read_text(encoding="utf-8", errors="replace")):
                url = (match.group(1) or match.group(2)).split("?")[0].split("#")[0]
                if url and not OFF_SITE.match(url) and not url.startswith("data:"):
                    add(path.parent / url, "css-asset")

    add(html_root / page, "html")
    for tag, url in loaded_resources(html_root / page):
        url = url.split("?")[0]
        if OFF_SITE.match(url) or url.startswith("data:"):
            continue
        kind = {"script": "js", "img": "img"}.get(tag, Path(url).suffix.lstrip(".") or tag)
        add((html_root / page).parent / url, kind)
    return total, kinds


def main():
    failures = []

    def budget(label, ok, detail):
        print(f"  [{'ok' if ok else 'FAIL'}] {label}: {detail}")
        if not ok:
            failures.append(label)

    with tempfile.TemporaryDirectory(prefix="autograd-recipes-bench-") as tmp:
        project = Path(tmp) / "project"
        shutil.copytree(PROJECT.root, project, ignore=NOT_COPIED)
        shutil.rmtree(project / "docs" / PROJECT.gallery_dir, ignore_errors=True)  # generated
        log = Path(tmp) / "executions.log"
        rows = []

        cold = build(project, log)
        rows.append(("cold build (venv ready, caches empty)", cold))
        nochange = build(project, log)
        rows.append(("rebuild, no change", nochange))

        recipe = project / "recipes" / "plot_03_clone_before_inplace.py"
        recipe.write_text(recipe.read_text() + "# edited by the benchmark\n")
        edited_recipe = build(project, log)
        rows.append(("rebuild after editing one recipe", edited_recipe))

        catalog = project / "locales/ko/LC_MESSAGES/recipes/plot_06_parameter_decay.po"
        po = polib.pofile(str(catalog))
        entry = next(e for e in po if e.msgid == "The safe version")
        entry.msgstr += " (수정됨)"
        po.save()
        edited_message = build(project, log)
        rows.append(("rebuild after editing one Korean message", edited_message))

        print(
            f"{'build':<44} {'wall':>7}" + "".join(f" {lang:>7}" for lang in PROJECT.languages) + "  executed"
        )
        for label, (seconds, per_lang, recipes, notebooks) in rows:
            columns = "".join(f" {per_lang.get(lang, 0):6.1f}s" for lang in PROJECT.languages)
            print(f"{label:<44} {seconds:6.1f}s{columns}  {len(recipes)} recipes, {notebooks} notebooks")

        html = project / "build" / "html"
        print("\nfirst visit, bytes downloaded (HTML, CSS, JS, images, CSS assets):")
        weights = {}
        for lang in PROJECT.languages:
            for kind, page in PAGE_TYPES.items():
                total, parts = first_visit_bytes(html / lang, page)
                weights[lang, kind] = total
                detail = ", ".join(f"{k} {v / 1024:.0f}" for k, v in sorted(parts.items()))
                print(f"  {lang} {kind:<9} {total / 1024:7.1f} KB  ({detail} KB)")

        cold_s, cold_lang, cold_recipes, cold_notebooks = cold
        print("\nbudgets:")
        budget(
            "no example executes twice in one build",
            len(cold_recipes) == len(set(cold_recipes)) == len(PROJECT.recipes())
            and cold_notebooks == len(PROJECT.notebooks()),
            f"cold build ran {len(cold_recipes)} recipe runs ({len(set(cold_recipes))} distinct) "
            f"and {cold_notebooks} notebook runs",
        )
        source = PROJECT.source_language
        for lang in PROJECT.translations:
            share = cold_lang[lang] / cold_lang[source]
            budget(
                f"{lang} build <= {TRANSLATION_SHARE:.0%} of {source} build",
                share <= TRANSLATION_SHARE,
                f"{cold_lang[lang]:.1f} s / {cold_lang[source]:.1f} s = {share:.0%}",
            )
        ratio = nochange[0] / cold_s
        budget(
            f"no-change rebuild <= {NO_CHANGE_SHARE:.0%} of cold build",
            ratio <= NO_CHANGE_SHARE,
            f"{nochange[0]:.1f} s / {cold_s:.1f} s = {ratio:.0%}",
        )
        budget(
            "editing one recipe runs that recipe and nothing else",
            edited_recipe[2] == [recipe.name] and edited_recipe[3] == 0,
            f"ran {edited_recipe[2]} and {edited_recipe[3]} notebooks",
        )
        budget(
            "editing a Korean message runs nothing",
            edited_message[2] == [] and edited_message[3] == 0,
            f"ran {len(edited_message[2])} recipes and {edited_message[3]} notebooks",
        )
        heaviest_search = max(weights[lang, "search"] for lang in PROJECT.languages)
        budget(
            "search page first visit (with its index) <= 400 KB",
            heaviest_search <= 400 * 1024,
            f"{heaviest_search / 1024:.1f} KB; index "
            + ", ".join(
                f"{lang} {size / 1024:.0f} KB ({len(gzip.compress(data, 9)) / 1024:.0f} KB gzipped)"
                for lang in PROJECT.languages
                for data in [(html / lang / "searchindex.js").read_bytes()]
                for size in [len(data)]
            ),
        )
        # every recipe page, each with its graph pictures, not only the page type's example
        recipe_weights = {
            (lang, PROJECT.recipe_docname(r)): first_visit_bytes(
                html / lang, f"{PROJECT.recipe_docname(r)}.html"
            )[0]
            for lang in PROJECT.languages
            for r in PROJECT.recipes()
        }
        (lang, name), heaviest = max(recipe_weights.items(), key=lambda item: item[1])
        budget(
            "recipe page first visit <= 250 KB of HTML, CSS and JS",
            heaviest <= 250 * 1024,
            f"heaviest {heaviest / 1024:.1f} KB ({lang}/{name}.html)",
        )
        runs = page_seconds(html / source / "build_report.html")
        longest = max(runs, key=runs.get)
        guide = runs[PAGE_TYPES["guide"]]
        budget(
            "the guide's notebook runs in at most half the cold build",
            guide <= cold_s / 2,
            f"{guide:.1f} s of {cold_s:.1f} s ({', '.join(f'{k} {v:.1f} s' for k, v in cold_lang.items())}); "
            f"the longest page's run (the pages run side by side): {runs[longest]:.1f} s ({longest})",
        )
        suite_s, summary = suite()
        budget(
            f"test suite <= {SUITE_TO_COLD:g} x cold build",
            suite_s is not None and suite_s <= SUITE_TO_COLD * cold_s,
            f"{summary}: {suite_s or 0:.0f} s / {cold_s:.1f} s = {(suite_s or 0) / cold_s:.1f} x",
        )
    return 1 if failures else 0


def page_seconds(report):
    """{page: its run time} in a cold build, as the build report shows them, by the page's
    file (``recipes/plot_01_….html``). The pages run beside one another, so each is its wall
    time under the others' load."""
    runs = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", report.read_text(encoding="utf-8"), re.S):
        found = re.search(r'class="measured">([\d.]+) (m?s)<', row)
        page = re.search(r'<a class="reference internal" href="([^"#]+)"', row)
        if found and page:
            runs[page.group(1)] = float(found.group(1)) / (1000 if found.group(2) == "ms" else 1)
    return runs


def suite():
    """(seconds, pytest's summary line) of the test suite run in the checkout, as `nox -s
    tests` runs it (the copy has no .git, which some tests read), or (None, what failed)."""
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=PROJECT.root,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    lines = result.stdout.splitlines()
    summary = next((line.strip("= ") for line in reversed(lines) if " in " in line), "")
    if result.returncode:
        failed = [line for line in lines if line.startswith("FAILED")]
        return None, f"the suite failed ({summary or result.stderr.strip()[-200:]}): " + "; ".join(failed[:5])
    return seconds, summary


if __name__ == "__main__":
    sys.exit(main())
