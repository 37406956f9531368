"""
Activation checkpointing with a frozen embedding
================================================

Saves you from a LoRA-style fine-tune whose checkpointed layers never learn.

``torch.utils.checkpoint.checkpoint`` saves memory by running a block's
forward pass again during the backward pass. With ``use_reentrant=True``, a
block whose inputs do not require grad, such as the output of a frozen
embedding, gives an output that does not require grad either: torch warns
"None of the inputs have requires_grad=True", and the trainable weights inside
the block get no gradient. Use ``use_reentrant=False``, or make the
embedding's output require grad. Two more traps come from the second run: an
in-place write to the block's input, and state the block changes in place.
"""

# %%
# The pitfall: a frozen embedding before a checkpointed block
# -----------------------------------------------------------
# A pretrained embedding is frozen, and a small block with trainable weights
# (the adapter being fine-tuned) is checkpointed with ``use_reentrant=True``.
# That variant runs the block under ``torch.no_grad()`` and gives autograd its
# output as the output of one operation whose inputs are the tensors passed to
# ``checkpoint``; the block's weights are not among them. The embedding's
# output, the only input here, does not require grad, so torch warns, and the
# block's output does not require grad either, although the block's weights do
# :claim:`site-checkpoint-reentrant-frozen-input`. Here
# ``warnings.catch_warnings`` catches the warning, and the code prints it.
# Each error on this page is raised when the page is built, and the build
# checks its type and message (the downloadable script shows how).
import warnings

import torch
from torch.utils.checkpoint import checkpoint

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
embed = torch.nn.Embedding(10, 4).requires_grad_(False)
block = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh())
ids = torch.tensor([1, 2, 3, 4])

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = checkpoint(block, embed(ids), use_reentrant=True)

for w in caught:
    print(f"{w.category.__name__}: {w.message}")

loss = out.pow(2).mean()
print("loss requires grad:", loss.requires_grad)
# sphinx_gallery_start_ignore
assert [(w.category, str(w.message)) for w in caught] == [
    (UserWarning, "None of the inputs have requires_grad=True. Gradients will be None")
]
assert not out.requires_grad and not loss.requires_grad
# sphinx_gallery_end_ignore

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "element 0 of tensors does not require grad and does not have a grad_fn"):
    # sphinx_gallery_end_ignore
    loss.backward()

# %%
# With a trainable layer after the block, the loss requires grad and the
# backward pass runs without an error, but the graph it follows starts at the
# block's output: the block's weights keep ``.grad`` as ``None``.
head = torch.nn.Linear(4, 1)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = checkpoint(block, embed(ids), use_reentrant=True)

loss = head(out).pow(2).mean()
# sphinx_gallery_start_ignore
show_graph(loss)
# sphinx_gallery_end_ignore
loss.backward()
print("head.weight.grad is None:", head.weight.grad is None)
print("block[0].weight.grad:", block[0].weight.grad)
# sphinx_gallery_start_ignore
assert [w.category for w in caught] == [UserWarning]
assert head.weight.grad is not None and block[0].weight.grad is None
# sphinx_gallery_end_ignore

# %%
# Fix 1: ``use_reentrant=False``
# ------------------------------
# The non-reentrant variant runs the block in the caller's grad mode, on
# here, so autograd records its operations as it does without checkpointing;
# it drops the tensors they save, and runs the block again when the backward
# pass needs them. The block's weights get the gradients they get without checkpointing
# :claim:`site-checkpoint-reentrant-frozen-input`.
head.zero_grad()
out = checkpoint(block, embed(ids), use_reentrant=False)
loss = head(out).pow(2).mean()
# sphinx_gallery_start_ignore
show_graph(loss)
# sphinx_gallery_end_ignore
loss.backward()
grad_checkpointed = block[0].weight.grad.clone()

block.zero_grad()
head(block(embed(ids))).pow(2).mean().backward()
print("same as without checkpointing:", torch.allclose(grad_checkpointed, block[0].weight.grad))
# sphinx_gallery_start_ignore
assert torch.allclose(grad_checkpointed, block[0].weight.grad)
# sphinx_gallery_end_ignore

# %%
# Fix 2: make the embedding's output require grad
# -----------------------------------------------
# Where code you do not control passes ``use_reentrant=True``, a forward hook
# on the frozen embedding can mark its output as requiring grad: the block's
# weights then get their gradients, and the embedding's own weight gets none
# :claim:`site-checkpoint-reentrant-frozen-input`. Hugging Face
# ``transformers``' ``model.enable_input_require_grads()`` registers such a
# hook on a model's input embeddings.


def make_output_require_grad(module, inputs, output):
    output.requires_grad_(True)


hook = embed.register_forward_hook(make_output_require_grad)
block.zero_grad()
head.zero_grad()
out = checkpoint(block, embed(ids), use_reentrant=True)
head(out).pow(2).mean().backward()
print("same as without checkpointing:", torch.allclose(grad_checkpointed, block[0].weight.grad))
print("embedding weight's .grad:", embed.weight.grad)
hook.remove()
# sphinx_gallery_start_ignore
assert torch.allclose(grad_checkpointed, block[0].weight.grad)
assert embed.weight.grad is None and not embed.weight.requires_grad
# sphinx_gallery_end_ignore

# %%
# Pitfall 2: an in-place write to the block's input
# -------------------------------------------------
# The block now starts by scaling its input in place
# :claim:`site-checkpoint-inplace-on-input`. With ``use_reentrant=True`` and
# the hook above, the first run records nothing and passes; the second runs on
# the input detached and made to require grad: a leaf that requires grad,
# which refuses the in-place write.


