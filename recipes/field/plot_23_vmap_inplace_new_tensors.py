"""
``vmap`` and in-place writes into new tensors
=============================================

Saves you from a function that works on one sample and fails under
``torch.func.vmap``.

Inside a function that ``vmap`` runs, the input holds the whole batch,
though it shows one sample's shape. A tensor the function makes with
``torch.zeros(x.shape)`` holds one sample: writing the input into it in place
(``out[0] = x[0]``, ``copy_``, ``+=``) raises an error. Make the new tensor
from the input, with ``torch.zeros_like(x)`` or ``x.new_zeros(...)``, so that
it holds the batch too, or build the result out of place.
"""

# %%
# The pitfall: filling a tensor made with ``torch.zeros``
# --------------------------------------------------------
# A function of one sequence returns its first value, then each step's
# change. It runs on one sample. Each error on this page is raised when the
# page is built, and the build checks its type and message (the downloadable
# script shows how).

import torch
from torch.func import vmap

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)


def deltas(seq):
    out = torch.zeros(seq.shape)
    out[0] = seq[0]
    out[1:] = seq[1:] - seq[:-1]
    return out


x = torch.randn(4, 5)
print("one sample:", deltas(x[0]))

# %%
# Under ``vmap``, ``seq`` holds the four samples, and ``out`` one sample's
# five zeros: the first write refuses to put four samples' values into it.

# sphinx_gallery_start_ignore
with expect_error(
    RuntimeError,
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor "
    "`other` in extra_args that has more elements than `self`",
):
    # sphinx_gallery_end_ignore
    vmap(deltas)(x)

# %%
# ``+=`` (or ``add_``) fails too, with another message, about shapes: ``[5]``
# is the shape of the tensor ``torch.zeros`` made, ``[4, 5]`` the batch's
# :claim:`site-vmap-inplace-new-tensors`.


def doubled(seq):
    out = torch.zeros(seq.shape)
    out += 2 * seq
    return out


# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "output with shape [5] doesn't match the broadcast shape [4, 5]"):
    # sphinx_gallery_end_ignore
    vmap(doubled)(x)

# %%
# The fix: make the new tensor from the input
# -------------------------------------------
# Under ``vmap``, ``torch.zeros_like(seq)`` (or ``seq.new_zeros(seq.shape)``)
# holds the batch, like ``seq``, and the same writes then give
# what a loop over the samples gives :claim:`site-vmap-inplace-new-tensors`.
# Autograd records the writes, and the gradient is the loop's too.


def deltas(seq):
    out = torch.zeros_like(seq)
    out[0] = seq[0]
    out[1:] = seq[1:] - seq[:-1]
    return out


x = torch.randn(4, 5, requires_grad=True)
batched = vmap(deltas)(x)
looped = torch.stack([deltas(sample) for sample in x])
print("vmap gives the loop's result:", torch.equal(batched, looped))
# sphinx_gallery_start_ignore
show_graph(batched)
# sphinx_gallery_end_ignore
weights = torch.arange(5.0)
(grad_vmap,) = torch.autograd.grad((batched * weights).sum(), x)
(grad_loop,) = torch.autograd.grad((looped * weights).sum(), x)
print("and the loop's gradient:", torch.equal(grad_vmap, grad_loop))
# sphinx_gallery_start_ignore
# The check: the same values and gradients as the loop, and as the formula written out.
assert torch.equal(batched, looped) and torch.equal(grad_vmap, grad_loop)
assert torch.equal(batched[:, 1:], (x[:, 1:] - x[:, :-1])) and torch.equal(batched[:, 0], x[:, 0])
assert torch.equal(grad_vmap, torch.tensor([-1.0, -1.0, -1.0, -1.0, 4.0]).expand(4, 5))
# sphinx_gallery_end_ignore

# %%
# Or build it out of place: ``torch.cat`` makes a new tensor from the pieces,
# and nothing is written in place.


def deltas_out_of_place(seq):
    return torch.cat([seq[:1], seq[1:] - seq[:-1]])


print("the same without writes:", torch.equal(vmap(deltas_out_of_place)(x), looped))
# sphinx_gallery_start_ignore
assert torch.equal(vmap(deltas_out_of_place)(x), looped)
# sphinx_gallery_end_ignore

# %%
# ``zeros_like`` of an input that ``vmap`` does not map over
# ----------------------------------------------------------
# With ``in_dims=(0, None)``, the second argument is one tensor shared by all
# samples, and a tensor made like it holds one sample too: writing the mapped
# input into it fails as before :claim:`site-vmap-inplace-new-tensors`. Make
# the new tensor from an input that ``vmap`` maps.


def shifted(seq, offset):
    out = torch.zeros_like(offset)
    out[:] = seq + offset
    return out


offset = torch.ones(5)

# %%

# sphinx_gallery_start_ignore
with expect_error(
    RuntimeError,
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor "
    "`other` in extra_args that has more elements than `self`",
):
    # sphinx_gallery_end_ignore
    vmap(shifted, in_dims=(0, None))(x, offset)

# %%
# Made from ``seq``, it holds the batch:


def shifted(seq, offset):
    out = torch.zeros_like(seq)
    out[:] = seq + offset
    return out


print("made from seq:", torch.equal(vmap(shifted, in_dims=(0, None))(x, offset), x + offset))
# sphinx_gallery_start_ignore
assert torch.equal(vmap(shifted, in_dims=(0, None))(x, offset), x + offset)
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `pytorch/pytorch#103329 <https://github.com/pytorch/pytorch/issues/103329>`__:
#   a function that writes into ``torch.zeros(x.shape)`` raises "vmap: inplace
#   arithmetic(self, \*extra_args) is not possible" under ``torch.vmap``, and
#   ``torch.zeros_like(x)`` does not;
# - `pytorch/pytorch#97248 <https://github.com/pytorch/pytorch/issues/97248>`__: a
#   proposal for a more systematic way out of the "vmap-incompatible in-place
#   operation" error, which advises ``new_empty`` on the input meanwhile, and shows
#   that which input to call it on depends on which one is mapped;
# - `pytorch/functorch#105 <https://github.com/pytorch/functorch/issues/105>`__:
#   per-sample gradients with ``vmap`` failing with an older wording of the same
#   error, naming ``aten::copy_``, which a maintainer explains with a tensor made by
#   ``torch.randn(5)`` inside the function;
# - `pytorch/pytorch#115989 <https://github.com/pytorch/pytorch/issues/115989>`__:
#   a request for a way to create batched tensors inside ``vmap``, from a matrix made
#   with ``torch.zeros`` and filled by slice assignment.
