"""Broken recipes, claims, notebooks and references fail the build, each named.

As in sphinx-gallery's own "tinybuild" tests, one copy of the tiny site
(tests/tinysite) carries every fault that leaves the build running, each written
into a file of its own (planted recipes and notebooks) or into the tiny site's
own files, and one build of it is checked by many small assertions. The copy
lives in a folder whose path has a space, which the build must support. Faults
that end the build process (sys.exit, os._exit, the watchdog) need a build each;
they sit in the first recipe, so each of those builds stops within seconds.
"""

import fcntl
import json
import re
import textwrap
from importlib.metadata import version
from pathlib import Path

import background
import pytest
from background import snapshot
from conftest import JOBS, background_build, build_site, seeded_tiny
from tiny import NOTEBOOK, RECIPES, tiny_project

from autograd_recipes.claims import claims_ledger
from autograd_recipes.matrix import matrix_data, matrix_verify

PINNED = version("torch").split("+")[0]  # its recorded results: docs/matrix/torch-<PINNED>.json
# seconds, for the fault build: the planted endless recipe stops after this (wall time: generous,
# since the fault build runs beside other builds; the tiny site's sound recipes take a second)
RECIPE_TIMEOUT = 20
HANG_TIMEOUT = 3  # the hanging recipe's own limit (its comment): the builds need not wait out the wide one


def plant(path, old, new):
    source = path.read_text()
    assert old in source, f"{old!r} not in {path.name}"
    path.write_text(source.replace(old, new, 1))


def append(path, text):
    path.write_text(path.read_text() + "\n" + textwrap.dedent(text))


def line_of(path, text):
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def planted_claim(claim_id, claim, scope, code, timeout=None, article="inplace"):
    """A ledger entry planted by a test: recorded as holding, with a control that is never run."""
    return (
        f'\n[[claim]]\nid = "{claim_id}"\narticle = "{article}"\nsection = "planted"\nclaim = "{claim}"\n'
        f'scope = "one case: {scope}"\n'
        'control_case = "none: a planted fault, never run as a control by this build"\n'
        'verdict = "holds"\npage = "index"\ncontrol = [["planted", "planted"]]\n'
        'control_verdict = "does not hold"\n'
        + (f"timeout = {timeout}\n" if timeout is not None else "")
        + f'code = """\n{textwrap.dedent(code).lstrip()}"""\n'
    )


PLANTED_CLAIMS = "".join(
    [
        planted_claim(
            "planted-endless-loop",
            "A claim whose code never ends.",
            "a loop that never ends, planted to test the time limit",
            "while True:\n    pass\n",
            timeout=2,
        ),
        planted_claim(
            "planted-sys-exit",
            "A claim whose code calls sys.exit.",
            "a call of sys.exit, planted to test that it is caught",
            "import sys\nsys.exit(0)\n",
        ),
        planted_claim(
            "planted-os-exit",
            "A claim whose code ends its process.",
            "os._exit, planted to test that the process's end is named",
            "import os\nos._exit(0)\n",
        ),
        planted_claim(
            "planted-state-change",
            "A claim that leaves float64 as the default dtype.",
            "the default dtype changed, planted to test that it ends with the claim",
            'torch.set_default_dtype(torch.float64)\nverdict = "holds"\n',
        ),
    ]
)
WRITING_CLAIM = planted_claim(
    "planted-writes-a-file",
    "A claim that saves a tensor to a relative path.",
    "torch.save to a relative path, planted to test where claims run",
    'torch.save(torch.ones(1), "planted_claim.pt")\nverdict = "holds"\n',
)


def leaking(mark):
    """Code that changes torch, Python, numpy and logging in ways no guard lists, and starts a
    process marked ``mark``: planted in a claim and in a recipe, each run before a witness."""
    return f"""\
    import logging
    import subprocess
    import sys

    import numpy
    from torch.overrides import TorchFunctionMode

    torch._planted_library = torch.library.Library("aten", "IMPL")
    torch._planted_library.impl("neg", lambda self: self * 0, "CPU")
    torch.nn.functional.relu = torch.nn.functional.gelu
    torch.set_warn_always(True)
    torch.backends.mkldnn.enabled = False
    torch.optim.SGD.step = lambda self, closure=None: None
    torch.optim.Optimizer.zero_grad.__defaults__ = (False,)
    torch.autograd.backward = lambda *args, **kwargs: None
    torch.Tensor.backward = lambda self, *args, **kwargs: None


    class Planted(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {{}}))


    Planted().__enter__()
    torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
    torch.autograd.forward_ad.dual_level().__enter__()
    torch.set_flush_denormal(True)
    torch.backends.mkldnn.matmul.fp32_precision = "tf32"
    numpy.set_printoptions(precision=1)
    logging.disable(logging.CRITICAL)
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{mark}"])
    """


# run after it: prints each change of leaking() (and of the claim below) that it finds
WITNESS = """\
    import logging
    import os
    import warnings

    import numpy
    import torch.nn.functional as F

    seen = []
    if torch.neg(torch.tensor([2.0])).tolist() != [-2.0]:
        seen.append("torch.neg overridden through torch.library")
    if F.relu(torch.tensor([-1.0])).tolist() != [0.0]:
        seen.append("F.relu replaced")
    if torch.is_warn_always_enabled():
        seen.append("warn_always on")
    if not torch.backends.mkldnn.enabled:
        seen.append("mkldnn off")
    p = torch.nn.Parameter(torch.ones(2))
    p.grad = torch.ones(2)
    sgd = torch.optim.SGD([p], lr=0.5)
    sgd.step()
    if p.tolist() != [0.5, 0.5]:
        seen.append("SGD.step patched")
    sgd.zero_grad()
    if p.grad is not None:
        seen.append("zero_grad's default changed")
    if torch._C._is_torch_function_mode_enabled():
        seen.append("a TorchFunctionMode entered")
    if torch._C._autograd._top_saved_tensors_default_hooks(False) is not None:
        seen.append("saved_tensors_hooks entered")
    x = torch.ones(1, requires_grad=True)
    (x * 3).sum().backward()
    if x.grad is None or x.grad.item() != 3:
        seen.append("backward replaced")
    if torch.autograd.forward_ad._current_level != -1:
        seen.append("a forward-AD dual level entered")
    if torch.tensor([1e-39]).item() == 0:
        seen.append("denormals flushed")
    if torch.get_float32_matmul_precision() != "highest":  # raises where set through both APIs
        seen.append("matmul precision")
    if numpy.get_printoptions()["precision"] != 8:
        seen.append("numpy's print options")
    if logging.root.manager.disable:
        seen.append("logging disabled")
    if any(f[0] == "error" for f in warnings.filters):
        seen.append("warnings raised as errors")
    if "PLANTED_BY_A_CLAIM" in os.environ or torch.nn.modules.module._global_forward_hooks:
        seen.append("environment or module hook")
    print("left by the runs before:", ", ".join(seen) or "nothing")
    """
