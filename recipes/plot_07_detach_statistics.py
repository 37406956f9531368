"""
Accumulating statistics with ``detach()``
=========================================

Saves you from logging totals that keep every batch's graph alive.

Summing a loss or an output across batches for logging looks harmless:
``total.add_(out.sum())``. If ``out`` requires grad, the running total joins the
autograd graph, and that graph stays alive as long as the total does, with every
batch's saved activations unless a backward pass has already freed them. It
grows with every batch. ``detach()`` (or
``.item()``) adds the value only, and the numbers come out the same, up to
rounding (``.item()`` adds Python floats, in double precision).
"""

# %%
# Measuring what a graph keeps alive
# ----------------------------------
# Walk the graph behind a tensor, collect the tensors its nodes saved for
# backward (attributes named ``_saved_*``), and add up their storages, each
# once: the output of ``tanh`` is saved twice (by ``tanh`` and by the next
# layer). Leave out the storages that stay alive anyway, given as ``alive``:
# the model's weights and the input batches. What remains is what only the
# graph keeps alive.

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph


# sphinx_gallery_end_ignore
def graph_size(t, alive=()):
    """(nodes, bytes of the saved storages that only the graph behind t keeps alive)."""
    kept_anyway = {a.untyped_storage().data_ptr() for a in alive}
    nodes, storages, seen, stack = 0, {}, set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        nodes += 1
        for name in dir(node):
            if name.startswith("_saved_"):
                value = getattr(node, name)
                if isinstance(value, torch.Tensor):
                    storage = value.untyped_storage()
                    if storage.data_ptr() not in kept_anyway:
                        storages[storage.data_ptr()] = storage.nbytes()
        stack.extend(next_node for next_node, _ in node.next_functions)
    return nodes, sum(storages.values())


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.Tanh(), torch.nn.Linear(256, 1))
batches = [torch.randn(32, 64) for _ in range(10)]

# %%
# The pitfall: accumulating the output itself
# -------------------------------------------
total = torch.zeros(1)
for batch in batches:
    total.add_(model(batch).sum())

alive = [*model.parameters(), *batches]
print("total requires grad:", total.requires_grad, "| grad_fn:", type(total.grad_fn).__name__)
print("graph nodes, and bytes only the graph keeps alive:", graph_size(total, alive))

# sphinx_gallery_start_ignore
# The build checks that figure by a second method: the CPU allocator's count of what is
# still allocated after the same loop, less what the loop leaves with detach() (torch.profiler).
import gc
import json
import os
import tempfile

from torch.profiler import ProfilerActivity, profile


def still_allocated(accumulate):
    log_level = os.environ.get("KINETO_LOG_LEVEL")
    os.environ["KINETO_LOG_LEVEL"] = "6"  # the profiler's own log lines stay off the build's log
    gc.disable()  # no collection of older garbage during the count
    try:
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            kept = torch.zeros(1)
            for batch in batches:
                kept.add_(accumulate(model(batch)))
    finally:
        gc.enable()
        if log_level is None:
            del os.environ["KINETO_LOG_LEVEL"]
        else:
            os.environ["KINETO_LOG_LEVEL"] = log_level
    with tempfile.TemporaryDirectory() as folder:
        trace = os.path.join(folder, "trace.json")
        prof.export_chrome_trace(trace)
        with open(trace, encoding="utf-8") as f:
            events = [e["args"] for e in json.load(f)["traceEvents"] if e.get("name") == "[memory]"]
    return events[-1]["Total Allocated"] - (events[0]["Total Allocated"] - events[0]["Bytes"])


by_allocator = still_allocated(lambda out: out.sum()) - still_allocated(lambda out: out.detach().sum())
assert graph_size(total, alive)[1] == by_allocator, (graph_size(total, alive), by_allocator)
# sphinx_gallery_end_ignore

# %%
# The cost grows with every batch: with 20 batches the graph keeps twice the
# bytes alive.
total_20 = torch.zeros(1)
for batch in batches + batches:
    total_20.add_(model(batch).sum())

print("after 20 batches:", graph_size(total_20, alive))

# %%
# It is not only memory: the total still needs autograd's rules. Changing in
# place a weight that the graph saved (here the last layer's; an optimizer step
# changes them all), and then using the total in backward, fails. Each error on
# this page is raised when the page is built, and the build checks its type and
# message (the downloadable script shows how).
with torch.no_grad():
    model[2].weight.mul_(0.5)
# sphinx_gallery_start_ignore
show_graph(total)
# sphinx_gallery_end_ignore

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "modified by an inplace operation"):
    # sphinx_gallery_end_ignore
    total.backward()

# %%

with torch.no_grad():
    model[2].weight.mul_(2.0)

# %%
# The safe version
# ----------------
# ``detach()`` adds the value and nothing else; ``.item()`` gives a Python float.
total_detached = torch.zeros(1)
total_float = 0.0
for batch in batches:
    out = model(batch)
    total_detached.add_(out.detach().sum())
    total_float += out.sum().item()

# sphinx_gallery_start_ignore
show_graph(total_detached)
# sphinx_gallery_end_ignore
print("requires grad:", total_detached.requires_grad, "| graph:", graph_size(total_detached, alive))

# %%
# Proof: the statistics agree with a pass that never built a graph at all.
with torch.no_grad():
    total_no_graph = sum(model(batch).sum() for batch in batches)

print("detach():", total_detached.item(), "| .item():", total_float, "| no graph:", total_no_graph.item())
# sphinx_gallery_start_ignore
assert torch.allclose(total_detached, total_no_graph.reshape(1))
assert abs(total_float - total_no_graph.item()) < 1e-3
# sphinx_gallery_end_ignore

# %%
# Another message: ``numpy()`` on a tensor that requires grad
# -----------------------------------------------------------
# Keeping the outputs as numpy arrays, for a metric or a plot, fails at the
# first batch: while grad mode is on, ``numpy()``, and ``np.asarray``, which
# calls it, refuse a tensor that requires grad, such as a model's output.

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Can't call numpy() on Tensor that requires grad"):
    # sphinx_gallery_end_ignore
    preds = [model(batch).numpy() for batch in batches]

# %%
# The fix: ``detach()`` first, or Python numbers
# ----------------------------------------------
# ``detach().numpy()`` gives the array with no graph behind it. ``.item()`` (of
# a one-element tensor) and ``.tolist()`` give Python numbers and need no
# ``detach()``.
preds = [model(batch).detach().numpy() for batch in batches]
losses = [model(batch).sum().item() for batch in batches]
print("arrays:", len(preds), "of shape", preds[0].shape, "| first loss:", round(losses[0], 4))

# %%
# The array shares the tensor's memory: ``detach()`` shares it, and so does
# ``numpy()``. An in-place change of the tensor after you logged it, such as an
# optimizer step on a weight, shows in the array. Copy what you keep:
# ``.copy()`` of the array, or ``.tolist()``, whose numbers are copies.
logged = model[2].weight.detach().numpy()
kept = model[2].weight.detach().numpy().copy()
with torch.no_grad():
    model[2].weight.mul_(0.5)  # in place, as an optimizer step

print("the logged array changed with the weight:", (logged == model[2].weight.detach().numpy()).all())
print("the copy kept the old values:", (kept == 2 * logged).all())
# sphinx_gallery_start_ignore
assert (logged == model[2].weight.detach().numpy()).all() and (kept == 2 * logged).all()
assert not (kept == logged).any()
# sphinx_gallery_end_ignore
