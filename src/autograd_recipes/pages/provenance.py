"""A footer line on every page: "Checked on torch X with Python Y, <date>."

The torch version is project.torch_version (the installed distribution's, the one
label every page and the claims page show), the Python version the build's, and
the date that of ``SOURCE_DATE_EPOCH`` (src/autograd_recipes/publish/build.py sets it to the last commit's
time), so two builds of one commit say the same; without it, today (UTC). The date
is written as the page's language writes dates (babel's long format: "January 1,
2024", "2024년 1월 1일"); the sentence comes from sphinx.po. The line is shown by
src/autograd_recipes/theme/templates/page.html.
"""

import datetime
import os
import platform

from babel.dates import format_date
from sphinx.locale import _  # Korean for these strings: locales/ko/LC_MESSAGES/sphinx.po

from autograd_recipes.project import torch_version


def build_date():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        return datetime.datetime.fromtimestamp(int(epoch), datetime.UTC).date()
    return datetime.datetime.now(datetime.UTC).date()


def provenance(language):
    return _("Checked on torch %(torch)s with Python %(python)s, %(date)s.") % {
        "torch": torch_version(),
        "python": platform.python_version(),
        "date": format_date(build_date(), "long", locale=language),
    }


def _page_context(app, pagename, templatename, context, doctree):
    context["provenance"] = provenance(app.config.language)


def setup(app):
    app.connect("html-page-context", _page_context)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
