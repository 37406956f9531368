"""
Tensors that leave ``torch.inference_mode()``
=============================================

Saves you from "Inference tensors cannot be saved for backward" and
"Inplace update to inference tensor outside InferenceMode".

Every new tensor made while ``torch.inference_mode()`` is on is an inference
tensor, and stays one after the block, where autograd cannot save it for a
backward pass, and an in-place operation on it raises an error, but only after
writing its result. Use ``torch.no_grad()`` where the results go on into training or
in-place updates, or ``clone()`` them outside the block.
"""

# %%
# The pitfall: features from a decorated function, then training
# --------------------------------------------------------------
# A tensor is new if it is made in the thread where inference mode is on,
# outside a nested ``torch.inference_mode(False)``; a view or a ``detach()`` of
# a tensor made before the block is not new. Outside the block an inference
# tensor can be read, but not saved for a backward pass.
#
# A frozen backbone computes features under inference mode; a new head trains
# on them. Each error on this page is raised when the page is built, and the
# build checks its type and message (the downloadable script shows how).

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
backbone, head = torch.nn.Linear(4, 8), torch.nn.Linear(8, 1)
x, y = torch.randn(16, 4), torch.randn(16, 1)


@torch.inference_mode()
def embed(x):
    return backbone(x)


features = embed(x)
print(
    "inference tensor:", features.is_inference(), "| inference mode now:", torch.is_inference_mode_enabled()
)

# %%
# Outside inference mode, with grad mode on, the head's weight needs its input
# for its gradient, so autograd must save ``features``, and refuses to
# :claim:`site-inference-tensors`:

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Inference tensors cannot be saved for backward"):
    # sphinx_gallery_end_ignore
    pred = head(features)

# %%
# The same rule, after an evaluation loop
# ---------------------------------------
# An in-place operation on an inference tensor outside the block, even under
# ``torch.no_grad()``, writes its result and only then raises an error: the
# tensor is changed all the same (a write through ``.data`` or ``.detach()``
# changes it with no error at all). Inside the block, even under
# ``torch.enable_grad()``, a tensor computed from others is an inference tensor
# that does not require grad. Tensors made before the block are the exceptions,
# and quiet ones: a view of one that requires grad says it requires grad but
# passes no gradient back, and an in-place change of one is not recorded, so a
# backward pass ignores it with no error unless it needs the values the change
# overwrote.
#
# The loop sums the loss inside the block; dividing the sum in place outside
# it raises an error, but only after the division has been written.
with torch.inference_mode():
    test_loss = torch.zeros(())
    for xb, yb in zip(x.split(4), y.split(4)):
        test_loss += torch.nn.functional.mse_loss(head(backbone(xb)), yb, reduction="sum")

summed = test_loss.item()
print("summed loss:", round(summed, 4))

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Inplace update to inference tensor outside InferenceMode"):
    # sphinx_gallery_end_ignore
    test_loss /= len(x)

# %%
# The error came too late: ``test_loss`` holds the mean now, so code that
# catches the error and carries on works with the changed tensor.
print("after the error:", round(test_loss.item(), 4), f"| summed / {len(x)}:", round(summed / len(x), 4))
# sphinx_gallery_start_ignore
assert test_loss.item() == summed / len(x), "torch no longer writes the result before it raises"
# sphinx_gallery_end_ignore

# %%
# ``torch.enable_grad()`` inside the block does not help: grad mode is on
# there, but ``w * 2`` is still an inference tensor, with no graph (a factory
# call given ``requires_grad=True``, or a new ``nn.Parameter``, makes an
# inference tensor that does require grad). The exceptions are tensors made
# outside inference mode, and they fail quietly: the view of ``w`` requires
# grad yet passes no gradient back to ``w``, and the in-place change of ``k``
# is not recorded, so a backward pass ignores it with no error (unless it
# overwrote a tensor saved for that pass, which raises the version error).
# Only ``torch.inference_mode(False)`` gives results that autograd records
# :claim:`site-grad-mode-inside-inference-mode`.
w = torch.ones(3, requires_grad=True)
k = w * 2
with torch.inference_mode():
    with torch.enable_grad():
        grad_mode_inside = torch.is_grad_enabled()
        out = w * 2
        view = w[:2]
        k *= 3

print("grad mode on inside the block:", grad_mode_inside)
print("out = w * 2: requires grad", out.requires_grad, "| inference tensor", out.is_inference())
print("view = w[:2]: requires grad", view.requires_grad, "| inference tensor", view.is_inference())

# %%
# Nor does asking for gradients afterwards:

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Setting requires_grad=True on inference tensor outside InferenceMode"):
    # sphinx_gallery_end_ignore
    features.requires_grad_()