# run first (prepended to the ledger): what it changes and starts would otherwise reach the
# tiny site's claims, whose evidence test_leaked_settings_... compares with a clean build's,
# and the witness below; none of it is on a list the runner puts back (forked)
ORPHAN_MARK = "planted-by-a-claim-that-leaves-a-process"
HOOK_CLAIM = planted_claim(
    "planted-leaves-hooks",
    "A claim that leaves torch, the process and a child process changed.",
    "process-wide state changed and a process left running, planted to test that none of it outlives the claim",
    leaking(ORPHAN_MARK).rstrip(" ")  # its closing quotes' indent, which would double the next line's
    + """\
    import builtins
    import os
    import warnings

    os.environ["PLANTED_BY_A_CLAIM"] = "1"
    torch.nn.modules.module.register_module_forward_hook(lambda module, args, output: None)
    _print = builtins.print
    builtins.print = lambda *args, **kwargs: _print("planted:", *args, **kwargs)
    warnings.simplefilter("error")
    verdict = "holds"
    """,
)
WITNESS_CLAIM = planted_claim(
    "planted-sees-nothing-left",
    "A claim that finds torch and the process as a fresh process has them.",
    "what planted-leaves-hooks changes, looked for in the claim after it",
    WITNESS.rstrip(" ") + '    verdict = "does not hold" if seen else "holds"\n',
)
BIG_CLAIM = planted_claim(
    "planted-prints-too-much",
    "A claim whose evidence is one word of 300,000 letters.",
    "evidence over max_output_bytes, planted to test that it is cut",
    'print("z" * 300_000)\nverdict = "holds"\n',
)

BIG = 2_000_000  # bytes printed; conf.py's max_output_bytes is 100,000


def planted_notebook(title, code, settings=""):
    """An orphan notebook page of one code cell; ``settings``: its ``mystnb`` front matter."""
    mystnb = f"mystnb:\n{textwrap.indent(settings, '  ')}" if settings else ""
    return (
        "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n  display_name: Python 3\n"
        f"{mystnb}orphan: true\n---\n\n# {title}\n\n```{{code-cell}} ipython3\n{code}```\n"
    )


OUTPUT_NOTEBOOK = planted_notebook(
    "A planted notebook that prints too much", f'for _ in range({BIG // 80}):\n    print("y" * 79)\n'
)
# (many short lines: myst-nb's stream merging takes time quadratic in one line's length)

HANGING_NOTEBOOK = planted_notebook(
    "A planted notebook that hangs", "import time\n\ntime.sleep(600)\n", "execution_timeout: 5\n"
)


def recipe(title, body):
    """A recipe's text: its docstring, the kit's import the site's recipes have, then ``body``."""
    return (
        f'"""\n{title}\n{"=" * len(title)}\n\nA recipe planted by the fault build.\n"""\n\n'
        + EXPECT_ERROR
        + textwrap.dedent(body)
    )


# the kit's import every recipe has, hidden as the site's recipes hide it
EXPECT_ERROR = (
    "import torch\n\n# sphinx_gallery_start_ignore\nfrom autograd_recipes.kit import expect_error\n\n"
    "# sphinx_gallery_end_ignore\n"
)

# Recipes planted beside the tiny site's two: the first leaves torch settings behind (and
# runs before them, which must still print what they print alone); the others fail, or
# leave state or a thread behind, each in another way.
PLANTED_RECIPES = {
    "plot_00_leaves_hooks.py": """\
        import builtins
        import os

        os.environ["SOURCE_DATE_EPOCH"] = "0"
        torch.nn.modules.module.register_module_forward_hook(lambda module, args, output: None)
        _print = builtins.print
        builtins.print = lambda *args, **kwargs: _print("planted:", *args, **kwargs)
        """,
    "plot_00_leaves_settings.py": """\
        torch.set_default_dtype(torch.float64)
        torch.set_grad_enabled(False)
        """,
    "plot_03_anomaly_thread_output.py": """\
        import os
        import threading

        torch.autograd.set_detect_anomaly(True)
        threading.Thread(target=threading.Event().wait, name="planted-endless").start()
        print("working directory:", os.getcwd())

        # %%
        # Far too much output
        print("x" * BIG)
        """.replace("BIG", str(BIG)),
    "plot_04_stops_raising.py": """\
        x = torch.ones(2, requires_grad=True)
        with expect_error(RuntimeError, "a leaf Variable that requires grad"):
            x.detach().add_(1)
        """,
    "plot_05_hangs.py": f"""\
        import time

        # sphinx_gallery_recipe_timeout = {HANG_TIMEOUT}

        time.sleep(600)
        """,
    "plot_06_other_message.py": """\
        # sphinx_gallery_recipe_timeout = "soon"
        x = torch.ones(2, requires_grad=True)
        with expect_error(RuntimeError, "a view of a leaf tensor"):
            x[:1].add_(1)
        """,
    "plot_07_raises.py": """\
        raise ValueError("planted by the fault build")
        """,
    "plot_08_syntax_error.py": """\
        total = torch.zeros(1
        """,
    "plot_10_writes_a_file.py": """\
        torch.save(torch.ones(1), "planted_model.pt")
        """,
    "plot_09_off_site.py": """\
        class Badge:
            def _repr_html_(self):
                return '<img src="https://example.org/planted.png"><script src="//example.org/planted.js"></script>'


        Badge()
        """,
}
# --- recipes isolated by construction (execution/recipe_runs): none of what this one changes
# or starts is on the guard's list, and the witness after it must find none of it
RECIPE_ORPHAN_MARK = "planted-by-a-recipe-that-leaves-a-process"
PLANTED_RECIPES["plot_00_leaves_more.py"] = leaking(RECIPE_ORPHAN_MARK)
PLANTED_RECIPES["plot_12_sees_nothing_left.py"] = WITNESS


OFF_SITE_NOTEBOOK = planted_notebook(
    "A planted notebook that loads from another site",
    "from IPython.display import HTML\n\nHTML('<script src=\"https://example.org/planted-cell.js\"></script>')\n",
)
WRITING_NOTEBOOK = planted_notebook(
    "A planted notebook that writes files",
    'import torch\nfrom autograd_recipes.project import ROOT\n\ntorch.save(torch.ones(1), "planted_cell.pt")\n'
    '(ROOT / "docs" / "planted_leak.txt").write_text("written by a cell")\n',
)
WARNING_NOTEBOOK = planted_notebook(
    "A planted notebook that shows a warning", 'import warnings\n\nwarnings.warn("planted warning")\n'
)
# it fails beside the gallery (notebook_prerun), so myst-nb runs it again itself: its relative
# write must not land in the checkout there either
ERROR_NOTEBOOK = planted_notebook(
    "A planted notebook that raises",
    'open("planted_fallback.pt", "w").close()\na = 1\nraise KeyError("planted by the test")\n',
)


