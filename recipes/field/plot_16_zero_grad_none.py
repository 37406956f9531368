"""
``zero_grad()`` leaves ``.grad`` as ``None``
============================================

Saves you from gradient code that worked before PyTorch 2.0 and now meets
``None``.

Since PyTorch 2.0, ``optimizer.zero_grad()`` and ``module.zero_grad()`` set
each gradient to ``None`` instead of filling it with zeros in place
(``set_to_none=True`` became the default). Code that accumulates into
``p.grad`` by hand, or reads it between ``zero_grad()`` and the next backward
pass, gets ``None``: an error (a ``TypeError`` here) at best. Start from the
gradient a backward pass writes, test for ``None``, or ask for the old
behaviour with ``zero_grad(set_to_none=False)``.
"""

# %%
# The pitfall: adding into ``p.grad`` after ``zero_grad()``
# ---------------------------------------------------------
# A penalty's gradient, computed separately, is added to each parameter's
# gradient by hand before the backward pass. Each error on this page is raised
# when the page is built, and the build checks its type and message (the
# downloadable script shows how).

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 3), torch.randn(8, 1)
loss = torch.nn.functional.mse_loss(model(x), y)
loss.backward()
opt.step()

opt.zero_grad()
print("after zero_grad():", model.weight.grad)

# %%

# sphinx_gallery_start_ignore
with expect_error(TypeError, "unsupported operand type(s) for +=: 'NoneType' and 'Tensor'"):
    # sphinx_gallery_end_ignore
    for p in model.parameters():
        p.grad += 0.01 * p.detach()

# %%
# Fix 1: add after the backward pass
# ----------------------------------
# The backward pass writes the gradient of every parameter that requires grad
# and that the loss reaches through differentiable operations (a new tensor
# where it was ``None``); a parameter the loss reaches only through
# ``argmax``, a comparison or ``detach()`` keeps ``None``
# :claim:`site-zero-grad-sets-none`. Add your own term after it.
loss = torch.nn.functional.mse_loss(model(x), y)
# sphinx_gallery_start_ignore
show_graph(loss)
# sphinx_gallery_end_ignore
opt.zero_grad()
loss.backward()
with torch.no_grad():
    for p in model.parameters():
        p.grad += 0.01 * p

grad_after = model.weight.grad.clone()
print("gradient with the penalty:", grad_after)

# %%
# Fix 2: zeros, as before 2.0
# ---------------------------
# ``set_to_none=False`` fills the existing gradients with zeros in place, and
# the next plain backward pass adds into them :claim:`site-zero-grad-sets-none`,
# so adding before the backward pass works again.
opt.zero_grad(set_to_none=False)
print("after zero_grad(set_to_none=False):", model.weight.grad)
with torch.no_grad():
    for p in model.parameters():
        p.grad += 0.01 * p

loss = torch.nn.functional.mse_loss(model(x), y)
loss.backward()
print("the same gradient:", torch.allclose(model.weight.grad, grad_after))
# sphinx_gallery_start_ignore
# The check: both orders give the gradient of the loss plus the penalty's, computed by autograd.
penalty = 0.005 * sum((p**2).sum() for p in model.parameters())
want = torch.autograd.grad(torch.nn.functional.mse_loss(model(x), y) + penalty, [model.weight])[0]
assert torch.allclose(grad_after, want) and torch.allclose(model.weight.grad, want)
# sphinx_gallery_end_ignore

# %%
# Another ``None``: the gradient of a tensor that is not a leaf
# -------------------------------------------------------------
# Unless asked to (see the fix), a backward pass fills ``.grad`` of leaf
# tensors that require grad only: parameters (unless frozen), and tensors
# created with ``requires_grad=True``.
# A tensor computed from them, such as a layer's output ``h = model(x)``,
# keeps ``None``, and reading its ``.grad`` warns, before the backward pass or
# after it. Here ``warnings.catch_warnings`` catches the warning, and the code
# prints it.
import warnings

h = model(x)
torch.nn.functional.mse_loss(h, y).backward()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print("h.grad:", h.grad)

for w in caught:
    print(f"{w.category.__name__}: {w.message}")

# %%
# The fix: ``retain_grad()``, or ``torch.autograd.grad``
# ------------------------------------------------------
# ``h.retain_grad()`` before the backward pass asks it to fill ``h.grad`` too;
# called after it, it comes too late, and ``h.grad`` stays ``None``.
# ``torch.autograd.grad`` returns the gradient instead, and writes no
# ``.grad``. A weight made by an operation on a tensor that requires grad,
# such as ``torch.randn(3, requires_grad=True) * 0.1`` or a ``.double()`` of
# it, is not a leaf either: do the operation first, then call
# ``requires_grad_()`` on the result.
h = model(x)
h.retain_grad()
torch.nn.functional.mse_loss(h, y).backward()
print("h.grad, first rows:", h.grad[:3].flatten())

out = model(x)
(grad_out,) = torch.autograd.grad(torch.nn.functional.mse_loss(out, y), out)
print("the same from torch.autograd.grad:", torch.equal(grad_out, h.grad))
# sphinx_gallery_start_ignore
# The check: the retained gradient is that of the mean squared error at h; retain_grad()
# after the backward pass leaves None; a weight made leaf by requires_grad_() gets .grad.
assert torch.allclose(h.grad, 2 * (h - y).detach() / h.numel())
late = model(x)
torch.nn.functional.mse_loss(late, y).backward()
late.retain_grad()
assert late.grad is None
leaf = (torch.randn(3) * 0.1).requires_grad_()
(leaf * 2).sum().backward()
assert leaf.is_leaf and torch.equal(leaf.grad, torch.full((3,), 2.0))
assert not (torch.randn(3, requires_grad=True) * 0.1).is_leaf
assert not torch.randn(3, requires_grad=True).double().is_leaf
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `pytorch/pytorch#92731 <https://github.com/pytorch/pytorch/pull/92731>`__: the
#   change of the default, with its note that code reading the gradients after
#   ``zero_grad()`` breaks;
# - `pytorch/examples#1172 <https://github.com/pytorch/examples/pull/1172>`__: an
#   example that accumulated into the gradients by hand;
# - `JunyiZhu-AI/surrogate_model_extension#1
#   <https://github.com/JunyiZhu-AI/surrogate_model_extension/issues/1>`__: the same
#   ``TypeError`` after upgrading.
