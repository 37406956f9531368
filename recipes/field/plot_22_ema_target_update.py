"""
An EMA or target network updated with grad mode on
==================================================

Saves you from an averaged copy of a model that autograd refuses to update,
or, worse, that it quietly records.

An exponential moving average (EMA) of a model's weights, or a target
network, is updated in place after each step:
``ema_p.mul_(d).add_(p, alpha=1 - d)``. With grad mode on, outside inference
mode, if the copy's parameters require grad, the first update fails with the
leaf error. Frozen
with ``requires_grad_(False)``, they are updated, but from parameters that
require grad: autograd records each update, the EMA's weights stop being
leaves, and their graph grows with every step. Update under
``torch.no_grad()``, or from detached tensors.
"""

# %%
# Pitfall 1: the copy's parameters still require grad
# ---------------------------------------------------
# ``copy.deepcopy`` copies each parameter with its ``requires_grad``. Each
# error on this page is raised when the page is built, and the build checks
# its type and message (the downloadable script shows how).

import copy

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
model = torch.nn.Linear(3, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
ema = copy.deepcopy(model)
decay = 0.9
print("the copy's weight requires grad:", ema.weight.requires_grad)
# sphinx_gallery_start_ignore
show_graph(ema.weight * 1, ema.weight)
# sphinx_gallery_end_ignore

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation"):
    # sphinx_gallery_end_ignore
    for ema_p, p in zip(ema.parameters(), model.parameters()):
        ema_p.mul_(decay).add_(p, alpha=1 - decay)

# %%
# With grad mode on, outside inference mode, an in-place write to a leaf that
# requires grad, such as a parameter, raises this error
# :claim:`leaf-inplace-raises`.
#
# Pitfall 2: a frozen copy, updated from parameters that require grad
# -------------------------------------------------------------------
# The usual answer to that error is to freeze the copy. The update then runs
# with grad mode on, and nothing is printed, but an in-place update from
# parameters that require grad (``mul_`` then ``add_`` as here, ``lerp_``,
# ``torch._foreach_lerp_``, or ``copy_`` of the new value) is recorded: the
# EMA's weights get a ``grad_fn``, stop being leaves, and start requiring grad;
# each step's update adds nodes to the same chain
# :claim:`site-ema-update-records-graph`. The count below is of the nodes
# reachable from the weight's ``grad_fn``.


def graph_size(t):
    seen, todo = set(), [t.grad_fn]
    while todo:
        node = todo.pop()
        if node is not None and node not in seen:
            seen.add(node)
            todo.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


ema = copy.deepcopy(model).requires_grad_(False)
for step in range(1, 4):
    x, y = torch.randn(8, 3), torch.randn(8, 2)
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    for ema_p, p in zip(ema.parameters(), model.parameters()):
        ema_p.mul_(decay).add_(p, alpha=1 - decay)
    w = ema.weight
    print(f"step {step}: {type(w.grad_fn).__name__}, leaf {w.is_leaf}, {graph_size(w)} nodes")

# sphinx_gallery_start_ignore
assert not ema.weight.is_leaf and ema.weight.requires_grad and graph_size(ema.weight) == 6
show_graph(ema.weight)
# sphinx_gallery_end_ignore

# %%
# Nothing fails at the update with grad mode on; the recorded chain surfaces
# later. A backward pass through the EMA's output reaches the model's
# parameters and adds into their ``.grad``, and freezing the EMA again fails,
# because its weights are no longer leaves
# :claim:`site-ema-update-records-graph`.
opt.zero_grad()
ema(torch.randn(4, 3)).sum().backward()
print("the model's weight gradient after a backward pass through the EMA:", model.weight.grad)

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "you can only change requires_grad flags of leaf variables"):
    # sphinx_gallery_end_ignore
    ema.requires_grad_(False)

# %%
# The fix: update under ``torch.no_grad()``
# -----------------------------------------
# Under ``torch.no_grad()`` nothing is recorded: the EMA's parameters stay
# leaves with no ``grad_fn``. ``lerp_`` computes the same update, up to
# rounding, in one operation: ``ema_p + (1 - decay) * (p - ema_p)``. By
# default, ``state_dict()`` returns detached tensors that share the
# parameters' memory, so an update written through those is not recorded
# either, with grad mode on, even where the EMA's parameters require grad
# :claim:`site-ema-update-records-graph`.
ema = copy.deepcopy(model).requires_grad_(False)
for step in range(3):
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(torch.randn(8, 3)), torch.randn(8, 2)).backward()
    opt.step()
    with torch.no_grad():
        for ema_p, p in zip(ema.parameters(), model.parameters()):
            ema_p.lerp_(p, 1 - decay)

print("grad_fn:", ema.weight.grad_fn, "| leaf:", ema.weight.is_leaf)
# sphinx_gallery_start_ignore
assert ema.weight.grad_fn is None and ema.weight.is_leaf
a, b = torch.randn(5), torch.randn(5)
assert torch.allclose(a.clone().lerp_(b, 1 - decay), a.clone().mul_(decay).add_(b, alpha=1 - decay))
# sphinx_gallery_end_ignore

ema = copy.deepcopy(model)
before = ema.weight.detach().clone()
opt.zero_grad()
torch.nn.functional.mse_loss(model(torch.randn(8, 3)), torch.randn(8, 2)).backward()
opt.step()
ema_state = ema.state_dict()
for name, p in model.state_dict().items():
    if p.dtype.is_floating_point:  # a BatchNorm's num_batches_tracked is an integer
        ema_state[name].mul_(decay).add_(p, alpha=1 - decay)

w = ema.weight
print("through state_dict(): changed:", not torch.equal(w, before), end=" ")
print("| grad_fn:", w.grad_fn, "| leaf:", w.is_leaf, "| requires grad:", w.requires_grad)
# sphinx_gallery_start_ignore
assert ema.weight.grad_fn is None and ema.weight.is_leaf and ema.weight.requires_grad
assert not torch.equal(ema.weight, before)
assert torch.allclose(ema.weight, before * decay + model.weight * (1 - decay))
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `ultralytics/ultralytics#25315
#   <https://github.com/ultralytics/ultralytics/pull/25315>`__: a faster EMA
#   update with ``torch._foreach_lerp_``; a review warns that without
#   ``.detach()`` the updates would be recorded in an ever-growing graph, and the
#   author answers that ``state_dict()`` already returns detached tensors;
# - `lucidrains/ema-pytorch#20
#   <https://github.com/lucidrains/ema-pytorch/issues/20>`__: wrapping a model in
#   an EMA fails at the copy's ``requires_grad_(False)`` with "you can only change
#   requires_grad flags of leaf variables", the error a recorded EMA update leaves
#   behind; the thread does not settle where the reporter's computed tensors came
#   from.