def _faulty_project(folder):
    project = tiny_project(folder / "path with space" / "project")
    recipes, docs = project / "recipes", project / "docs"
    for name, body in PLANTED_RECIPES.items():
        (recipes / name).write_text(recipe(name.removesuffix(".py"), body))
    # claims: a flipped verdict, and code that loops, exits, kills its process, changes torch
    ledger = docs / "claims.toml"
    text = ledger.read_text()
    start = text.index('id = "tiny-no-grad-result"')
    text = text[:start] + text[start:].replace('verdict = "holds"', 'verdict = "does not hold"', 1)
    # conditions: the leaf claim needs grad mode on, a recipe sentence links it without saying
    # so, and its ambient record has a flip under autocast that nothing explains
    text = CONDITIONS + text.replace(
        'id = "tiny-leaf-inplace-raises"\n',
        'id = "tiny-leaf-inplace-raises"\nconditions = ["grad-mode-on"]\n',
    )
    ledger.write_text(HOOK_CLAIM + text + PLANTED_CLAIMS + WRITING_CLAIM + BIG_CLAIM + WITNESS_CLAIM)
    plant(recipes / "plot_01_leaf_update.py", "# The update raises.", UNCONDITIONED_SENTENCE)
    leaf = next(c for c in claims_ledger.load(ledger) if c["id"] == "tiny-leaf-inplace-raises")
    (docs / "conditions").mkdir()
    (docs / "conditions" / f"torch-{PINNED}.json").write_text(
        json.dumps({"claims": {leaf["id"]: {"code": claims_ledger.code_digest(leaf), "runs": FLIPPED_RUNS}}})
    )
    # the matrix: a recorded verdict of the pinned release that the build's live run contradicts
    pinned = docs / "matrix" / f"torch-{PINNED}.json"
    data = json.loads(pinned.read_text(encoding="utf-8"))
    data["claims"]["tiny-leaf-inplace-raises"]["verdict"] = "does not hold"
    pinned.write_text(json.dumps(data), encoding="utf-8")
    _plant_record_faults(project)  # the matrix records as evidence: see below
    # notebooks: a cell that stops raising, an unexpected error, a cell that hangs, one that prints too much
    plant(docs / "tiny_notebook.md", "    y.sum().backward()", "    y.sum()")
    (docs / "planted_error.md").write_text(ERROR_NOTEBOOK)
    (docs / "planted_hang.md").write_text(HANGING_NOTEBOOK)
    (docs / "planted_output.md").write_text(OUTPUT_NOTEBOOK)
    (docs / "planted_off_site.md").write_text(OFF_SITE_NOTEBOOK)
    (docs / "planted_writes.md").write_text(WRITING_NOTEBOOK)
    (docs / "planted_warning.md").write_text(WARNING_NOTEBOOK)
    # a reference to a page that does not exist
    plant(docs / "index.rst", ":doc:`tiny_notebook`", ":doc:`tiny_notebok`")
    _plant_contributor_mistakes(project)  # (at the end of this file)
    return background_build(project, "--lang", "en", "-D", f"recipe_timeout={RECIPE_TIMEOUT}", timeout=600)


# --- the matrix's records as evidence (matrix_verify): hand edits of the pinned record that
# the build's own run contradicts, and a record of a release no run made ------------------
RECORDED_RECIPE = "plot_11_recorded_message"
RECORDED_NOTEBOOK = "planted_recorded"
LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
LEAF_CASE = """\
    x = torch.ones(2, requires_grad=True)
    with expect_error(RuntimeError, "a leaf Variable that requires grad"):
        x.add_(1)
    """
INVENTED = "2.16.0"  # no torch release nox -s matrix runs


def _recorded(path, kind, message):
    """The pinned record's entry of a planted page whose one expected error is ``message``."""
    digest = matrix_data.recipe_hash if kind == "recipes" else matrix_data.notebook_hash
    error = {"kind": "RuntimeError", "text": "a leaf Variable that requires grad", "outcome": "same"}
    error.update(type="RuntimeError", message=message, ordinal=0)
    error["line"] = matrix_data.block_lines(kind, path)["expected"][0]
    return {"hash": digest(path), "expected_errors": [error], "asserts": [], "errors": []}


def _plant_record_faults(project):
    planted = project / "recipes" / f"{RECORDED_RECIPE}.py"
    planted.write_text(recipe(RECORDED_RECIPE, "# %%\n" + textwrap.dedent(LEAF_CASE)))
    notebook = project / "docs" / f"{RECORDED_NOTEBOOK}.md"
    notebook.write_text(
        planted_notebook(
            "A planted notebook the pinned record misquotes",
            "import torch\nfrom autograd_recipes.kit import expect_error\n\n" + textwrap.dedent(LEAF_CASE),
        )
    )
    pinned = project / "docs" / "matrix" / f"torch-{PINNED}.json"
    data = json.loads(pinned.read_text(encoding="utf-8"))
    edited = LEAF_MESSAGE.replace("in-place operation.", "in-place operation (edited by hand).")
    data["recipes"][RECORDED_RECIPE] = _recorded(planted, "recipes", edited)
    misquoted = LEAF_MESSAGE.replace("leaf Variable", "leaf Tensor")
    data["notebooks"][RECORDED_NOTEBOOK] = _recorded(notebook, "notebooks", misquoted)
    pinned.write_text(json.dumps(data, indent=1), encoding="utf-8")  # one key a line, as nox -s matrix writes
    invented = dict(data, release=INVENTED, torch=f"{INVENTED}+cpu")
    (pinned.parent / f"torch-{INVENTED}.json").write_text(json.dumps(invented, indent=1), encoding="utf-8")


CONDITIONS = """
[condition.grad-mode-on]
label = "grad mode on"
phrases = ["grad mode on", "grad mode is on"]
covers = ["no_grad", "inference_mode", "grad_disabled"]
"""
UNCONDITIONED_SENTENCE = "# The update raises :claim:`tiny-leaf-inplace-raises`."
FLIPPED_RUNS = {
    "no_grad": {"verdict": "does not hold", "applies": True, "evidence": "grad mode off"},
    "autocast": {"verdict": "does not hold", "applies": True, "evidence": "planted flip"},
    "fused": {"verdict": None, "applies": False},
}


def _keep_outputs(result):
    """The fault build's outputs, copied for the tests to read while the second build runs."""
    (result.project.parent / "fault-build.log").write_text(result.output)  # for reading when a test fails
    result.extra["outputs"] = snapshot(result.project, result.project.parent.parent / "outputs" / "project")


def _same_again(folder, first):
    return background_build(
        first.project, "--lang", "en", "-D", f"recipe_timeout={RECIPE_TIMEOUT}", timeout=600
    )


# first: it and its second run are the longest chain of builds (each waits out the planted
# hang), so it starts with the site rather than after a slot frees
JOBS.register("faults", "fault_build", _faulty_project, then=_keep_outputs, first=True)
JOBS.register("faults again", "fault_rebuild", _same_again, after=["faults"])


@pytest.fixture(scope="module")
def fault_build():
    """(project, exit code, output, seconds) of the build carrying every fault."""
    result = JOBS.result("faults")
    return result.project, result.code, result.output, result.seconds


@pytest.fixture(scope="module")
def fault_outputs(fault_build):
    """A copy of the fault build's project as that build left it (build/, docs/recipes/)."""
    return JOBS.result("faults").extra["outputs"]


@pytest.fixture(scope="module")
def fault_rebuild():
    """A second build of the fault build's checkout, unchanged: (exit code, output)."""
    result = JOBS.result("faults again")
    return result.code, result.output


