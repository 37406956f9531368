"""
Changing weights by hand under ``torch.no_grad()``
==================================================

Saves you from the "leaf Variable … in-place operation" error in a hand-written
update step.

A hand-written SGD step, ``w.add_(w.grad, alpha=-lr)``, is an in-place change of a
leaf tensor that requires grad. Autograd refuses it while it is recording; the
fix is to stop recording for the update with ``torch.no_grad()``, which leaves
``w`` a leaf that still requires grad, so, once its ``.grad`` is cleared, the
next step trains as before. Make the update after the backward passes that use
the old ``w``: it is still an in-place change, which a pending backward refuses
if its graph saved ``w``.
"""

# %%
# The pitfall: updating a leaf while autograd records
# ---------------------------------------------------
# ``w`` is a leaf (created by us) with ``requires_grad=True``. An in-place
# update of it while gradient mode is on is refused outright, and
# ``w -= lr * w.grad`` is refused the same way. Each error on this page is
# raised when the page is built, and the build checks its type and message
# (the downloadable script shows how).

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
target = torch.tensor([1.0, 0.0])
w = torch.tensor([0.5, -0.5], requires_grad=True)

loss = ((x @ w - target) ** 2).mean()
# sphinx_gallery_start_ignore
show_graph(loss, w)
# sphinx_gallery_end_ignore
loss.backward()
lr = 0.1

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "a leaf Variable that requires grad"):
    # sphinx_gallery_end_ignore
    w.add_(w.grad, alpha=-lr)

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "a leaf Variable that requires grad"):
    # sphinx_gallery_end_ignore
    w -= lr * w.grad

# %%
# A tempting workaround: ``w = w - lr * w.grad``
# ----------------------------------------------
# It raises nothing at first, but it replaces the leaf with a new tensor
# computed *from* it: no longer a leaf, so backward does not fill its ``.grad``.
# In the hand-written loop this recipe is about, that is loud at the next step:
# reading ``.grad`` of a non-leaf warns, and ``lr * None`` raises a ``TypeError``.

# sphinx_gallery_start_ignore
import warnings

# sphinx_gallery_end_ignore


def train_by_rebinding(w, steps):
    for step in range(steps):
        loss = ((x @ w - target) ** 2).mean()
        loss.backward()
        w = w - lr * w.grad
    return w


# %%

# sphinx_gallery_start_ignore
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with expect_error(TypeError, "unsupported operand type(s) for *: 'float' and 'NoneType'"):
        # sphinx_gallery_end_ignore
        train_by_rebinding(w.detach().clone().requires_grad_(True), steps=2)
# sphinx_gallery_start_ignore
assert "is not a leaf Tensor is being accessed" in str(caught[0].message), caught
# sphinx_gallery_end_ignore

# %%
# It is silent where something else still holds the old leaf, such as an
# optimizer: the optimizer keeps updating the old leaf, while the forward pass
# uses the rebound tensor, whose values never change again. With this plain step
# the loss stops moving, with no error and no warning. (A step whose formula
# saves a tensor for backward, one with a weight-decay term say, is loud
# instead: the second backward raises "Trying to backward through the graph a
# second time".)
w_old = w.detach().clone().requires_grad_(True)
opt = torch.optim.SGD([w_old], lr=lr)
((x @ w_old - target) ** 2).mean().backward()
w_new = w_old - lr * w_old.grad  # one hand-written step by rebinding
opt.zero_grad()
losses = []
for step in range(3):
    loss = ((x @ w_new - target) ** 2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    losses.append(round(loss.item(), 6))

print(
    "loss at each step:", losses, "| the optimizer's leaf moved:", not torch.equal(w_old.detach(), w.detach())
)

# %%
# The safe version
# ----------------
# Inside ``torch.no_grad()`` the update is not recorded, so it is allowed.
# ``w`` stays the same leaf object, still requires grad, and its gradient must
# be cleared before the next backward pass (gradients accumulate). It still
# counts as an in-place change: ``w``'s version counter goes up, so a graph
# recorded before the update that saved ``w`` can no longer run backward
# :claim:`site-hand-update-rules`. Update after every backward pass that uses
# the old ``w``, as an optimizer step does.
w_before = w.detach().clone()
with torch.no_grad():
    # sphinx_gallery_start_ignore
    show_graph(w)
    # sphinx_gallery_end_ignore
    w.add_(w.grad, alpha=-lr)

w.grad = None
print("w after one step:", w)
print("same leaf, still trainable:", w.is_leaf, w.requires_grad)

# %%
# Proof that it is right: the same step made by ``torch.optim.SGD`` from the
# same starting point gives the same weights, to the last bit. (SGD's default
# step is this ``add_(grad, alpha=-lr)``; ``w -= lr * w.grad`` rounds twice
# and can differ from it in the last bit :claim:`site-sgd-step-rounding`.)
w_ref = w_before.clone().requires_grad_(True)
opt = torch.optim.SGD([w_ref], lr=lr)
((x @ w_ref - target) ** 2).mean().backward()
opt.step()
print("matches torch.optim.SGD:", torch.equal(w.detach(), w_ref.detach()))
# sphinx_gallery_start_ignore
assert torch.equal(w.detach(), w_ref.detach())
# sphinx_gallery_end_ignore
