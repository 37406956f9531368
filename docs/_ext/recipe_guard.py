"""Run each recipe under the same conditions, with a time limit.

sphinx-gallery calls ``prepare_recipe`` (listed in ``reset_modules``) before and
after every recipe. Before: torch is imported, so the first recipe's run time
is not the cost of importing torch, and the seed is fixed. A recipe that runs
longer than ``recipe_timeout`` seconds is stopped with a ``TimeoutError`` naming
it, which fails the build like any other unexpected error. With
``RECIPE_EXECUTION_LOG`` set, each run is appended to that file (for ``nox -s bench``).
"""

import os
import signal
from pathlib import Path

_settings = {"timeout": 60}


def _on_timeout(fname):
    def handler(signum, frame):
        raise TimeoutError(
            f"recipe {fname} still running after {_settings['timeout']} s "
            "(recipe_timeout in conf.py); stopped"
        )

    return handler


def prepare_recipe(gallery_conf, fname, when):
    if fname is None:  # called once on entering the gallery directory
        return
    if when == "before":
        if os.environ.get("RECIPE_EXECUTION_LOG"):  # nox -s bench counts executions
            with open(os.environ["RECIPE_EXECUTION_LOG"], "a") as log:
                log.write(Path(fname).name + "\n")
        import torch

        torch.manual_seed(0)
        signal.signal(signal.SIGALRM, _on_timeout(Path(fname).name))
        signal.alarm(int(_settings["timeout"]))
    else:
        signal.alarm(0)


def _remember_timeout(app, config):
    _settings["timeout"] = config.recipe_timeout


def setup(app):
    app.add_config_value("recipe_timeout", 60, "env", types=(int,))
    app.connect("config-inited", _remember_timeout)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
