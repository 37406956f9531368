"""Refresh every translation's catalogs from the English source, then list what needs
translating (``nox -s i18n``; ``python -m autograd_recipes.i18n.refresh_catalogs``).

The English is extracted by the build (``--gettext``, into build/gettext), sphinx-intl
updates each language's catalogs from it, and the catalog check lists what is untranslated,
fuzzy, obsolete or drifted. ``sphinx.po`` is kept by hand: it holds furo's strings and the
package's interface strings, which sphinx.pot (three template messages) does not list, and
sphinx-intl would mark every one of them obsolete; the check still reads sphinx.pot.
Exit 0 whether or not something needs translating: the list is the result.
"""

import shutil
import subprocess
import sys
from pathlib import Path

from autograd_recipes.i18n import check_catalogs
from autograd_recipes.project import PROJECT

GETTEXT = Path("build/gettext")
PAGES = Path("build/gettext-pages")  # the page templates: sphinx.pot left out


def main():
    shutil.rmtree(GETTEXT, ignore_errors=True)  # no orphan templates from removed pages
    subprocess.run([sys.executable, "-m", "autograd_recipes.publish.build", "--gettext"], check=True)
    shutil.rmtree(PAGES, ignore_errors=True)
    shutil.copytree(GETTEXT, PAGES, ignore=shutil.ignore_patterns("sphinx.pot"))
    for lang in PROJECT.translations:
        command = [
            sys.executable,
            "-m",
            "sphinx_intl",
            "update",
            "-p",
            str(PAGES),
            "-l",
            lang,
            "-d",
            "locales",
        ]
        subprocess.run(command, check=True)
        check_catalogs.main(["--pot", str(GETTEXT), "--locale", f"locales/{lang}/LC_MESSAGES"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
