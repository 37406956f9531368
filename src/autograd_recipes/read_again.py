"""Pages the next build reads again although their sources are unchanged.

A page that warned (its output cut, no executed notebook to offer, a translation Sphinx
dropped) must warn again on the next build, or an unchanged rebuild would skip it and
exit 0. Each concern keeps its own set of such pages in the pickled environment, under
its own name: ``mark(env, name, docname)`` while a page is read, and ``keep(app, name)``
in the extension's setup, which forgets a page when it is read again or removed, merges
the sets of parallel readers, and hands the set to Sphinx as outdated.
"""


def pages(env, name):
    """The set ``name`` of pages to read again, in ``env``."""
    sets = env.__dict__.setdefault("read_again", {})
    return sets.setdefault(name, set())


def mark(env, name, docname):
    pages(env, name).add(docname)


def keep(app, name):
    def forget(app, env, docname):
        pages(env, name).discard(docname)

    def merge(app, env, docnames, other):
        pages(env, name).update(pages(other, name) & set(docnames))

    def outdated(app, env, added, changed, removed):
        return sorted(pages(env, name) - removed)

    app.connect("env-purge-doc", forget)
    app.connect("env-merge-info", merge)
    app.connect("env-get-outdated", outdated)
