"""Sphinx configuration for Autograd Recipes.

Build with ``nox -s docs`` (which runs ``python -m autograd_recipes.publish.build``: English, then Korean).
Kept declarative: behaviour lives in the package src/autograd_recipes (by subsystem: execution, i18n, pages, search, claims, matrix, errors, publish, theme), one concern per module.
"""

import os
from pathlib import Path

from autograd_recipes import theme

ROOT = Path(__file__).resolve().parent

project = "Autograd Recipes"
author = "the autograd-recipes contributors"
copyright = "2026, the autograd-recipes contributors"

extensions = [
    "autograd_recipes.execution.kernel_ipc",
    "myst_nb",
    "autograd_recipes.execution.notebook_prerun",  # before the gallery: the notebooks run beside it
    # after the notebooks start, before the gallery: the recipes' runner, forked before them, runs beside them
    "autograd_recipes.execution.recipe_runs",
    "sphinx_gallery.gen_gallery",
    "sphinx_copybutton",
    "autograd_recipes.pages.mathml",
    "autograd_recipes.pages.notebook_download",
    "autograd_recipes.pages.standalone_downloads",
    "autograd_recipes.execution.output_cap",
    "autograd_recipes.pages.shown_code",
    "autograd_recipes.pages.first_screen",
    "autograd_recipes.execution.notebook_breadcrumb",
    "autograd_recipes.execution.recipe_guard",
    "autograd_recipes.execution.cache_key",
    "autograd_recipes.execution.reused_outputs",
    "autograd_recipes.execution.recipe_imports",
    "autograd_recipes.execution.gallery_layout",
    "autograd_recipes.i18n.site_languages",
    "autograd_recipes.pages.source_links",
    "autograd_recipes.pages.provenance",
    "autograd_recipes.publish.offline_copy",
    "autograd_recipes.publish.colab",
    "autograd_recipes.publish.stale_outputs",
    "autograd_recipes.pages.page_summary",
    "autograd_recipes.pages.lazy_thumbnails",
    "autograd_recipes.pages.page_assets",
    "autograd_recipes.theme",
    "autograd_recipes.search.korean",
    "autograd_recipes.search.utf8_index",
    "autograd_recipes.search.file_search",
    "autograd_recipes.search.ranked",
    "autograd_recipes.pages.ui_strings",
    "autograd_recipes.claims.claims",
    "autograd_recipes.claims.claim_links",
    "autograd_recipes.pages.recipe_list",
    "autograd_recipes.errors.error_families",
    "autograd_recipes.errors.error_index",
    "autograd_recipes.pages.gallery_cards",
    "autograd_recipes.i18n.first_gloss",
    "autograd_recipes.pages.graph_figures",
    "autograd_recipes.matrix.torch_matrix",
    "autograd_recipes.execution.execution_report",
    "autograd_recipes.i18n.translation_guard",
]

# --- languages: one English source, Korean from gettext catalogs ---------------------
language = "en"
locale_dirs = [str(ROOT / "locales")]  # (a relative path would be read from docs/)
gettext_compact = False  # one catalog per document
gettext_location = False  # catalogs do not change when lines move
gettext_uuid = False
gettext_last_translator = "autograd-recipes contributors"
site_languages = {"en": "English", "ko": "한국어"}

# --- where the site is published and where its sources live --------------------------
# The Pages workflow (.github/workflows/pages.yml) sets these from the repository it runs
# in, so a fork or a renamed repository links to itself. The defaults are for a local
# build: the address `nox -s serve` serves it at, and the upstream repository.
LOCAL_SITE_URL = "http://127.0.0.1:8000/"
# canonical links, hreflang, og:url, the sitemap, the 404 page, the offline copies' outward links
site_url = os.environ.get("AUTOGRAD_RECIPES_SITE_URL") or LOCAL_SITE_URL
# "owner/name" on GitHub, and its branch: the pages' edit and "report a problem" links
site_repository = os.environ.get("AUTOGRAD_RECIPES_REPOSITORY") or "autograd-recipes/autograd-recipes"
site_branch = os.environ.get("AUTOGRAD_RECIPES_BRANCH") or "main"
# the branch of site_repository that holds the built notebooks, which each recipe and notebook
# page opens in Colab (the Pages workflow pushes them there: publish/colab.py)
notebooks_branch = "notebooks"

exclude_patterns = [
    "_root",
    # sphinx-gallery writes notebooks next to its pages; myst-nb must not run them again
    "recipes/**.ipynb",
    "**.ipynb_checkpoints",
]
nitpicky = True  # every unresolved reference is a warning, and -W makes it an error
# sphinx-gallery's check looks at whole paths, so a checkout in "My Documents" would fail;
# recipe_guard checks the recipes' own names instead
suppress_warnings = ["sphinx_gallery.space_in_filename"]

