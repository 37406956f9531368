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
# Setup: a pending backward pass
# ------------------------------
# ``x`` requires grad (think of an input you differentiate, or the output of an
# earlier layer), so the multiplication saves ``w`` to compute ``x``'s gradient. The
# correct gradient of ``sum(w * x)`` with respect to ``x`` is ``w`` as it was in
# the forward pass. Each error on this page is raised when the page is built,
# and the build checks its type and message (the downloadable script shows how).

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
decay = 0.9
w_start = torch.tensor([1.0, 2.0, 3.0])


def fresh():
    w = torch.nn.Parameter(w_start.clone())
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    return w, x


w, x = fresh()

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "a leaf Variable that requires grad"):
    # sphinx_gallery_end_ignore
    w.mul_(decay)

# %%
# Silent: ``.data`` between forward and backward
# ----------------------------------------------
w, x = fresh()
loss = (w * x).sum()
w.data.mul_(decay)
# sphinx_gallery_start_ignore
show_graph(loss)
# sphinx_gallery_end_ignore
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
# sphinx_gallery_start_ignore
show_graph(loss)
# sphinx_gallery_end_ignore

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "modified by an inplace operation"):
    # sphinx_gallery_end_ignore
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

# sphinx_gallery_start_ignore
show_graph(loss)
# sphinx_gallery_end_ignore
print("x.grad:", x.grad)
print("w:", w)

# %%
# Proof: the gradient is the pre-decay weight, the weight is exactly the
# decayed one, and it is still a leaf that requires grad.
print("x.grad is the pre-decay weight:", torch.equal(x.grad, w_start))
print("w is exactly the decayed weight:", torch.equal(w.detach(), w_start * decay))
print("still a leaf that requires grad:", w.is_leaf and w.requires_grad)
# sphinx_gallery_start_ignore
assert torch.equal(x.grad, w_start)
assert torch.equal(w.detach(), w_start * decay)
assert w.is_leaf and w.requires_grad
# sphinx_gallery_end_ignore

# %%
# In a training loop, prefer to let the optimizer do it:
# ``torch.optim.AdamW(params, weight_decay=...)`` applies decoupled decay, and
# ``torch.optim.SGD(params, weight_decay=...)`` adds ``weight_decay * p`` to the
# gradient it steps with, leaving ``p.grad`` as it is
# :claim:`site-optimizer-weight-decay`. Both skip a parameter whose ``.grad`` is
# ``None``: it is not decayed either.
