"""The package's layers (the README's layout table): each folder of src/autograd_recipes
imports only from the rows above it, and no module imports itself through others. Read
from the source's syntax trees, imports inside functions included."""

import ast
import re
import subprocess
import sys

import background
from conftest import JOBS, ROOT

PACKAGE = ROOT / "src" / "autograd_recipes"
# a layer's row: | `src/autograd_recipes/<folder>/` | or | `src/autograd_recipes/<module>.py`, ... |
ROW = re.compile(r"^\| `src/autograd_recipes/(\w+)(/|\.py)`")


def layers():
    """{layer: place}, bottom first, from the README: a folder is its own layer; the
    top-level modules (project.py and the rows of base modules) are the layer "base"."""
    order = {}
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        found = ROW.match(line)
        if found:
            name = found.group(1) if found.group(2) == "/" else "base"
            order.setdefault(name, len(order))
    return order


def modules():
    """{module name: its file} of the package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(("autograd_recipes", *path.relative_to(PACKAGE).with_suffix("").parts))
        found[name.removesuffix(".__init__")] = path
    return found


def imports():
    """{module: {module of the package it imports}}."""
    names = modules()
    graph = {}
    for name, path in names.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("autograd_recipes")
            ):
                for alias in node.names:
                    whole = f"{node.module}.{alias.name}"
                    targets.add(whole if whole in names else node.module)
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name.startswith("autograd_recipes")}
        graph[name] = {t for t in targets if t in names and t != name and t != "autograd_recipes"}
    return graph


def layer_of(module):
    parts = module.split(".")
    return parts[1] if len(parts) >= 2 and (PACKAGE / parts[1]).is_dir() else "base"


def test_every_folder_of_the_package_is_a_layer_of_the_readme():
    order = layers()
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert folders <= set(order), sorted(folders - set(order))
    assert order["base"] == 0


def upward_imports(graph, order):
    return [
        f"{module} ({layer_of(module)}) imports {target} ({layer_of(target)})"
        for module, targets in graph.items()
        for target in targets
        if layer_of(target) != layer_of(module) and order[layer_of(target)] > order[layer_of(module)]
    ]


def cycles(graph):
    found = []
    for start in graph:  # a path back to the start, depth first
        stack, seen = [(start, [start])], set()
        while stack:
            module, path = stack.pop()
            for target in graph.get(module, ()):
                if target == start:
                    found.append(" -> ".join([*path, start]))
                elif target not in seen:
                    seen.add(target)
                    stack.append((target, [*path, target]))
    return sorted(set(found))


def test_each_layer_imports_only_from_the_layers_below_it():
    upward = upward_imports(imports(), layers())
    assert not upward, "\n".join(sorted(upward))


def test_no_module_imports_itself_through_others():
    found = cycles(imports())
    assert not found, "\n".join(found)


def test_the_checks_find_an_upward_import_and_a_circle():
    """The control: the same checks on a planted graph find what they must refuse."""
    graph = {
        "autograd_recipes.pages.a": {"autograd_recipes.publish.b"},  # pages sits below publish
        "autograd_recipes.publish.b": {"autograd_recipes.project"},
        "autograd_recipes.project": {"autograd_recipes.pages.a"},  # base imports pages: up, and a circle
    }
    assert upward_imports(graph, layers()) == [
        "autograd_recipes.pages.a (pages) imports autograd_recipes.publish.b (publish)",
        "autograd_recipes.project (base) imports autograd_recipes.pages.a (pages)",
    ]
    assert len(cycles(graph)) == 3  # the one circle, from each of its modules


IMPORT_ALL = (
    "import importlib, pkgutil, autograd_recipes\n"
    "for m in pkgutil.walk_packages(autograd_recipes.__path__, 'autograd_recipes.'):\n"
    "    importlib.import_module(m.name)\n"
    "print('imported')\n"
    "from autograd_recipes.project import PROJECT\n"
    "PROJECT.languages\n"
)


def _outside(folder):
    command = [sys.executable, "-c", IMPORT_ALL]
    return background.Task(
        lambda: (folder, subprocess.run(command, cwd=folder, capture_output=True, text=True))
    )


JOBS.register("imports outside", "imported_outside", _outside)


imported_outside = JOBS.fixture("imports outside")


def test_every_module_imports_outside_a_checkout(imported_outside):
    """The project is looked up when a fact about it is first asked for, not when a module is
    imported (project.py): a download's reader, or a tool run elsewhere, imports any module.
    Control: asking for the project there says what is missing."""
    folder, done = imported_outside
    assert done.stdout == "imported\n", done.stderr
    assert done.returncode == 1 and f"no conf.py in {folder} or above it" in done.stderr, done.stderr


def test_the_noxfile_and_the_build_keep_to_their_sizes():
    """The noxfile's sessions stay a few lines each and build.py orchestration only (issue 39's
    budgets): what grows past them belongs in a module of the package."""
    sizes = {path: len((ROOT / path).read_text(encoding="utf-8").splitlines()) for path in LINE_BUDGETS}
    assert {p: n for p, n in sizes.items() if n > LINE_BUDGETS[p]} == {}, sizes


LINE_BUDGETS = {"noxfile.py": 120, "src/autograd_recipes/publish/build.py": 450}
