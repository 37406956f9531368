"""The torch matrix as HTML: the versions page's summary, news, table and evidence, and the
line after each recipe's and notebook's title ("Behaves as shown on torch A–B; on C–D: …").

Pure functions of the matrix's state (torch_matrix's ``_State``: the records, the ledger,
the claims' sentences in the page's language) and of the builder, for the links; the
Sphinx side (directives, when pages are rebuilt, the pinned release's check) is
torch_matrix. Text goes through ``sphinx.locale._``; evidence is shown as recorded, each
distinct text once per row.
"""

import html

from docutils import nodes
from sphinx.locale import _

from autograd_recipes.claims import claims
from autograd_recipes.matrix import matrix_data
from autograd_recipes.project import PROJECT

VERSIONS_DOC = "versions"
EVIDENCE_CHARS = 1500


def _labels():
    return {
        matrix_data.HOLDS: _("holds"),
        matrix_data.NOT_HOLD: _("does not hold"),
        matrix_data.IN_PART: _("holds in part"),
        matrix_data.ERROR_CHANGED: _("error changed"),
        matrix_data.ERROR: _("the check failed to run"),
        matrix_data.STALE: _("not checked since the code changed"),
        matrix_data.NOT_RUN: _("release not run"),
    }


def page_of(kind, name):
    """The docname of a recipe's or a notebook's page."""
    return PROJECT.recipe_page(name) if kind == "recipes" else name


def _row_label(state, kind, name, builder, docname, env, classes=""):
    """A link to the row's claim on the claims page, or to its recipe or guide, named by the
    claim's sentence or the page's title."""
    if kind == "claims":
        uri = builder.get_relative_uri(docname, claims.CLAIMS_DOC) + "#claim-" + name
    else:
        uri = builder.get_relative_uri(docname, page_of(kind, name))
    attributes = f' class="{classes}"' if classes else ""
    return f'<a{attributes} href="{html.escape(uri)}">{_row_name(state, kind, name, env)}</a>'


def _evidence(kind, result):
    if result is None:
        return ""
    if kind == "claims":
        text = result.get("evidence", "")
    else:
        lines = []
        for err in result.get("expected_errors", []):
            got = f"{err['type']}: {err['message']}" if "type" in err else "nothing raised"
            lines.append(
                f"line {err['line']} ({err['outcome']}): expected {err['kind']} with {err['text']!r}\n  {got}"
            )
        for check in result.get("asserts", []):
            lines.append(
                f"line {check['line']}: assert {check['text']}: {'holds' if check['holds'] else 'fails'}"
            )
        for err in result.get("errors", []):
            lines.append(f"line {err['line']}: {err['type']}: {err['message']}")
        text = "\n".join(lines)
    text = text.strip() or "(no output)"
    return text if len(text) <= EVIDENCE_CHARS else text[:EVIDENCE_CHARS] + " […]"


def evidence_id(kind, name):
    """The anchor of a row's evidence, under the table."""
    return f"evidence-{kind}-{name}"


def _row(state, kind, name):
    """One row of the matrix: (cells, entries).

    cells: [(release, state, differs from the page, number of its evidence entry or None)];
    entries: [(evidence text, [releases that printed it])], each distinct text once, in the
    order of the first release that printed it. A measured claim's figures differ on every
    run, so its releases are grouped by state instead, with the first one's text. Cells are
    numbered only where a row has more than one entry: with one, it is the entry of every
    cell that has evidence (stale and not-run cells have none)."""
    cells, entries, texts = [], {}, {}
    measured = kind == "claims" and name in state.measured
    for record in state.records:
        cell_state, result = matrix_data.cell(record, kind, name, state.hashes)
        what = matrix_data.differences(
            record, kind, name, state.hashes, state.verdicts, state.reference, state.lines.get((kind, name))
        )
        key = None
        if cell_state not in (matrix_data.STALE, matrix_data.NOT_RUN) and result is not None:
            text = _evidence(kind, result)
            key = cell_state if measured else text
            texts.setdefault(key, text)
            entries.setdefault(key, []).append(record["release"])
        cells.append((record["release"], cell_state, bool(what), key))
    numbers = {key: n for n, key in enumerate(entries, 1)} if len(entries) > 1 else {}
    cells = [(release, s, differs, numbers.get(key)) for release, s, differs, key in cells]
    return cells, [(texts[key], releases) for key, releases in entries.items()]


def evidence_entries(state, kind, name):
    """A row's evidence as the versions page shows it (``evidence_html``), each distinct text
    once: [(text, [releases that printed it])]; empty where the page shows none and has no
    block ``evidence_id(kind, name)`` (every cell not checked since the code changed, or not
    run). The errors page reads it to name and link only runs whose text this page shows."""
    return _row(state, kind, name)[1]


