"""Serve the built site where conf.py's LOCAL_SITE_URL says a local build lives
(``nox -s serve``; ``python -m autograd_recipes.publish.serve [PORT]``): its canonical
links, sitemap and 404 page point there. Run ``nox -s docs`` first."""

import functools
import http.server
import sys
import urllib.parse

from autograd_recipes.project import PROJECT


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    local = urllib.parse.urlsplit(PROJECT.config["LOCAL_SITE_URL"])
    port = int(argv[0]) if argv else local.port
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(PROJECT.root / "build" / "html")
    )
    with http.server.ThreadingHTTPServer((local.hostname, port), handler) as server:
        print(f"serving build/html at http://{local.hostname}:{port}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
