"""A translation that would change a Korean page, or silently leave it English, stops the build.

Unit tests run ``check_catalogs.catalog_problems`` on small catalogs written
here, one fault each, asserting the exact line a contributor sees. Two tests
use copies of the tiny site (tests/tinysite): one Korean-only build with translations that Sphinx
would drop (``src/autograd_recipes/i18n/translation_guard.py`` must name them), and one that
``src/autograd_recipes/publish/build.py`` refuses before building anything.
"""

import polib
import pytest
from conftest import JOBS, background_build, build_site, seeded_tiny
from tiny import tiny_project

from autograd_recipes.i18n.check_catalogs import catalog_problems


def write_catalog(root, name, messages, page=True):
    """``<root>/locales/ko/LC_MESSAGES/<name>.po`` holding (msgid, msgstr) pairs, and its source page."""
    (root / "docs").mkdir(parents=True, exist_ok=True)
    if page:
        (root / "docs" / f"{name}.rst").write_text("A page.\n")
    po = polib.POFile()
    po.metadata = {"Content-Type": "text/plain; charset=utf-8", "Language": "ko"}
    for msgid, msgstr in messages:
        po.append(polib.POEntry(msgid=msgid, msgstr=msgstr))
    path = root / "locales" / "ko" / "LC_MESSAGES" / f"{name}.po"
    path.parent.mkdir(parents=True, exist_ok=True)
    po.save(str(path))
    return path


def line_of(po_path, msgid):
    return polib.pofile(str(po_path)).find(msgid).linenum


FAULTS = {
    "changed inline code": (
        "Whether ``t[...].add_(1)`` changes ``t`` depends on the index.",
        "``t[...].add_(2)`` 호출이 ``t``\\ 를 바꾸는지는 인덱스에 따라 다릅니다.",
        "inline code differs (msgid ['t[...].add_(1)'], msgstr ['t[...].add_(2)'])",
    ),
    "changed MyST code": (
        "A slice `t[0:2]` is a view.",
        "슬라이스 `t[0:3]`는 뷰입니다.",
        "inline code differs (msgid ['t[0:2]'], msgstr ['t[0:3]'])",
    ),
    "changed number": (
        "Each step adds 1 to the weight (x.add_(1)).",
        "각 단계는 가중치에 1을 더합니다(x.add_(2)).",
        "numbers differ (msgid [], msgstr ['2'])",
    ),
    "changed role target": (
        "Start with :doc:`inplace_overview`.",
        ":doc:`no_grad_guide`\\ 부터 읽으세요.",
        "roles differ (msgid [':doc:`inplace_overview`'], msgstr [':doc:`no_grad_guide`'])",
    ),
    "changed MyST role": (
        "{doc}`recipes/plot_04_relu_inplace` shows both kinds.",
        "{ref}`recipes/plot_04_relu_inplace`에서 두 경우를 볼 수 있습니다.",
        "roles differ (msgid ['{doc}`recipes/plot_04_relu_inplace`'], "
        "msgstr ['{ref}`recipes/plot_04_relu_inplace`'])",
    ),
    "changed link target": (
        "Read `the article <https://example.org/a>`_.",
        "`원문 글 <https://example.org/b>`_\\ 을 읽으세요.",
        "link targets differ (msgid ['https://example.org/a'], msgstr ['https://example.org/b'])",
    ),
    "changed MyST link target": (
        "Read [the article](https://example.org/a).",
        "[원문 글](https://example.com/a)을 읽으세요.",
        "link targets differ (msgid ['https://example.org/a'], msgstr ['https://example.com/a'])",
    ),
    "unbalanced backticks": (
        "Call ``x.clone()`` first.",
        "먼저 ``x.clone()\\ 을 호출하세요.",
        "unbalanced backticks",
    ),
    "directive": (
        "The result is the same.",
        "결과는 같습니다. .. raw:: html",
        "directive in msgstr ['.. raw::']",
    ),
    "raw HTML": (
        "The result is the same.",
        "결과는 같습니다.<script>alert('빌드')</script>",
        "raw HTML in msgstr ['</script>', '<script>']",
    ),
}


@pytest.mark.parametrize("fault", FAULTS)
def test_a_translation_fault_is_reported_with_catalog_and_line(tmp_path, fault):
    msgid, msgstr, kind = FAULTS[fault]
    po_path = write_catalog(tmp_path, "page", [("Untouched.", "그대로."), (msgid, msgstr)])
    problems = catalog_problems(po_path.parent)
    assert problems == [f"{po_path}:{line_of(po_path, msgid)}: {kind}: {msgid[:70]!r}"]


def test_a_faithful_translation_is_not_flagged(tmp_path):
    # link titles and role titles translated, code spans reordered, particles after markup
    messages = [
        (
            "Read `the guide <https://example.org/guide>`_ before ``t.add_(1)`` and "
            ":ref:`the rules <rules>`: ``y = x.clone()`` takes 2 steps.",
            "``y = x.clone()``\\ 는 2단계면 됩니다. ``t.add_(1)`` 전에 "
            "`안내서 <https://example.org/guide>`_\\ 와 :ref:`규칙 <rules>`\\ 을 읽으세요.",
        ),
        (
            "See [the guide](https://example.org/guide), {doc}`glossary` and `add_`.",
            "[안내서](https://example.org/guide), {doc}`용어집 <glossary>`, `add_`를 보세요.",
        ),
    ]
    po_path = write_catalog(tmp_path, "page", messages)
    assert catalog_problems(po_path.parent) == []


