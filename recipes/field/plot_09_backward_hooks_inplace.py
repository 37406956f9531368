"""
Backward hooks on a model with in-place operations
==================================================

Saves you from the "is a view and is being modified inplace" error that a
model raises once a tool puts a full backward hook on a layer whose input or
output an in-place operation then changes.

With grad mode on, ``register_full_backward_hook`` hands a module's positional
inputs, and the outputs it returns alone or in a tuple, on as views, and
autograd refuses an in-place operation on such a view that requires grad: the
next layer's ``ReLU(inplace=True)``, an ``out += shortcut`` after the hooked
layer, or the hooked module itself being an in-place ReLU. Explanation tools
such as SHAP's DeepExplainer and Grad-CAM register such hooks, so a model that
trains without error fails under them, in its forward pass. Make those
operations out of place.
"""

# %%
# The pitfall: a hook on a layer before an in-place ReLU
# ------------------------------------------------------
# The full backward hook passes those tensors through an autograd function that
# returns them as views, and does so only where one of the module's inputs or
# outputs requires grad. The threads at the end show the explanation tools that
# register such hooks; a forward hook, shown last, records the same gradient
# with nothing wrapped.
#
# The hook records the gradient that reaches the middle layer's output, as
# Grad-CAM does for a convolution. Each error on this page is raised when the
# page is built, and the build checks its type and message (the downloadable
# script shows how).

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)


def make_model():
    return torch.nn.Sequential(
        torch.nn.Linear(4, 6),
        torch.nn.ReLU(inplace=True),
        torch.nn.Linear(6, 6),
        torch.nn.ReLU(inplace=True),
        torch.nn.Linear(6, 1),
    )


model = make_model()
x = torch.randn(3, 4)
seen = []
handle = model[2].register_full_backward_hook(lambda module, grad_in, grad_out: seen.append(grad_out[0]))

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "is a view and is being modified inplace"):
    # sphinx_gallery_end_ignore
    model(x)

# %%
# The layer's output now comes out of the hook's function, as a view of the
# tensor the layer computed, and the in-place ReLU after it is refused:
out = model[2](model[1](model[0](x)))
print("hooked layer's output:", type(out.grad_fn).__name__, "| a view:", out._is_view())
# sphinx_gallery_start_ignore
show_graph(out)
# sphinx_gallery_end_ignore

# %%
# The same error comes from ``out += shortcut`` on the hooked layer's output
# in your own ``forward``. With grad mode on, the in-place operations
# ``relu_``, ``add_``, ``copy_``, ``+=`` and item assignment all raise this
# error on a wrapped tensor that requires grad, while the out-of-place forms,
# or in-place ones on a clone, run. Only tensors passed as positional
# arguments, and tensors returned alone or in a tuple, are wrapped: inputs
# passed by keyword and outputs returned in a list or a dict can be changed in
# place, and so can a wrapped tensor that does not require grad; nothing is
# wrapped where none of the module's inputs and outputs requires grad
# :claim:`site-backward-hook-views`.

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "is a view and is being modified inplace"):
    # sphinx_gallery_end_ignore
    out += x @ torch.ones(4, 6)

# %%
# The fix: no in-place operation on what a hook wraps
# ---------------------------------------------------
# Switch the in-place ReLUs off before the forward pass (``inplace`` is a
# plain attribute of the module), and write ``out = out + shortcut`` where the
# code is yours. The model computes the same values: an in-place ReLU changes
# where the result is stored, not the result.
model = make_model()
reference = make_model()
reference.load_state_dict(model.state_dict())
for module in model.modules():
    if isinstance(module, torch.nn.ReLU):
        module.inplace = False

seen = []
model[2].register_full_backward_hook(lambda module, grad_in, grad_out: seen.append(grad_out[0]))
model(x).sum().backward()
print("gradient at the layer's output, first row:", seen[0][0])
# sphinx_gallery_start_ignore
# The check: the hooked model's gradients are those of the same weights without hooks, with
# out-of-place ReLUs, and the hook saw the gradient of the loss at the layer's output.
hidden = reference[2](torch.relu(reference[0](x)))
hidden.retain_grad()
reference[4](torch.relu(hidden)).sum().backward()
assert all(torch.equal(p.grad, q.grad) for p, q in zip(model.parameters(), reference.parameters()))
assert torch.equal(seen[0], hidden.grad)
# sphinx_gallery_end_ignore