def test_fault_build_fails_and_ends_despite_the_endless_thread(fault_build):
    project, code, output, seconds = fault_build
    assert code != 0, output
    # a thread left running would keep the process alive until the job's time limit kills it
    assert code > 0, f"the build did not end on its own (exit {code} after {seconds:.0f} s): {output[-3000:]}"


def test_a_checkout_path_with_a_space_builds(fault_build):
    project, code, output, seconds = fault_build
    assert " " in str(project)
    assert "spaces" not in output, output


EXPECTED = {
    "recorded pinned verdict that the live run contradicts": [
        f"claim tiny-leaf-inplace-raises on the pinned torch {PINNED}: recorded 'does not hold' in "
        f"torch-{PINNED}.json, but the live run gives 'holds'"
    ],
    "snippet that stops failing": [
        "plot_04_stops_raising.py unexpectedly failed",
        "expected RuntimeError with 'a leaf Variable that requires grad'; nothing was raised",
    ],
    "snippet failing with another message": [
        "plot_06_other_message.py unexpectedly failed",
        "expected RuntimeError with 'a view of a leaf tensor', got RuntimeError",
    ],
    "unexpected raise": [
        "plot_07_raises.py unexpectedly failed",
        "ValueError: planted by the fault build",
    ],
    "hanging recipe": [
        "plot_05_hangs.py unexpectedly failed",
        f"TimeoutError: recipe plot_05_hangs.py still running after {HANG_TIMEOUT} s "
        "(recipe_timeout in plot_05_hangs.py itself)",
    ],
    "recipe leaves dtype and grad mode changed": [
        "WARNING: recipes/plot_00_leaves_settings.py: a recipe "
        "must leave the process and the checkout as it found them: it changed global state (default dtype: "
        "torch.float32 -> torch.float64; grad mode: True -> False); it was put back"
    ],
    "recipe leaves the environment, a module hook and a patched print": [
        "WARNING: recipes/plot_00_leaves_hooks.py: a recipe must leave the process and the checkout as "
        "it found them: it changed global state (environment: SOURCE_DATE_EPOCH changed; global module "
        "hooks: _global_forward_hooks: 0 -> 1; patched attributes: builtins.print replaced); it was put back"
    ],
    "recipe leaves anomaly mode changed": [
        "WARNING: recipes/plot_03_anomaly_thread_output.py: a recipe must leave "
        "the process and the checkout as it found them: it changed global state (anomaly detection: "
        "(False, True) -> (True, True)); it was put back"
    ],
    "recipe leaves a thread running": [
        "WARNING: recipes/plot_03_anomaly_thread_output.py: a recipe must leave "
        "the process and the checkout as it found them: it left 1 thread(s) running (planted-endless)"
    ],
    "claim whose code never ends": [
        "claim planted-endless-loop no longer matches the ledger",
        "TimeoutError: claim planted-endless-loop still running after 2 s",
    ],
    "claim that calls sys.exit": [
        "claim planted-sys-exit no longer matches the ledger",
        "claim planted-sys-exit called sys.exit(0)",
    ],
    "claim that ends its process": [
        "claim planted-os-exit no longer matches the ledger",
        "claim planted-os-exit: its process ended (exit 0) while the claim ran",
    ],
    "notebook cell that stops raising": [
        "tiny_notebook.md: WARNING: Executing notebook failed: CellExecutionError",
        "nothing was raised",
    ],
    "unexpected error in a notebook": [
        "planted_error.md: WARNING: Executing notebook failed: CellExecutionError",
        "KeyError: 'planted by the test'",
    ],
    "hanging notebook cell": [
        "planted_hang.md: WARNING: Executing notebook failed: CellTimeoutError",
        "timed out",
    ],
}


def located(project):
    """Messages that name a line found in the faulty copy."""
    recipe, notebook = (
        project / "recipes/plot_03_anomaly_thread_output.py",
        project / "docs/planted_output.md",
    )
    big_print = line_of(recipe, f'print("x" * {BIG})')
    other_message = project / "recipes/plot_06_other_message.py"
    ledger, big_claim = project / "docs/claims.toml", 'id = "planted-prints-too-much"'
    leaf_recipe, leaf_claim = project / RECIPES[0], 'id = "tiny-leaf-inplace-raises"'
    return {
        "sentence that does not name its claim's condition": [
            f"{leaf_recipe}:{line_of(leaf_recipe, UNCONDITIONED_SENTENCE)}: WARNING: the sentence linking claim "
            "tiny-leaf-inplace-raises does not name its condition 'grad-mode-on' (language en): say one of "
            "“grad mode on” / “grad mode is on”"
        ],
        "flip under an ambient condition that nothing explains": [
            f"{ledger}:{line_of(ledger, leaf_claim)}: WARNING: claim "
            "tiny-leaf-inplace-raises flips under an ambient condition: CPU autocast to bfloat16: 'does not "
            "hold', not 'holds'; name a condition that covers 'autocast'"
        ],
        "recipe time limit that is not a number of seconds": [
            f"{other_message}:{line_of(other_message, 'sphinx_gallery_recipe_timeout')}: WARNING: "
            "sphinx_gallery_recipe_timeout must be a whole number of seconds, not 'soon'; conf.py's is used"
        ],
        "recipe output over the cap": [
            f"{recipe}:{big_print}: WARNING: this code block printed "
            f"{BIG:,} bytes, more than max_output_bytes (100,000, conf.py): its output is cut on the page"
        ],
        "notebook cell output over the cap": [
            # the kernel's stream can carry a byte more than the cell printed: count from 2 MB
            f"{notebook}:{line_of(notebook, '{code-cell}')}: WARNING: this cell printed {BIG // 1000:,},"
        ],
        "claim evidence over the cap": [
            f"{ledger}:{line_of(ledger, big_claim)}: WARNING: claim "
            "planted-prints-too-much printed 300,000 bytes, more than max_output_bytes (100,000, conf.py)"
        ],
        "notebook without a cached run": [
            f"{project}/docs/tiny_notebook.md: WARNING: no executed copy of this notebook in jupyter-cache "
            "(did it fail to run? nb_execution_mode must be 'cache'): the page gets no notebook download"
        ],
    }


def test_code_the_build_runs_leaves_the_checkout_as_it_was(fault_build):
    """A recipe writes beside itself (removed, named); a notebook cell and a claim write to
    relative paths (their working directories are under build/); a cell that writes into
    the checkout by its full path fails the build, naming the file."""
    project, code, output, seconds = fault_build
    assert (
        "recipes/plot_10_writes_a_file.py: a recipe must leave the process and the checkout as it found "
        "them: it wrote into recipes/, where sphinx-gallery runs it: planted_model.pt (new; removed)"
    ) in output, output[-5000:]
    assert (
        "autograd_recipes.publish.build: the build changed the checkout: docs/planted_leak.txt (new). "
        "Code that a page runs must write under a temporary folder"
    ) in output, output[-5000:]
    left = sorted(
        p.relative_to(project).as_posix() for p in project.rglob("planted_*.pt") if "build" not in p.parts
    )
    assert left == [], f"files the build's code wrote are left in the checkout: {left}"
    assert (project / "docs/planted_leak.txt").is_file()  # named, not removed: it may be someone's file


