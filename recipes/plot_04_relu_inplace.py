"""
``nn.ReLU(inplace=True)``: when it is safe
==========================================

Saves you from an in-place ReLU that overwrites a value someone still needs.

An in-place ReLU writes its result over its input instead of allocating a new
tensor. That is safe when the input may be written in place at all (not a leaf
that requires grad, nor a view that autograd forbids changing) and nothing reads
it, or the tensor it is a view of, afterwards: not your own code (a skip
connection) and not autograd (an op that saved the tensor for its backward
pass). Where your own code reads it, the model silently computes something
else; where autograd saved it, a backward pass through that op raises an error.
"""

# %%
# Safe: straight after a linear layer
# -----------------------------------
# Without autocast, ``nn.Linear`` saves its input for the weight's gradient and
# its weight for the input's, never its output :claim:`site-what-ops-save`, so
# ReLU may overwrite the output. The in-place model gives exactly the same
# outputs and gradients as the same model with ``inplace=False``, and reuses the
# linear layer's memory.

import copy

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(inplace=True), torch.nn.Linear(16, 1))
reference = copy.deepcopy(model)
reference[1] = torch.nn.ReLU(inplace=False)

x = torch.randn(4, 8)
out, out_ref = model(x), reference(x)
# sphinx_gallery_start_ignore
show_graph(out)
# sphinx_gallery_end_ignore
grads = torch.autograd.grad(out.sum(), list(model.parameters()))
grads_ref = torch.autograd.grad(out_ref.sum(), list(reference.parameters()))
print("outputs equal:", torch.equal(out, out_ref))
print("gradients equal:", all(torch.equal(a, b) for a, b in zip(grads, grads_ref)))

h = model[0](x)
print("ReLU returned the same memory:", model[1](h).data_ptr() == h.data_ptr())

# %%
# Silent: the input is still needed by your own code
# --------------------------------------------------
# A block that adds its pre-activation ``h`` back after the ReLU. With
# ``inplace=True`` the ReLU has already overwritten ``h``, so the block adds
# ``relu(h)`` instead. No error; the numbers are just different.
linear1, linear2 = torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)


def block(x, relu):
    h = linear1(x)
    return linear2(relu(h)) + h


with torch.no_grad():
    wrong = block(x, torch.nn.ReLU(inplace=True))
    right = block(x, torch.nn.ReLU(inplace=False))

print("outputs equal:", torch.equal(wrong, right))
print("largest difference:", (wrong - right).abs().max().item())

# %%
# Loud: the input was saved for backward
# --------------------------------------
# ``tanh`` saves its output to compute its gradient. An in-place ReLU on that
# output changes it, and backward refuses to run. Each error on this page is
# raised when the page is built, and the build checks its type and message (the
# downloadable script shows how).
a = torch.tanh(linear1(x))
torch.nn.ReLU(inplace=True)(a)
# sphinx_gallery_start_ignore
show_graph(a)
# sphinx_gallery_end_ignore
print("version of a after the in-place ReLU:", a._version)

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "which is output 0 of Tanh,"):
    # sphinx_gallery_end_ignore
    a.sum().backward()

# %%
# Loud: the input is a leaf that requires grad
# --------------------------------------------
leaf = torch.randn(3, requires_grad=True)

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "a leaf Variable that requires grad"):
    # sphinx_gallery_end_ignore
    torch.nn.ReLU(inplace=True)(leaf)

# %%
# The safe version of the skip block
# ----------------------------------
# Keep ``inplace=False`` (the default) wherever the input is read again. The
# block then agrees with its formula, ``linear2(relu(h)) + h``, written out
# with ``torch.clamp``:
with torch.no_grad():
    h = linear1(x)
    by_formula = linear2(torch.clamp(h, min=0)) + h
    safe = block(x, torch.nn.ReLU())

print("matches the formula:", torch.equal(safe, by_formula))
# sphinx_gallery_start_ignore
assert torch.equal(safe, by_formula)
# sphinx_gallery_end_ignore