# %%
# Another way: a forward hook that hooks the output tensor
# --------------------------------------------------------
# A forward hook sees the layer's output before the in-place ReLU changes it
# (keep a ``clone()`` if you need those values after the forward pass);
# ``register_hook`` on that tensor receives its gradient in the backward pass.
# Nothing is wrapped, so the model keeps its in-place ReLUs.
model = make_model()
model.load_state_dict(reference.state_dict())
seen_here = []


def hook_output(module, inputs, output):
    output.register_hook(seen_here.append)


model[2].register_forward_hook(hook_output)
model(x).sum().backward()
print("the same gradient as the full backward hook's:", torch.equal(seen_here[0], seen[0]))
# sphinx_gallery_start_ignore
assert torch.equal(seen_here[0], hidden.grad)
# sphinx_gallery_end_ignore

# %%
# The older hook: ``register_backward_hook``
# ------------------------------------------
# ``register_backward_hook``, which ``register_full_backward_hook`` replaced,
# hooks only the node that made the module's output. Its ``grad_input`` is the
# gradient at that node's inputs: here the ``ReLU``'s input, the ``Linear``
# layer's output, not the module's input. The forward pass warns that the hook
# will miss some of ``grad_input``: it does so for this ``Linear`` followed by
# a ``ReLU``, and even for a lone ``Linear`` or ``Conv2d``, since torch warns
# whenever the inputs of the node that made the output are not exactly the
# module's inputs, and a weight is one of them. Here ``warnings.catch_warnings``
# catches the warning, and the code prints it.
import warnings

block = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU())
inp = torch.randn(3, 4, requires_grad=True)
got = []
block.register_backward_hook(lambda module, grad_in, grad_out: got.append(grad_in))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = block(inp)

for w in caught:
    print(f"{w.category.__name__}: {w.message}")

out.sum().backward()
print("grad_input shapes:", [tuple(g.shape) for g in got[0]], "| the input's shape:", tuple(inp.shape))
# sphinx_gallery_start_ignore
# The check: the old hook's grad_input is the gradient at the Linear layer's output.
linear_out = block[0](inp)
assert torch.equal(got[0][0], torch.autograd.grad(torch.relu(linear_out).sum(), linear_out)[0])
# sphinx_gallery_end_ignore

# %%
# The fix: ``register_full_backward_hook``
# ----------------------------------------
# Its ``grad_input`` is the gradient at the module's inputs, and the forward
# pass does not warn. Register it on a new module: a module that had a
# ``register_backward_hook``, even one removed since, refuses a full one. The
# full hook wraps the module's inputs and outputs as the sections above show,
# so keep in-place operations off them.
fixed = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU())
fixed.load_state_dict(block.state_dict())
fixed.register_full_backward_hook(lambda module, grad_in, grad_out: got.append(grad_in))
inp.grad = None
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    fixed(inp).sum().backward()

print("warnings:", len(caught), "| grad_input shapes:", [tuple(g.shape) for g in got[-1]])
print("grad_input is the input's gradient:", torch.equal(got[-1][0], inp.grad))
# sphinx_gallery_start_ignore
assert not caught and torch.equal(got[-1][0], inp.grad)
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `pytorch/pytorch#61519 <https://github.com/pytorch/pytorch/issues/61519>`__: an
#   in-place ReLU and ``register_full_backward_hook``;
# - `jacobgil/pytorch-grad-cam#183
#   <https://github.com/jacobgil/pytorch-grad-cam/pull/183>`__: Grad-CAM moves to a
#   forward hook and a tensor hook, as above;
# - `shap/shap#3466 <https://github.com/shap/shap/issues/3466>`__ and `shap/shap#3565
#   <https://github.com/shap/shap/issues/3565>`__: SHAP's DeepExplainer on a ResNet,
#   whose ``out += shortcut`` fails too.
