"""
Keeping the best weights: ``state_dict()`` is not a copy
========================================================

Saves you from a "best model" checkpoint that silently holds the last weights.

``model.state_dict()`` returns tensors that share memory with the module's
parameters and buffers (detached aliases of them), not copies. The optimizer updates the
parameters in place, so a state dict kept in a variable changes with every
step, and "the best epoch's weights" end up being the last epoch's.
``dict(...)`` and ``.copy()`` copy the dictionary, not the tensors. Take a real
copy: ``copy.deepcopy(model.state_dict())``, or clone each tensor.
"""

# %%
# The pitfall: keep the state dict of the best epoch
# --------------------------------------------------
# A small regression with a learning rate that overshoots, so its validation
# loss is lowest after the first epoch. The loop keeps the state dict of the
# best epoch, and a shallow copy of it for good measure.

import copy

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import show_graph

# sphinx_gallery_end_ignore
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.9)
x, y = torch.randn(64, 3), torch.randn(64, 1)
x_val, y_val = torch.randn(64, 3), torch.randn(64, 1)


def val_loss(model):
    with torch.no_grad():
        return torch.nn.functional.mse_loss(model(x_val), y_val).item()


best_loss, best_state, best_copy = float("inf"), None, None
for epoch in range(5):
    opt.zero_grad()
    train_loss = torch.nn.functional.mse_loss(model(x), y)
    # sphinx_gallery_start_ignore
    if epoch == 1:
        with torch.no_grad():  # as the step writes: with recording off
            show_graph(train_loss, model.weight)
    # sphinx_gallery_end_ignore
    train_loss.backward()
    opt.step()
    loss = val_loss(model)
    print(f"epoch {epoch}: validation loss {loss:.4f}")
    if loss < best_loss:
        best_loss, best_epoch = loss, epoch
        best_state, best_copy = model.state_dict(), model.state_dict().copy()

# %%
# Each step writes the new weights into the parameters' memory (the weight
# marked in the picture), and that memory is what ``best_state`` and its
# shallow copy read :claim:`site-state-dict-is-live`. Loading "the best" state gives the last
# epoch's weights:
model.load_state_dict(best_state)
print(f"best was epoch {best_epoch} at {best_loss:.4f}; loaded: {val_loss(model):.4f}")
print("the state dict holds the live weight:", best_state["weight"].data_ptr() == model.weight.data_ptr())
print("so does its .copy():", best_copy["weight"].data_ptr() == model.weight.data_ptr())
# sphinx_gallery_start_ignore
assert val_loss(model) != best_loss
# sphinx_gallery_end_ignore

# %%
# The fix: copy the tensors
# -------------------------
# ``copy.deepcopy`` copies every tensor of the state dict (its buffers too,
# such as a BatchNorm layer's running statistics, which change in place in
# training as well). ``{k: v.clone() for k, v in model.state_dict().items()}``
# copies every tensor too.
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.9)
best_loss, best_state = float("inf"), None
for epoch in range(5):
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    loss = val_loss(model)
    if loss < best_loss:
        best_loss, best_epoch = loss, epoch
        best_state = copy.deepcopy(model.state_dict())

model.load_state_dict(best_state)
print(f"best was epoch {best_epoch} at {best_loss:.4f}; loaded: {val_loss(model):.4f}")
# sphinx_gallery_start_ignore
assert val_loss(model) == best_loss
# sphinx_gallery_end_ignore

# %%
# Where people report it
# ----------------------
# - `pytorch/tutorials#188 <https://github.com/pytorch/tutorials/pull/188>`__: the
#   transfer-learning tutorial's best weights, fixed with ``copy.deepcopy``;
# - `WenjieDu/PyPOTS#667 <https://github.com/WenjieDu/PyPOTS/issues/667>`__: a library's
#   saved best model that kept changing;
# - `pytorch/pytorch#34765 <https://github.com/pytorch/pytorch/issues/34765>`__: a
#   request for ``state_dict()`` to return a copy.
