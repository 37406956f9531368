"""
AMP: clipping before ``GradScaler.unscale_``
============================================

Saves you from gradient clipping that, with a ``GradScaler``, silently clips
to ``max_norm`` divided by the loss scale.

A ``GradScaler`` multiplies the loss by its scale (65536 at first), so
``backward()`` leaves every gradient multiplied by it too. Called on those
gradients, ``clip_grad_norm_`` measures the scaled norm and, where it is above
``max_norm``, clips it to ``max_norm``; ``scaler.step`` then divides by the
scale, and the optimizer steps with gradients of norm ``max_norm / 65536``.
Nothing raises. Call ``scaler.unscale_(optimizer)`` before clipping, as
PyTorch's AMP examples do.
"""

# %%
# The pitfall: clipping the scaled gradients
# ------------------------------------------
# A small model, trained with plain SGD and a ``GradScaler`` on the CPU, in
# float64 so that rounding barely touches the tiny step measured below (the
# scaling is what matters here, not the precision of the forward pass). The scaler
# is on, with a scale of 65536, and ``scaler.scale(loss)`` is one more
# multiplication in the graph, so the backward pass multiplies every gradient
# by the scale :claim:`site-clip-before-unscale`.

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
x, y = torch.randn(16, 4, dtype=torch.float64), torch.randn(16, 1, dtype=torch.float64) * 10


def make_model():
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()


def total_norm(tensors):
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(t) for t in tensors])).item()


model = make_model()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
print("scaler enabled:", scaler.is_enabled(), "| scale:", scaler.get_scale())

loss = torch.nn.functional.mse_loss(model(x), y)
scaled = scaler.scale(loss)
# sphinx_gallery_start_ignore
show_graph(scaled)
# sphinx_gallery_end_ignore

# %%
# Clipping to 1.0 before ``unscale_``: ``clip_grad_norm_`` returns the scaled
# norm, 65536 times the true one, and the gradients the optimizer steps with
# have a total norm of 1.0 / 65536 :claim:`site-clip-before-unscale`.
before = [p.detach().clone() for p in model.parameters()]
scaled.backward()
norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
scaler.step(opt)
scaler.update()
wrong_step = total_norm([p.detach() - b for p, b in zip(model.parameters(), before)])
print(f"norm clip_grad_norm_ returned: {norm.item():.1f}")
print(f"norm of the gradients the optimizer used: {total_norm(p.grad for p in model.parameters()):.3g}")
print(f"size of the step: {wrong_step:.3g}")

# %%
# The fix: ``unscale_``, then clip, then step
# -------------------------------------------
# ``scaler.unscale_(opt)`` divides the gradients of ``opt``'s parameters by the
# scale, in place; ``clip_grad_norm_`` then sees the true norm, and
# ``scaler.step`` does not divide a second time
# :claim:`site-clip-before-unscale`.
model = make_model()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
before = [p.detach().clone() for p in model.parameters()]
loss = torch.nn.functional.mse_loss(model(x), y)
scaler.scale(loss).backward()
scaler.unscale_(opt)
norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
scaler.step(opt)
scaler.update()
right_step = total_norm([p.detach() - b for p, b in zip(model.parameters(), before)])
print(f"norm clip_grad_norm_ returned: {norm.item():.3f}")
print(f"norm of the gradients the optimizer used: {total_norm(p.grad for p in model.parameters()):.3g}")
print(f"size of the step: {right_step:.3g}, {right_step / wrong_step:.0f} times the other")
# sphinx_gallery_start_ignore
# The check: the true norm comes from a plain backward pass on the same start; the wrong order's
# step is scale times smaller (both clip, since the true norm exceeds 1.0).
fresh = make_model()
plain_loss = torch.nn.functional.mse_loss(fresh(x), y)
true_norm = total_norm(torch.autograd.grad(plain_loss, list(fresh.parameters())))
assert true_norm > 1.0 and abs(norm.item() / true_norm - 1) < 1e-4
assert abs(total_norm(p.grad for p in model.parameters()) - 1.0) < 1e-4
assert abs(right_step / wrong_step / 65536 - 1) < 1e-6
# sphinx_gallery_end_ignore

# %%
# With SGD and no weight decay, plain or with momentum other than Nesterov's,
# the first step is the gradient times the learning rate, so the wrong order
# made it 65536 times smaller here, where the true norm is above ``max_norm``
# :claim:`site-clip-before-unscale`. Adam divides its step by the gradient's
# running size, which hides most of the factor: here its first step is about
# the same size in either order, while its clipping still acts on the scaled
# gradients.
sizes = []
for unscale_first in (False, True):
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    before = [p.detach().clone() for p in model.parameters()]
    scaler.scale(torch.nn.functional.mse_loss(model(x), y)).backward()
    if unscale_first:
        scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(opt)
    scaler.update()
    sizes.append(total_norm([p.detach() - b for p, b in zip(model.parameters(), before)]))

print(f"Adam's first step: {sizes[0]:.3g} clipping first, {sizes[1]:.3g} unscaling first")
# sphinx_gallery_start_ignore
assert 0.5 < sizes[0] / sizes[1] < 2
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `pytorch/examples#1196 <https://github.com/pytorch/examples/issues/1196>`__:
#   the minGPT DDP example's trainer clips without ``scaler.unscale_`` first,
#   against the AMP documentation's advice;
# - `milesial/Pytorch-UNet#468 <https://github.com/milesial/Pytorch-UNet/issues/468>`__:
#   "Gradients are clipped before the unscaling" in a U-Net training script,
#   and the pull request that adds the call,
#   `#470 <https://github.com/milesial/Pytorch-UNet/pull/470>`__;
# - `rwth-i6/returnn#1590 <https://github.com/rwth-i6/returnn/issues/1590>`__:
#   a toolkit's global-norm clipping applied to the scaled gradients, which its
#   report reckons makes the clipping threshold about 65k times smaller;
# - `victorchall/EveryDream2trainer#175 <https://github.com/victorchall/EveryDream2trainer/pull/175>`__:
#   a fix whose description says that clipping to the usual 1.0 on scaled
#   gradients in effect halted training.
