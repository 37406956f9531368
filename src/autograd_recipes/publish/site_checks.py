"""What makes a built site unfit to publish, found after the build: a page missing or
empty although its source exists (or a root file, an offline copy), files myst-nb wrote
for pages, a page that loads something from another site (named with the source it came
from), a published file that shows the build machine's path or a kernel's temporary cell
file. Each function returns its problems as lines; the build prints them and fails."""

import re

from autograd_recipes.project import PROJECT

TEXT_SUFFIXES = {".html", ".txt", ".js", ".json", ".xml", ".ipynb", ".py", ".css", ".svg"}


def expected_pages():
    """Every page the sources make: one per document (as the catalogs count them), plus
    the pages Sphinx adds."""
    from autograd_recipes.i18n.check_catalogs import document_names

    return sorted(document_names(PROJECT.root) | {"search", "genindex"})


def missing_pages(html, languages):
    """A page of a built language that is missing or empty, or a missing root file."""
    problems = [
        f"{html / name}: missing"
        for name in ("index.html", "404.html", "sitemap.xml")
        if not (html / name).is_file()
    ]
    from autograd_recipes.publish import offline_copy

    for lang in languages:
        archive = html / offline_copy.archive_name(PROJECT.config["project"], lang)
        if not archive.is_file():
            problems.append(f"{archive}: missing (the offline copy of the {lang} pages)")
    if (html / "jupyter_execute").exists():
        problems.append(
            f"{html / 'jupyter_execute'}: files myst-nb wrote for pages (draw figures as inline SVG) "
            "would be published"
        )
    for lang in languages:
        for page in expected_pages():
            path = html / lang / f"{page}.html"
            if not path.is_file() or path.stat().st_size == 0:
                problems.append(f"{path}: missing or empty, although its source exists")
    return problems


def off_site_problems(html, lang):
    """Each thing a page of the language would load from another site (a recipe's or a
    cell's HTML output, a template, a stylesheet), named with the source it came from."""
    from autograd_recipes.publish import site_scan

    tree = html / lang
    problems = []
    for path, what, url in site_scan.off_site_loads(tree, PROJECT.root / "build" / f".site-scan-{lang}.json"):
        source = page_source(path.relative_to(tree))
        where = ""
        if source is not None:
            lines = source.read_text(encoding="utf-8", errors="replace").splitlines()
            number = next((n for n, line in enumerate(lines, 1) if url in line), None)
            where = f" (made from {source.relative_to(PROJECT.root)}{f':{number}' if number else ''})"
        problems.append(
            f"{path.relative_to(PROJECT.root)}: {what} loads {url} from another site{where}; "
            "a page must load nothing from another site (the site works offline and "
            "sends its readers nowhere else)"
        )
    return problems


def page_source(page):
    """The source file a page of a language tree is made from (a recipe, or a file of
    docs/), or None (a stylesheet, a page Sphinx makes)."""
    doc = page.with_suffix("").as_posix()
    if doc.startswith(f"{PROJECT.gallery_dir}/"):
        return next((r for r in PROJECT.recipes() if PROJECT.recipe_docname(r) == doc), None)
    return next((p for p in sorted(PROJECT.docs.glob(f"{doc}.*")) if p.suffix in {".rst", ".md"}), None)


# the file IPython compiles a notebook cell into, under the system's temporary folder and
# named by the kernel's process id: a warning raised in a cell names it
# (matched from its fixed part, then widened to the folder: a leading [^\s]* would take
# time quadratic in a long line's length)
KERNEL_CELL_FILE = re.compile(r"ipykernel_\d+/\d+\.py(?::\d+)?")
PATH_START = re.compile(r"[^\s\"'<>=]*$")


def path_problems(html):
    """Published files that show this checkout's absolute path (a traceback, a printed cwd)
    or a notebook kernel's temporary cell file (a warning's location, new on every run)."""
    needles = {str(PROJECT.root), str(PROJECT.root.resolve())}
    problems = []
    for path in sorted(html.rglob("*")) if html.is_dir() else []:
        if path.suffix not in TEXT_SUFFIXES or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if any(needle in line for needle in needles):
                problems.append(f"{path}:{number}: shows the build machine's path {PROJECT.root}")
                break
            cell_file = KERNEL_CELL_FILE.search(line) if "ipykernel_" in line else None
            if cell_file:
                folder = PATH_START.search(line[max(0, cell_file.start() - 300) : cell_file.start()]).group()
                problems.append(
                    f"{path}:{number}: shows the notebook kernel's temporary file {folder}{cell_file.group()} (a "
                    "warning raised in a cell names it; it changes with every run): show the warning "
                    "with warnings.catch_warnings(record=True) and print its category and message"
                )
                break
    return problems
