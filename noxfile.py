"""Contributor tasks: ``nox -s docs``, ``tests``, ``lint``, ``i18n``, ``claims``, ``conditions``, ``matrix``, ``bench``, ``lighthouse``, ``serve``."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import nox

nox.options.reuse_venv = "yes"  # torch is large: create each environment once
nox.options.sessions = ["docs"]
# uv where it is installed (``pip install "nox[uv]"``): a first install in seconds, not minutes
nox.options.default_venv_backend = "uv|virtualenv"


def install(session, *packages):
    """Install ``packages`` (default: requirements.txt) with the session's installer."""
    session.install(*(packages or ("-r", "requirements.txt")), env=_pip_settings_for(session))


def _pip_config():
    """pip's settings here ({"find-links": ..., ...}), from ``pip config list``: its
    configuration files and PIP_* variables."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True
    ).stdout
    files, variables = {}, {}
    for line in listed.splitlines():
        # ":env:" lines are PIP_* variables (the Pages workflow's CPU index, say): they win
        match = re.match(r"(global|install|download|index|:env:)\.([\w-]+)='(.*)'$", line)
        if match:
            (variables if match[1] == ":env:" else files)[match[2]] = match[3]
    return files | variables


# pip's setting -> uv's variable; uv reads no pip configuration
UV_VARIABLES = {
    "index-url": "UV_DEFAULT_INDEX",
    "extra-index-url": "UV_EXTRA_INDEX_URL",
    "find-links": "UV_FIND_LINKS",
    "constraint": "UV_CONSTRAINT",
}


def _pip_settings_for(session):
    """Environment that makes uv install what pip would: pip's indexes, find-links (where a
    CPU build of torch may lie) and constraints, as UV_* variables. Without them uv takes
    torch from PyPI: a CUDA build of about 3 GB. Nothing for pip, which reads its own."""
    if session.venv_backend != "uv":
        return {}
    # uv, unlike pip, writes no bytecode when it installs; where PYTHONDONTWRITEBYTECODE is set
    # nothing else writes it either, and every process (each build, kernel, claims runner,
    # test interpreter) would compile torch's modules again on import
    env = {"UV_COMPILE_BYTECODE": "1"}
    for setting, value in _pip_config().items():
        name = UV_VARIABLES.get(setting)
        if name and name not in os.environ:
            env[name] = value
    if "UV_EXTRA_INDEX_URL" in env or "UV_FIND_LINKS" in env:
        # pip takes the best version from all its indexes; uv by default only from the first
        # index that has the package
        env.setdefault("UV_INDEX_STRATEGY", "unsafe-best-match")
    return env


def project_fact(session, expression):
    """``expression`` about the project model (autograd_recipes.project.PROJECT, read from
    conf.py), printed by the session's Python: conf.py imports the package, nox's Python has
    none of it."""
    script = f"from autograd_recipes.project import PROJECT; print({expression})"
    return session.run("python", "-c", script, silent=True).strip()


@nox.session
def docs(session):
    """Build the site into build/html/en and build/html/ko (warnings are errors).

    ``nox -s docs -- --lang en`` builds English only (and removes an older build's other languages).
    """
    install(session)
    session.run("python", "-m", "autograd_recipes.publish.build", *session.posargs)


@nox.session
def tests(session):
    """Doctests, recipe checks, one shared build of the site, fault builds; the 15 slowest tests."""
    install(session)
    session.run("pytest", "--durations=15", *session.posargs)


@nox.session
def lint(session):
    """ruff (check and format) for Python, sphinx-lint for the sources, zizmor for the workflows."""
    install(session, "ruff==0.17.5", "sphinx-lint==1.0.2", "zizmor==1.32.0")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("sphinx-lint", "docs", "recipes", "README.md")
    session.run("zizmor", "--offline", ".github/workflows")


@nox.session
def i18n(session):
    """Refresh every translation's catalogs from the English source, then list what needs translating."""
    install(session)
    shutil.rmtree("build/gettext", ignore_errors=True)  # no orphan templates from removed pages
    session.run("python", "-m", "autograd_recipes.publish.build", "--gettext")
    # sphinx.po is kept by hand: it holds furo's strings and the package's interface strings,
    # which sphinx.pot (three template messages) does not list, and sphinx-intl would mark
    # every one of them obsolete; the catalog check below still reads sphinx.pot
    shutil.rmtree("build/gettext-pages", ignore_errors=True)
    shutil.copytree("build/gettext", "build/gettext-pages", ignore=shutil.ignore_patterns("sphinx.pot"))
    for lang in project_fact(session, "*PROJECT.translations").split():
        session.run("sphinx-intl", "update", "-p", "build/gettext-pages", "-l", lang, "-d", "locales")
        session.run(
            "python",
            "-m",
            "autograd_recipes.i18n.check_catalogs",
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
    session.run("python", "-m", "autograd_recipes.publish.bench")


@nox.session
def claims(session):
    """Run the claims ledger on another torch: ``nox -s claims -- 2.9.1``.

    Prints the claims whose verdict differs from the recorded one. Needs only
    torch; a torch release that pip cannot install here cannot be checked.
    """
    if not session.posargs:
        session.error("give a torch version: nox -s claims -- 2.9.1")
    install(session, f"torch=={session.posargs[0]}")
    install(session, *PACKAGE_ALONE)
    session.run("python", "-m", "autograd_recipes.evidence.claims_ledger", success_codes=[0, 1])


@nox.session
def conditions(session):
    """Run every claim again under conditions it does not vary (dtype, autocast, grad modes,
    optimizer options, keyword calls); record where verdicts flip in docs/conditions/.

    ``nox -s conditions -- ID ...`` runs those claims only; ``-- --verify`` compares with the
    record instead of writing it. Fails on a flip the ledger does not explain.
    """
    install(session)
    args = session.posargs if "--verify" in session.posargs else ["--record", *session.posargs]
    session.run("python", "-m", "autograd_recipes.evidence.ambient_conditions", *args)


MATRIX_ENVS = Path(".nox") / "matrix-envs"  # one at a time, removed after its run
MATRIX_RUNNER = ["-m", "autograd_recipes.evidence.matrix_runner"]
# the machinery without its dependencies: where torch is all it needs (a release of the matrix)
PACKAGE_ALONE = ("--no-deps", "-e", ".")
FIRST_RELEASE = (2, 0)
INSTALL_ATTEMPTS = 3


def _unconstrained_pip():
    """Environment for pip commands that may install any torch release.

    This machine's pip configuration caps torch at the releases stored locally (a
    ``constraint`` in its configuration file); ``PIP_CONSTRAINT=`` does not lift it, so the
    matrix installs skip the configuration files (``PIP_CONFIG_FILE`` set to the null device)
    and carry over, as ``PIP_*`` variables, every other setting they held (certificate,
    indexes, find-links). Only these commands see it: pip elsewhere is unchanged."""
    env = {"PIP_CONFIG_FILE": os.devnull}
    for setting, value in _pip_config().items():
        name = "PIP_" + setting.upper().replace("-", "_")
        if setting != "constraint" and name not in os.environ:
            env[name] = value
    return env


def _newest_patches(session):
    """The newest patch of every torch minor release from 2.0 that pip can install here."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "torch"],
        capture_output=True,
        text=True,
        env={**os.environ, **_unconstrained_pip()},
    ).stdout
    listed = re.search(r"Available versions: (.*)", out)
    if not listed:
        session.error(f"pip could not list torch's releases:\n{out}")
    newest = {}
    for release in listed[1].split(", "):
        if not re.fullmatch(r"\d+\.\d+\.\d+", release):
            continue  # a local build (2.13.0+cpu) or a pre-release
        parts = tuple(int(p) for p in release.split("."))
        if parts[:2] >= FIRST_RELEASE and parts > newest.get(parts[:2], (0,)):
            newest[parts[:2]] = parts
    return [".".join(map(str, parts)) for _, parts in sorted(newest.items())]


@nox.session(venv_backend="none")
def matrix(session):
    """Check the claims and recipes on other torch releases; write docs/matrix/torch-<release>.json.

    ``nox -s matrix`` checks the newest patch of every minor release from 2.0 on;
    ``nox -s matrix -- 2.0.1 2.4.1`` those releases; ``--list`` prints the default list as
    JSON (for the workflow); ``--strict`` fails when a claim's verdict changed on a release
    (naming the claim). Each release gets an environment of its own, installed from pip's
    cache when it can and removed after its run; the time per release is printed at the end.
    """
    args = [a for a in session.posargs if not a.startswith("--")]
    flags = [a for a in session.posargs if a.startswith("--")]
    if "--list" in flags:
        print(json.dumps(_newest_patches(session)))
        return
    releases = args or _newest_patches(session)
    session.log(f"torch releases to check: {', '.join(releases)}")
    pip_env = {**os.environ, **_unconstrained_pip()}
    times, failed = [], []
    for release in releases:
        venv = MATRIX_ENVS / release
        shutil.rmtree(venv, ignore_errors=True)
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = str(venv / "bin" / "python")
        # the runner first, so that it can record a release whose torch does not install
        subprocess.run([python, "-m", "pip", "install", "-q", *PACKAGE_ALONE], check=True, env=pip_env)
        for attempt in range(INSTALL_ATTEMPTS):  # a download cut by a network timeout is tried again
            install = subprocess.run(
                [python, "-m", "pip", "install", "-q", "--no-compile", f"torch=={release}"],
                capture_output=True,
                text=True,
                env=pip_env,
            )
            if install.returncode == 0:
                break
            session.warn(f"torch {release}: pip install failed (attempt {attempt + 1} of {INSTALL_ATTEMPTS})")
        installed = time.monotonic() - started
        if install.returncode != 0:
            reason = (install.stdout + install.stderr).strip().splitlines()[-1:] or ["no output"]
            session.warn(f"torch {release} could not be installed: {reason[0]}")
            session.run(
                python,
                *MATRIX_RUNNER,
                release,
                "--not-run",
                f"pip install failed: {reason[0]}",
                external=True,
            )
            code = 1
        else:
            code = subprocess.run(
                [python, *MATRIX_RUNNER, release, "--install-seconds", f"{installed:.1f}", *flags]
            ).returncode
            if code not in (0, 1):
                session.run(
                    python,
                    *MATRIX_RUNNER,
                    release,
                    "--not-run",
                    f"the run failed (exit {code})",
                    external=True,
                )
        shutil.rmtree(venv, ignore_errors=True)
        total = time.monotonic() - started
        times.append((release, installed, total))
        if code:
            failed.append(release)
        session.log(f"torch {release}: {total:.0f} s ({installed:.0f} s to install)")
    session.log("time per release: " + ", ".join(f"{r} {t:.0f} s (install {i:.0f} s)" for r, i, t in times))
    if failed:
        session.error(f"torch {', '.join(failed)}: verdicts changed or the release could not be checked")


@nox.session
def lighthouse(session):
    """Lighthouse scores of build/html (run ``nox -s docs`` first), served gzipped as GitHub Pages does.

    Installs the pinned npm package (package.json, ``npm ci``), then runs ``src/autograd_recipes/publish/lighthouse.py``
    with the mobile profile in Chromium on the landing page, a recipe, the guide, the claims
    page and the versions page of each language; fails when one scores under 95 for performance or 100 for the others.
    ``nox -s lighthouse -- --runs 3`` takes the median of three runs per page.
    """
    install(
        session, *PACKAGE_ALONE
    )  # src/autograd_recipes/publish/lighthouse.py needs only the standard library
    session.run("npm", "ci", "--no-audit", "--no-fund", external=True)
    session.run("python", "-m", "autograd_recipes.publish.lighthouse", *session.posargs)


@nox.session
def serve(session):
    """Serve the built site at conf.py's LOCAL_SITE_URL, http://127.0.0.1:8000/ (run ``nox -s docs`` first).

    A local build's canonical links, sitemap and 404 page point there; ``nox -s serve -- 8001``
    serves on another port.
    """
    install(session, *PACKAGE_ALONE)  # the project model, which reads conf.py
    local = urllib.parse.urlsplit(project_fact(session, 'PROJECT.config["LOCAL_SITE_URL"]'))
    port = session.posargs[0] if session.posargs else str(local.port)
    session.run("python", "-m", "http.server", port, "--bind", local.hostname, "--directory", "build/html")
