"""
Indexing and slicing with in-place operations
=============================================

Saves you from in-place edits of an indexed copy that never reach the tensor.

Whether ``t[...].add_(1)`` changes ``t`` depends on the index. A slice
(``t[0:2]``), an integer (``t[1]``, or a 0-dim integer tensor other than uint8,
``t[torch.tensor(1)]``),
``None`` and ``...`` give a *view*: the change reaches ``t``, and autograd treats
it as a change of ``t`` itself. A 1-D index tensor, a list of integers or a mask
(``t[idx]``) makes a *copy*: the change is lost without a word. Assignment,
``t[idx] = v``, writes into ``t`` for every kind of index
:claim:`site-indexing-view-or-copy` (and, like any in-place change, is refused on
a leaf that requires grad while autograd records). The safe pattern: clone, then
assign, or build a new tensor with an out-of-place op such as ``index_add``.
"""

# %%
# Silent: an in-place op on an index-tensor copy
# ----------------------------------------------
# ``data[index]`` with a tensor of indices copies the selected values. ``add_``
# changes the copy, which is then thrown away. No error, and ``data`` is unchanged.

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
data = torch.zeros(5, requires_grad=True)
index = torch.tensor([0, 2])
data[index].add_(1)
print("data after data[index].add_(1):", data)

# %%
# Loud: an in-place op on a view of a leaf
# ----------------------------------------
# A slice is a view of the leaf's memory, so the change would write into the
# leaf while autograd records: refused. A 0-dim *integer* index tensor looks like
# an index tensor, but it selects one element, like ``data[2]``: a view, refused
# the same way. (A 0-dim bool or uint8 tensor is read as a mask: a copy.) Each
# error on this page is raised when the page is built, and the build checks its
# type and message (the downloadable script shows how).

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "a view of a leaf Variable that requires grad"):
    # sphinx_gallery_end_ignore
    data[0:2].add_(1)

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "a view of a leaf Variable that requires grad"):
    # sphinx_gallery_end_ignore
    data[torch.tensor(2)].add_(1)

# %%
# Loud: masked assignment into a tensor saved for backward
# --------------------------------------------------------
# ``h[h > 2] = 0`` writes into ``h``. If ``h`` came from ``exp`` (which saves its
# output), backward fails.
torch.manual_seed(0)
x = torch.randn(6, requires_grad=True)
h = x.exp()
h[h > 2] = 0
# sphinx_gallery_start_ignore
show_graph(h)
# sphinx_gallery_end_ignore

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "modified by an inplace operation"):
    # sphinx_gallery_end_ignore
    h.sum().backward()

# %%
# The safe versions
# -----------------
# Clone, then assign: the assignment writes into the clone, which autograd
# records, and the gradient reaches ``data``.
new_data = data.clone()
new_data[index] = new_data[index] + 1.0
print("new_data:", new_data)
grad_clone = torch.autograd.grad((new_data * torch.arange(5.0)).sum(), data)[0]

# %%
# Or with no in-place op at all: ``index_add`` returns a new tensor. The two
# routes agree for distinct indices, as here; with a repeated index,
# ``t[idx] = t[idx] + 1`` keeps one write per position while ``index_add`` adds
# once per repeat.
ones = torch.ones(len(index))
new_data_oop = data.index_add(0, index, ones)
grad_oop = torch.autograd.grad((new_data_oop * torch.arange(5.0)).sum(), data)[0]
print("same values:", torch.equal(new_data, new_data_oop))

# %%
# Proof: adding a constant does not change the derivative, so the gradient of
# ``sum(new_data * [0, 1, 2, 3, 4])`` with respect to ``data`` must be exactly
# ``[0, 1, 2, 3, 4]``, by both routes.
print("gradient via clone + assign:", grad_clone)
print("gradient via index_add:     ", grad_oop)
# sphinx_gallery_start_ignore
assert torch.equal(grad_clone, torch.arange(5.0)) and torch.equal(grad_oop, grad_clone)
# sphinx_gallery_end_ignore

# %%
# For the masked case, ``torch.where`` makes a new tensor instead of writing
# into ``h``; its gradient matches the formula: ``exp(x)`` where ``exp(x) <= 2``,
# else 0.
h = x.exp()
h_masked = torch.where(h > 2, torch.zeros_like(h), h)
# sphinx_gallery_start_ignore
show_graph(h_masked)
# sphinx_gallery_end_ignore
grad_where = torch.autograd.grad(h_masked.sum(), x)[0]
expected = torch.where(x.exp() > 2, 0.0, x.exp()).detach()
print("torch.where gradient matches the formula:", torch.equal(grad_where, expected))
# sphinx_gallery_start_ignore
assert torch.equal(grad_where, expected)
# sphinx_gallery_end_ignore