# %%
# The quiet cases show in a backward pass. Through the view, ``w`` gets no
# gradient at all; through ``k``, now ``6 * w``, it gets 2 where the true
# gradient is 6, and nothing warns.
view.sum().backward()
print("after view.sum().backward(): w.grad =", w.grad)
# sphinx_gallery_start_ignore
assert w.grad is None
# sphinx_gallery_end_ignore
k.sum().backward()
print("k =", k.tolist(), "| after k.sum().backward(): w.grad =", w.grad.tolist())
# sphinx_gallery_start_ignore
assert torch.equal(k.detach(), torch.full((3,), 6.0)) and torch.equal(w.grad, torch.full((3,), 2.0))
# sphinx_gallery_end_ignore

# %%
# The fix: ``clone()`` outside the block, or ``torch.no_grad()``
# --------------------------------------------------------------
# A clone made outside inference mode is a normal tensor, and so is a new
# tensor computed under ``torch.no_grad()`` outside inference mode: autograd
# may save them, and they may be changed in place.
features = embed(x).clone()
pred = head(features)
# sphinx_gallery_start_ignore
show_graph(pred)
# sphinx_gallery_end_ignore
torch.nn.functional.mse_loss(pred, y).backward()
print(
    "inference tensor:", features.is_inference(), "| the head has a gradient:", head.weight.grad is not None
)

with torch.no_grad():
    features_ng = backbone(x)
    test_loss = torch.nn.functional.mse_loss(head(features_ng), y, reduction="sum")

test_loss /= len(x)
print("mean test loss:", round(test_loss.item(), 4))
# sphinx_gallery_start_ignore
# The check: the head learns the same from either, and the two means agree.
grad_clone = head.weight.grad.clone()
head.weight.grad = None
torch.nn.functional.mse_loss(head(features_ng), y).backward()
assert torch.equal(head.weight.grad, grad_clone)
with torch.inference_mode():
    mean_inference = torch.nn.functional.mse_loss(head(backbone(x)), y)
assert torch.allclose(test_loss, mean_inference)
# sphinx_gallery_end_ignore


# %%
# Tensor subclasses, and code that reads ``_version``
# ---------------------------------------------------
# Some quantization libraries keep a weight in a tensor subclass whose
# ``__torch_dispatch__`` answers each operation. A view of such a weight taken
# inside ``torch.inference_mode()``, such as ``weight.t()``, is the new tensor
# the subclass returns, so an inference tensor; torch then gives it the version
# counter of the weight it views, which was made outside the block, and an
# inference tensor cannot take one (with or without
# ``return_and_correct_aliasing``). A view of a plain tensor taken in the block
# is a normal tensor, and does not meet this.
class Int8Weight(torch.Tensor):
    @classmethod
    def __torch_dispatch__(cls, func, types, args, kwargs=None):
        if func is torch.ops.aten.t.default:
            return int8_weight(args[0].q.t(), args[0].scale)
        raise NotImplementedError(func)


def int8_weight(q, scale):
    w = torch.Tensor._make_wrapper_subclass(Int8Weight, q.shape, dtype=torch.float32)
    w.q, w.scale = q, scale
    return w


weight = int8_weight(torch.randint(-128, 128, (8, 4), dtype=torch.int8), 0.02)

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Cannot set version_counter for inference tensor"):
    # sphinx_gallery_end_ignore
    with torch.inference_mode():
        weight.t()

# %%
# Under ``torch.no_grad()`` the view is a normal tensor, and takes the counter:
with torch.no_grad():
    weight_t = weight.t()

print("under no_grad():", type(weight_t).__name__, tuple(weight_t.shape))

# %%
# Code that reads a tensor's version, as libraries that cache a result by it
# do, fails on any inference tensor, inside the block or after it, with the
# other message: an inference tensor has no version counter. The fix is again
# ``torch.no_grad()``; a library can test ``t.is_inference()`` before it reads
# ``t._version``.
with torch.inference_mode():
    labels = backbone(x).argmax(1)

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Inference tensors do not track version counter"):
    # sphinx_gallery_end_ignore
    labels._version

# %%
# Made under ``torch.no_grad()``, the labels are a normal tensor, with a version:
with torch.no_grad():
    labels = backbone(x).argmax(1)

print("version under no_grad():", labels._version, "| inference tensor:", labels.is_inference())
# sphinx_gallery_start_ignore
# The counterexamples: a plain tensor's view in inference mode is a normal tensor, and a
# wrapper made inside the block gives views there without the error.
with torch.inference_mode():
    plain_view = x.t()
    inside = int8_weight(torch.ones(2, 3, dtype=torch.int8), 1.0)
    assert not plain_view.is_inference() and inside.t().is_inference()
