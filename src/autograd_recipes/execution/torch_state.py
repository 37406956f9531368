"""torch's process-wide settings that change what later code prints, and a guard for them.

A recipe that calls ``torch.set_default_dtype(torch.float64)``,
``torch.set_grad_enabled(False)`` or ``torch.autograd.set_detect_anomaly(True)``
and does not undo it changes the output of everything that runs after it in
the same process. ``recipe_guard`` takes a ``snapshot`` before each recipe (a claim
runs in a process of its own: forked); ``check_and_restore`` after it names what changed and puts the
snapshot back, so that nothing else is affected. The random number
generators are not compared: every recipe is seeded before it runs.
Beside torch's settings it compares Python's warnings filters (``simplefilter("error")``
left behind makes the next warning anywhere in the process a crash; a library's filter for
itself is not reported: _library_owned) and, by identity, the registries one run can change
for the next: the environment (``SOURCE_DATE_EPOCH`` dates every page), torch.nn's global
module hooks, and the attributes of ``builtins``, ``torch``, ``torch.nn.functional``,
``torch.Tensor`` and ``torch.nn.Module`` (a name added there, such as a submodule loaded
on first use, changes nothing and is not reported; nor is what torch replaces or sets for
itself when a part of it loads: TORCH_OWNED, _torch_patched).
"""

import builtins
import os
import warnings

import torch
from torch._tensor_str import PRINT_OPTS  # the only place print options can be read back


def _read(name, read):
    try:
        return read()
    except AttributeError:  # an older torch without this setting (default device: 2.3)
        return "absent"
    except RuntimeError as err:  # e.g. matmul precision, once set through both of torch's APIs
        return f"unreadable ({type(err).__name__}: {str(err).split(',')[0]})"


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
    return (
        {name: _read(name, read) for name, read in readers.items()}
        | {"warnings filters": _Filters(warnings.filters)}
        | _registries()
    )


def changes(before, after):
    """One 'name: old -> new' line per setting that differs (for a registry: what changed)."""
    found = []
    for name in before:
        if isinstance(before[name], (_Registry, _Filters)):
            found += [f"{name}: {what}" for what in before[name].difference(after[name])]
        elif before[name] != after[name]:
            found.append(f"{name}: {before[name]} -> {after[name]}")
    return found


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
    "warnings filters": lambda value: value.put_back(),
    # inference mode is a context manager's state: it cannot be set back from outside
}


def _restore_settings(state):
    """Set back the settings that differ from ``state`` (only those: setting a default
    device, even "cpu", installs a torch function mode that slows every later call)."""
    now = snapshot()
    for name, setter in _SETTERS.items():
        if now[name] != state[name] and not str(state[name]).startswith("unreadable"):
            try:
                setter(state[name])
            except RuntimeError:  # torch refuses it now: the change is reported, and the
                pass  # recipe's process (recipe_runs) ends with it all the same


def check_and_restore(before):
    """The changes made since ``before``, after putting ``before`` back. torch's settings
    are put back first: a setting rebinds names of its own (set_default_dtype rebinds
    torch.Storage), which are then no change of the registries."""
    settings = {name: value for name, value in before.items() if not isinstance(value, _Registry)}
    found = changes(settings, snapshot())
    _restore_settings(before)
    registries = {name: value for name, value in before.items() if isinstance(value, _Registry)}
    found += changes(registries, snapshot())
    now = snapshot()
    for name, registry in before.items():
        if isinstance(registry, _Registry) and registry.difference(now[name]):
            registry.put_back(now[name])
    return found


class _Filters:
    """Python's warnings filters (``warnings.simplefilter("error")`` left behind turns the
    next deprecation warning anywhere in the process, Sphinx's own included, into a crash),
    compared without the ones a library adds for itself (_library_owned)."""

    def __init__(self, filters):
        self.filters = tuple(filters)
        self.significant = tuple(f for f in self.filters if not _library_owned(f))

    def __eq__(self, other):
        return isinstance(other, _Filters) and self.significant == other.significant

    def difference(self, other):
        return [f"{_filter(f)} added" for f in other.significant if f not in self.significant] + [
            f"{_filter(f)} removed" for f in self.significant if f not in other.significant
        ]

    def put_back(self):
        kept = [f for f in warnings.filters if _library_owned(f) and f not in self.filters]
        warnings.resetwarnings()  # empties the list and marks the modules' "once" records stale
        warnings.filters[:] = [*kept, *self.filters]


