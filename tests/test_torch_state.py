"""The guard recipes and claims run under: each change one run can leave for the next is
named and put back; what torch changes for itself when a part of it loads is not a change."""

import builtins
import os

import pytest
import torch

from autograd_recipes.execution import torch_state


def _set_env():
    os.environ["SOURCE_DATE_EPOCH"] = "0"


def _new_env():
    os.environ["PLANTED_VARIABLE"] = "1"


def _hook():
    torch.nn.modules.module.register_module_forward_hook(lambda module, args, output: None)


def _patch_inherited():  # add_ lives on torch._C.TensorBase, not in torch.Tensor's own dict
    torch.Tensor.add_ = lambda self, *args: "patched"


def _patch_print():
    builtins.print = lambda *args, **kwargs: None


def _patch_functional():
    torch.nn.functional.relu = lambda *args, **kwargs: "patched"


CHANGES = {
    "an environment variable changed": (_set_env, "environment: SOURCE_DATE_EPOCH changed"),
    "an environment variable set": (_new_env, "environment: PLANTED_VARIABLE set"),
    "a global module hook": (_hook, "global module hooks: _global_forward_hooks: 0 -> 1"),
    "an inherited tensor method patched": (
        _patch_inherited,
        "patched attributes: torch.Tensor.add_ replaced",
    ),
    "print patched": (_patch_print, "patched attributes: builtins.print replaced"),
    "a functional patched": (_patch_functional, "patched attributes: torch.nn.functional.relu replaced"),
    "the default dtype": (
        lambda: torch.set_default_dtype(torch.float64),
        "default dtype: torch.float32 -> torch.float64",
    ),
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_change_is_named_and_put_back(change, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # as the build sets it
    make, expected = CHANGES[change]
    before = torch_state.snapshot()
    kept = (builtins.print, torch.Tensor.add_, torch.nn.functional.relu, dict(os.environ))
    make()
    assert torch_state.check_and_restore(before) == [expected]
    assert torch_state.check_and_restore(before) == []  # put back: nothing left to find
    assert (builtins.print, torch.Tensor.add_, torch.nn.functional.relu, dict(os.environ)) == kept
    assert "add_" not in vars(torch.Tensor)  # the inherited method is inherited again
    assert torch.nn.modules.module._global_forward_hooks == {}
    assert torch.ones(1).add_(1).item() == 2.0


def test_what_torch_changes_for_itself_is_no_change():
    """torch.compile's first use loads torch._dynamo, which sets TORCHINDUCTOR_CACHE_DIR and
    replaces torch.manual_seed and torch.nn.Module.__init__ with functions of its own; the
    profiler changes nothing. Control: the same snapshot still names a variable the code
    itself sets."""
    import sys

    fresh = "torch._dynamo" not in sys.modules  # (another test of this process may have loaded it)
    before = torch_state.snapshot()
    torch.compile(lambda x: x + 1, backend="eager")(torch.ones(1))
    with torch.profiler.profile():
        torch.ones(1) + 1
    if fresh:
        assert "TORCHINDUCTOR_CACHE_DIR" in os.environ and torch.nn.Module.__init__.__module__.startswith(
            "torch._"
        )
    assert torch_state.check_and_restore(before) == []
    os.environ["PLANTED_VARIABLE"] = "1"
    assert torch_state.check_and_restore(before) == ["environment: PLANTED_VARIABLE set"]


def test_a_setting_torch_can_no_longer_read_is_named_not_a_crash():
    """Setting the matmul precision through both of torch's APIs makes it unreadable: the
    guard names the change instead of raising (run in a process of its own: it cannot be undone)."""
    import subprocess
    import sys

    script = (
        "import torch\n"
        "from autograd_recipes.execution import torch_state\n"
        "before = torch_state.snapshot()\n"
        "torch.backends.mkldnn.matmul.fp32_precision = 'tf32'\n"
        "print(torch_state.check_and_restore(before))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert (
        "float32 matmul precision: highest -> unreadable (RuntimeError: PyTorch is checking" in done.stdout
    ), done.stdout
