"""
Updating a leaf under ``torch.no_grad()``
=========================================

An in-place update of a leaf that requires grad is refused while autograd
records; ``torch.no_grad()`` lets it through.
"""

# %%
# The pitfall
# -----------
# The update raises.

# sphinx_gallery_start_ignore
import contextlib

# sphinx_gallery_end_ignore
import torch

# sphinx_gallery_start_ignore


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


try:  # the site's drawing of the graph; nothing for your code
    from autograd_graph import show_graph
except ImportError:

    def show_graph(tensor, *written):
        pass


# sphinx_gallery_end_ignore
w = torch.tensor([0.5, -0.5], requires_grad=True)
loss = (w * 2).sum()
# sphinx_gallery_start_ignore
show_graph(loss, w)
# sphinx_gallery_end_ignore
loss.backward()

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "a leaf Variable that requires grad"):
    # sphinx_gallery_end_ignore
    w.add_(w.grad, alpha=-0.1)

# %%
# The fix
# -------
# Under ``torch.no_grad()`` the update goes through.

with torch.no_grad():
    w.add_(w.grad, alpha=-0.1)
print(w)
