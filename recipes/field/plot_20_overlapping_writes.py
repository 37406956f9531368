"""
In-place writes into expanded or overlapping tensors
====================================================

Saves you from an in-place write that torch refuses on one shape and gets
silently wrong on another.

``expand()``, ``expand_as()`` and ``broadcast_to()`` return a view whose
elements along an expanded dimension share one memory location. ``+=``,
``add_`` or ``copy_`` on it is refused; an item assignment is not, and changes
every element that shares the location. An in-place operation that reads a
view of the tensor it writes can read values it has already overwritten:
torch refuses some such cases, but ``a -= a[:, :1]`` on a tensor of two rows
runs, and can give a wrong result. Clone the expanded tensor or the view, or
compute out of place.
"""

# %%
# Pitfall 1: adding into an expanded tensor
# -----------------------------------------
# A column of per-row offsets, expanded to a grid of four columns: a stride of
# 0 means that the four columns of a row are one memory location. Each error on
# this page is raised when the page is built, and the build checks its type and
# message (the downloadable script shows how).

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
offsets = torch.tensor([[0.0], [10.0], [20.0]])
grid = offsets.expand(3, 4)
print("grid's strides:", grid.stride())

# %%
# ``+=``, ``add_``, ``mul_``, ``copy_``, ``relu_``, ``clamp_`` and
# ``torch.add(..., out=)`` into such a tensor are refused
# :claim:`site-expanded-inplace-raises`.

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "more than one element of the written-to tensor refers to"):
    # sphinx_gallery_end_ignore
    grid += torch.arange(4.0)

# %%
# An item assignment is not refused: it writes the location that the whole row
# shares, and the tensor that was expanded
# :claim:`site-expanded-inplace-raises`.
grid[0, 0] = 5.0
print(grid)
print("offsets:", offsets.flatten())
# sphinx_gallery_start_ignore
assert grid[0].tolist() == [5.0] * 4 and offsets.flatten().tolist() == [5.0, 10.0, 20.0]
# sphinx_gallery_end_ignore

# %%
# The fix: give each element its own memory, or compute out of place
# --------------------------------------------------------------------
# ``clone()`` or ``contiguous()`` copies the expanded tensor into memory of its
# own, where every write lands on one element
# :claim:`site-expanded-inplace-raises`; an out-of-place operation broadcasts
# into a new tensor. With ``offsets`` requiring grad, the graph of the
# out-of-place version shows one addition, and the gradient of each offset
# sums over its row's four columns.
offsets = torch.tensor([[0.0], [10.0], [20.0]])
grid = offsets.expand(3, 4).clone()
grid += torch.arange(4.0)
grid[0, 0] = 5.0
print(grid)

offsets.requires_grad_()
shifted = offsets + torch.arange(4.0)
# sphinx_gallery_start_ignore
show_graph(shifted)
# sphinx_gallery_end_ignore
shifted.sum().backward()
print("the same values:", torch.equal(shifted[1:], grid[1:]), "| offsets.grad:", offsets.grad.flatten())
# sphinx_gallery_start_ignore
assert grid.stride() == (4, 1) and grid[0].tolist() == [5.0, 1.0, 2.0, 3.0]
assert offsets.grad.flatten().tolist() == [4.0, 4.0, 4.0]
# sphinx_gallery_end_ignore

# %%
# Pitfall 2: subtracting the first column in place
# ------------------------------------------------
# Each row, minus its first element: the right-hand side ``a[:, :1]`` is a
# view of ``a`` itself. On a tensor of one row of 2, 3, 5 or 7 elements,
# torch refuses it :claim:`site-partial-overlap-silent`.
a = torch.tensor([[0.0, 1.0]])

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "some elements of the input tensor and the written-to tensor"):
    # sphinx_gallery_end_ignore
    a -= a[:, :1]