# --- theme -------------------------------------------------------------------
html_theme = "furo"
html_title = project
html_static_path = [theme.STATIC]
html_css_files = ["site.css"]
html_js_files = [("language-switch.js", {"defer": "defer"})]
html_favicon = theme.FAVICON
templates_path = [theme.TEMPLATES]
html_sidebars = {
    "**": [
        "sidebar/brand.html",
        "sidebar/languages.html",
        "sidebar/search.html",
        "sidebar/scroll-start.html",
        "sidebar/navigation.html",
        "sidebar/scroll-end.html",
    ]
}
html_last_updated_fmt = None
html_show_sphinx = False
html_math_renderer = "mathml"  # formulas as MathML at build time: no MathJax CDN

# --- sphinx-gallery: the recipes -----------------------------------------------
RECIPE_PREFIX = "plot_"  # recipes/plot_*.py are the recipes
sphinx_gallery_conf = {
    "examples_dirs": "../recipes",
    "gallery_dirs": "recipes",
    "filename_pattern": "/" + RECIPE_PREFIX,
    "within_subsection_order": "FileNameSortKey",
    # a section (recipes/field/ with its README.rst) is a heading of the one gallery page,
    # not a page of its own
    "nested_sections": False,
    "download_all_examples": False,
    "show_signature": False,
    # a recipe's own settings (# sphinx_gallery_recipe_timeout = 5) stay off its page
    "remove_config_comments": True,
    # The run time is shown by execution_report, outside the translatable text.
    "min_reported_time": float("inf"),
    # sphinx-gallery's own timing page loads jQuery and DataTables from CDNs.
    "write_computation_times": False,
    # its stylesheet for the cards and outputs; not those for Binder badges, pandas
    # tables and rich HTML outputs, which no recipe has (three requests less per page)
    "css": ("sg_gallery",),
    # the recipes' pictures are their autograd graphs (graph_figures); no matplotlib
    "image_scrapers": ("autograd_recipes.pages.graph_figures.scrape",),
    "reset_modules": (
        "autograd_recipes.execution.recipe_guard.prepare_recipe",
        "autograd_recipes.pages.graph_figures.reset_pending",
    ),
    "reset_modules_order": "both",
    # which torch names each recipe uses (resolved from its code as it ran), for the
    # mini-galleries of the guide and the overview: ``.. minigallery:: torch.no_grad``
    "doc_module": ("torch",),
    "backreferences_dir": "recipes/uses",
    "minigallery_sort_order": "autograd_recipes.pages.gallery_cards.minigallery_order",
}
recipe_timeout = 60  # seconds; a recipe running longer fails the build (its own comment can set another)
claims_timeout = 180  # seconds per claim of docs/claims.toml (its own `timeout` wins): a net for hangs, wide for a loaded machine

# --- myst-nb: executed pages -----------------------------------------------------
nb_execution_mode = "cache"
nb_execution_cache_path = str(ROOT / "build" / ".jupyter_cache")
# a failing cell is a warning naming the notebook (-W fails the build; the other pages are still
# checked), not a Sphinx crash; execution.cache_key reads a failed notebook again on the next build
nb_execution_raise_on_error = False
nb_execution_show_tb = True
nb_execution_timeout = 60
# a page that failed beside the gallery runs again in myst-nb: in a folder of its own under
# build/run/ (execution.notebook_prerun), so that a relative write never lands in docs/
nb_execution_in_temp = True
nb_kernel_rgx_aliases = {".*": "python3"}
nb_merge_streams = True  # how the kernel chunks stdout must not change the page
nb_ipywidgets_js = {}
myst_enable_extensions = ["dollarmath", "colon_fence"]
# each notebook page offers its source with the outputs of the cached run (never empty)
notebook_download_dir = str(ROOT / "build" / "notebooks")  # outside the published tree
recipe_download_dir = str(ROOT / "build" / "downloads")  # the same, for the recipes' downloads

# --- output of recipes and notebooks ----------------------------------------------
# per recipe code block and per notebook cell; more is cut on the page and fails the build
max_output_bytes = 100_000

# --- copy buttons: code only, never prompts or output -----------------------------
copybutton_selector = 'div[class*="highlight-"]:not(.sphx-glr-script-out):not(.output) > div.highlight > pre'
copybutton_prompt_text = r">>> |\.\.\. "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True
