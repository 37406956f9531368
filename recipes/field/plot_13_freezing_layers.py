"""
Freezing part of a model
========================

Saves you from a "frozen" backbone that keeps changing.

Three things look like freezing and are not. ``module.requires_grad = False``
only sets a Python attribute: every parameter still requires grad, and the
optimizer still updates it. With grad mode on, a tensor made with
``requires_grad=True`` and then converted (a float32 tensor's
``.to(torch.float64)``, ``* 0.01``) is not a leaf, and an optimizer refuses it.
And ``requires_grad_(False)`` stops gradients, but not a BatchNorm layer's
running statistics, which every forward pass in training mode updates. Call
``requires_grad_(False)``, give the optimizer only the parameters that still
require grad, make tensors you train as leaves, and keep frozen normalisation
layers in ``eval()`` mode.
"""

# %%
# Pitfall 1: ``requires_grad = False`` on a module
# ------------------------------------------------
# A pretrained backbone and a new head, trained with one optimizer over all
# parameters. The assignment changes no parameter's flag
# :claim:`freezing-with-requires-grad-false`. Each error on this page is raised when the page is built, and the
# build checks its type and message (the downloadable script shows how).

import copy

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)


def make_model():
    backbone = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU())
    return torch.nn.Sequential(backbone, torch.nn.Linear(8, 1))


model = make_model()
pretrained = copy.deepcopy(model.state_dict())
x, y = torch.randn(16, 4), torch.randn(16, 1)

backbone = model[0]
backbone.requires_grad = False
print("backbone parameters that require grad:", [p.requires_grad for p in backbone.parameters()])

opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss = torch.nn.functional.mse_loss(model(x), y)
# sphinx_gallery_start_ignore
show_graph(loss)
# sphinx_gallery_end_ignore
loss.backward()
opt.step()
print("backbone weight changed:", not torch.equal(backbone[0].weight, pretrained["0.0.weight"]))
# sphinx_gallery_start_ignore
assert not torch.equal(backbone[0].weight, pretrained["0.0.weight"])
# sphinx_gallery_end_ignore

# %%
# Pitfall 2: a converted tensor is not a leaf
# -------------------------------------------
# Backward leaves such a tensor's ``.grad`` as ``None`` and an optimizer
# refuses it unless ``retain_grad()`` was called on it, or the optimizer was
# built with ``differentiable=True``; converted under ``torch.no_grad()``, it is
# a leaf that does not require grad, which an optimizer accepts and never
# changes.
#
# ``requires_grad=True`` applies to the tensor ``torch.ones`` returns, a float32
# tensor (the default dtype); with grad mode on, ``.to(torch.float64)`` then
# returns a new tensor computed from it, and that is the one kept
# :claim:`site-converted-tensor-is-not-a-leaf`. A conversion to the dtype the
# tensor already has (``.float()`` of a float32 tensor) returns the tensor itself.
scale = torch.ones(8, requires_grad=True).to(torch.float64)
print("leaf:", scale.is_leaf, "| made by:", type(scale.grad_fn).__name__)

# %%

# sphinx_gallery_start_ignore
with expect_error(ValueError, "can't optimize a non-leaf Tensor"):
    # sphinx_gallery_end_ignore
    torch.optim.SGD([scale], lr=0.1)

# %%
# Made under ``torch.no_grad()`` (in an initialisation block, say), the same
# line gives a leaf that does not require grad: the optimizer accepts it
# without a word, and no step ever changes it.
with torch.no_grad():
    scale = torch.ones(8, requires_grad=True).to(torch.float64)

print("leaf:", scale.is_leaf, "| requires grad:", scale.requires_grad)
head = torch.nn.Linear(8, 1, dtype=torch.float64)
opt = torch.optim.SGD([scale, *head.parameters()], lr=0.1)
features = torch.randn(16, 8, dtype=torch.float64)
# sphinx_gallery_start_ignore
head_before = head.weight.detach().clone()
# sphinx_gallery_end_ignore
loss = torch.nn.functional.mse_loss(head(features * scale), y.double())
loss.backward()
opt.step()
unchanged = torch.equal(scale, torch.ones(8, dtype=torch.float64))
print("scale unchanged by the step:", unchanged, "| its .grad:", scale.grad)
# sphinx_gallery_start_ignore
assert scale.is_leaf and not scale.requires_grad and scale.grad is None
assert unchanged
assert not torch.equal(head.weight, head_before)
# sphinx_gallery_end_ignore

# %%
# Pitfall 3: BatchNorm's running statistics still move
# ----------------------------------------------------
# With the backbone's parameters frozen and the forward pass under
# ``torch.no_grad()``,
# a BatchNorm layer in training mode still updates its running mean and
# variance in place, from each batch :claim:`site-batchnorm-statistics-move`.
model = make_model()
model.load_state_dict(pretrained)
model[0].requires_grad_(False)
with torch.no_grad():
    model(x + 3.0)

print("running mean changed:", not torch.equal(model[0][1].running_mean, pretrained["0.1.running_mean"]))

# %%
# The fix: ``requires_grad_(False)`` and ``eval()`` on the frozen part
# --------------------------------------------------------------------
# ``model.train()`` puts every submodule back in training mode, so the frozen
# part goes back to ``eval()`` after it, at every epoch. Tensors you train are
# made as leaves: give ``torch.ones`` the dtype, or wrap them in
# ``torch.nn.Parameter``.
model = make_model()
model.load_state_dict(pretrained)
model[0].requires_grad_(False)
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)

model.train()
model[0].eval()
loss = torch.nn.functional.mse_loss(model(x + 3.0), y)
# sphinx_gallery_start_ignore
show_graph(loss)
# sphinx_gallery_end_ignore
loss.backward()
opt.step()
frozen = {k: v for k, v in model.state_dict().items() if k.startswith("0.")}
print("backbone unchanged:", all(torch.equal(v, pretrained[k]) for k, v in frozen.items()))

scale = torch.ones(8, dtype=torch.float64, requires_grad=True)
print("leaf:", scale.is_leaf, "| a Parameter is one too:", torch.nn.Parameter(torch.ones(8)).is_leaf)
# sphinx_gallery_start_ignore
assert all(torch.equal(v, pretrained[k]) for k, v in frozen.items())
assert not torch.equal(model[1].weight, pretrained["1.weight"])
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `CSCYQJ/MICCAI23-ProtoContra-SFDA#18
#   <https://github.com/CSCYQJ/MICCAI23-ProtoContra-SFDA/issues/18>`__: a layer "frozen"
#   with ``requires_grad = False`` on the module;
# - `pytorch/pytorch#12627 <https://github.com/pytorch/pytorch/issues/12627>`__:
#   ``.grad`` is ``None`` after ``requires_grad = True`` then ``.cuda()``;
# - `pytorch/pytorch#86590 <https://github.com/pytorch/pytorch/issues/86590>`__ and
#   `pytorch/pytorch#9046 <https://github.com/pytorch/pytorch/issues/9046>`__: BatchNorm
#   statistics that change in a frozen model.
