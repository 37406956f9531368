"""The claims: the ledger's data and checks (``claims_ledger``), the runner that runs them
in a process of their own with its command line (``claims_runner``), the runs under
conditions a claim does not vary (``ambient_conditions``, ``claim_scope``), and the pages
that show them (``claims``: the claims page; ``claim_links``: each "(checked)" sentence).
The ledger and the runner import no Sphinx and run beside any torch."""
