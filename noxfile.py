"""Contributor tasks: ``nox -s docs``, ``tests``, ``lint``, ``i18n``, ``claims``, ``bench``, ``serve``."""

import runpy
import shutil

import nox

nox.options.reuse_venv = "yes"  # torch is large: create each environment once
nox.options.sessions = ["docs"]


def install(session):
    session.install("-r", "requirements.txt")


def translations():
    """The languages other than the source, from conf.py's site_languages (source first)."""
    return list(runpy.run_path("conf.py")["site_languages"])[1:]


@nox.session
def docs(session):
    """Build the site into build/html/en and build/html/ko (warnings are errors).

    ``nox -s docs -- --lang en`` builds English only.
    """
    install(session)
    session.run("python", "docs/build.py", *session.posargs)


@nox.session
def tests(session):
    """Doctests, recipe checks, one shared build of the site, fault builds; the 15 slowest tests."""
    install(session)
    session.run("pytest", "--durations=15", *session.posargs)


@nox.session
def lint(session):
    """ruff (check and format) for Python, sphinx-lint for the sources, zizmor for the workflows."""
    session.install("ruff==0.17.5", "sphinx-lint==1.0.2", "zizmor==1.32.0")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("sphinx-lint", "docs", "recipes", "README.md")
    session.run("zizmor", "--offline", ".github/workflows")


@nox.session
def i18n(session):
    """Refresh every translation's catalogs from the English source, then list what needs translating."""
    install(session)
    shutil.rmtree("build/gettext", ignore_errors=True)  # no orphan templates from removed pages
    session.run("python", "docs/build.py", "--gettext")
    for lang in translations():
        session.run("sphinx-intl", "update", "-p", "build/gettext", "-l", lang, "-d", "locales")
        session.run(
            "python",
            "docs/check_catalogs.py",
            "--pot",
            "build/gettext",
            "--locale",
            f"locales/{lang}/LC_MESSAGES",
            success_codes=[0, 1],
        )


@nox.session
def bench(session):
    """Time cold and incremental builds on a copy of the project; check the budgets."""
    install(session)
    session.run("python", "docs/bench.py")


@nox.session
def claims(session):
    """Run the claims ledger on another torch: ``nox -s claims -- 2.9.1``.

    Prints the claims whose verdict differs from the recorded one. Needs only
    torch; a torch release that pip cannot install here cannot be checked.
    """
    if not session.posargs:
        session.error("give a torch version: nox -s claims -- 2.9.1")
    session.install(f"torch=={session.posargs[0]}")
    session.run("python", "docs/_ext/claims_ledger.py", success_codes=[0, 1])


@nox.session(venv_backend="none")
def serve(session):
    """Serve the built site on http://127.0.0.1:8000/ (run ``nox -s docs`` first)."""
    port = session.posargs[0] if session.posargs else "8000"
    session.run("python3", "-m", "http.server", port, "--bind", "127.0.0.1", "--directory", "build/html")
