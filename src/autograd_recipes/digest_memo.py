"""Digests of code that every build process computes again, kept in build/ between them.

The matrix and the claims hash each recipe's, notebook's and claim's code as syntax trees
(``ast.dump``, pure Python): about 0.1 s in each language's build and again in a rebuild
that changes nothing. ``remembered`` keeps each digest under the SHA-256 of its input text and
of the code that computes it (``version``), in ``build/.code-digests.json``: an edit to the
input or to that code gives another key, so a kept digest is never stale. The file is written
when the process ends (atomically; a failed write only costs the next process the work).
"""

import atexit
import hashlib
import json
import os
from pathlib import Path

from autograd_recipes.project import PROJECT

KEEP = 2000  # digests kept: this process's, then others' up to this many
_store, _used = None, set()


def version_of(module_file):
    """The version of a module's digests: its own source, hashed."""
    return hashlib.sha256(Path(module_file).read_bytes()).hexdigest()[:16]


def _path():
    return PROJECT.build_dir / ".code-digests.json"


def remembered(kind, version, text, compute):
    """``compute(text)``, or what it gave for the same ``kind``, ``version`` and ``text``."""
    global _store
    if _store is None:
        try:
            _store = json.loads(_path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            _store = {}
        atexit.register(_save)
    key = hashlib.sha256(f"{kind}\0{version}\0{text}".encode()).hexdigest()
    if key not in _store:
        _store[key] = compute(text)
    _used.add(key)
    return _store[key]


def _save():
    kept = {k: _store[k] for k in _used}
    for key, digest in _store.items():
        if len(kept) >= KEEP:
            break
        kept.setdefault(key, digest)
    path = _path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        partial.write_text(json.dumps(kept, sort_keys=True), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        pass
