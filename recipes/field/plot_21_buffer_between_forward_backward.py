"""
A buffer changed in place between a forward pass and its backward pass
======================================================================

Saves you from the version error of a GAN's discriminator that scores fake,
then real samples, and backpropagates once, with its buffers copied between.

A layer can save one of its buffers for the backward pass: ``BatchNorm``
saves its running mean and variance. ``copy_``, ``add_`` or ``fill_`` on
such a buffer before that backward pass makes it fail. In the threads at the
end, the write was ``DistributedDataParallel``'s copy of every buffer at the
start of each forward pass. Backpropagate each forward pass before the next
write, join the batches into one forward pass, or leave the buffers alone
between a forward pass and its backward pass.
"""

# %%
# The pitfall: a copy into the buffers between two forward passes
# ----------------------------------------------------------------
# Two processes would cost this page too much, so ``broadcast_buffers`` below
# stands for the copy the threads describe: process 0's buffers copied into
# this process's module, in place, before each forward pass. (torch 2.13.0's
# ``DistributedDataParallel`` makes its own copy inside
# ``torch.autograd._unsafe_preserve_version_counter``, `in its source
# <https://github.com/pytorch/pytorch/blob/v2.13.0/torch/nn/parallel/distributed.py>`__;
# this page does not run ``DistributedDataParallel``, so it does not show
# whether that copy still moves the buffers' version counters and fails.) The
# discriminator ``D`` scores fake samples,
# then real ones, and one backward pass follows. Each error on this page is
# raised when the page is built, and the build checks its type and message (the
# downloadable script shows how).

import copy

import torch
import torch.nn.functional as F

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
bn = torch.nn.BatchNorm1d(8)
D = torch.nn.Sequential(torch.nn.Linear(2, 8), bn, torch.nn.Tanh(), torch.nn.Linear(8, 1))
process_0 = copy.deepcopy(D)
fake = torch.randn(16, 2, requires_grad=True)  # stands for G(z)
real = torch.randn(16, 2) + 3.0


def broadcast_buffers(module, source):
    for mine, theirs in zip(module.buffers(), source.buffers()):
        mine.copy_(theirs)


broadcast_buffers(D, process_0)
d_fake = D(fake)
saved_at = bn.running_mean._version
broadcast_buffers(D, process_0)
d_real = D(real)
print("running_mean's version when d_fake was computed, and now:", saved_at, bn.running_mean._version)
loss_d = F.softplus(d_fake).mean() + F.softplus(-d_real).mean()
# sphinx_gallery_start_ignore
show_graph(d_fake, bn.running_mean, bn.running_var)
# sphinx_gallery_end_ignore

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "modified by an inplace operation"):
    # sphinx_gallery_end_ignore
    loss_d.backward()

# %%
# The ``BatchNorm`` layer's node saved its ``running_mean`` and
# ``running_var`` themselves, not copies, and the copy made for the second
# forward pass changed both in place. With grad mode on, the node saves them
# in training mode and in ``eval()`` mode alike, and a write to either between
# the forward pass and its backward pass (``copy_``, ``add_``, ``fill_``)
# makes the backward pass fail; the layer's own update of the running
# statistics in a second forward pass in training mode does not
# :claim:`site-batchnorm-saves-running-stats`. Without the copies, the same
# two forward passes and one backward pass run:
v = bn.running_mean._version
before = bn.running_mean.clone()
d_fake, d_real = D(fake), D(real)
moved = not torch.equal(bn.running_mean, before)
print("running mean updated:", moved, "| version:", v, "->", bn.running_mean._version)
(F.softplus(d_fake).mean() + F.softplus(-d_real).mean()).backward()
print("backward ran; fake.grad, first row:", fake.grad[0])
# sphinx_gallery_start_ignore
assert not torch.equal(bn.running_mean, before) and fake.grad is not None
# sphinx_gallery_end_ignore