def _groups(state):
    return (
        ("claims", _("Claims"), list(state.hashes["claims"])),
        ("recipes", _("Recipes"), list(state.hashes["recipes"])),
        ("notebooks", _("Guides"), list(state.hashes["notebooks"])),
    )


# a cell's class, which the stylesheet draws as the state's symbol: short, as 1,000 cells carry one
CLASSES = {
    matrix_data.HOLDS: "ok",
    matrix_data.NOT_HOLD: "no",
    matrix_data.IN_PART: "part",
    matrix_data.ERROR_CHANGED: "changed",
    matrix_data.ERROR: "error",
    matrix_data.STALE: "stale",
    matrix_data.NOT_RUN: "not-run",
}


def _cell_html(label, differs, number):
    """A cell: its state in words (hidden on screen, where the stylesheet draws the symbol),
    whether it differs from the page, and the number of its evidence entry, if any."""
    labels = _labels()
    said = str(labels[label])
    if differs:
        said += ", " + str(_("differs from the page"))
    classes = CLASSES[label] + (" differs" if differs else "")
    if number is None:
        return f'<td class="{classes}"><span>{html.escape(said)}</span></td>'
    said += ", " + str(_("evidence")) + " "
    return f'<td class="{classes}"><span>{html.escape(said)}</span><sup>{number}</sup></td>'


def table_html(state, builder, docname, env):
    """The matrix as an HTML table (a function of the data it is given: tested on a fixture).

    One cell per claim or recipe and release (``_cell_html``); each row header links to the
    row's evidence under the table (``evidence_html``), and a list after the table says how
    each release was run."""
    labels = _labels()
    head = [f'<th scope="col">{html.escape(_("claim or recipe"))}</th>']
    runs = []
    for record in state.records:
        if record.get("status") == "ok":
            run = f"torch {record['torch']} · Python {record['python']} · {record['platform']} · {record['date']}"
        else:
            run = f"{labels[matrix_data.NOT_RUN]}: {record.get('reason', '')}"
        head.append(f'<th scope="col">{html.escape(record["release"])}</th>')
        runs.append(f"<li>{html.escape(record['release'])}: {html.escape(run)}</li>")
    rows = []
    for kind, heading, names in _groups(state):
        rows.append(
            # the span stays in view when the table scrolls sideways (site.css)
            f'<tr class="group"><th scope="rowgroup" colspan="{len(head)}"><span>{html.escape(heading)}</span></th></tr>'
        )
        for name in names:
            cells, entries = _row(state, kind, name)
            header = _row_label(state, kind, name, builder, docname, env, "row-name")
            if entries:
                header += (
                    f'<a class="evidence" href="#{evidence_id(kind, name)}">{html.escape(_("evidence"))}</a>'
                )
            row = [f'<th scope="row">{header}</th>']
            row += [_cell_html(s, differs, number) for _release, s, differs, number in cells]
            rows.append("<tr>" + "".join(row) + "</tr>")
    legend = [f"{html.escape(matrix_data.SYMBOLS[s])} {html.escape(labels[s])}" for s in matrix_data.STATES]
    legend.append(
        f'<span class="differs">{html.escape(matrix_data.SYMBOLS[matrix_data.HOLDS])}</span> '
        + html.escape(_("differs from the page"))
    )
    return (
        f'<p class="torch-matrix-legend">{" · ".join(legend)}</p>\n'
        f'<div class="torch-matrix-scroll" role="region" tabindex="0" aria-label="{html.escape(_("Torch versions"))}"><table class="torch-matrix">'
        f"<thead><tr>{''.join(head)}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>\n"
        f'<details class="torch-matrix-runs"><summary>{html.escape(_("How each release was run"))}</summary>'
        f"<ul>{''.join(runs)}</ul></details>\n"
    )


def _row_name(state, kind, name, env):
    """A row's name for readers, as markup: its claim's sentence, or its page's title."""
    if kind == "claims":
        return html.escape(state.sentences[name])
    target = page_of(kind, name)
    return html.escape(env.titles[target].astext() if target in env.titles else name)


