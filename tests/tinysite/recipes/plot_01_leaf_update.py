"""
Updating a leaf under ``torch.no_grad()``
=========================================

An in-place update of a leaf that requires grad is refused while autograd
records; ``torch.no_grad()`` lets it through.
"""

# %%
# The pitfall
# -----------
# The update raises.

import torch

# sphinx_gallery_start_ignore
from autograd_recipes.kit import expect_error, show_graph

# sphinx_gallery_end_ignore
w = torch.tensor([0.5, -0.5], requires_grad=True)
loss = (w * 2).sum()
# sphinx_gallery_start_ignore
show_graph(loss, w)
# sphinx_gallery_end_ignore
loss.backward()

# sphinx_gallery_start_ignore
with expect_error(RuntimeError, "a leaf Variable that requires grad"):
    # sphinx_gallery_end_ignore
    w.add_(w.grad, alpha=-0.1)

# %%
# The fix
# -------
# Under ``torch.no_grad()`` the update goes through.

with torch.no_grad():
    w.add_(w.grad, alpha=-0.1)
print(w)