assert not weight_t.is_inference() and labels._version == 0
# sphinx_gallery_end_ignore

# %%
# A test step that needs gradients, in a loop under inference mode
# ----------------------------------------------------------------
# Lightning's evaluation loop runs ``test_step``, and ``validation_step`` in
# ``trainer.validate()``, under ``torch.inference_mode()`` when the ``Trainer``
# has ``inference_mode=True``, its default, and under ``torch.no_grad()`` when it
# has ``inference_mode=False`` (`loops/utilities.py
# <https://github.com/Lightning-AI/pytorch-lightning/blob/014994ad91a56a71bbe3d6675f42b6f125789a26/src/lightning/pytorch/loops/utilities.py>`__;
# with FSDP, XLA or the gloo backend, ``torch.no_grad()`` either way). The
# validation that ``trainer.fit()`` runs is under ``torch.no_grad()`` either way
# (`loops/training_epoch_loop.py
# <https://github.com/Lightning-AI/pytorch-lightning/blob/7f0c3436cd3f6ad3753125672024fc415cbcb414/src/lightning/pytorch/loops/training_epoch_loop.py>`__). Lightning
# is not installed here: the loop below stands in for it, and iterates its data
# loader inside the block. A step that computes a saliency map, the gradient of
# the loss with respect to the input, turns grad mode back on and makes its
# input require grad; inside inference mode its loss still has no graph, and
# asking for the gradient raises the error of a loss computed under
# ``torch.no_grad()`` :claim:`site-test-step-under-inference-mode`.
classifier = torch.nn.Linear(4, 3)
loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(torch.randn(4, 4), torch.tensor([0, 2, 1, 0])), batch_size=2
)


def test_step(batch):
    images, labels = batch
    with torch.enable_grad():
        images.requires_grad_()
        loss = torch.nn.functional.cross_entropy(classifier(images), labels)
        (saliency,) = torch.autograd.grad(loss, images)
    return saliency.abs()


def run_test(evaluation_mode):
    with evaluation_mode():
        return [test_step(batch) for batch in loader]


with torch.inference_mode(), torch.enable_grad():
    images, labels = next(iter(loader))
    images.requires_grad_()
    loss = torch.nn.functional.cross_entropy(classifier(images), labels)
    modes = torch.is_grad_enabled(), torch.is_inference_mode_enabled()

print("in the step: grad mode", modes[0], "| inference mode", modes[1])
print("loss: requires grad", loss.requires_grad, "| inference tensor", loss.is_inference())

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"):
    # sphinx_gallery_end_ignore
    run_test(torch.inference_mode)

# %%
# The fix: the loop under ``torch.no_grad()``, which ``torch.enable_grad()``
# overrides in the step; with Lightning, ``Trainer(inference_mode=False)``, as
# a maintainer suggests in #17653 (below).
saliency = run_test(torch.no_grad)
print(
    "saliency maps:",
    [tuple(s.shape) for s in saliency],
    "| inference tensors:",
    [s.is_inference() for s in saliency],
)
# sphinx_gallery_start_ignore
# The check: the same maps as the step gives in grad mode, outside any loop.
assert all(torch.equal(s, test_step(batch)) for s, batch in zip(saliency, loader))
assert modes == (True, True) and not loss.requires_grad and loss.is_inference()
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `facebookresearch/dinov2#472
#   <https://github.com/facebookresearch/dinov2/issues/472>`__: training a model whose
#   forward pass was decorated with inference mode;
# - `mrdbourke/pytorch-deep-learning#397
#   <https://github.com/mrdbourke/pytorch-deep-learning/issues/397>`__: ``test_loss /=
#   len(data_loader)`` after the block;
# - `Lightning-AI/pytorch-lightning#14497
#   <https://github.com/Lightning-AI/pytorch-lightning/issues/14497>`__:
#   ``torch.enable_grad()`` cannot undo inference mode in evaluation;
# - `Lightning-AI/pytorch-lightning#19910
#   <https://github.com/Lightning-AI/pytorch-lightning/issues/19910>`__: "element 0 of
#   tensors does not require grad" in ``test_step`` and ``validation_step``; the
#   reporter found inference mode on in ``test_step``, inside ``torch.enable_grad()``,
#   and off in training and validation; closed with the label "working as intended";
# - `Lightning-AI/pytorch-lightning#17653
#   <https://github.com/Lightning-AI/pytorch-lightning/issues/17653>`__: forces computed as
#   the gradient of an energy in validation and test steps; a maintainer suggests
#   ``Trainer(inference_mode=False)``.
