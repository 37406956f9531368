"""The built site loads nothing from other sites, its links resolve, and it builds offline."""

import os
import shutil
import subprocess
import sys
from urllib.parse import urlsplit

import pytest
from conftest import CAN_UNSHARE, ROOT, SITE_URL

from autograd_recipes.publish.site_scan import broken_links, off_site_references


def site_path():
    return urlsplit(SITE_URL).path


def test_no_page_loads_anything_from_another_site(built_site):
    project, code, output = built_site
    assert code == 0, output
    assert off_site_references(project / "build/html") == []


def test_off_site_scan_catches_a_planted_cdn_link(built_site, tmp_path):
    project, code, output = built_site
    site = tmp_path / "html"
    shutil.copytree(project / "build/html", site, copy_function=os.link)  # links: a copy in no time
    page = site / "ko" / "recipes" / "plot_02_residual_add.html"
    sheet = site / "en" / "_static" / "site.css"
    planted = {
        page: page.read_text(encoding="utf-8").replace(
            "</head>", '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-svg.js"></script></head>'
        ),
        sheet: sheet.read_text(encoding="utf-8")
        + '\n@import url("https://fonts.googleapis.com/css2?family=Noto+Sans+KR");\n',
    }
    for path, text in planted.items():
        path.unlink()  # a file of its own, not the built site's linked one
        path.write_text(text, encoding="utf-8")
    assert off_site_references(site) == [
        f"{page}: <script> loads https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-svg.js",
        f"{sheet}: CSS loads https://fonts.googleapis.com/css2?family=Noto+Sans+KR",
    ]
    # the Pages workflow's gate before it publishes: refuses this copy, passes the site
    command = [sys.executable, "-m", "autograd_recipes.publish.site_scan", "--site-path", site_path()]
    refused = subprocess.run([*command, str(site)], capture_output=True, text=True)
    assert refused.returncode == 1 and f"site_scan: {page}: <script> loads https://cdn" in refused.stderr
    assert "site_scan: 2 problem(s); the site is not fit to publish" in refused.stderr
    passed = subprocess.run([*command, str(project / "build/html")], capture_output=True, text=True)
    assert passed.returncode == 0, passed.stderr
    workflow = (ROOT / ".github/workflows/pages.yml").read_text(encoding="utf-8")
    gate = workflow.index("python -m autograd_recipes.publish.site_scan build/html")
    assert workflow.index("nox -s docs") < gate < workflow.index("upload-pages-artifact")


def test_off_site_scan_with_a_memo_reads_again_what_changed(built_site, tmp_path):
    """The build's scan keeps its findings by file content (site_scan.off_site_loads's
    memo): a page changed after a clean scan is read again and its CDN script found; a
    memo written by another version of the scanner is not used."""
    import json

    from autograd_recipes.publish.site_scan import off_site_loads

    project, code, output = built_site
    site, memo = tmp_path / "en", tmp_path / "memo.json"
    shutil.copytree(project / "build/html/en", site)
    assert off_site_loads(site, memo) == []
    saved = json.loads(memo.read_text())
    assert len(saved["files"]) >= 20 and all(v == [] for v in saved["files"].values())
    page = site / "recipes" / "plot_02_residual_add.html"
    cdn = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-svg.js"
    page.write_text(
        page.read_text(encoding="utf-8").replace("</head>", f'<script src="{cdn}"></script></head>')
    )
    assert off_site_loads(site, memo) == [(page, "<script>", cdn)]
    assert off_site_loads(site, memo) == [(page, "<script>", cdn)]  # the finding is kept, not forgotten
    # a memo from another scanner that calls this page clean is ignored
    digest = next(d for d, v in json.loads(memo.read_text())["files"].items() if v)
    memo.write_text(json.dumps({"scanner": "another", "files": {digest: []}}))
    assert off_site_loads(site, memo) == [(page, "<script>", cdn)]


def test_every_internal_link_and_anchor_resolves(built_site):
    project, code, output = built_site
    assert broken_links(project / "build/html", site_path()) == []


def test_link_check_catches_a_dead_anchor(built_site, tmp_path):
    project, code, output = built_site
    site = tmp_path / "html"
    shutil.copytree(project / "build/html", site)
    page = site / "en" / "index.html"
    page.write_text(
        page.read_text(encoding="utf-8").replace(
            'href="inplace_overview.html"', 'href="inplace_overview.html#no-such-section"', 1
        ),
        encoding="utf-8",
    )
    assert broken_links(site, site_path()) == [
        f"{page}: inplace_overview.html#no-such-section -> no anchor #no-such-section"
    ]


def test_site_has_404_page_and_sitemap_with_hreflang(built_site):
    project, code, output = built_site
    html = project / "build/html"
    page_404 = (html / "404.html").read_text(encoding="utf-8")
    assert f'href="{site_path()}ko/index.html"' in page_404
    sitemap = (html / "sitemap.xml").read_text(encoding="utf-8")
    en_pages = [
        p
        for p in (html / "en").rglob("*.html")
        if p.name not in {"search.html", "genindex.html"} and "_" != p.relative_to(html / "en").as_posix()[0]
    ]
    assert sitemap.count("<url>") == 2 * len(en_pages)
    assert (
        f'hreflang="ko" href="{SITE_URL}ko/' in sitemap
        and "/ko/recipes/plot_05_indexing_and_inplace.html" in sitemap
    )
    assert '<meta property="og:locale" content="ko_KR"' in (html / "ko/index.html").read_text(
        encoding="utf-8"
    )


@pytest.mark.skipif(not CAN_UNSHARE, reason="needs root and unshare to build in a namespace without network")
def test_docs_build_needs_no_network(built_site):
    """The shared build ran in a network namespace of its own (conftest.built_site)."""
    project, code, output = built_site
    assert code == 0, output
    probe = subprocess.run(
        [
            "unshare",
            "--net",
            sys.executable,
            "-c",
            "import socket; socket.create_connection(('pypi.org', 443), timeout=3)",
        ],
        capture_output=True,
        text=True,
    )
    assert probe.returncode != 0, "the namespace had network access: the test proves nothing"
    assert (project / "build/html/ko/no_grad_guide.html").exists()
