"""A recipe runs again when a module of the checkout that it imports changes.

sphinx-gallery skips a recipe whose source matches its ``.md5``, and cache_key adds the
environment and the kit: a module that the recipe imports from the checkout (a file beside
it, where sphinx-gallery runs it and puts it on ``sys.path``, or at the project's root, the
build's first import path) is in neither, so after an edit of that module the old output
would be published. Before sphinx-gallery runs, each recipe's imports are read from its
syntax tree (and those of the modules they find, in turn, whatever code the import runs),
every file they name under the project's root is hashed, and a recipe whose files differ
from those recorded before its last run loses its ``.md5``, named. Installed packages (torch,
this package) are not the checkout's: the environment's key covers them.
"""

import ast
import hashlib
import json
import sys
from pathlib import Path

from autograd_recipes import upstream
from autograd_recipes.project import PROJECT

RECORD_NAME = "recipe_imports.json"  # under build/: {recipe: {imported file: digest}}


def _module_files(name, folders):
    """The files that importing the module ``name`` (``a.b.c``) runs, found in ``folders``:
    each package's ``__init__.py`` on the way and the module's own file."""
    files = []
    for folder in folders:
        place = Path(folder)
        for part in name.split("."):
            place = place / part
            if place.with_suffix(".py").is_file():
                files.append(place.with_suffix(".py"))
                break
            if (place / "__init__.py").is_file():
                files.append(place / "__init__.py")
            elif not place.is_dir():  # neither a package nor a namespace package
                break
    return files


def _imported_names(path):
    """(module name, folder it is relative to or None) of every import in ``path``'s code,
    inside functions and ignored blocks too; none for a file Python cannot parse."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = None
            if node.level:  # relative: from the importing file's package
                base = path.parent
                for _ in range(node.level - 1):
                    base = base.parent
            module = node.module or ""
            if module:
                names.append((module, base))
            # "from pkg import name": name may be a submodule
            names += [(f"{module}.{a.name}".lstrip("."), base) for a in node.names if a.name != "*"]
    return names


def checkout_imports(recipe, root):
    """The files under ``root`` that ``recipe`` imports, directly or through one another."""
    root = Path(root).resolve()
    folders = (Path(recipe).resolve().parent, root)  # sphinx-gallery's and the build's import paths
    found, todo = set(), [Path(recipe).resolve()]
    while todo:
        for name, base in _imported_names(todo.pop()):
            for path in _module_files(name, (base,) if base else folders):
                path = path.resolve()
                if path.is_relative_to(root) and path not in found:
                    found.add(path)
                    todo.append(path)
    found.discard(Path(recipe).resolve())
    return found


def digests(recipe, root):
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(checkout_imports(recipe, root))
    }


def _record_path():
    return PROJECT.build_dir / RECORD_NAME


def _read_record():
    try:
        return json.loads(_record_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def rerun_recipes_whose_imports_changed(app):
    root = PROJECT.root
    conf = app.config.sphinx_gallery_conf
    recipes_dir = Path(app.srcdir) / conf["examples_dirs"]
    recorded, now = _read_record(), {}
    for recipe in PROJECT.recipes(recipes_dir):
        name = recipe.resolve().relative_to(root).as_posix()
        now[name] = digests(recipe, root)
        md5 = upstream.gallery_md5_file(conf, recipe.name)
        before = recorded.get(name, {})
        changed = [f for f in sorted(now[name].keys() | before.keys()) if now[name].get(f) != before.get(f)]
        if changed and md5.is_file():  # (without its .md5 it runs anyway)
            md5.unlink()
            print(
                f"autograd_recipes: {name} imports {', '.join(changed)}, which changed since its last run: "
                "it runs again",
                file=sys.stderr,
            )
    # the files as this build's runs see them: a recipe whose .md5 is gone runs now, or next time
    path = _record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({k: v for k, v in now.items() if v}, indent=1, sort_keys=True), encoding="utf-8"
    )


def setup(app):
    # after reused_outputs (450), before sphinx-gallery (500)
    app.connect("builder-inited", rerun_recipes_whose_imports_changed, priority=460)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
