"""
Grad mode does not reach the threads you start
==============================================

Saves you from a ``torch.no_grad()`` block whose work, sent to a thread pool,
is recorded anyway.

Grad mode belongs to the thread that sets it: a thread you start does not
inherit it. ``torch.no_grad()``, ``torch.inference_mode()`` and
``torch.set_grad_enabled(False)`` change the current thread only; a worker of a
``ThreadPoolExecutor`` (or a web server's request thread) runs in its own grad
mode, on unless code in that thread turned it off, whatever the thread that
submitted the work was doing. Its results then carry graphs that keep memory
alive (or, where the work saves for the backward pass an input made inside
``torch.inference_mode()``, it raises an error), and a hand-written in-place
update of a parameter, such as ``param.sub_(...)``, sent there is refused.
Enter the mode inside the function the thread runs.
"""

# %%
# The pitfall: ``no_grad`` around the pool
# ----------------------------------------
# A pool's workers start with grad mode on, whatever mode the thread that
# submits the work is in :claim:`site-grad-mode-is-thread-local`. Each error on
# this page is raised when the page is built, and the build checks its type and
# message (the downloadable script shows how).

from concurrent.futures import ThreadPoolExecutor

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
batches = [torch.randn(3, 4) for _ in range(4)]


def predict(batch):
    return model(batch)


with torch.no_grad(), ThreadPoolExecutor(max_workers=2) as pool:
    outputs = list(pool.map(predict, batches))
    here = model(batches[0])

print("computed here:", here.requires_grad, "| in the pool:", [out.requires_grad for out in outputs])
# sphinx_gallery_start_ignore
show_graph(outputs[0])
# sphinx_gallery_end_ignore

# %%
# The same holds for an update written by hand that the pool applies in place:
# in the worker, grad mode is on, and autograd refuses to change a leaf that
# requires grad (``optimizer.step()`` turns recording off itself
# :claim:`site-optimizers-update-without-recording`).
model(batches[0]).sum().backward()


def update(param):
    param.sub_(0.1 * param.grad)


# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation"):
    # sphinx_gallery_end_ignore
    with torch.no_grad(), ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(update, model.parameters()))

# %%
# The fix: set the mode in the function the thread runs
# -----------------------------------------------------
# ``torch.no_grad()`` (and ``torch.inference_mode()``) also work as
# decorators.


@torch.no_grad()
def predict(batch):
    return model(batch)


@torch.no_grad()
def update(param):
    param.sub_(0.1 * param.grad)


# sphinx_gallery_start_ignore
with torch.no_grad():
    want_outputs = [model(batch) for batch in batches]
    want_weight = model.weight - 0.1 * model.weight.grad
# sphinx_gallery_end_ignore
with ThreadPoolExecutor(max_workers=2) as pool:
    outputs = list(pool.map(predict, batches))
    before = model.weight.detach().clone()
    list(pool.map(update, model.parameters()))

print(
    "in the pool:",
    [out.requires_grad for out in outputs],
    "| weight updated:",
    not torch.equal(model.weight, before),
)
# sphinx_gallery_start_ignore
# The check: the same outputs as a no_grad pass in this thread, and the update is a plain SGD step.
assert all(torch.equal(out, want) for out, want in zip(outputs, want_outputs))
assert torch.equal(model.weight, want_weight)
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `pytorch/pytorch#20528 <https://github.com/pytorch/pytorch/issues/20528>`__: an
#   outer ``torch.no_grad()`` ignored in a thread pool;
# - `pytorch/pytorch#82145 <https://github.com/pytorch/pytorch/issues/82145>`__:
#   ``torch.set_grad_enabled(False)`` not applied in a web server's request threads;
# - `kyutai-labs/pocket-tts#16 <https://github.com/kyutai-labs/pocket-tts/pull/16>`__: a
#   memory leak fixed by ``no_grad`` in every thread.
