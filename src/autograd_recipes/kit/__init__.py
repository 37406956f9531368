"""What the recipes and notebooks import besides torch: ``expect_error`` and ``show_graph``.

Each recipe has one hidden line, ``from autograd_recipes.kit import expect_error, show_graph``;
run from the checkout, it imports these modules, so ``python recipes/field/….py`` draws its
graphs as the site does. The pages' downloads have the modules' code instead of that line
(kit/standalone.py: a script in its place, a notebook in a cell of its own before it), so a
downloaded file runs alone. The kit's modules use only torch and the
standard library, and import none of this package's other modules.
"""

from autograd_recipes.kit.expect import expect_error
from autograd_recipes.kit.graph import show_graph

# each name a recipe imports from the kit, and the module of the kit that defines it
PARTS = {"expect_error": "expect", "show_graph": "graph"}

__all__ = ["expect_error", "show_graph"]  # the names of PARTS
