"""
Tensors that leave ``torch.inference_mode()``
=============================================

Saves you from "Inference tensors cannot be saved for backward" and
"Inplace update to inference tensor outside InferenceMode".

Every new tensor made while ``torch.inference_mode()`` is on (in that thread,
outside a nested ``torch.inference_mode(False)``; a view of a tensor made
before is not new) is an inference tensor, and stays one after the block.
Outside the block it can be read, but an in-place operation on it raises an
error, even under ``torch.no_grad()``, and autograd cannot save it for a
backward pass. Inside the block, the results of operations do not require grad,
even under ``torch.enable_grad()``. Use ``torch.no_grad()`` where the results
go on into training or in-place updates, or ``clone()`` them outside the block.
"""

# %%
# The pitfall: features from a decorated function, then training
# --------------------------------------------------------------
# A frozen backbone computes features under inference mode; a new head trains
# on them. Each error on this page is raised when the page is built, and the
# build checks its type and message (the downloadable script shows how).

# sphinx_gallery_start_ignore
import contextlib

# sphinx_gallery_end_ignore
import torch

# sphinx_gallery_start_ignore


@contextlib.contextmanager
def expect_error(kind, text):
    want = f"expected {kind.__name__} with {text!r}"
    try:
        yield
    except Exception as err:
        if type(err) is not kind or text not in str(err):
            raise AssertionError(f"{want}, got {type(err).__name__}: {err}") from err
        print(f"{kind.__name__}: {err}")
    else:
        raise AssertionError(f"{want}; nothing was raised")


try:  # the site's drawing of the graph; nothing for your code
    from autograd_graph import show_graph
except ImportError:

    def show_graph(tensor, *written):
        pass


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
# The head's weight needs its input for its gradient, so autograd must save
# ``features``, and refuses to :claim:`site-inference-tensors`:

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Inference tensors cannot be saved for backward"):
    # sphinx_gallery_end_ignore
    pred = head(features)

# %%
# The same rule, after an evaluation loop
# ---------------------------------------
# The loop sums the loss inside the block; dividing the sum in place outside
# it is refused.
with torch.inference_mode():
    test_loss = torch.zeros(())
    for xb, yb in zip(x.split(4), y.split(4)):
        test_loss += torch.nn.functional.mse_loss(head(backbone(xb)), yb, reduction="sum")

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Inplace update to inference tensor outside InferenceMode"):
    # sphinx_gallery_end_ignore
    test_loss /= len(x)

# %%
# ``torch.enable_grad()`` inside the block does not help: grad mode is on, but
# the results are still inference tensors, with no graph
# :claim:`site-grad-mode-inside-inference-mode`.
w = torch.ones(3, requires_grad=True)
with torch.inference_mode():
    with torch.enable_grad():
        out = w * 2
print("grad mode on:", torch.is_grad_enabled(), end=" ")
print("| out requires grad:", out.requires_grad, "| inference tensor:", out.is_inference())

# %%
# Nor does asking for gradients afterwards:

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Setting requires_grad=True on inference tensor outside InferenceMode"):
    # sphinx_gallery_end_ignore
    features.requires_grad_()

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
#   ``torch.enable_grad()`` cannot undo inference mode in evaluation.