# %%
# Fix 1: backpropagate each forward pass before the next one
# ----------------------------------------------------------
# Once a backward pass has run without ``retain_graph=True``, its graph has let
# go of the tensors it saved, and the next copy breaks nothing. The two
# backward passes add into the same gradients: in training mode the layer
# normalises with each batch's own statistics, so the running statistics that
# the copies change do not enter the result, and the gradients are those of the
# joint loss.
D.zero_grad()
fake.grad = None
broadcast_buffers(D, process_0)
F.softplus(D(fake)).mean().backward()
broadcast_buffers(D, process_0)
F.softplus(-D(real)).mean().backward()
print("D's last bias, its gradient:", D[3].bias.grad)
# sphinx_gallery_start_ignore
# The check: the same gradients as one backward pass of the joint loss, without the copies.
got = [p.grad.clone() for p in D.parameters()] + [fake.grad.clone()]
D.zero_grad()
fake.grad = None
F.softplus(D(fake)).mean().add(F.softplus(-D(real)).mean()).backward()
want = [p.grad for p in D.parameters()] + [fake.grad]
assert all(torch.allclose(g, w, atol=1e-6) for g, w in zip(got, want))
# sphinx_gallery_end_ignore

# %%
# Fix 2: one forward pass on both batches
# ---------------------------------------
# One forward pass means one copy, before it. But ``BatchNorm`` then
# normalises the fake and the real samples with the statistics of the joined
# batch: the scores are not those of two forward passes, as the difference
# printed below shows.
broadcast_buffers(D, process_0)
scores = D(torch.cat([fake, real]))
d_fake, d_real = scores[:16], scores[16:]
loss_d = F.softplus(d_fake).mean() + F.softplus(-d_real).mean()
loss_d.backward()
apart = D(fake).detach()
print("largest difference from a forward pass on the fake batch alone:", (d_fake - apart).abs().max().item())
# sphinx_gallery_start_ignore
assert not torch.allclose(d_fake, apart)
# sphinx_gallery_end_ignore

# %%
# Fix 3: a buffer of your own, read through a clone
# -------------------------------------------------
# When a module of your own multiplies, with grad mode on, a tensor that
# requires grad by one of its buffers, the graph saves the buffer itself;
# multiplied by ``self.scale.clone()``, it saves the clone, and a write to the
# buffer between the forward pass and its backward pass breaks nothing
# :claim:`site-buffer-product-saves-the-buffer`. For ``BatchNorm`` under
# ``DistributedDataParallel``, the answer in the thread pytorch/pytorch#110363
# below suggests ``broadcast_buffers=False``, or ``SyncBatchNorm`` instead of
# ``BatchNorm``.


class Scaled(torch.nn.Linear):
    def forward(self, x):
        return super().forward(x) * self.scale.clone()


model = Scaled(2, 4)
model.register_buffer("scale", torch.ones(4))
out = model(torch.randn(3, 2)).sum()
model.scale.copy_(torch.full((4,), 2.0))
out.backward()
print("backward ran; the bias gradient:", model.bias.grad)
# sphinx_gallery_start_ignore
assert torch.equal(model.bias.grad, torch.full((4,), 3.0))
show_graph(model(torch.randn(3, 2)).sum(), model.scale)
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `pytorch/pytorch#22095 <https://github.com/pytorch/pytorch/issues/22095>`__: a
#   ``DistributedDataParallel`` module whose forward pass multiplies by a buffer,
#   called twice before ``backward()``; its report notes that multiplying by a
#   clone of the buffer avoids the error;
# - `pytorch/pytorch#110363 <https://github.com/pytorch/pytorch/issues/110363>`__:
#   ``BatchNorm2d`` under ``DistributedDataParallel``, the forward pass called twice
#   before a backward pass; the answer there names the buffers' broadcast and
#   suggests ``broadcast_buffers=False`` or ``SyncBatchNorm``;
# - `pytorch/pytorch#175024 <https://github.com/pytorch/pytorch/issues/175024>`__: a
#   GAN's discriminator with ``BatchNorm``, forward passes on fake and on real samples
#   before one backward pass, failing under ``DistributedDataParallel`` and running
#   without it.