@pytest.mark.parametrize(
    "fault",
    [
        "recipe time limit that is not a number of seconds",
        "recipe output over the cap",
        "notebook cell output over the cap",
        "claim evidence over the cap",
        "notebook without a cached run",
        "sentence that does not name its claim's condition",
        "flip under an ambient condition that nothing explains",
    ],
)
def test_located_fault_is_reported_by_file_and_line(fault_build, fault):
    project, code, output, seconds = fault_build
    for text in located(project)[fault]:
        assert text in output, f"{fault}: {text!r} not in the build output:\n{output[-5000:]}"
    if fault.endswith("over the cap"):
        assert re.search(
            r"bytes, more than max_output_bytes \(100,000, conf\.py\): its output is cut on the page", output
        )


@pytest.mark.parametrize(
    "page", ["recipes/plot_03_anomaly_thread_output.html", "planted_output.html", "claims.html"]
)
def test_output_over_the_cap_is_cut_on_the_page(fault_outputs, page):
    html = (fault_outputs / "build/html/en" / page).read_text(encoding="utf-8")
    assert len(html.encode()) < 250_000
    assert "bytes printed, max_output_bytes is 100,000]" in html


def test_a_recipes_own_time_limit_stays_off_its_page(fault_build, fault_outputs):
    """The comment that sets it is the build's, not the reader's code; the control is the
    recipe's source, which has it."""
    source = (fault_build[0] / "recipes/plot_05_hangs.py").read_text(encoding="utf-8")
    html = (fault_outputs / "build/html/en/recipes/plot_05_hangs.html").read_text(encoding="utf-8")
    assert "sphinx_gallery_recipe_timeout" in source
    assert "sleep" in html and "sphinx_gallery_recipe_timeout" not in html


def test_notebook_without_a_cached_run_offers_no_download(fault_outputs):
    project = fault_outputs
    html = (project / "build/html/en/tiny_notebook.html").read_text(encoding="utf-8")
    assert ".ipynb" not in html
    assert not (project / "build/notebooks/tiny_notebook.ipynb").exists()


@pytest.mark.parametrize("fault", EXPECTED)
def test_fault_is_reported_by_name(fault_build, fault):
    project, code, output, seconds = fault_build
    for text in EXPECTED[fault]:
        assert text in output, f"{fault}: {text!r} not in the build output:\n{output[-5000:]}"


def test_hand_edits_of_the_pinned_record_and_an_invented_release_fail_the_build(
    fault_build, fault_outputs, fault_rebuild
):
    """The pinned release's record against the build's own run: a recipe's message and a
    notebook's entry edited by hand are named with the record, the entry and the words that
    differ; a record of a release nox -s matrix does not run is named and left off the pages."""
    project, code, output, seconds = fault_build
    record = project / "docs" / "matrix" / f"torch-{PINNED}.json"
    recipe_line = matrix_data.block_lines("recipes", project / "recipes" / f"{RECORDED_RECIPE}.py")[
        "expected"
    ][0]
    notebook_line = matrix_data.block_lines("notebooks", project / "docs" / f"{RECORDED_NOTEBOOK}.md")[
        "expected"
    ][0]
    invented = record.parent / f"torch-{INVENTED}.json"
    expected = [
        f"{record}:{matrix_verify.entry_line(record, 'recipes', RECORDED_RECIPE)}: WARNING: recipe "
        f"{RECORDED_RECIPE} on the pinned torch {PINNED}: the expected error at line {recipe_line} reads "
        f"'operation (edited by hand).' in {record.name} where the live run has 'operation.'",
        f"{record}:{matrix_verify.entry_line(record, 'notebooks', RECORDED_NOTEBOOK)}: WARNING: notebook "
        f"{RECORDED_NOTEBOOK} on the pinned torch {PINNED}: the expected error at line {notebook_line} reads "
        f"'Tensor' in {record.name} where the live run has 'Variable'",
        f"{invented}:{matrix_verify.entry_line(invented)}: WARNING: torch-{INVENTED}.json is not a record of a "
        f"matrix run: torch {INVENTED} is not a release nox -s matrix runs (matrix_data.RELEASES: 2.0.1 … "
        "2.15.0), so no run made this record",
    ]
    for text in expected:
        assert text in output, f"{text!r} not in the build output:\n{output[-5000:]}"
        assert text in fault_rebuild[1], f"{text!r} not in the second build's output"
    versions = (fault_outputs / "build/html/en/versions.html").read_text(encoding="utf-8")
    assert f">{PINNED}</th>" in versions and f">{INVENTED}</th>" not in versions and INVENTED not in versions


def test_syntax_error_in_a_recipe_names_file_and_line(fault_build):
    project, code, output, seconds = fault_build
    assert "plot_08_syntax_error.py unexpectedly failed" in output
    line = line_of(project / "recipes/plot_08_syntax_error.py", "total = torch.zeros(1")
    assert re.search(rf'File ".*plot_08_syntax_error\.py", line {line}\n.*\n.*\n\s*SyntaxError: ', output), (
        output
    )


def test_flipped_verdict_names_the_claim_and_its_line(fault_build):
    project, code, output, seconds = fault_build
    line = line_of(project / "docs/claims.toml", 'id = "tiny-no-grad-result"')
    assert re.search(
        rf"claims\.toml:{line}: WARNING: claim tiny-no-grad-result no longer matches the ledger "
        r"on torch [\w.+]+: recorded 'does not hold', observed 'holds' \(page tiny_notebook\)",
        output,
    ), output


def test_broken_cross_reference_names_file_and_line(fault_build):
    project, code, output, seconds = fault_build
    line = line_of(project / "docs/index.rst", "tiny_notebok")
    assert f"index.rst:{line}: WARNING: unknown document: 'tiny_notebok'" in output, output


def test_printed_build_path_is_refused_naming_the_page(fault_build):
    project, code, output, seconds = fault_build
    page = project / "build/html/en/recipes/plot_03_anomaly_thread_output.html"
    assert re.search(
        rf"autograd_recipes\.publish\.build: {re.escape(str(page))}:\d+: shows the build machine's path",
        output,
    ), output


def test_a_notebook_warning_naming_the_kernel_file_is_refused_naming_the_page(fault_build):
    """A warning raised in a cell is shown with the file IPython compiled the cell into
    (/tmp/ipykernel_<pid>/<hash>.py:3), a path that changes with every run."""
    project, code, output, seconds = fault_build
    page = project / "build/html/en/planted_warning.html"
    found = re.search(
        rf"autograd_recipes\.publish\.build: {re.escape(str(page))}:\d+: shows the notebook kernel's "
        r"temporary file \S*ipykernel_\d+/\d+\.py:3 \(a warning raised in a cell names it",
        output,
    )
    assert found, output[-5000:]


