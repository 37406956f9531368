"""``with expect_error(kind, text):``: the block must raise ``kind`` with ``text`` in its message.

The recipes and notebooks wrap each failing case in it (the wrapper is hidden on the page),
so the build fails when torch stops raising what a page teaches, and the error's type and
message are printed as the page shows them.
"""

import contextlib


@contextlib.contextmanager
def expect_error(kind, text):
    want = f"expected {kind.__name__} with {text!r}"
    try:
        yield
    except Exception as err:
        if type(err) is not kind or text not in str(err):
            raise AssertionError(f"{want}, got {type(err).__name__}: {err}") from err
        print(f"{kind.__name__}: {err}")
    else:
        raise AssertionError(f"{want}; nothing was raised")
