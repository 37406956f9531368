"""
In-place changes to the pieces of ``split``, ``chunk`` and ``unbind``
=====================================================================

Saves you from "This view is the output of a function that returns multiple
views" and its siblings that begin "A view was created in no_grad mode", one of
which comes with no ``torch.no_grad()`` in your code.

``split``, ``chunk``, ``unbind`` and ``split_with_sizes`` return several
views of one tensor. With grad mode on, an in-place operation on one of those
views is refused when the tensor they view requires grad, and also when the
operation writes in a value that requires grad. Use an out-of-place operation
instead, or take the piece by indexing with an integer or a slice
(``out[i] = ...``). A view made under ``torch.no_grad()`` of a tensor that
requires grad, and changed in place with grad mode on, is refused too: make the
view and the change in the same mode.
"""

# %%
# The pitfall: scaling one piece in place
# ---------------------------------------
# Autograd does not let one output of a function that returns several views be
# changed in place. The second case comes up when a preallocated tensor that
# does not require grad is filled row by row with values that do; its message
# begins "A view was created in no_grad mode", although no ``torch.no_grad()``
# is involved, and its fix is the same (``torch.stack`` the rows, or assign
# ``out[i] = ...``).
#
# A layer's output is split into a query and a key, and the query is scaled in
# place. With grad mode on, the rule covers the pieces of ``unbind``, ``split``,
# ``chunk`` and ``split_with_sizes``, not those of ``tensor_split``
# :claim:`site-view-rules`. Each error on this page is raised when the page is built, and the
# build checks its type and message (the downloadable script shows how).

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
proj = torch.nn.Linear(4, 8)
x = torch.randn(3, 4)

q, k = proj(x).chunk(2, dim=-1)
print("q is a view:", q._is_view(), "| made by:", type(q.grad_fn).__name__)
# sphinx_gallery_start_ignore
show_graph(q)
# sphinx_gallery_end_ignore

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "This view is the output of a function that returns multiple views"):
    # sphinx_gallery_end_ignore
    q *= 0.5

# %%
# A loop over a tensor's rows is the same case: iterating over a tensor calls
# ``unbind(0)``, so each row is one of its views.
h = proj(x)

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "This view is the output of a function that returns multiple views"):
    # sphinx_gallery_end_ignore
    for row in h:
        row.clamp_(min=0)

# %%
# Indexing with an integer, a slice or a 0-dim integer tensor makes one view at
# a time, and such a view of ``h`` may be changed in place (autograd records the
# change against ``h``); indexing with a 1-D tensor of indices, a list or a mask
# (a bool tensor, or a uint8 one, even 0-dim) makes a copy instead, whose change
# leaves ``h`` as it was :claim:`site-indexing-view-or-copy`:
for i in range(len(h)):
    h[i].clamp_(min=0)

print("rows clamped in place through h[i]:", bool((h >= 0).all()))

# %%
# Filling a preallocated tensor row by row
# ----------------------------------------
# The tensor being viewed need not require grad. Here ``out`` is a plain
# tensor, and the loop copies into each of its rows a value that requires grad.
# The message begins "A view was created in no_grad mode" although no
# ``torch.no_grad()`` is anywhere: the rows of a tensor that does not require
# grad have no autograd history, and torch's message then says no_grad mode.
# The rest of the message is the multiple-views one, and so is the fix.
out = torch.empty(3, 8)
print("out requires grad:", out.requires_grad, "| a row's grad_fn:", out.unbind(0)[0].grad_fn)

# %%

# sphinx_gallery_start_ignore
with expect_error(
    RuntimeError,
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "This view is the output of a function that returns multiple views",
):
    # sphinx_gallery_end_ignore
    for i, row in enumerate(out):
        row.copy_(proj(x[i]))

# %%
# Assign each row by indexing instead: ``out[i]`` is one view at a time, and
# autograd records the assignment against ``out``, which then requires grad.
# Or compute the rows out of place and stack them.
out = torch.empty(3, 8)
for i in range(len(x)):
    out[i] = proj(x[i])

stacked = torch.stack([proj(row) for row in x])
print("out requires grad:", out.requires_grad, "| same values as torch.stack:", torch.allclose(out, stacked))
# sphinx_gallery_start_ignore
# The check: both give the projection the same gradient as computing all rows at once.
assert out.requires_grad and torch.allclose(out, proj(x))
for filled in (out, stacked):
    got = torch.autograd.grad(filled.sum(), proj.weight)[0]
    assert torch.allclose(got, torch.autograd.grad(proj(x).sum(), proj.weight)[0])
# sphinx_gallery_end_ignore

# %%
# The other error: a view made under ``torch.no_grad()``
# ------------------------------------------------------
# A view made under ``torch.no_grad()`` of a tensor that requires grad, and
# changed in place with grad mode on, is refused, since it is unclear whether
# the change should be recorded. Make the view and the change in the same mode.
h = proj(x)
with torch.no_grad():
    first = h[0]

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "A view was created in no_grad mode and is being modified inplace"):
    # sphinx_gallery_end_ignore
    first.mul_(2)

# %%
# The fix: out of place, or one view at a time
# --------------------------------------------
# Rebinding the name to an out-of-place result changes nothing that autograd
# saved, and gives the same gradients as taking the pieces by indexing.
q, k = proj(x).chunk(2, dim=-1)
q = q * 0.5
scores = (q * k).sum()
# sphinx_gallery_start_ignore
show_graph(scores)
# sphinx_gallery_end_ignore
scores.backward()
print("gradient of the projection's bias:", proj.bias.grad)
# sphinx_gallery_start_ignore
# The check: the same gradient as slicing the output with indexing, which makes single views.
grad = proj.bias.grad.clone()
proj.bias.grad = None
out = proj(x)
(out[:, :4] * 0.5 * out[:, 4:]).sum().backward()
assert torch.allclose(proj.bias.grad, grad)
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `pytorch/pytorch#48149 <https://github.com/pytorch/pytorch/issues/48149>`__:
#   iterating over a tensor, then changing each piece in place;
# - `pytorch/pytorch#46820 <https://github.com/pytorch/pytorch/issues/46820>`__: ``v *=
#   v_scale`` on a piece of ``chunk``;
# - `ccarliu/m3ae#15 <https://github.com/ccarliu/m3ae/issues/15>`__: ``x[l] = ...``
#   with a value that requires grad, on a batch ``x`` that ``DataParallel``
#   passed in, a view made inside its scatter (a custom Function); the message
#   begins "A view was created in no_grad mode", with no ``no_grad`` anywhere in
#   the code, and the fix collected the rows with ``torch.cat``.