@pytest.mark.parametrize(
    "page, what, url, source",
    [
        (
            "recipes/plot_09_off_site.html",
            "<img>",
            "https://example.org/planted.png",
            "recipes/plot_09_off_site.py",
        ),
        (
            "recipes/plot_09_off_site.html",
            "<script>",
            "//example.org/planted.js",
            "recipes/plot_09_off_site.py",
        ),
        (
            "planted_off_site.html",
            "<script>",
            "https://example.org/planted-cell.js",
            "docs/planted_off_site.md",
        ),
    ],
)
def test_a_page_loading_from_another_site_is_refused_naming_its_source(fault_build, page, what, url, source):
    project, code, output, seconds = fault_build
    line = line_of(project / source, url)
    assert (
        f"build/html/en/{page}: {what} loads {url} from another site (made from {source}:{line}); "
        "a page must load nothing from another site"
    ) in output, output[-5000:]


def test_leaked_settings_do_not_reach_later_recipes_or_claims(fault_outputs, tiny_site):
    project = fault_outputs
    # plot_00_leaves_settings left float64 and no grad mode behind, plot_00_leaves_hooks a
    # print that prefixes every line and SOURCE_DATE_EPOCH=0: the tiny site's recipes, run after
    # them, printed what they print in a clean build (under any of these, plot_01's would differ)
    outputs = re.compile(r'<div class="sphx-glr-script-out.*?<pre>(.*?)</pre>', re.S)
    for recipe in RECIPES:
        page = f"build/html/en/recipes/{Path(recipe).stem}.html"
        clean = outputs.findall((tiny_site[0] / page).read_text(encoding="utf-8"))
        faulty = (project / page).read_text(encoding="utf-8")
        assert clean and outputs.findall(faulty) == clean, page
        assert "1970" not in faulty, f"{page}: the footer dates the page from a recipe's SOURCE_DATE_EPOCH"
    # the claims ran in a clean process: their evidence is the clean build's, claim by claim
    evidence = re.compile(r'id="claim-([\w-]+)">.*?<pre[^>]*>(.*?)</pre>', re.S)
    clean = dict(evidence.findall((tiny_site[0] / "build/html/en/claims.html").read_text(encoding="utf-8")))
    faulty = dict(evidence.findall((project / "build/html/en/claims.html").read_text(encoding="utf-8")))
    assert len(clean) == 3
    for claim_id in clean:
        assert faulty[claim_id] == clean[claim_id], claim_id


def test_faulty_runs_are_not_cached(fault_outputs):
    project = fault_outputs
    assert not list((project / "build/claims").glob("*.json")), "results with errors were cached"
    gallery = project / "docs/recipes"
    # the recipes that left something behind lose their cache entry and run again next time
    assert not (gallery / "plot_00_leaves_settings.py.md5").exists()
    assert not (gallery / "plot_00_leaves_hooks.py.md5").exists()
    assert not (gallery / "plot_03_anomaly_thread_output.py.md5").exists()
    assert (gallery / "plot_01_leaf_update.py.md5").exists()  # the control: a sound recipe's entry is kept


# --- faults that end the build process: one small build each ------------------------

RECIPE = RECIPES[0]  # the tiny site's first recipe: a build that stops there stops within seconds
# each ends the recipe's own process (execution/recipe_runs), not the build's: the build goes
# on, and fails with the recipe among sphinx-gallery's failing examples
EXITS = {
    "sys.exit(0)": f"{RECIPE}:{{line}}: sys.exit(0) ended the run of recipe {RECIPE}; a page's code must not exit",
    'sys.exit("planted message")': f"{RECIPE}:{{line}}: sys.exit('planted message') ended the run of recipe "
    f"{RECIPE}; a page's code must not exit",
    "os._exit(0)": f"the process of recipe {RECIPE} ended (exit 0) while it ran",
}


def _exiting(call):
    def prepare(folder, tiny):
        project = seeded_tiny(folder / "project", tiny.project)  # only the planted recipe runs
        recipe = project / RECIPE
        plant(recipe, "import torch\n", f"import torch\nimport os, sys\n{call}\n")
        return background_build(project, "--lang", "en")

    return prepare


for _call in EXITS:
    JOBS.register(f"exit {_call}", "exit_builds", _exiting(_call), after=["tiny"])


@pytest.fixture(scope="module")
def exit_builds():
    return {call: JOBS.result(f"exit {call}") for call in EXITS}


@pytest.mark.parametrize("call", EXITS)
def test_recipe_that_exits_fails_the_build_naming_it(exit_builds, call):
    result = exit_builds[call]
    recipe = result.project / RECIPE
    assert result.code != 0, result.output
    assert EXITS[call].format(line=line_of(recipe, call)) in result.output, result.output
    assert f"{RECIPE} failed leaving traceback" in result.output, result.output
    assert "autograd_recipes.publish.build: the en build failed (exit 2)" in result.output


WATCHDOG_RECIPE_TIMEOUT = 10  # long enough for the recipe to block the alarm first, under load


def _hanging(folder, tiny):
    project = seeded_tiny(folder / "project", tiny.project)
    plant(
        project / RECIPE,
        "import torch\n",
        "import torch\nimport signal, time\n\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})  # like a long native call\n"
        "time.sleep(600)\n",
    )
    return background_build(
        project, "--lang", "en", "-D", f"recipe_timeout={WATCHDOG_RECIPE_TIMEOUT}", timeout=300
    )


JOBS.register("watchdog", "watchdog_build", _hanging, after=["tiny"], waits=True)  # 20 s of its 30 asleep


@pytest.fixture(scope="module")
def watchdog_build():
    return JOBS.result("watchdog")


def test_recipe_that_ignores_its_timeout_is_ended_by_the_watchdog(watchdog_build):
    """The watchdog ends the recipe's process (faulthandler's dump, exit 1), not its time
    limit's TimeoutError; the build goes on and fails naming the recipe."""
    code, output = watchdog_build.code, watchdog_build.output
    assert code == 2, output
    from autograd_recipes.execution.recipe_guard import WATCHDOG_GRACE

    assert f"Timeout (0:00:{WATCHDOG_RECIPE_TIMEOUT + WATCHDOG_GRACE})!" in output, (
        output
    )  # faulthandler's dump
    assert f"the process of recipe {RECIPE} ended (exit 1) while it ran" in output, output
    assert "still running after" not in output, "ended by its time limit, not the watchdog"


def _dying_kernel(folder, tiny):
    # seeded: the claims come from the tiny build's cache
    project = seeded_tiny(folder / "project", tiny.project)
    plant(
        project / NOTEBOOK,
        "\n## Under no_grad",
        "\n```{code-cell} ipython3\nimport os; os._exit(1)\n```\n\n## Under no_grad",
    )
    return background_build(project, "--lang", "en", "-D", "plot_gallery=0")


JOBS.register("dead kernel", "dead_kernel_build", _dying_kernel, after=["tiny"])


@pytest.fixture(scope="module")
def dead_kernel_build():
    return JOBS.result("dead kernel")


def test_dead_notebook_kernel_fails_the_build_naming_the_cell(dead_kernel_build):
    code, output = dead_kernel_build.code, dead_kernel_build.output
    notebook = dead_kernel_build.project / NOTEBOOK
    assert code != 0
    assert "DeadKernelError: Kernel died" in output
    cell = line_of(notebook, "import os; os._exit(1)") - 1  # its {code-cell} line
    assert (
        f"autograd_recipes.publish.build: the en build stopped while running notebook cell "
        f"{NOTEBOOK}:{cell} (import os; os._exit(1))"
    ) in output, output


