"""Search from disk: on ``file://`` the results come without snippets, and quietly.

Sphinx's search page fetches every result's page to show a snippet of it
(``DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY``, from ``html_show_search_summary``). A
browser refuses fetch() for ``file://`` URLs, so the unpacked offline copy (offline_copy)
logged two console errors per result, and showed no snippet anyway. On ``file://`` the
search page turns the snippets off before it searches: the results show their titles and
links. Served over HTTP nothing changes.
"""

SCRIPT = 'if (location.protocol === "file:") DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;'
# after documentation_options.js (priority 200), which defines DOCUMENTATION_OPTIONS
PRIORITY = 300


def _search_page(app, pagename, templatename, context, doctree):
    if pagename == "search":
        app.add_js_file(None, body=SCRIPT, priority=PRIORITY)  # on this page only


def setup(app):
    app.connect("html-page-context", _search_page)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
