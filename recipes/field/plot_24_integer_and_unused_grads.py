"""
Gradients that cannot exist: integer results and unused inputs
==============================================================

Saves you from asking autograd for a gradient it has no way to compute.

Only floating-point and complex tensors can require grad: asking it of an
integer tensor raises an error, worded three ways. An integer result of a tensor
that requires grad (``.long()``, ``argmax``) does not require grad, and
nothing says so until ``backward()`` fails or a gradient stays ``None``. And by
default ``torch.autograd.grad`` refuses an input the output was not computed
from; with ``allow_unused=True`` it returns ``None`` for it.
"""

# %%
# Pitfall 1: an integer tensor that requires grad
# -----------------------------------------------
# ``torch.tensor([1, 2, 3])`` holds integers (``torch.int64``), and a
# gradient measures the effect of a small change, which an integer cannot take. Each error on this
# page is raised when the page is built, and the build checks its type and
# message (the downloadable script shows how).

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"):
    # sphinx_gallery_end_ignore
    counts = torch.tensor([1, 2, 3], requires_grad=True)

# %%
# Asked afterwards, the same refusal has two other wordings; that of
# ``requires_grad_()`` leaves out complex tensors, which it accepts too
# :claim:`site-integer-dtypes-cannot-require-grad`.
counts = torch.tensor([1, 2, 3])

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "only Tensors of floating point dtype can require gradients"):
    # sphinx_gallery_end_ignore
    counts.requires_grad_()

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "only Tensors of floating point and complex dtype can require gradients"):
    # sphinx_gallery_end_ignore
    counts.requires_grad = True

# %%
# ``nn.Parameter`` asks for it too: a parameter requires grad unless told
# otherwise.

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Only Tensors of floating point and complex dtype can require gradients"):
    # sphinx_gallery_end_ignore
    table = torch.nn.Parameter(counts)

# %%
# The fix: floats for what you train, no grad for integer data
# ------------------------------------------------------------
# A value you train is a float (``1.0``, or ``dtype=torch.float32``). Integer
# data a module keeps (indices, masks) is best a buffer (``register_buffer``):
# ``module.requires_grad_()``, as when you unfreeze a model, leaves it alone,
# and the optimizer never sees it.
counts = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
model = torch.nn.Linear(3, 1)
model.register_buffer("table", torch.tensor([1, 2, 3]))
model.requires_grad_()
print("float:", counts.requires_grad, "| integer buffer:", model.table.requires_grad)
print("parameters the optimizer gets:", [name for name, _ in model.named_parameters()])
# sphinx_gallery_start_ignore
assert counts.requires_grad and not model.table.requires_grad and model.table.dtype == torch.int64
assert [name for name, _ in model.named_parameters()] == ["weight", "bias"]
# sphinx_gallery_end_ignore

# %%
# A parameter that does not require grad holds integer data too, until that
# same ``requires_grad_()`` reaches it:
frozen = torch.nn.Linear(3, 1)
frozen.register_parameter("table", torch.nn.Parameter(torch.tensor([1, 2, 3]), requires_grad=False))

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "only Tensors of floating point dtype can require gradients"):
    # sphinx_gallery_end_ignore
    frozen.requires_grad_()

# %%
# Pitfall 2: integer results drop ``requires_grad`` silently
# ----------------------------------------------------------
# With grad mode on, a conversion of a tensor that requires grad to an integer
# dtype, or an operation whose result is integers, returns a tensor that does
# not require grad, and no warning :claim:`site-integer-results-drop-requires-grad`.
scores = torch.tensor([0.2, 1.7, 0.9, 2.4], requires_grad=True)
results = {
    "scores.to(torch.int64)": scores.to(torch.int64),
    "scores.round().long()": scores.round().long(),
    "scores.argmax()": scores.argmax(),
}
for name, result in results.items():
    print(f"{name}: {result.dtype}, requires grad {result.requires_grad}")

# %%
# A loss computed from them alone has no graph, and ``backward()`` says so.
target = torch.tensor([0, 2, 1, 2])
loss = (scores.round().long() - target).float().pow(2).mean()

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"):
    # sphinx_gallery_end_ignore
    loss.backward()

# %%
# Mixed with a path that does require grad, the loss has a graph, and
# ``backward()`` runs: the tensor behind the integer result keeps ``None``.
weights = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
loss = weights[scores.argmax()] ** 2
# sphinx_gallery_start_ignore
show_graph(loss)
# sphinx_gallery_end_ignore
loss.backward()
print("weights.grad:", weights.grad, "| scores.grad:", scores.grad)
# sphinx_gallery_start_ignore
assert torch.equal(weights.grad, torch.tensor([0.0, 0.0, 0.0, 8.0])) and scores.grad is None
# sphinx_gallery_end_ignore

