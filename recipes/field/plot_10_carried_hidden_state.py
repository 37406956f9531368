"""
A hidden state carried across batches
=====================================

Saves you from patching "Trying to backward through the graph a second time"
with ``retain_graph=True``.

A recurrent model trained on a long sequence, one chunk per batch, carries its
hidden state from one chunk to the next. That state's graph reaches back into the previous
chunk, whose saved tensors the previous backward pass freed, so the second
backward pass fails. ``retain_graph=True`` silences the error, but then every
backward pass runs through every earlier chunk again, and once an optimizer's
default step runs between chunks it fails with the version error instead.
Detach the state between chunks: ``h = h.detach()`` (for an LSTM, both ``h``
and ``c``). ``h.detach()`` alone returns a detached
tensor and throws it away.
"""

# %%
# The pitfall: the state keeps the previous chunk's graph
# -------------------------------------------------------
# Each error on this page is raised when the page is built, and the build
# checks its type and message (the downloadable script shows how).

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
cell = torch.nn.RNNCell(3, 5)
opt = torch.optim.SGD(cell.parameters(), lr=0.1)
chunks = torch.randn(4, 6, 2, 3)  # 4 chunks of 6 steps, a batch of 2, 3 features

h = torch.zeros(2, 5)
for x in chunks[0]:
    h = cell(x, h)

loss = h.pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()

for x in chunks[1]:
    h = cell(x, h)

loss = h.pow(2).mean()
# sphinx_gallery_start_ignore
show_graph(loss)
# sphinx_gallery_end_ignore

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Trying to backward through the graph a second time"):
    # sphinx_gallery_end_ignore
    loss.backward()

# %%
# The patch that hides it: ``retain_graph=True``
# ----------------------------------------------
# Keeping every graph's saved tensors lets the second backward pass run, but
# each backward pass now goes back through every chunk so far: the graph
# grows with each chunk, whatever the recurrent cell
# :claim:`site-retained-graph-grows`. Count the graph's nodes:


def graph_nodes(tensor):
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


h = torch.zeros(2, 5)
for number, chunk in enumerate(chunks):
    for x in chunk:
        h = cell(x, h)
    loss = h.pow(2).mean()
    print(f"chunk {number}: the loss's graph has {graph_nodes(loss)} nodes")
    opt.zero_grad()
    loss.backward(retain_graph=True)

# %%
# That loop never stepped. With the optimizer's default step between chunks,
# the old graph's saved weights are changed in place, and the next backward
# pass that reaches them fails:
h = torch.zeros(2, 5)
for x in chunks[0]:
    h = cell(x, h)

opt.zero_grad()
h.pow(2).mean().backward(retain_graph=True)
opt.step()
for x in chunks[1]:
    h = cell(x, h)

loss = h.pow(2).mean()

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "modified by an inplace operation"):
    # sphinx_gallery_end_ignore
    loss.backward()

# %%
# ``h.detach()`` alone does nothing
# ---------------------------------
# ``detach()`` returns a new tensor; ``h`` itself keeps its graph
# :claim:`site-detach-returns-a-new-tensor`.
h = torch.zeros(2, 5)
for x in chunks[0]:
    h = cell(x, h)

h.pow(2).mean().backward()
h.detach()
print("h still has its graph:", h.grad_fn is not None)
for x in chunks[1]:
    h = cell(x, h)

loss = h.pow(2).mean()

# %%

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "Trying to backward through the graph a second time"):
    # sphinx_gallery_end_ignore
    loss.backward()

# %%
# The fix: ``h = h.detach()`` between chunks
# ------------------------------------------
# The state keeps its values and loses its graph, so each backward pass covers
# its own chunk (truncated backpropagation through time), and the graph stays
# the same size.
h = torch.zeros(2, 5)
for number, chunk in enumerate(chunks):
    h = h.detach()
    # sphinx_gallery_start_ignore
    start = h
    # sphinx_gallery_end_ignore
    for x in chunk:
        h = cell(x, h)
    loss = h.pow(2).mean()
    print(f"chunk {number}: loss {loss.item():.4f}, graph of {graph_nodes(loss)} nodes")
    # sphinx_gallery_start_ignore
    # The check: the gradient is that of this chunk alone, run from a state with no graph.
    replay = start.clone()
    for x in chunk:
        replay = cell(x, replay)
    want = torch.autograd.grad(replay.pow(2).mean(), list(cell.parameters()))
    # sphinx_gallery_end_ignore
    opt.zero_grad()
    loss.backward()
    # sphinx_gallery_start_ignore
    assert all(torch.equal(p.grad, w) for p, w in zip(cell.parameters(), want))
    # sphinx_gallery_end_ignore
    opt.step()

# %%
# Where people report it
# ----------------------
# - `MorvanZhou/PyTorch-Tutorial#57
#   <https://github.com/MorvanZhou/PyTorch-Tutorial/issues/57>`__: ``retain_graph=True``
#   instead of detaching an RNN's state;
# - `OpenNMT/OpenNMT-py#403 <https://github.com/OpenNMT/OpenNMT-py/issues/403>`__:
#   ``detach_()`` on a decoder state carried from chunk to chunk, refused because the
#   state is a view;
# - `quark0/darts#56 <https://github.com/quark0/darts/issues/56>`__: a search that ran
#   only with ``retain_graph=True``, backpropagating through all of time.
