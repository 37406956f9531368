"""src/autograd_recipes/publish/lighthouse.py's own parts: the server that serves the site as GitHub Pages does, and
the verdict on the scores (running Lighthouse itself is ``nox -s lighthouse``)."""

import gzip
import urllib.request

from conftest import ROOT

from autograd_recipes.publish import lighthouse


def fetch(port, path, accept=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if accept:
        request.add_header("Accept-Encoding", accept)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers, response.read()


def test_text_is_served_gzipped_to_browsers_that_accept_it(tmp_path):
    page = "<!doctype html><title>x</title>" + "<p>text</p>" * 200
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "index.html").write_text(page, encoding="utf-8")
    (tmp_path / "en" / "thumb.png").write_bytes(b"\x89PNG" + bytes(300))
    server = lighthouse.serve(tmp_path)
    try:
        headers, body = fetch(server.server_port, "/en/index.html", "gzip, deflate, br")
        assert headers["Content-Encoding"] == "gzip" and headers["Content-Type"].startswith("text/html")
        assert gzip.decompress(body).decode() == page and len(body) < len(page) / 5
        assert headers["Cache-Control"] == "max-age=600"
        headers, body = fetch(server.server_port, "/en/", "gzip")  # a folder: its index.html
        assert headers["Content-Encoding"] == "gzip" and gzip.decompress(body).decode() == page
        # controls: a client without gzip, and an image, get the file as it is
        headers, body = fetch(server.server_port, "/en/index.html")
        assert headers["Content-Encoding"] is None and body.decode() == page
        headers, body = fetch(server.server_port, "/en/thumb.png", "gzip")
        assert headers["Content-Encoding"] is None and body.startswith(b"\x89PNG")
    finally:
        server.shutdown()
    uncompressed = lighthouse.serve(tmp_path, compress=False)
    try:
        headers, body = fetch(uncompressed.server_port, "/en/index.html", "gzip")
        assert headers["Content-Encoding"] is None and body.decode() == page
    finally:
        uncompressed.shutdown()


def test_a_score_under_its_threshold_fails():
    perfect = {"performance": 100, "accessibility": 100, "best-practices": 100, "seo": 100}
    table = {
        ("en", "guide"): {**perfect, "performance": 95},
        ("ko", "guide"): {**perfect, "performance": 94},
        ("ko", "claims"): {**perfect, "seo": 99},
    }
    assert lighthouse.below(table) == [(("ko", "guide"), "performance", 94), (("ko", "claims"), "seo", 99)]
    assert lighthouse.below({("en", "landing"): perfect}) == []


def test_the_pages_measured_are_one_of_each_kind():
    pages = lighthouse.pages()
    assert pages["landing"] == "index" and pages["guide"] == "no_grad_guide" and pages["claims"] == "claims"
    assert pages["versions"] == "versions"
    folder, recipe = pages["recipe"].split("/")
    assert folder == "recipes" and (ROOT / "recipes" / f"{recipe}.py").is_file()