# %%
# The fix: stay floating-point up to the loss
# -------------------------------------------
# With grad mode on, ``round()`` and ``floor()`` keep the dtype and a graph,
# but their gradient is zero everywhere :claim:`site-integer-results-drop-requires-grad`: the loss
# then gives ``scores`` no signal. To pick by the scores, weigh every choice by
# a ``softmax`` of them; where the forward pass needs the rounded values, a
# common choice is the straight-through estimator: the rounded values forward,
# the gradient of the identity backward.
scores.round().sum().backward()
print("gradient through round():", scores.grad)

scores.grad = None
loss = (torch.softmax(scores, dim=0) @ weights) ** 2
loss.backward()
print("gradient through softmax:", scores.grad)

scores.grad = None
rounded = scores + (scores.round() - scores).detach()
rounded.sum().backward()
print("rounded:", rounded.detach(), "| straight-through gradient:", scores.grad)
# sphinx_gallery_start_ignore
assert torch.equal(rounded.detach(), scores.detach().round()) and torch.equal(scores.grad, torch.ones(4))
# sphinx_gallery_end_ignore

# %%
# Pitfall 3: ``torch.autograd.grad`` of an input the output does not use
# ------------------------------------------------------------------------
# ``torch.autograd.grad`` returns one gradient per input, and refuses an input
# the output was not computed from through operations that record a graph,
# naming its index in the list :claim:`site-autograd-grad-unused-inputs`.
# ``scores`` reaches this loss only through ``argmax``.
loss = weights[scores.argmax()] ** 2

# %%

# sphinx_gallery_start_ignore
with expect_error(
    RuntimeError,
    "The differentiated Tensor at index 1 appears to not have been used in the graph. "
    "Set allow_unused=True if this is the desired behavior.",
):
    # sphinx_gallery_end_ignore
    torch.autograd.grad(loss, [weights, scores])

# %%
# The fix: ``allow_unused=True``
# ------------------------------
# With ``allow_unused=True`` the gradient of an unused input is ``None``; with
# ``materialize_grads=True`` too, zeros of its shape
# :claim:`site-autograd-grad-unused-inputs`.
loss = weights[scores.argmax()] ** 2
print("allow_unused:", torch.autograd.grad(loss, [weights, scores], allow_unused=True))

# %%
loss = weights[scores.argmax()] ** 2
grads = torch.autograd.grad(loss, [weights, scores], allow_unused=True, materialize_grads=True)
print("and materialize_grads:", grads)
# sphinx_gallery_start_ignore
assert torch.equal(grads[0], torch.tensor([0.0, 0.0, 0.0, 8.0])) and torch.equal(grads[1], torch.zeros(4))
# sphinx_gallery_end_ignore

# %%
# ``allow_unused=True`` does not cover an input that does not require grad,
# such as the integer index itself :claim:`site-autograd-grad-unused-inputs`.
loss = weights[scores.argmax()] ** 2

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "One of the differentiated Tensors does not require grad"):
    # sphinx_gallery_end_ignore
    torch.autograd.grad(loss, [weights, scores.argmax()], allow_unused=True)

# %%
# Where people report it
# ----------------------
# - `pytorch/pytorch#53466 <https://github.com/pytorch/pytorch/issues/53466>`__:
#   ``torch.tensor([1], requires_grad=True)``, from an example in the
#   documentation, raises; the answer is ``[1.]``;
# - `pytorch/pytorch#95110 <https://github.com/pytorch/pytorch/issues/95110>`__:
#   ``requires_grad = True`` on the integer tensor ``torch.max`` returned,
#   closed as expected behaviour;
# - `pytorch/pytorch#40264 <https://github.com/pytorch/pytorch/issues/40264>`__:
#   ``x.long().requires_grad_()`` raises while ``x.requires_grad_().long()`` does
#   not, and returns a tensor that does not require grad;
# - `pytorch/pytorch#150913 <https://github.com/pytorch/pytorch/pull/150913>`__: a
#   change to the documentation of ``Tensor.to`` saying that a conversion to an
#   integer dtype returns a tensor that does not require grad;
# - `pytorch/pytorch#73697 <https://github.com/pytorch/pytorch/issues/73697>`__: a
#   request that "One of the differentiated Tensors appears to not have been used in
#   the graph" say which tensor, where a maintainer proposes its index in the inputs;
# - `pytorch/pytorch#115918 <https://github.com/pytorch/pytorch/issues/115918>`__:
#   ``allow_unused=True`` with an input that does not require grad, which raises
#   "One of the differentiated Tensors does not require grad".
