"""
Cloning before an in-place change
=================================

``clone()`` gives a tensor of its own, so an in-place change leaves the
original as it was.
"""

# %%
# The pitfall
# -----------
# A view shares its base's memory.

import torch

x = torch.ones(3)
view = x[:2]
view.mul_(10)
print(x)

# %%
# The fix
# -------
# A clone has memory of its own :claim:`tiny-clone-own-memory`.

x = torch.ones(3)
copy = x[:2].clone()
copy.mul_(10)
print(x)
