"""What this project relies on in other packages beyond their documented options.

Each function here names one assumption about another package's files or
internals, so that an upgrade that breaks it fails in one place, with a message
that says which assumption (tests/test_upstream.py checks each against the
installed versions).
"""

from pathlib import Path


def gallery_md5_file(gallery_conf, fname):
    """sphinx-gallery skips an example whose ``<gallery dir>/<name>.py.md5`` matches its
    source (gen_rst.md5sum_is_current); removing the file makes the next build run it."""
    gallery = gallery_conf["gallery_dirs"]
    gallery = gallery if isinstance(gallery, str) else gallery[0]
    return Path(gallery_conf["src_dir"]) / gallery / f"{fname}.md5"


def gallery_md5_files(gallery_dir):
    """Every example's md5 file in a generated gallery folder."""
    return sorted(Path(gallery_dir).glob("*.py.md5"))
