"""Digests kept between build processes (src/autograd_recipes/digest_memo.py)."""

import shutil
import subprocess
import sys

from conftest import ROOT

ASK = """
import sys
from autograd_recipes import digest_memo
computed = []
got = digest_memo.remembered("kind", sys.argv[1], sys.argv[2], lambda text: computed.append(text) or text[::-1])
print(got, len(computed))
"""


def test_a_digest_is_computed_once_for_the_same_text_and_code(tmp_path):
    """A second process gets the first one's digest; another text or another version of the
    code that computes it is computed again."""
    shutil.copy(ROOT / "conf.py", tmp_path)  # a project of its own: its build/ keeps the digests

    def ask(version, text):
        done = subprocess.run(
            [sys.executable, "-c", ASK, version, text], cwd=tmp_path, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert ask("v1", "abc") == ["cba", "1"]
    assert ask("v1", "abc") == ["cba", "0"]  # kept
    assert ask("v1", "abd") == ["dba", "1"]
    assert ask("v2", "abc") == ["cba", "1"]
    assert (tmp_path / "build" / ".code-digests.json").is_file()
