"""Build the site: ``python docs/build.py [extra sphinx-build options]``.

The one place that knows how the site is built; ``nox -s docs``, the tests and
the benchmarks all call it. Output: ``build/html/en/``.
A non-zero exit means the site is not fit to publish (warnings count).
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FALLBACK_EPOCH = "1764460800"  # 2025-11-30, used outside a git checkout


def source_date_epoch():
    """Respect SOURCE_DATE_EPOCH; else the last commit's time, so a commit builds alike."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return os.environ["SOURCE_DATE_EPOCH"]
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%ct"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        out = ""
    return out or FALLBACK_EPOCH


def build(lang="en", extra=()):
    from sphinx.cmd.build import build_main

    os.environ["SOURCE_DATE_EPOCH"] = source_date_epoch()
    args = [
        "-W", "--keep-going", "-q",
        "-c", str(ROOT),
        "-d", str(ROOT / "build" / "doctrees" / lang),
        "-D", f"language={lang}",
        *extra,
        str(ROOT / "docs"),
        str(ROOT / "build" / "html" / lang),
    ]
    return build_main(args)


if __name__ == "__main__":
    sys.exit(build(extra=sys.argv[1:]))
