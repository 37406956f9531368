"""
In-place changes that ``torch.compile`` refuses
===============================================

Saves you from "Output 0 of CompiledFunction is a view and is being modified
inplace" and "functionalization encountered a tensor being mutated that has
internal overlap", raised by code that runs without ``torch.compile``.

Two in-place patterns that run eagerly fail when compiled with
``torch.compile(backend="aot_eager")``. With grad mode on and an input that
requires grad: changing in place, after the call, a tensor that the compiled
function computed, reshaped with an in-place view operation such as
``unsqueeze_`` and returned. And, inside the compiled function: an in-place
operation on windows of ``unfold`` that overlap. Clone the output before
changing it, or change it inside the function; compute the windows' new values
out of place.
"""

# %%
# The pitfall: changing a compiled function's output in place
# -----------------------------------------------------------
# A function adds a batch dimension to its result in place, with
# ``unsqueeze_``, and its caller scales the result in place. Eagerly, both
# run. This page compiles with ``backend="aot_eager"``, which skips code
# generation, so that the page builds in seconds; it checks no other backend,
# and another backend may behave otherwise.
# Each error on this page is raised when the page is built, and the build
# checks its type and message (the downloadable script shows how).

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
w = torch.randn(3, 4, requires_grad=True)
x = torch.randn(3)


def encode(x, w):
    h = x @ w + 1
    h.unsqueeze_(0)  # a batch of one
    return h


h = encode(x, w)
h.mul_(0.5)
print("eager: shape", tuple(h.shape), "| made by", type(h.grad_fn).__name__)

compiled_encode = torch.compile(encode, backend="aot_eager")
h = compiled_encode(x, w)
print("compiled: a view:", h._is_view(), "| made by", type(h.grad_fn).__name__)
# sphinx_gallery_start_ignore
show_graph(h)
# sphinx_gallery_end_ignore

# %%
# Compiled, autograd records the whole function as one node,
# ``CompiledFunctionBackward``, and its output is a view made inside that node. With
# grad mode on, both when the function is called and when its output is
# changed, and an input that requires grad (here ``w``), changing that view in
# place is refused :claim:`site-compile-view-output`.

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Output 0 of CompiledFunction is a view and is being modified inplace"):
    # sphinx_gallery_end_ignore
    h.mul_(0.5)

# %%
# The fix: clone the output, or change it inside the function
# -----------------------------------------------------------
# With grad mode on, a ``clone()`` of the output may be changed in place, as
# the message suggests; or make the change inside the compiled function,
# before it returns. Both give the gradient of the eager code
# :claim:`site-compile-view-output`.
h = compiled_encode(x, w).clone()
h.mul_(0.5)
(grad_clone,) = torch.autograd.grad(h.sum(), w)


def encode_scaled(x, w):
    h = x @ w + 1
    h.unsqueeze_(0)
    h.mul_(0.5)
    return h


h = torch.compile(encode_scaled, backend="aot_eager")(x, w)
(grad_inside,) = torch.autograd.grad(h.sum(), w)
print("the same gradient both ways:", torch.allclose(grad_clone, grad_inside))
# sphinx_gallery_start_ignore
# The check: both fixes give the gradient of the eager code, which scales after unsqueeze_.
eager = encode(x, w)
eager.mul_(0.5)
assert torch.allclose(grad_clone, torch.autograd.grad(eager.sum(), w)[0])
assert torch.allclose(grad_inside, grad_clone)
# sphinx_gallery_end_ignore

# %%
# The other pitfall: overlapping windows changed in place
# -------------------------------------------------------
# ``unfold(0, 4, 2)`` takes windows of 4 samples every 2 samples, so
# neighbouring windows share 2 samples: the windows are views of the same
# memory. Eagerly, halving the windows in place runs, and in this run each
# shared sample was halved twice, once through each window that holds it.
signal = torch.arange(8.0)


def centred_windows(signal):
    windows = (signal - signal.mean()).unfold(0, 4, 2)
    windows.mul_(0.5)
    return windows


eager_windows = centred_windows(signal)
print(eager_windows)
# sphinx_gallery_start_ignore
# The check: each sample was halved once per window that holds it (samples 2 to 5: twice).
centred = signal - signal.mean()
windows_holding = torch.tensor([1.0, 1, 2, 2, 2, 2, 1, 1])
assert torch.equal(eager_windows, (centred / 2**windows_holding).unfold(0, 4, 2))
# sphinx_gallery_end_ignore

# %%
# Compiled, the same function fails at its first call, whether its input
# requires grad or not :claim:`site-compile-overlapping-windows`.
compiled_windows = torch.compile(centred_windows, backend="aot_eager")
try:
    compiled_windows(signal)
except Exception as err:
    kind, message = type(err).__name__, str(err)

# the message's first paragraph; the rest names the file and line of the change
print(kind + ":", message.split("\n\n")[0])
# sphinx_gallery_start_ignore
# The check: the first call raised, with functionalization's message.
assert kind == "BackendCompilerFailed", kind
assert "functionalization encountered a tensor being mutated that has internal overlap" in message
# sphinx_gallery_end_ignore

# %%
# The fix: compute the windows' new values out of place
# -----------------------------------------------------
# ``windows * 0.5`` gives every window its own copy, in which each sample is
# halved once, eagerly and compiled alike. Cloning the windows before changing
# them in place also compiles :claim:`site-compile-overlapping-windows`. The
# shared samples then differ from the eager in-place version's above.


def centred_windows(signal):
    windows = (signal - signal.mean()).unfold(0, 4, 2)
    return windows * 0.5


windows = torch.compile(centred_windows, backend="aot_eager")(signal)
print(windows)
print("the same as eagerly:", torch.equal(windows, centred_windows(signal)))
# sphinx_gallery_start_ignore
# The check: each sample halved once, and the shared samples differ from the eager in-place run.
assert torch.equal(windows, centred.unfold(0, 4, 2) / 2)
assert not torch.equal(windows, eager_windows)
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `pytorch/pytorch#90507 <https://github.com/pytorch/pytorch/issues/90507>`__: a
#   function that computes a tensor, calls ``unsqueeze_`` on it and returns it,
#   compiled with AOT Autograd's ``aot_function``: its output's ``mul_(2)`` is
#   refused where the eager one runs (the message there names
#   ``CompiledFunctionBackward``);
# - `pytorch/pytorch#165409 <https://github.com/pytorch/pytorch/issues/165409>`__:
#   ``unfold`` then ``abs_`` inside a module's ``forward``, refused under
#   ``torch.compile(fullgraph=True)`` with the internal-overlap message where eager
#   runs;
# - `pytorch/pytorch#183888 <https://github.com/pytorch/pytorch/issues/183888>`__:
#   the same ``unfold`` then ``abs_``, with the Inductor backend:
#   ``BackendCompilerFailed`` where eager runs;
# - `pytorch/pytorch#99919 <https://github.com/pytorch/pytorch/pull/99919>`__: a
#   pull request that adds to functionalization a check refusing in-place changes
#   to tensors whose memory overlaps, which can give silently wrong results under
#   ``torch.compile``.
