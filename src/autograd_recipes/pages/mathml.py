"""Render math to MathML when the site is built: no MathJax, nothing fetched by the reader.

Browsers draw MathML natively, so a page with formulas loads no script and
no web font. Select it with ``html_math_renderer = "mathml"``. LaTeX that
latex2mathml cannot convert is a build warning at the formula's source line.
"""

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.util import logging

logger = logging.getLogger(__name__)


def _mathml(translator, node, display):
    latex = node.astext()
    try:
        return convert(latex, display="block" if display else "inline")
    except Exception as err:  # latex2mathml raises several types for bad input
        logger.warning("cannot render math %r: %s", latex, err, location=node)
        return translator.encode(latex)


def visit_math(translator, node):
    translator.body.append(f'<span class="math">{_mathml(translator, node, False)}</span>')
    raise nodes.SkipNode


def visit_math_block(translator, node):
    # a wide formula scrolls: keyboard users must be able to focus it to scroll it
    translator.body.append(translator.starttag(node, "div", CLASS="math", tabindex="0"))
    translator.body.append(_mathml(translator, node, True))
    translator.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_math_block, None))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
