"""What a build reuses from an earlier run is what that run wrote, byte for byte.

sphinx-gallery skips a recipe whose source matches its ``.md5`` and publishes the page it
generated last time (``docs/recipes/<name>.rst``, its images and downloads); myst-nb takes a
notebook's outputs from jupyter-cache's executed copy. Neither looks at those files again:
an output line edited there (a ``sed -i`` over ``docs/``, a hand edit of the cache) would be
published as if torch had printed it. So when a build finishes, the digest of every file
these runs wrote is recorded in ``build/reused_outputs.json``; before the next build reuses
them, a recipe whose generated files differ from the record (or have none) loses its
``.md5`` and runs again, and a notebook cache whose executed copies differ is removed and
made again. Each is printed, naming the first file that differs.
"""

import hashlib
import json
import sys
from pathlib import Path

from autograd_recipes import upstream
from autograd_recipes.execution.cache_key import remove_notebook_cache
from autograd_recipes.project import PROJECT

RECORD_NAME = "reused_outputs.json"


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _record_path():
    return PROJECT.build_dir / RECORD_NAME


def read_record():
    try:
        return json.loads(_record_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def gallery_outputs(gallery):
    """{path relative to the gallery folder: digest} of every file a recipe's run made
    there (its page, downloads, images, cost), by recipe stem; the .md5 is the source's."""
    found = {}
    for folder in upstream.gallery_section_folders(gallery):
        for path in sorted(folder.iterdir()) if folder.is_dir() else ():
            stem = upstream.gallery_file_stem(path.name, PROJECT.recipe_prefix)
            if path.is_file() and stem and not path.name.endswith(".md5"):
                found.setdefault(stem, {})[path.relative_to(gallery).as_posix()] = _digest(path)
    return found


def notebook_outputs(cache):
    """{path relative to the cache folder: digest} of jupyter-cache's executed notebooks."""
    cache = Path(cache)
    return {p.relative_to(cache).as_posix(): _digest(p) for p in sorted(cache.glob("executed/**/*.ipynb"))}


def _first_difference(now, recorded):
    for name in sorted(now.keys() | recorded.keys()):
        if now.get(name) != recorded.get(name):
            return name, "not written by a recorded run" if name not in recorded else "changed since its run"
    return None


def rerun_edited_recipes(app):
    gallery = Path(app.srcdir) / PROJECT.gallery_dir
    recorded = read_record().get("gallery", {})
    outputs = gallery_outputs(gallery)
    for md5 in upstream.gallery_md5_files(gallery):
        stem = md5.name.removesuffix(".py.md5")
        found = _first_difference(outputs.get(stem, {}), recorded.get(stem, {}))
        if found:
            md5.unlink()
            name, why = found
            print(
                f"autograd_recipes: {(gallery / name).relative_to(PROJECT.root)}: {why}; "
                f"{PROJECT.recipes_dir.relative_to(PROJECT.root)}/{stem}.py runs again so that "
                "its page shows what its run printed",
                file=sys.stderr,
            )


def remake_an_edited_notebook_cache(app, config):
    cache = Path(config.nb_execution_cache_path or "")
    if not config.nb_execution_cache_path or not cache.is_dir():
        return
    recorded = read_record().get("notebooks", {}).get(cache.name, {})
    found = _first_difference(notebook_outputs(cache), recorded)
    if found:
        remove_notebook_cache(cache, *found)


def record_outputs(app, exception):
    if exception is not None:
        return
    record = read_record()
    record["gallery"] = gallery_outputs(Path(app.srcdir) / PROJECT.gallery_dir)
    cache = app.config.nb_execution_cache_path
    if cache and Path(cache).is_dir():
        record.setdefault("notebooks", {})[Path(cache).name] = notebook_outputs(cache)
    path = _record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")


def setup(app):
    app.connect("config-inited", remake_an_edited_notebook_cache, priority=700)  # after cache_key's
    app.connect("builder-inited", rerun_edited_recipes, priority=450)  # before sphinx-gallery (500)
    app.connect("build-finished", record_outputs)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
