"""
Decaying parameters by hand: ``.data`` vs ``torch.no_grad()``
=============================================================

Saves you from ``.data`` edits that make backward use the wrong weights without
a word.

Shrinking weights outside an optimizer (``p *= 0.9``) is an in-place change of
a leaf that requires grad. ``p.data.mul_(0.9)`` gets past autograd's check by
hiding the change from it, including from the version counter that protects a
pending backward pass: gradients that use the saved weights are then computed
from the new values, with no error. ``torch.no_grad()`` allows the change *and*
keeps that protection.
"""

# %%
# Two small helpers
# -----------------
# The failing snippets on this page run inside ``expect_error``: it prints the
# error torch raised and stops the page's build if torch stops raising it.
# You do not need it in your own code.
#
# ``show_graph(t)`` draws the graph autograd recorded for ``t``, as this page
# shows it: the nodes, the tensors each one saved with their version when saved
# and now, and the in-place write that changed one. It lives in
# ``autograd_graph.py`` beside the recipes; without that file it draws nothing,
# and your own code does not need it either.
import contextlib

import torch


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


try:
    from autograd_graph import show_graph
except ImportError:  # without the site's autograd_graph.py: no pictures

    def show_graph(tensor, *written):
        pass


# %%
# Setup: a pending backward pass
# ------------------------------
# ``x`` requires grad (think of an input you differentiate, or the output of an
# earlier layer), so the multiplication saves ``w`` to compute ``x``'s gradient. The
# correct gradient of ``sum(w * x)`` with respect to ``x`` is ``w`` as it was in
# the forward pass.
decay = 0.9
w_start = torch.tensor([1.0, 2.0, 3.0])


def fresh():
    w = torch.nn.Parameter(w_start.clone())
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    return w, x


w, x = fresh()
with expect_error(RuntimeError, "a leaf Variable that requires grad"):
    w.mul_(decay)

# %%
# Silent: ``.data`` between forward and backward
# ----------------------------------------------
w, x = fresh()
loss = (w * x).sum()
w.data.mul_(decay)
show_graph(loss)
loss.backward()
print("x.grad with .data decay:", x.grad)
print("correct x.grad (w in the forward pass):", w_start)
print("version counter saw the change:", w._version != 0)

# %%
# Loud: ``torch.no_grad()`` between forward and backward
# ------------------------------------------------------
# The same change under ``no_grad`` bumps the version counter, so backward
# notices that a value it saved has changed and stops.
w, x = fresh()
loss = (w * x).sum()
with torch.no_grad():
    w.mul_(decay)
show_graph(loss)
with expect_error(RuntimeError, "modified by an inplace operation"):
    loss.backward()

# %%
# The safe version
# ----------------
# Finish backward first, then decay under ``torch.no_grad()``. ``w`` stays the
# same trainable leaf.
w, x = fresh()
loss = (w * x).sum()
loss.backward()
with torch.no_grad():
    w.mul_(decay)
show_graph(loss)
print("x.grad:", x.grad)
print("w:", w)

# %%
# Proof: the gradient is the pre-decay weight, the weight is exactly the
# decayed one, and it is still a leaf that requires grad.
assert torch.equal(x.grad, w_start)
assert torch.equal(w.detach(), w_start * decay)
assert w.is_leaf and w.requires_grad
print("all checks passed")

# %%
# In a training loop, prefer to let the optimizer do it:
# ``torch.optim.AdamW(params, weight_decay=...)`` applies decoupled decay, and
# ``torch.optim.SGD(params, weight_decay=...)`` adds ``weight_decay * p`` to the
# gradient it steps with, leaving ``p.grad`` as it is
# :claim:`site-optimizer-weight-decay`. Both skip a parameter whose ``.grad`` is
# ``None``: it is not decayed either.
