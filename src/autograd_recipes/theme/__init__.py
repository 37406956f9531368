"""The site's additions to the furo theme, for conf.py to name: its templates (the language
switch in the top bar and the sidebar, the page's provenance, edit and report links), its
stylesheet and the language switch's script, and the favicon."""

from pathlib import Path

_HERE = Path(__file__).resolve().parent
TEMPLATES = str(_HERE / "templates")
STATIC = str(_HERE / "static")
FAVICON = str(_HERE / "static" / "favicon.svg")
