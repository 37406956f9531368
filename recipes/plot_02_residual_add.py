"""
Residual connections: ``out.add_(identity)`` vs ``out + identity``
===================================================================

Saves you from a shortcut connection that breaks backward or quietly changes its
caller's input.

Adding the shortcut in place breaks backward when a recorded op saved ``out``
or a tensor that shares its memory (ReLU, sigmoid, tanh and exp save their
output); and ``out = x`` is not a copy, so adding into ``out`` writes into the
caller's input, with no error at the time (an input that is a leaf requiring grad
is refused instead). ``out = f(x) + identity`` avoids both, as long as ``f``
itself writes nothing in place.
"""

# %%
# When in place is fine: adding after a convolution and batch norm
# ----------------------------------------------------------------
# Without autocast, a convolution saves its *input* and weight for backward,
# batch norm saves its input, and neither saves its own output
# :claim:`site-conv-bn-save-inputs`. So
# adding the shortcut into the batch-norm output in place is safe, as long as
# nothing else read that output first and the batch norm has no full backward
# hook (which hands on its output as a view that may not be changed in place).

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
conv = torch.nn.Conv2d(4, 4, kernel_size=3, padding=1)
bn = torch.nn.BatchNorm2d(4)
x = torch.randn(2, 4, 8, 8, requires_grad=True)


def block_inplace(x):
    identity = x
    out = bn(conv(x))
    out += identity  # in place, into a tensor nobody saved
    return torch.relu(out)


def block_reference(x):
    return torch.relu(bn(conv(x)) + x)


grads_inplace = torch.autograd.grad(block_inplace(x).sum(), [x, conv.weight])
grads_reference = torch.autograd.grad(block_reference(x).sum(), [x, conv.weight])
print(
    "same gradients as out-of-place:",
    all(torch.allclose(a, b) for a, b in zip(grads_inplace, grads_reference)),
)

# %%
# The pitfall, loud: adding into an output that backward needs
# -------------------------------------------------------------
# ``torch.relu`` saves its result to compute its gradient. Adding the shortcut
# into that result in place bumps the tensor's version counter, and backward
# refuses to use the changed value. Each error on this page is raised when the
# page is built, and the build checks its type and message (the downloadable
# script shows how).


def block_relu_then_add(x):
    identity = x
    out = torch.relu(conv(x))
    out.add_(identity)
    return out


out = block_relu_then_add(x)
# sphinx_gallery_start_ignore
show_graph(out)
# sphinx_gallery_end_ignore
print("version of out after add_:", out._version)

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "modified by an inplace operation"):
    # sphinx_gallery_end_ignore
    out.sum().backward()

# %%
# The op that made ``out`` is not the only one that counts: here batch norm made
# it (and saved nothing of it), but a penalty computed from ``out`` before the
# addition saved it, and backward fails the same way.


def block_penalty_then_add(x):
    identity = x
    out = bn(conv(x))
    penalty = (out * out).mean()  # mul saves its inputs: out
    out += identity
    return torch.relu(out).sum() + penalty


# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "modified by an inplace operation"):
    # sphinx_gallery_end_ignore
    block_penalty_then_add(x).backward()

# %%
# The pitfall, silent: ``out = x`` is not a copy
# ----------------------------------------------
# A block that starts from its input and accumulates into it changes the
# caller's tensor, here a batch that does not require grad (a leaf that requires
# grad is refused, and left as it was). With recording off (``no_grad`` here, or
# ``inference_mode``) nothing raises: the same batch gives a different answer the
# second time.
# With grad mode on, and without autocast, it is loud only where a recorded op
# saved the batch: here the trainable linear layer did, so the batch itself
# becomes a computed tensor that requires grad, and backward raises. With a
# frozen layer nothing saves the batch, and it stays silent in grad mode too
# :claim:`site-accumulate-into-input`.
linear = torch.nn.Linear(3, 3)


def block_accumulate_into_input(x):
    out = x
    out += linear(x)  # writes into x itself
    return out


batch = torch.ones(2, 3)
with torch.no_grad():
    first = block_accumulate_into_input(batch).clone()
    second = block_accumulate_into_input(batch).clone()

print("batch was changed by the forward pass:", not torch.equal(batch, torch.ones(2, 3)))
print("first call :", first[0])
print("second call:", second[0])

batch = torch.ones(2, 3)
out = block_accumulate_into_input(batch)  # recorded this time
print("the batch now requires grad:", batch.requires_grad, "| grad_fn:", type(batch.grad_fn).__name__)

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "modified by an inplace operation"):
    # sphinx_gallery_end_ignore
    out.sum().backward()

# %%
# The safe version
# ----------------
# ``out = f(x) + identity`` allocates a new tensor for the sum and leaves the
# input alone (as long as ``f`` itself writes nothing in place, an in-place ReLU
# on ``x`` say), after any op. The same data now gives the same answer every
# time:


def block_add_out_of_place(x):
    return linear(x) + x


batch = torch.ones(2, 3)
with torch.no_grad():
    first = block_add_out_of_place(batch)
    second = block_add_out_of_place(batch)

print("input untouched:", torch.equal(batch, torch.ones(2, 3)), "| repeatable:", torch.equal(first, second))
# sphinx_gallery_start_ignore
assert torch.equal(batch, torch.ones(2, 3)) and torch.equal(first, second)
# sphinx_gallery_end_ignore

# %%
# And with ReLU before the shortcut, backward works and its gradients are
# right: ``gradcheck`` compares them with finite differences in float64.
conv64 = torch.nn.Conv2d(2, 2, kernel_size=3, padding=1).double()


def block_relu_then_add_safe(x):
    identity = x
    out = torch.relu(conv64(x))
    return out + identity


x64 = torch.randn(1, 2, 4, 4, dtype=torch.float64, requires_grad=True)
out64 = block_relu_then_add_safe(x64)
# sphinx_gallery_start_ignore
show_graph(out64)
# sphinx_gallery_end_ignore
passed = torch.autograd.gradcheck(block_relu_then_add_safe, (x64,))
print("gradcheck passed:", passed)
# sphinx_gallery_start_ignore
assert passed
# sphinx_gallery_end_ignore
