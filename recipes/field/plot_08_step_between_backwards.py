"""
An optimizer step between two backward passes
=============================================

Saves you from the version error of a GAN whose discriminator steps between
the discriminator's and the generator's backward passes.

One forward pass, two losses: the discriminator's and the generator's. With the
optimizers' default step and without autocast, the order
``loss_d.backward(retain_graph=True)``, ``opt_d.step()``, ``loss_g.backward()``
fails: the step changed the discriminator's weights in place, and the graph
behind ``loss_g`` saved them, since the gradient goes back through them (to the
discriminator's earlier layers and on to the generator). ``retain_graph=True``
keeps the saved tensors, not their old values. Finish every backward pass
through a forward pass before a step, or run a new forward pass after it.
"""

# %%
# The pitfall: a step, then the second backward pass
# --------------------------------------------------
# A generator ``G`` turns noise into fake samples, a discriminator ``D`` scores
# real and fake ones. Both losses come from the same scores ``d_fake``. Each
# error on this page is raised when the page is built, and the build checks its
# type and message (the downloadable script shows how).

import torch
import torch.nn.functional as F

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
G = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
D = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
real, z = torch.randn(16, 2) + 3.0, torch.randn(16, 2)

fake = G(z)
d_fake, d_real = D(fake), D(real)
loss_d = F.softplus(-d_real).mean() + F.softplus(d_fake).mean()
loss_g = F.softplus(-d_fake).mean()

opt_d.zero_grad()
loss_d.backward(retain_graph=True)
version = D[2].weight._version
opt_d.step()
print("D's last weight, version before and after the step:", version, D[2].weight._version)
print("loss_d's backward also wrote G's gradients:", G[0].weight.grad is not None)
# sphinx_gallery_start_ignore
show_graph(loss_g, D[2].weight)
# sphinx_gallery_end_ignore

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "modified by an inplace operation"):
    # sphinx_gallery_end_ignore
    loss_g.backward()

# %%
# The graph behind ``loss_g`` goes through ``D`` to reach ``G``. To send the
# gradient back through a linear layer to its input, autograd needs the layer's
# weight, so the graph saved ``D``'s weight tensors themselves, not copies.
# The error names the last one, transposed as the product uses it (``[8, 1]``):
# saved at version 1 (initialisation wrote it in place once), now at version 2.
# ``retain_graph=True`` only kept the graph's saved tensors from being freed:
# they are the same tensors the step changed.
#
# Every built-in optimizer's default step writes the parameters in place and
# bumps their version counter; a fused step (``fused=True``) does not bump it,
# and then nothing stops this backward pass
# :claim:`site-optimizers-update-without-recording`. Which weights a graph
# saves depends on the layer and on autocast. Without autocast, in a float32,
# bfloat16 or float64 model alike, a linear layer saves its weight only when
# its input requires grad, a convolution, ``LayerNorm`` or ``BatchNorm`` layer
# always, and after a default step a backward pass through a saved weight
# fails. Under CPU autocast, the linear and convolution layers of a float32
# model save the lower-precision copy autocast makes of their weight instead
# (bfloat16 by default), so that backward pass runs (``LayerNorm`` and
# ``BatchNorm`` still save the weight itself)
# :claim:`site-step-breaks-saved-weights`.

# %%
# The fix: a new forward pass after the step
# ------------------------------------------
# The usual order of a GAN's training step. The discriminator learns from
# ``fake.detach()``, so its graph does not reach ``G``; after its step, the
# generator's loss comes from a new forward pass through the updated ``D``.
fake = G(z)
loss_d = F.softplus(-D(real)).mean() + F.softplus(D(fake.detach())).mean()
opt_d.zero_grad()
loss_d.backward()
opt_d.step()

loss_g = F.softplus(-D(fake)).mean()
opt_g.zero_grad()
loss_g.backward()
opt_g.step()
print("G's gradient from the updated D:", G[2].bias.grad)
# sphinx_gallery_start_ignore
show_graph(loss_g)
# sphinx_gallery_end_ignore

# %%
# The other fix: both backward passes before any step
# ---------------------------------------------------
# To take both gradients from one forward pass, run both backward passes
# first, then both steps. ``inputs=`` sends each loss's gradient only into the
# parameters it trains: without it, each backward pass would also add into the
# other network's gradients.
fake = G(z)
d_fake, d_real = D(fake), D(real)
loss_d = F.softplus(-d_real).mean() + F.softplus(d_fake).mean()
loss_g = F.softplus(-d_fake).mean()

# sphinx_gallery_start_ignore
# The check: each network's gradient is exactly its own loss's, taken from the same forward.
want_g = torch.autograd.grad(loss_g, list(G.parameters()), retain_graph=True)
want_d = torch.autograd.grad(loss_d, list(D.parameters()), retain_graph=True)
# sphinx_gallery_end_ignore
opt_d.zero_grad()
opt_g.zero_grad()
loss_g.backward(inputs=list(G.parameters()), retain_graph=True)
loss_d.backward(inputs=list(D.parameters()))
# sphinx_gallery_start_ignore
assert all(torch.equal(p.grad, w) for p, w in zip(G.parameters(), want_g))
assert all(torch.equal(p.grad, w) for p, w in zip(D.parameters(), want_d))
# sphinx_gallery_end_ignore
opt_g.step()
opt_d.step()
print("both steps taken; D's last weight is at version", D[2].weight._version)

# %%
# Where people report it
# ----------------------
# - `pytorch/pytorch#39141 <https://github.com/pytorch/pytorch/issues/39141>`__: the GAN
#   of a popular tutorial, failing from torch 1.5, when the optimizers' in-place updates
#   began to be checked;
# - `MorvanZhou/PyTorch-Tutorial#91
#   <https://github.com/MorvanZhou/PyTorch-Tutorial/pull/91>`__: that tutorial's fix,
#   which moves the discriminator's step;
# - `tamarott/SinGAN#148 <https://github.com/tamarott/SinGAN/issues/148>`__: the same
#   error in SinGAN's generator loop.
