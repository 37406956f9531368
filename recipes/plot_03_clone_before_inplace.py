"""
``clone()`` before changing a tensor that needs gradients
=========================================================

Saves you from losing the gradient path when you copy a tensor before changing
it.

Autograd refuses an in-place op on a leaf that requires grad while it records.
A tensor that an op saved for its backward pass can be changed, but then the
backward pass that needs it fails. ``clone()``, with grad mode on, gives you a
new tensor that nothing has saved yet, so you may change it, *and* it keeps the
path back to the original, so gradients still flow; once an op saves the clone,
the same rule holds for it. ``detach().clone()`` also lets you change it, but
cuts the path: that one fails silently where the loss still requires grad
through other tensors (computed from the copy alone, it makes backward raise).
"""

# %%
# Pitfall 1: the leaf itself
# --------------------------
# Each error on this page is raised when the page is built, and the build
# checks its type and message (the downloadable script shows how).

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
x = torch.randn(5, requires_grad=True)

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "a leaf Variable that requires grad"):
    # sphinx_gallery_end_ignore
    x.add_(1)

# %%
# Pitfall 2: a tensor saved for backward
# --------------------------------------
# ``exp`` saves its result (the derivative of ``exp`` is ``exp``). Changing that
# result in place is allowed at the time, but every in-place op bumps the
# tensor's version counter, and backward checks it. (Writes through ``.data``
# are not counted, and a saved-tensors hook switches the check off: where the
# hook keeps the tensor itself, as ``save_on_cpu`` does with a CPU tensor,
# backward then runs on the changed value, and its gradient is wrong
# :claim:`silent-wrong-gradients`.)
y = x.exp()
print("version before:", y._version)
y.add_(1)
print("version after add_:", y._version)
# sphinx_gallery_start_ignore
show_graph(y)
# sphinx_gallery_end_ignore

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "modified by an inplace operation"):
    # sphinx_gallery_end_ignore
    y.sum().backward()

# %%
# Pitfall 3, silent: ``detach().clone()``
# ---------------------------------------
# This copy can be changed, but it has left the graph: the result does not
# require grad, and anything computed from it contributes no gradient to ``x``.
z = x.detach().clone().add_(1)
print("requires_grad:", z.requires_grad, "| grad_fn:", z.grad_fn)

# %%
# The safe version: ``clone()`` then change
# -----------------------------------------
# ``clone()`` is recorded by autograd (its gradient is the identity), so the
# in-place change after it is recorded too and backward reaches ``x``.
y = x.exp()
z = y.clone()
z.add_(1)
# sphinx_gallery_start_ignore
show_graph(z)
# sphinx_gallery_end_ignore
grad_clone = torch.autograd.grad(z.sum(), x)[0]

# %%
# Proof: the same gradient as the out-of-place expression ``exp(x) + 1``,
# whose derivative is ``exp(x)``.
grad_reference = torch.autograd.grad((x.exp() + 1).sum(), x)[0]
print("gradient via clone():", grad_clone)
print("out-of-place gradient:", grad_reference)
print(
    "equal:",
    torch.equal(grad_clone, grad_reference),
    "| equals exp(x):",
    torch.equal(grad_clone, x.detach().exp()),
)
# sphinx_gallery_start_ignore
assert torch.equal(grad_clone, grad_reference)
# sphinx_gallery_end_ignore
