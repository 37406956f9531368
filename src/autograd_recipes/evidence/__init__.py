"""The claims and the torch matrix: the ledger and its runner, the matrix data and its runner (both Sphinx-free, run beside any torch), and the pages that show them."""