def _library_owned(entry):
    """A filter that a library adds for itself when it loads, kept and not reported, like
    TORCH_OWNED (sympy adds "once" for its SymPyDeprecationWarning when torch first imports
    it; torch, "ignore" for one message): one for a warning class of its own, or one limited
    to some messages or modules. What is left, a filter for every warning of a built-in
    class (``simplefilter``), changes what all later code prints or raises."""
    action, message, category, module, line = entry
    return category.__module__ != "builtins" or message is not None or module is not None


def _filter(entry):
    """'"error" for Warning', with the message and module patterns where it has them."""
    action, message, category, module, line = entry
    where = [f"{k} {p.pattern!r}" for k, p in (("message", message), ("module", module)) if p is not None]
    return (
        f"{action!r} for {category.__name__}"
        + "".join(f", {w}" for w in where)
        + (f", line {line}" if line else "")
    )


class _Registry:
    """One kind of registry, as {place: {name: object}}, compared by identity."""

    def __init__(self, kind, saved):
        self.kind, self.saved = kind, saved

    def difference(self, other):
        found = []
        for place, before in self.saved.items():
            after = other.saved[place]
            added = sorted(after.keys() - before.keys())
            removed = sorted(before.keys() - after.keys())
            if self.kind == "environment":
                changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
                found += [f"{k} set" for k in added if not _torch_owned(k)] + [
                    f"{k} changed" for k in changed
                ]
                found += [f"{k} removed" for k in removed]
            elif self.kind == "global module hooks":
                if added or removed or any(before[k] is not after[k] for k in before.keys() & after.keys()):
                    found.append(f"{place}: {len(before)} -> {len(after)}")
            else:  # an attribute added (a submodule loaded on first use) changes nothing shown
                replaced = sorted(
                    k
                    for k in before.keys() & after.keys()
                    if before[k] is not after[k] and not _torch_patched(before[k], after[k])
                )
                found += [f"{place}.{k} replaced" for k in replaced] + [
                    f"{place}.{k} deleted" for k in removed
                ]
        return found

    def put_back(self, now):
        for place, before in self.saved.items():
            if self.kind == "environment":
                kept = {k: v for k, v in now.saved[place].items() if k not in before and _torch_owned(k)}
                os.environ.clear()
                os.environ.update(before | kept)
            elif self.kind == "global module hooks":
                hooks = getattr(torch.nn.modules.module, place)
                hooks.clear()
                hooks.update(before)
            else:
                for name, value in before.items():
                    current = now.saved[place].get(name, _ABSENT)
                    if current is not value and not _torch_patched(value, current):
                        target = _PATCHABLE[place]
                        inherited = isinstance(target, type) and any(
                            vars(k).get(name, _ABSENT) is value for k in target.__mro__[1:]
                        )
                        delattr(target, name) if inherited else setattr(target, name, value)


_ABSENT = object()
# What torch itself changes when code first uses a part of it: variables it sets for its own
# use (torch._dynamo, loaded by torch.compile, sets TORCHINDUCTOR_CACHE_DIR; all of torch's
# own start with TORCH), kept and not reported, and attributes it replaces with functions of
# its own (_torch_patched). A variable a run changes or removes is always reported.
TORCH_OWNED = ("TORCH",)


def _torch_owned(name):
    return name.startswith(TORCH_OWNED)


def _torch_patched(old, new):
    """``new`` replaced ``old`` by torch's own doing: it wraps it, or torch defines it
    (torch._dynamo replaces torch.nn.Module.__init__ with a function of its own)."""
    module = getattr(new, "__module__", None) or ""
    return getattr(new, "__wrapped__", None) is old or module == "torch" or module.startswith("torch.")


_PATCHABLE = {
    "builtins": builtins,
    "torch": torch,
    "torch.nn.functional": torch.nn.functional,
    "torch.Tensor": torch.Tensor,
    "torch.nn.Module": torch.nn.Module,
}


def _attributes(obj):
    """{name: object} as found without calling anything: a module's own names, and for a
    class every name along its MRO (``torch.Tensor.add_ = f`` hides TensorBase's add_)."""
    if not isinstance(obj, type):
        return {k: v for k, v in vars(obj).items() if k != "_"}  # "_": the last value an interpreter echoed
    found = {}
    for klass in reversed(obj.__mro__):
        found.update(vars(klass))
    return found


def _registries():
    module = torch.nn.modules.module
    hooks = {
        k: dict(v)
        for k, v in sorted(vars(module).items())
        if k.startswith("_global_") and isinstance(v, dict)
    }
    attributes = {place: _attributes(obj) for place, obj in _PATCHABLE.items()}
    return {
        "environment": _Registry("environment", {"os.environ": dict(os.environ)}),
        "global module hooks": _Registry("global module hooks", hooks),
        "patched attributes": _Registry("patched attributes", attributes),
    }
