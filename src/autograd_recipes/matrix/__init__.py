"""The torch matrix: every claim, recipe and notebook on other torch releases. Its data
(``matrix_data``), the runner in a release's environment (``matrix_runner``), the
environments made in turn (``matrix_envs``), and the versions page and the pages' lines
(``torch_matrix``, ``matrix_html``). The data and the runner import no Sphinx and run
beside any torch."""
