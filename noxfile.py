"""Contributor tasks: ``nox -s docs``, ``tests``, ``lint``, ``i18n``, ``claims``, ``conditions``, ``matrix``, ``bench``, ``lighthouse``, ``serve``, ``lock``."""

import sys
from pathlib import Path

import nox

SRC = Path(__file__).resolve().parent / "src"
sys.path.insert(0, str(SRC))  # the package's installers module: the standard library only
SRC_ON_PATH = {"PYTHONPATH": str(SRC)}  # for nox's own Python (the matrix session)
from autograd_recipes import installers, locking  # noqa: E402

# the machinery without its dependencies: where torch is all it needs
PACKAGE_ALONE = ("--no-deps", "-e", ".")
nox.options.reuse_venv = "yes"  # torch is large: create each environment once
nox.options.sessions = ["docs"]
# uv where it is installed (``pip install "nox[uv]"``): a first install in seconds, not minutes
nox.options.default_venv_backend = "uv|virtualenv"


def install(session, *packages):
    """Install ``packages`` unlocked (another torch, the package alone); uv gets pip's settings (installers.py)."""
    env = installers.uv_settings(installers.pip_config()) if session.venv_backend == "uv" else {}
    session.install(*packages, env=env)


def install_locked(session, lock=locking.LOCK):
    """Install a lock file, every file's hash required (then the package, editable): locking.install_steps."""
    for args, env in locking.install_steps(lock, session.venv_backend == "uv"):
        session.install(*args, env=env)


@nox.session
def docs(session):
    """Build the site into build/html/en and build/html/ko (warnings are errors); ``-- --lang en``
    builds English only (and removes an older build's other languages)."""
    install_locked(session)
    session.run("python", "-m", "autograd_recipes.publish.build", *session.posargs)


@nox.session
def tests(session):
    """Doctests, recipe checks, one shared build of the site, fault builds; the 15 slowest tests."""
    install_locked(session)
    session.run("pytest", "--durations=15", *session.posargs)


@nox.session
def lint(session):
    """ruff (check and format) for Python, sphinx-lint for the sources, zizmor for the workflows."""
    install_locked(session, locking.LINT_LOCK)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("sphinx-lint", "docs", "recipes", "README.md")
    session.run("zizmor", "--offline", ".github/workflows")


@nox.session
def i18n(session):
    """Refresh every translation's catalogs from the English source, then list what needs translating."""
    install_locked(session)
    session.run("python", "-m", "autograd_recipes.i18n.refresh_catalogs")


@nox.session
def bench(session):
    """Time cold and incremental builds on a copy of the project; check the budgets."""
    install_locked(session)
    session.run("python", "-m", "autograd_recipes.publish.bench")


@nox.session
def claims(session):
    """Run the claims ledger on another torch (``-- 2.9.1``); print the claims whose verdict differs."""
    if not session.posargs:
        session.error("give a torch version: nox -s claims -- 2.9.1")
    install(session, f"torch=={session.posargs[0]}")
    install(session, *PACKAGE_ALONE)
    session.run("python", "-m", "autograd_recipes.claims.claims_runner", success_codes=[0, 1])


@nox.session
def conditions(session):
    """Run every claim under conditions it does not vary; record where verdicts flip in
    docs/conditions/ (``-- ID ...``: those claims; ``-- --verify``: compare with the record)."""
    install_locked(session)
    args = session.posargs if "--verify" in session.posargs else ["--record", *session.posargs]
    session.run("python", "-m", "autograd_recipes.claims.ambient_conditions", *args)


@nox.session(venv_backend="none")
def matrix(session):
    """Check the claims and recipes on other torch releases (matrix_data.RELEASES, or ``-- 2.0.1``)
    into docs/matrix/torch-<release>.json; ``--verify 2.13.0`` runs one again and fails on any
    difference from its record; ``--list``, ``--unlisted``, ``--stale``, ``--strict``: matrix_envs.py."""
    envs = "autograd_recipes.matrix.matrix_envs"
    session.run(sys.executable, "-m", envs, *session.posargs, env=SRC_ON_PATH)


@nox.session
def lighthouse(session):
    """Lighthouse's mobile scores of build/html, served gzipped as GitHub Pages does (run ``nox -s docs``
    first): the npm package pinned in package.json, then publish/lighthouse.py; ``-- --runs 3`` for medians."""
    install(session, *PACKAGE_ALONE)  # publish/lighthouse.py needs only the standard library
    session.run("npm", "ci", "--no-audit", "--no-fund", external=True)
    session.run("python", "-m", "autograd_recipes.publish.lighthouse", *session.posargs)


@nox.session
def serve(session):
    """Serve build/html at conf.py's LOCAL_SITE_URL (run ``nox -s docs`` first); ``-- 8001`` for another port."""
    install(session, *PACKAGE_ALONE)  # the project model, which reads conf.py
    session.run("python", "-m", "autograd_recipes.publish.serve", *session.posargs)


@nox.session(venv_backend="none")
def lock(session):
    """Resolve the lock files again, with hashes, after a change to requirements.txt, pyproject.toml's
    build backend or the lint tools (locking.py); ``-- --upgrade`` (or ``--upgrade-package NAME``)."""
    session.run(sys.executable, "-m", "autograd_recipes.locking", *session.posargs, env=SRC_ON_PATH)
