"""A recipe's notebook download carries the outputs its page shows, so that it opens executed.

sphinx-gallery runs a recipe as a script, block by block, and writes what each code block
output into the reST of the recipe's page, after the block (``upstream.gallery_block_pages``
cuts that page into its blocks, each named by its first line in the recipe). The notebook's
code cells are the same blocks (``upstream.gallery_notebook``), so each cell gets its block's
outputs, as the page shows them: the graphs first (``graph_figures.scrape`` writes them before
the printed text), displayed as the kit's ``show_graph`` displays them in Jupyter, then the
printed text as stdout. A reused run's page (sphinx-gallery skipped an unchanged recipe) is
the one that run wrote. An output of the page that no code block's part holds is an error
naming the recipe: the notebook would lack part of what the page shows.
"""

from autograd_recipes import upstream
from autograd_recipes.kit import graph
from autograd_recipes.pages import graph_figures


class UnplacedOutput(ValueError):
    pass


def cell_outputs(rst, code_lines):
    """{first line of a code block: its cell's outputs (nbformat 4 dicts)} from ``rst``, the
    recipe's generated page; ``code_lines``: the first line of each code block."""
    parts = upstream.gallery_block_pages(rst)
    outputs, drawn, printed = {}, 0, 0
    for line in code_lines:
        part = parts.get(line, "")
        cell = []
        for record in graph_figures.scraped_records(part):
            drawn += 1  # numbered as a fresh kernel's Graph numbers its pictures
            bundle = graph.mimebundle(record, f"autograd-graph-{drawn}")
            cell.append({"output_type": "display_data", "metadata": {}, "data": bundle})
        text = upstream.gallery_printed(part)
        if text is not None:
            printed += 1
            cell.append({"output_type": "stream", "name": "stdout", "text": text})
        outputs[line] = cell
    shown = (len(graph_figures.scraped_records(rst)), len(upstream.GALLERY_OUTPUT_BLOCK.findall(rst)))
    if (drawn, printed) != shown:
        raise UnplacedOutput(
            f"the page shows {shown[0]} graph(s) and {shown[1]} output(s); the notebook's code "
            f"cells hold {drawn} and {printed}"
        )
    return outputs