# %%
# On a tensor of two rows, the same line runs, and the second row comes out
# wrong, ``[0, 3]``: 3 - 0, as if ``a[1, 1]`` were computed after ``a[1, 0]``
# had been overwritten. With 2, 3 or 100 rows of 2, 3, 5 or 7 elements holding
# 1, 2, 3, …, the in-place ``-=``, ``add_`` and ``mul_`` with ``a[:, :1]`` run
# and give another result than the out-of-place operation, for float32,
# float64 and int64 tensors :claim:`site-partial-overlap-silent`.
a = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
expected = a - a[:, :1]
a -= a[:, :1]
print("a -= a[:, :1]:", a.tolist())
print("a - a[:, :1]: ", expected.tolist())
# sphinx_gallery_start_ignore
assert a.tolist() == [[0.0, 1.0], [0.0, 3.0]] and expected.tolist() == [[0.0, 1.0], [0.0, 1.0]]
# sphinx_gallery_end_ignore

# %%
# A test on one shape is no guide either. Of the widths from 2 to 40, these
# came out right for a two-row tensor on the machine that built this page:
right = []
for width in range(2, 41):
    b = torch.arange(2.0 * width).reshape(2, width)
    want = b - b[:, :1]
    b -= b[:, :1]
    if torch.equal(b, want):
        right.append(width)

print("widths where b -= b[:, :1] came out right:", right)
# sphinx_gallery_start_ignore
assert 2 not in right and 3 not in right and len(right) < 39
# sphinx_gallery_end_ignore

# %%
# Torch refuses some overlaps and not others: here it refuses a row ``a[:1]``
# and the transpose ``a.T`` as the right-hand side of ``-=``, ``add_`` or
# ``mul_`` on a 3×3 tensor, and lets the column ``a[:, :1]`` through
# :claim:`site-partial-overlap-silent`. A PyTorch maintainer describes the
# check as covering a small set of cases that are cheap to detect (the last
# thread below).
#
# The fix: compute out of place, or clone the right-hand side
# ------------------------------------------------------------
# ``a = a - a[:, :1]`` reads the old ``a`` and writes a new tensor; where the
# in-place form is wanted, ``a[:, :1].clone()`` gives the right-hand side
# memory of its own :claim:`site-partial-overlap-silent`.
a = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
a = a - a[:, :1]
print("out of place:", a.tolist())

b = torch.tensor([[0.0, 1.0], [2.0, 3.0]])
b -= b[:, :1].clone()
print("clone first: ", b.tolist())
# sphinx_gallery_start_ignore
assert a.tolist() == b.tolist() == [[0.0, 1.0], [0.0, 1.0]]
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `pytorch/pytorch#4664 <https://github.com/pytorch/pytorch/issues/4664>`__:
#   ``b += 1`` on a 1×1 tensor expanded to 4×5, from before torch refused it:
#   every element came out 21, one addition for each element sharing the
#   memory;
# - `arogozhnikov/einops#350 <https://github.com/arogozhnikov/einops/issues/350>`__:
#   an in-place operation after einops' ``repeat``, which returns an expanded
#   view, refused on the CPU and, as the report shows, not refused but wrong on
#   CUDA;
# - `pytorch/pytorch#135487 <https://github.com/pytorch/pytorch/issues/135487>`__:
#   ``a -= a[:, :1]`` raises on a 1×2 tensor and runs without an error on a
#   2×2 one, with a result other than ``a - a[:, :1]``;
# - `pytorch/pytorch#76891 <https://github.com/pytorch/pytorch/issues/76891>`__:
#   subtracting a column from all columns in place on the CPU, right for some
#   widths and wrong for others;
# - `pytorch/pytorch#115521 <https://github.com/pytorch/pytorch/issues/115521>`__:
#   an in-place subtraction of a slice refused on a 2-D tensor and not on a
#   3-D one; a maintainer answers that checking for overlap is
#   expensive in general, and torch checks a small set of easy cases.