def test_second_build_in_the_same_checkout_is_refused(tmp_path):
    project = tiny_project(tmp_path / "project")
    lock_path = project / "build" / ".lock"
    lock_path.parent.mkdir(parents=True)
    with open(lock_path, "w") as lock:
        lock.write("pid 4242, started 2026-11-30T12:00:00")
        lock.flush()
        fcntl.flock(lock, fcntl.LOCK_EX)
        code, output = build_site(project, "--lang", "en", timeout=60)
    assert code == 1
    assert (
        "autograd_recipes.publish.build: another build is running in this checkout (pid 4242, started "
        "2026-11-30T12:00:00); wait for it to end"
    ) in output, output
    assert not (project / "build" / "html").exists()


def test_incomplete_site_is_reported_page_by_page(tiny_site, tmp_path):
    import shutil

    html = tmp_path / "project" / "build" / "html"
    shutil.copytree(tiny_site[0], html.parent.parent)
    script = "from autograd_recipes.publish import build; print(build.missing_pages(build.PROJECT.root / 'build/html', build.PROJECT.languages))"
    assert _in(html.parent.parent, script) == "[]"
    (html / "ko/recipes/plot_02_clone_first.html").unlink()
    (html / "en/claims.html").write_text("")
    assert _in(html.parent.parent, script) == str(
        [
            f"{html}/en/claims.html: missing or empty, although its source exists",
            f"{html}/ko/recipes/plot_02_clone_first.html: missing or empty, although its source exists",
        ]
    )


def _in(project, script):
    """What ``script`` prints, run in ``project`` (whose conf.py the package reads there)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", script], cwd=project, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_truncated_claims_cache_is_a_miss(tmp_path):
    from autograd_recipes.claims import claims

    cache = tmp_path / "results.json"
    claims.write_cache(cache, {"a": ["holds", "evidence"]})
    assert claims.read_cache(cache) == {"a": ["holds", "evidence"]}
    cache.write_text(cache.read_text()[:10])  # a kill mid-write, before writes were atomic
    assert claims.read_cache(cache) is None
    assert not list(tmp_path.glob("*.tmp")), "the temporary file was left behind"


CONTROL_CLAIM = PLANTED_CLAIMS[PLANTED_CLAIMS.index('[[claim]]\nid = "planted-state-change"') :].replace(
    "torch.set_default_dtype(torch.float64)\n", 'print("nothing changed")\n'
)


def _runner_alone(folder):
    """The claims runner alone, without a build: the planted claims, a control claim, and
    a claim that changes the process and leaves a process running, then its witness."""
    from autograd_recipes.claims import claims_runner

    ledgers = {
        "planted": PLANTED_CLAIMS.replace("timeout = 2", "timeout = 1"),
        "control": CONTROL_CLAIM,
        "isolation": HOOK_CLAIM + WITNESS_CLAIM,
    }
    for name, text in ledgers.items():
        (folder / f"{name}.toml").write_text(text)

    def work():
        results = {name: claims_runner.run_all(folder / f"{name}.toml", timeout=5) for name in ledgers}
        return results, _processes_marked(ORPHAN_MARK)

    return background.Task(work)


def _processes_marked(mark):
    """The command lines of the processes running with ``mark`` among their arguments."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:  # ended meanwhile
            continue
        if mark.encode() in args:
            found.append(b" ".join(args).decode(errors="replace"))
    return found


JOBS.register("claims runner alone", "runner_alone", _runner_alone)


runner_alone = JOBS.fixture("claims runner alone")


def test_running_claims_in_their_own_process_survives_exits(runner_alone):
    """The runner alone, without a build: each fault is the claim's error, and a sound
    claim after them holds (the control)."""
    results, _ = runner_alone
    assert list(results["planted"]) == [
        "planted-endless-loop",
        "planted-sys-exit",
        "planted-os-exit",
        "planted-state-change",
    ]
    assert [verdict for verdict, _ in results["planted"].values()] == [None, None, None, "holds"], results
    assert results["control"] == {"planted-state-change": ("holds", "nothing changed\n")}


def test_nothing_a_claim_changes_or_starts_outlives_it(runner_alone):
    """A claim makes every change of leaking() (torch.library, F.relu, backward, an optimizer,
    modes left entered, numpy, logging, ...), sets the environment, a module hook, a patched print
    and warnings as errors, and starts a process: the claim after it finds none of it, and the
    process has ended."""
    results, left_running = runner_alone
    assert results["isolation"] == {
        "planted-leaves-hooks": ("holds", ""),
        "planted-sees-nothing-left": ("holds", "left by the runs before: nothing\n"),
    }, results["isolation"]
    assert left_running == [], left_running


def test_untranslated_korean_message_fails_the_build_naming_the_catalog(tmp_path):
    import polib

    project = tiny_project(tmp_path / "project")
    po_path = project / "locales/ko/LC_MESSAGES/recipes/plot_01_leaf_update.po"
    po = polib.pofile(str(po_path))
    entry = next(e for e in po if e.msgid == "The fix")
    entry.msgstr = ""
    po.save()
    line = polib.pofile(str(po_path)).find("The fix").linenum
    code, output = build_site(project)
    assert code != 0
    assert f"{po_path}:{line}: untranslated: 'The fix'" in output
    assert not (project / "build" / "html").exists(), "it should refuse before building anything"


def test_second_build_without_changes_fails_again(fault_build, fault_rebuild):
    """Nothing from a failed build may let the next one pass: failed recipes, claims and
    notebooks run again (a no-change rebuild does not otherwise re-read a page)."""
    project = fault_build[0]
    code, output = fault_rebuild
    assert code != 0
    for fault in (
        "recipe leaves dtype and grad mode changed",
        "claim that calls sys.exit",
        "notebook cell that stops raising",
        "unexpected error in a notebook",
    ):
        for text in EXPECTED[fault]:
            assert text in output, f"{fault}: {text!r} not in the second build's output"
    for fault, texts in located(project).items():
        assert all(text in output for text in texts), f"{fault}: not reported by the second build"


SLEEPING_CLAIM = planted_claim(
    "planted-sleep",
    "A claim that sleeps.",
    "a sleep, planted so that the claims runner is running when the build is killed",
    "import time\ntime.sleep(600)\n",
    timeout=900,
    article="site",
)


def _processes_of(project):
    """pid: command line of each process whose command line names ``project``."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(project) in cmdline:
            found[int(entry.name)] = cmdline
    return found


def _holders_of(path):
    """pid: command line of each process with ``path`` open."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            if any(Path(fd).resolve() == path.resolve() for fd in (entry / "fd").iterdir()):
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
    return found


