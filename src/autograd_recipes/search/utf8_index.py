"""The search index written as UTF-8.

Sphinx writes ``searchindex.js`` with ``json.dumps``' default, which escapes every
non-ASCII character: six bytes (``\\ud14c``) for a Hangul syllable that UTF-8 spells in
three. The search page loads the whole index on its first visit, so the Korean one is a
quarter smaller written as UTF-8. After the build the same data is written again,
unescaped; Sphinx's next build reads it back (it opens the file as UTF-8), and the browser
reads it as the page's own encoding, UTF-8.
"""

import json
from pathlib import Path

from sphinx.search import js_index


def rewrite(path):
    """Write the index at ``path`` again as UTF-8, its data unchanged."""
    data = js_index.loads(path.read_text(encoding="utf-8"))
    text = json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    path.write_text(js_index.PREFIX + text + js_index.SUFFIX, encoding="utf-8")


def _rewrite_index(app, exception):
    path = Path(app.outdir) / "searchindex.js"
    if exception is None and app.builder.format == "html" and path.is_file():
        rewrite(path)


def setup(app):
    app.connect("build-finished", _rewrite_index)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