def evidence_html(state, env):
    """Each row's evidence, under the table: each distinct text once, numbered as the row's
    cells number it, with the releases that printed it and their states (tested on a fixture)."""
    labels = _labels()
    parts = []
    for kind, heading, names in _groups(state):
        rows = []
        for name in names:
            cells, entries = _row(state, kind, name)
            if not entries:
                continue
            said = {release: str(labels[s]) for release, s, _differs, _number in cells}
            items = []
            for text, releases in entries:
                where = ", ".join(matrix_data.ranges(releases, state.checked))
                states = ", ".join(dict.fromkeys(said[r] for r in releases))
                figures = ""
                if kind == "claims" and name in state.measured and len(releases) > 1:
                    figures = " · " + _("figures as measured on torch %(release)s") % {"release": releases[0]}
                items.append(
                    f"<li>torch {html.escape(where)} · {html.escape(states)}{html.escape(figures)}"
                    f"<pre>{html.escape(text, quote=False)}</pre></li>"
                )
            rows.append(
                f'<details id="{evidence_id(kind, name)}"><summary>{_row_name(state, kind, name, env)}</summary>'
                f"<ol>{''.join(items)}</ol></details>"
            )
        if rows:
            parts.append(f"<h3>{html.escape(heading)}</h3>\n" + "\n".join(rows))
    return '<div class="torch-matrix-evidence">\n' + "\n".join(parts) + "\n</div>\n"


def news(state, builder, docname, env):
    news = matrix_data.first_changes(
        state.records, state.hashes, state.verdicts, state.reference, state.lines
    )
    if not news:
        return [nodes.paragraph("", _("No claim or recipe behaves differently on any release checked."))]
    claims_uri = builder.get_relative_uri(docname, claims.CLAIMS_DOC)
    entries = []
    for kind, name, release, summary in news:
        line, items = _said(state, summary, claims_uri, own=name if kind == "claims" else None)
        changed = _("First changed on torch %(release)s.") % {"release": release}
        entries.append(
            f"<li><p>{_row_label(state, kind, name, builder, docname, env)} — {html.escape(changed)} "
            f"{html.escape(line)}</p>{_differences_html(items) if items else ''}</li>"
        )
    return [nodes.raw("", '<ul class="torch-matrix-news">' + "".join(entries) + "</ul>", format="html")]


def summary(state):
    if not state.records:
        return nodes.paragraph("", _("No torch release has been checked yet."))
    ranges = matrix_data.ranges(state.checked, state.checked)
    text = _("Checked on %(count)d torch releases: %(releases)s.") % {
        "count": len(state.checked),
        "releases": ", ".join(ranges),
    }
    cuda = [r["release"] for r in state.records if "+cu" in r.get("torch", "")]
    if cuda:
        text += " " + _(
            "%(releases)s: the registry's CUDA builds, run on a machine without a GPU; the others: CPU builds."
        ) % {"releases": ", ".join(matrix_data.ranges(cuda, state.checked))}
    skipped = [r for r in state.records if r.get("status") != "ok"]
    for record in skipped:
        text += " " + _("torch %(release)s could not be checked: %(reason)s.") % {
            "release": record["release"],
            "reason": record.get("reason", "?").rstrip("."),
        }
    return nodes.paragraph("", text, classes=["torch-matrix-summary"])


def _sentences():
    """matrix_data.differences' templates as whole sentences of a page's banner, translated."""
    return {
        "claim": _(
            "On torch %(releases)s, a claim of this page reads “%(observed)s” where the page says “%(expected)s”"
        ),
        "lacks": _(
            "On torch %(releases)s, the error at line %(line)d lacks “%(page)s”, which the page shows."
        ),
        "adds": _(
            "On torch %(releases)s, the error at line %(line)d adds “%(here)s” to what the page shows."
        ),
        "claim error": _("On torch %(releases)s, the check of a claim of this page could not run"),
        # on the versions page, a claim's own row: its sentence names it already
        "own claim": _(
            "On torch %(releases)s, its check reads “%(observed)s” where the page says “%(expected)s”."
        ),
        "own claim error": _("On torch %(releases)s, its check could not run."),
        "the error at line %d reads differently": _(
            "On torch %(releases)s, the error at line %(line)d reads differently."
        ),
        "the error at line %d reads differently: %s where the page has %s": _(
            "On torch %(releases)s, the error at line %(line)d reads “%(here)s” where the page shows “%(page)s”."
        ),
        "the error at line %d is not raised": _(
            "On torch %(releases)s, the error at line %(line)d is not raised."
        ),
        "the check at line %d fails": _("On torch %(releases)s, the check at line %(line)d fails."),
        "line %d raises %s": _("On torch %(releases)s, line %(line)d raises %(error)s."),
        "the error at line %d is worded differently: %s where the page has %s": _(
            "On torch %(releases)s, the error at line %(line)d is worded “%(here)s” where the page shows “%(page)s”."
        ),
    }


TRAILING_PUNCTUATION = ",.;:"


