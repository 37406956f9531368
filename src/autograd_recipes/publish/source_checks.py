"""What in the sources stops a build before it starts, each named by file and line.

Run by src/autograd_recipes/publish/build.py before any work, beside the catalog check,
so that the faults below end the build with one line each rather than a Sphinx crash
that names neither file nor line:

- a recipe or gallery header that is not UTF-8 (sphinx-gallery reads every file of the
  recipes' folder as UTF-8 when the builder starts);
- a claims ledger that is not UTF-8 or not TOML, or breaks its own rules (a claim
  without a verdict, an id used twice: claims_ledger.load), which every page that
  reads the ledger would crash on.
"""

from autograd_recipes import source_text
from autograd_recipes.claims import claims_ledger
from autograd_recipes.project import PROJECT

READ_BY_THE_GALLERY = {".py", ".rst", ".txt"}  # scripts and section headers


def source_problems():
    """One ``path:line: message`` per fault, in the order above."""
    recipes = PROJECT.recipes_dir
    files = sorted(p for p in recipes.rglob("*") if p.suffix in READ_BY_THE_GALLERY and p.is_file())
    problems = [problem for problem in map(source_text.problem, files) if problem]
    if claims_ledger.ledger_path().is_file():
        try:
            claims_ledger.load()
        except claims_ledger.LedgerError as error:
            problems.append(str(error))
    return problems