def test_interface_strings_keep_placeholders_numbers_and_html_out(tmp_path):
    messages = [
        ("Checked on torch %s: %d claims.", "torch %s에서 확인: 주장 %d개."),
        ("%d hold, %d do not", "%d개 성립, %d개 불성립"),
        ("torch.no_grad() article", "torch.no_grad() 글"),  # not reST: no markup rules
        ("Run time: %s", "실행 시간: %d"),
        ("%s of %d", "%d 중 %s"),
        ("Back to top", "<b>맨 위로</b>"),
    ]
    po_path = write_catalog(tmp_path, "sphinx", messages, page=False)  # interface strings: no page
    assert catalog_problems(po_path.parent) == [
        f"{po_path}:{line_of(po_path, 'Run time: %s')}: placeholders differ (msgid ['%s'], msgstr ['%d']): "
        "'Run time: %s'",
        f"{po_path}:{line_of(po_path, '%s of %d')}: placeholders reordered (msgid ['%s', '%d'], "
        "msgstr ['%d', '%s']): '%s of %d'",
        f"{po_path}:{line_of(po_path, 'Back to top')}: raw HTML in msgstr ['</b>', '<b>']: 'Back to top'",
    ]


def test_a_document_without_catalog_is_reported_even_with_a_stale_mo(tmp_path):
    po_path = write_catalog(tmp_path, "page", [("Text.", "글.")])
    locale = po_path.parent
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n")
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "README.rst").write_text("Recipes\n=======\n")
    (tmp_path / "recipes" / "plot_01_step.py").write_text('"""Step\n====\n"""\n')
    polib.pofile(str(po_path)).save_as_mofile(str(locale / "guide.mo"))  # what Sphinx would still read
    assert catalog_problems(locale) == [
        f"{locale}/{name}.po: missing catalog: document {name} would be published in English "
        "(run nox -s i18n)"
        for name in ("guide", "recipes/index", "recipes/plot_01_step")
    ]


def break_translation(project, catalog, msgid_start, change):
    po_path = project / "locales/ko/LC_MESSAGES" / catalog
    po = polib.pofile(str(po_path))
    entry = next(e for e in po if e.msgid.startswith(msgid_start))
    entry.msgstr = change(entry.msgstr)
    po.save()
    return po_path, line_of(po_path, entry.msgid), entry.msgid


def _dropped(folder, tiny):
    project = seeded_tiny(folder / "project", tiny.project)
    # the Korean parses as a list, not as the English's paragraph: Sphinx would show the English
    dropped = [
        break_translation(project, catalog, start, lambda msgstr: "- " + msgstr)
        for catalog, start in [
            ("index.po", "A tiny site:"),
            ("tiny_notebook.po", "Under ``torch.no_grad()`` a result"),
            ("recipes/plot_01_leaf_update.po", "The update raises."),
        ]
    ]
    return background_build(project, "--lang", "ko"), {"dropped": dropped}


def _dropped_again(folder, first):
    return background_build(first.project, "--lang", "ko"), first.extra


JOBS.register("dropped translations", "dropped_build", _dropped, after=["tiny"])
JOBS.register("dropped translations again", "dropped_rebuild", _dropped_again, after=["dropped translations"])


@pytest.fixture(scope="module")
def dropped_rebuild():
    return JOBS.result("dropped translations"), JOBS.result("dropped translations again")


def test_a_translation_that_sphinx_drops_fails_the_korean_build(dropped_rebuild):
    first, again = dropped_rebuild
    assert first.code != 0
    for po_path, line, msgid in first.extra["dropped"]:
        assert (
            f"{po_path}:{line}: WARNING: translation dropped (Sphinx reads the msgstr as other "
            f"markup than the msgid, e.g. a leading '- ' makes a list; " in first.output
        ), first.output
        assert f"shows English): {msgid[:70]!r}" in first.output
    # an unchanged rebuild reads those pages again rather than skipping them
    assert again.code != 0
    assert all(
        f"{po_path}:{line}: WARNING: translation dropped" in again.output
        for po_path, line, _ in first.extra["dropped"]
    )


def test_build_refuses_changed_code_and_a_deleted_catalog_before_building(tmp_path):
    project = tiny_project(tmp_path / "project")
    locale = project / "locales/ko/LC_MESSAGES"
    po_path, line, msgid = break_translation(
        project,
        "recipes/plot_01_leaf_update.po",
        "Under ``torch.no_grad()`` the update",
        lambda msgstr: msgstr.replace("``torch.no_grad()``", "``torch.enable_grad()``", 1),
    )
    polib.pofile(str(locale / "build_report.po")).save_as_mofile(str(locale / "build_report.mo"))
    (locale / "build_report.po").unlink()  # the stale .mo stays: Sphinx would still read it
    code, output = build_site(project)
    assert code != 0
    assert (
        f"{locale}/build_report.po: missing catalog: document build_report would be published in English"
        in output
    )
    assert (
        f"{po_path}:{line}: inline code differs (msgid ['torch.no_grad()'], msgstr ['torch.enable_grad()']): "
        f"{msgid[:70]!r}"
    ) in output, output
    assert not (project / "build" / "html").exists(), "it should refuse before building anything"
