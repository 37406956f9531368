"""torch's process-wide settings that change what later code prints, and a guard for them.

A recipe or a claim that calls ``torch.set_default_dtype(torch.float64)``,
``torch.set_grad_enabled(False)`` or ``torch.autograd.set_detect_anomaly(True)``
and does not undo it changes the output of everything that runs after it in
the same process. ``recipe_guard`` and ``claims_runner`` take a ``snapshot``
before each run, compare after it (``changes``), name the culprit, and
``restore`` the snapshot so that nothing else is affected. The random number
generators are not compared: every recipe and claim is seeded before it runs.
"""

import torch
from torch._tensor_str import PRINT_OPTS  # the only place print options can be read back


def _read(name, read):
    try:
        return read()
    except AttributeError:  # an older torch without this setting (default device: 2.3)
        return "absent"


def snapshot():
    readers = {
        "default dtype": torch.get_default_dtype,
        "default device": lambda: str(torch.get_default_device()),
        "grad mode": torch.is_grad_enabled,
        "inference mode": torch.is_inference_mode_enabled,
        "anomaly detection": lambda: (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
        "deterministic algorithms": lambda: (
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
        ),
        "CPU threads": torch.get_num_threads,
        "float32 matmul precision": torch.get_float32_matmul_precision,
        "print options": lambda: dict(vars(PRINT_OPTS)),
    }
    return {name: _read(name, read) for name, read in readers.items()}


def changes(before, after):
    """One 'name: old -> new' line per setting that differs."""
    return [f"{name}: {before[name]} -> {after[name]}" for name in before if before[name] != after[name]]


_SETTERS = {
    "default dtype": torch.set_default_dtype,
    "default device": torch.set_default_device,
    "grad mode": torch.set_grad_enabled,
    "anomaly detection": lambda value: torch.autograd.set_detect_anomaly(*value),
    "deterministic algorithms": lambda value: torch.use_deterministic_algorithms(
        value[0], warn_only=value[1]
    ),
    "CPU threads": torch.set_num_threads,
    "float32 matmul precision": torch.set_float32_matmul_precision,
    "print options": lambda value: torch.set_printoptions(**value),
    # inference mode is a context manager's state: it cannot be set back from outside
}


def restore(state):
    """Set back what differs from ``state`` (only that: setting a default device, even
    "cpu", installs a torch function mode that slows every later call)."""
    now = snapshot()
    for name, setter in _SETTERS.items():
        if now[name] != state[name]:
            setter(state[name])


def check_and_restore(before):
    """The changes made since ``before``, after putting ``before`` back."""
    found = changes(before, snapshot())
    if found:
        restore(before)
    return found