def scaled_block(h):
    h.mul_(2.0)
    return block(h)


hook = embed.register_forward_hook(make_output_require_grad)
out = checkpoint(scaled_block, embed(ids), use_reentrant=True)
hook.remove()

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation."):
    # sphinx_gallery_end_ignore
    head(out).pow(2).mean().backward()

# %%
# With ``use_reentrant=False`` and no hook, the embedding's output is a leaf
# that does not require grad, and the write passes; but the checkpoint keeps
# the inputs it was given, to run the block again, and the backward pass finds
# this one changed since. With the hook, the write fails at once with the leaf
# error, as it does without checkpointing.
out = checkpoint(scaled_block, embed(ids), use_reentrant=False)

# %%

# sphinx_gallery_start_ignore
with expect_error(
    RuntimeError,
    "one of the variables needed for gradient computation has been modified by an inplace operation",
):
    # sphinx_gallery_end_ignore
    head(out).pow(2).mean().backward()

# %%
# The fix: write out of place
# ---------------------------
# ``h = h * 2.0`` makes a new tensor and leaves the input alone: the block's
# weights get the gradients they get without checkpointing, with
# ``use_reentrant=False``, and with ``use_reentrant=True`` given the hook
# :claim:`site-checkpoint-inplace-on-input`.


def scaled_block(h):
    h = h * 2.0
    return block(h)


block.zero_grad()
out = checkpoint(scaled_block, embed(ids), use_reentrant=False)
head(out).pow(2).mean().backward()
grad_checkpointed = block[0].weight.grad.clone()

block.zero_grad()
head(scaled_block(embed(ids))).pow(2).mean().backward()
print("same as without checkpointing:", torch.allclose(grad_checkpointed, block[0].weight.grad))
# sphinx_gallery_start_ignore
assert torch.allclose(grad_checkpointed, block[0].weight.grad)
# sphinx_gallery_end_ignore

# %%
# Pitfall 3: state changed inside the block changes twice
# -------------------------------------------------------
# The second run executes the block's code again, so a state the block changes
# in place can change twice :claim:`site-checkpoint-recompute-changes-state`. A
# BatchNorm layer in training mode updates its running statistics at each
# run: after one training step, it has counted two batches, and (with the
# default momentum) its running mean differs from the one without
# checkpointing.
torch.manual_seed(0)
linear, norm = torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4)


def norm_block(h):
    return norm(linear(h))


checkpoint(norm_block, embed(ids), use_reentrant=False).pow(2).mean().backward()
print("batches counted:", norm.num_batches_tracked.item())
mean_checkpointed = norm.running_mean.clone()

norm.reset_running_stats()
norm_block(embed(ids)).pow(2).mean().backward()
mean_once = norm.running_mean.clone()
print("without checkpointing:", norm.num_batches_tracked.item())
print("same running mean:", torch.allclose(mean_checkpointed, mean_once))
# sphinx_gallery_start_ignore
assert not torch.allclose(mean_checkpointed, mean_once)
assert norm.num_batches_tracked.item() == 1
# sphinx_gallery_end_ignore

# %%
# By default, with ``use_reentrant=False``, the second run stops after the
# block's last operation that saves a tensor for the backward pass, so a
# change made after that operation happens once; with ``use_reentrant=True``,
# the whole function runs again
# :claim:`site-checkpoint-recompute-changes-state`.

# %%
# The fix: change the state outside the checkpointed function
# ------------------------------------------------------------
# Checkpoint the part that changes no state, and call the rest outside it:
# the BatchNorm layer then counts one batch, and its running statistics match
# those without checkpointing :claim:`site-checkpoint-recompute-changes-state`.
norm.reset_running_stats()
h = checkpoint(linear, embed(ids), use_reentrant=False)
norm(h).pow(2).mean().backward()
print("batches counted:", norm.num_batches_tracked.item())
print("same running mean:", torch.allclose(norm.running_mean, mean_once))
# sphinx_gallery_start_ignore
assert norm.num_batches_tracked.item() == 1 and torch.allclose(norm.running_mean, mean_once)
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `huggingface/peft#742 <https://github.com/huggingface/peft/issues/742>`__:
#   "Gradient Checkpointing breaks peft trainer", with the warning and the
#   ``element 0 of tensors`` error;
# - `huggingface/transformers#26221
#   <https://github.com/huggingface/transformers/issues/26221>`__: "Gradient
#   checkpointing should have no functional impact", LoRA with checkpointing,
#   where the Trainer had put ``use_reentrant=True`` back;
# - `huggingface/transformers#25846
#   <https://github.com/huggingface/transformers/pull/25846>`__: the fix that
#   registers the forward hook on the input embeddings when an adapter is
#   attached;
# - `huggingface/diffusers#3404 <https://github.com/huggingface/diffusers/pull/3404>`__:
#   parameters inside checkpointed blocks not learned while other parameters
#   are frozen, fixed with ``use_reentrant=False``;
# - `huggingface/peft#1142 <https://github.com/huggingface/peft/issues/1142>`__:
#   "How to do Gradient Checkpoint + LoRA", where the reentrant option made
#   LoRA with checkpointing work for the reporter, but slowly;
# - `hpcaitech/ColossalAI#1460 <https://github.com/hpcaitech/ColossalAI/pull/1460>`__:
#   an in-place operation first in a checkpointed function, refused in the
#   reentrant variant's second run;
# - `pytorch/pytorch#96136 <https://github.com/pytorch/pytorch/issues/96136>`__:
#   BatchNorm statistics updated twice, with either variant.