def quoted_words(here, page):
    """The differing words of two messages as a sentence quotes them: a comma or a period that
    ends them both stays outside the quotes ("ReluBackward0," and "Relu," are quoted as
    “ReluBackward0” and “Relu”), unless it is itself the difference ("x," against "x.")."""
    bare = [w.rstrip(TRAILING_PUNCTUATION) if w != "—" else w for w in (here, page)]
    if all(bare) and bare[0] != bare[1]:
        return tuple(bare)
    return here, page


def _difference_item(template, values, releases, claims_uri, own=None):
    """One difference as HTML: a sentence, and a claim's link to its entry (none for ``own``,
    the claim whose row it is); and whether it is only a check that could not run."""
    sentences, labels = _sentences(), _labels()
    if template.startswith("claim"):
        name, observed, expected = values
        key = ("own claim" if name == own else "claim") + (" error" if observed == matrix_data.ERROR else "")
        text = sentences[key] % {
            "releases": releases,
            "observed": labels[observed],
            "expected": labels[expected],
        }
        if name == own:
            return html.escape(text), observed == matrix_data.ERROR
        link = (
            f'<a href="{html.escape(claims_uri)}#claim-{html.escape(name)}">{html.escape(_("the claim"))}</a>'
        )
        # Korean puts no space before the parenthesis
        said = _("%(sentence)s (%(link)s).") % {"sentence": html.escape(text), "link": link}
        return said, observed == matrix_data.ERROR
    names = ("line", "here", "page") if "where the page has" in template else ("line", "error")
    values = dict(zip(names, values))
    if "here" in values:
        values["here"], values["page"] = quoted_words(values["here"], values["page"])
    if values.get("here") == "—":  # words of the page's message that this release does not print
        template = "lacks"
    elif values.get("page") == "—":  # words this release adds
        template = "adds"
    text = sentences[template] % {"releases": releases, **values}
    return html.escape(text), False


def _joined(ranges, checked):
    """Ranges of releases ("2.0.1–2.2.2", "2.3.1") as few ranges as the checked releases allow."""
    releases = []
    for item in ranges:
        first, _dash, last = item.partition("–")
        start = checked.index(first)
        releases += checked[start : checked.index(last) + 1] if last else [first]
    return matrix_data.ranges(set(releases), checked)


def _said(state, summary, claims_uri, own=None):
    """A summary (matrix_data.page_summary) in words: the one-line sentences, and each
    difference as a sentence of HTML."""
    good, bad, unknown = summary
    items, differs, unchecked = [], [], []
    for releases, found in bad:
        joined = ", ".join(releases)
        said = [_difference_item(template, values, joined, claims_uri, own) for template, values in found]
        items += [text for text, failed in dict.fromkeys(said)]
        (unchecked if all(failed for text, failed in said) else differs).extend(releases)
    differs, unchecked = _joined(differs, state.checked), _joined(unchecked, state.checked)
    line = []
    if good:
        line.append(_("Behaves as shown on torch %(releases)s.") % {"releases": ", ".join(good)})
    if differs:
        line.append(_("Differs on %(releases)s.") % {"releases": ", ".join(differs)})
    if unchecked:
        line.append(_("On %(releases)s a check could not run.") % {"releases": ", ".join(unchecked)})
    if unknown:
        line.append(
            _("Not checked on %(releases)s since its code changed.") % {"releases": ", ".join(unknown)}
        )
    if not line:
        line.append(_("Not checked on other torch releases yet."))
    return " ".join(line), items


def _differences_html(items):
    return "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"


def page_line(state, rows, builder, docname):
    """A page's banner: one line saying where it behaves as shown and where it differs, each
    difference a sentence behind a disclosure ("What differs"), and a link to the whole matrix."""
    summary = matrix_data.page_summary(
        state.records, rows, state.hashes, state.verdicts, state.reference, state.lines
    )
    line, items = _said(state, summary, builder.get_relative_uri(docname, claims.CLAIMS_DOC))
    uri = builder.get_relative_uri(docname, VERSIONS_DOC)
    markup = (
        f'<p class="torch-versions-line">{html.escape(line)} '
        f'<a href="{html.escape(uri)}">{html.escape(_("All torch versions"))}</a></p>'
    )
    if items:
        markup += (
            f'<details class="torch-versions-details"><summary>{html.escape(_("What differs"))}</summary>'
            + _differences_html(items)
            + "</details>"
        )
    return nodes.raw("", markup, format="html", classes=["torch-versions"])


def page_rows(state, docname):
    """The rows a page's line sums up: its own code (a recipe's or a notebook's), then the
    claims it settles. A page whose own code is not in the matrix gets no line."""
    own = [
        (kind, name)
        for kind in ("recipes", "notebooks")
        for name in state.hashes[kind]
        if page_of(kind, name) == docname
    ]
    return own + [("claims", c["id"]) for c in state.claims if c["page"] == docname] if own else []