def test_killing_the_build_ends_its_children_and_frees_the_lock(tiny_site, tmp_path):
    """``kill -9`` of build.py: its child (Sphinx) and the child's claims runner must not
    go on writing build/ beside the next build."""
    import os
    import signal
    import subprocess
    import time

    from conftest import _build_command

    project = seeded_tiny(tmp_path / "project", tiny_site[0])
    plant(project / RECIPE, "import torch\n", "import torch\nimport time\n\ntime.sleep(600)\n")
    append(project / "docs" / "claims.toml", SLEEPING_CLAIM)
    command, env = _build_command(project, ("--lang", "en"), None)
    parent = subprocess.Popen(
        command, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    crumb = project / "build" / ".html-en.running"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # the recipe sleeps, the claim sleeps
            running = _processes_of(project)
            if RECIPE in (crumb.read_text() if crumb.exists() else "") and any(
                "claims_runner" in c for c in running.values()
            ):
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"the build did not reach the sleeping recipe and claim: {running}")
        # the child (Sphinx), its claims runner, its recipes' runner and their forked children
        assert any("--child html" in c for c in running.values()), running
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        lock_file = project / "build" / ".lock"
        deadline = time.monotonic() + 15
        # a dying process loses its command line before its files: wait for both
        while (_processes_of(project) or _holders_of(lock_file)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _processes_of(project) == {}, "processes outlived the killed build"
        assert _holders_of(lock_file) == {}, "processes still hold the build's lock"
        # a killed process unmaps its memory before it closes its files (and hides its fds
        # meanwhile): on a busy machine the lock is freed a moment after the fds disappear
        with open(lock_file, "a+") as lock:
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    assert time.monotonic() < deadline, "the killed build's lock is still held"
                    time.sleep(0.2)
    finally:
        for pid in _processes_of(project):
            os.kill(pid, signal.SIGKILL)


# --- what a contributor gets wrong in the gallery's files (planted into the fault build) ----------

MARKUP_TITLE = "Tensor<float> & <img src=x onerror=alert(1)>"
MARKUP_RECIPE = "recipes/plot_11_markup_in_title.py"
UNPREFIXED_RECIPE = "recipes/leaf_update_again.py"  # a recipe without plot_: published, never run
UNSHOWN_FOLDER = "recipes/unshown"  # a folder of recipes without README.rst: left out of the gallery


def _plant_contributor_mistakes(project):
    markup = f'"""\n{MARKUP_TITLE}\n{"=" * len(MARKUP_TITLE)}\n\nA lede that names Tensor<float>.\n"""\n\n'
    (project / MARKUP_RECIPE).write_text(markup + "import torch\n\nprint(torch.ones(2))\n")
    (project / UNPREFIXED_RECIPE).write_text(
        recipe("Updating a leaf again", 'x = torch.ones(2)\nprint("a line the page never shows")\n')
    )
    (project / UNSHOWN_FOLDER).mkdir()
    (project / UNSHOWN_FOLDER / "plot_20_unshown.py").write_text(recipe("An unshown recipe", "print(1)\n"))
    # a mini-gallery of the recipes that use torch.ones: the markup recipe's card on another page
    (project / "docs/planted_minigallery.rst").write_text(
        ":orphan:\n\nPlanted mini-gallery\n====================\n\nRecipes.\n\n.. minigallery:: torch.ones\n"
    )


def test_markup_in_a_recipe_title_is_text_on_every_page(fault_outputs):
    """sphinx-gallery writes a card's caption as raw HTML, unescaped (gallery_cards): the
    title's markup must show as text, escaped once, and nowhere run."""
    site = fault_outputs / "build/html/en"
    escaped = "Tensor&lt;float&gt; &amp; &lt;img src=x onerror=alert(1)&gt;"
    for page in ("recipes/index.html", "planted_minigallery.html"):
        html = (site / page).read_text(encoding="utf-8")
        assert f'class="sphx-glr-thumbnail-title">{escaped}</div>' in html, page
        assert "A lede that names Tensor&lt;float&gt;." in html, page  # the card's description
    assert escaped in (site / "recipes/plot_11_markup_in_title.html").read_text(encoding="utf-8")
    live = sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if "<img src=x" in p.read_text(encoding="utf-8")
    )
    assert live == [], f"the title is markup on {live}"


def test_a_py_file_without_the_recipe_prefix_fails_the_build_naming_it(fault_build):
    project, code, output, seconds = fault_build
    assert (
        f"WARNING: {UNPREFIXED_RECIPE}: sphinx-gallery publishes this file as a recipe page and a card but "
        "never runs it (its code would show no output): only files named plot_*.py run. If it is a recipe, "
        "rename it plot_<number>_<name>.py; if it is code that recipes share, move it out of recipes/ into "
        "the kit (src/autograd_recipes/kit/), whose code each download carries"
    ) in output, output[-5000:]
    # the control: the recipes named plot_*.py, planted or not, are not named
    named = re.findall(r"WARNING: (\S+): sphinx-gallery publishes this file", output)
    assert named == [UNPREFIXED_RECIPE], named


def test_a_recipe_folder_without_a_readme_fails_the_build_naming_it(fault_build):
    project, code, output, seconds = fault_build
    assert (
        f"WARNING: {UNSHOWN_FOLDER}/: a folder of recipes without a README.rst: sphinx-gallery leaves it and "
        "its 1 .py file out of the gallery without a word. Give it a README.rst (the section's heading and a "
        "sentence), or move its recipes into recipes/"
    ) in output, output[-5000:]
    assert not (fault_build[0] / "docs/recipes/unshown").exists()  # sphinx-gallery did leave it out


def test_a_nested_recipe_folder_is_named_and_ignored_files_are_not(tmp_path):
    """gallery_layout's other cases, without a build: sections do not nest (conf.py's
    nested_sections), and a file sphinx-gallery's ignore_pattern leaves out is no page."""
    from sphinx_gallery.gen_gallery import DEFAULT_GALLERY_CONF

    from autograd_recipes.execution.gallery_layout import problems
    from autograd_recipes.project import PROJECT

    recipes = tmp_path / "recipes"
    for name in (
        "README.rst",
        "plot_01_a.py",
        "__init__.py",
        "field/README.rst",
        "field/deeper/plot_02_b.py",
    ):
        (recipes / name).parent.mkdir(parents=True, exist_ok=True)
        (recipes / name).write_text("")
    conf = {**DEFAULT_GALLERY_CONF, **PROJECT.config["sphinx_gallery_conf"]}
    assert problems(recipes, conf, tmp_path) == [
        "recipes/field/deeper/: the gallery's sections are the folders right under recipes/ (conf.py's "
        "nested_sections is False): sphinx-gallery leaves this folder's 1 .py file out of the gallery without "
        "a word. Move them into a section's folder"
    ]


def test_nothing_a_recipe_changes_or_starts_reaches_the_next_or_outlives_the_build(fault_build):
    """plot_00_leaves_more overrides aten::neg through torch.library, replaces F.relu, backward,
    an optimizer's step and zero_grad's default, enters a TorchFunctionMode, saved-tensor hooks and
    a forward-AD level, flushes denormals, sets the matmul precision through both APIs, numpy's
    print options, disables logging, and starts a process; little of it is on the guard's list. The
    recipe after it finds none of it, and the process ended with the recipe's."""
    project, code, output, seconds = fault_build
    page = (project / "build/html/en/recipes/plot_12_sees_nothing_left.html").read_text(encoding="utf-8")
    assert "left by the runs before: nothing" in page, re.findall(r"left by the runs before: [^<]*", page)
    assert _processes_marked(RECIPE_ORPHAN_MARK) == []
