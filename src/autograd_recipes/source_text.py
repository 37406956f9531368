"""A source file's text as UTF-8, what Sphinx, sphinx-gallery and tomllib read it as, or an
error naming the file, the line and the column of the first byte that is not.

Python's UnicodeDecodeError gives a byte offset and no file, and sphinx-gallery's crash on
a recipe with such a byte names neither: the build reads its sources here first.
"""

from pathlib import Path

from autograd_recipes.project import PROJECT


class NotUtf8(ValueError):
    """``<path>:<line>: not UTF-8 ...``: where a file stops being UTF-8."""


def read(path):
    """The file's text; NotUtf8, naming the file and line, where a byte is not UTF-8."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - data.rfind(b"\n", 0, error.start)  # from 1, in bytes
        raise NotUtf8(
            f"{PROJECT.named(path)}:{line}: not UTF-8: byte 0x{data[error.start]:02x} at column "
            f"{column} ({error.reason}); save the file as UTF-8"
        ) from None


def problem(path):
    """None where the file is UTF-8, else what NotUtf8 says."""
    try:
        read(path)
    except NotUtf8 as error:
        return str(error)
    return None
