"""The claims ledger (docs/claims.toml): the source articles' claims and the site's own, and running them.

Each claim's ``code`` runs against the installed torch in a fresh namespace
(with ``torch`` imported); what it prints is the evidence, and it must set
``verdict`` to one of VERDICTS. A claim may name helper cells of a page in
``uses`` ("page.md#tag"): their source runs first in the same namespace, so the
ledger measures with the page's own method (one timing rule, one memory meter).

A claim states where it holds: its sentence names the conditions, and its
``scope`` the cases its check sweeps (every dimension the sentence generalises
over), which the check's output prints one by one.

Every check must be able to fail on a real case. Its ``control`` is a list of
``[old, new]`` text substitutions that put into the grid a case of the claim's
own domain in which the claimed behaviour does not occur (``control_case``
says which); ``run_control`` runs the same check on that case, and
``control_problem`` says what is wrong when the check does not then return
``control_verdict`` without an error. A substitution may change the case only:
never a line that sets ``verdict``, and never a torch name that does not exist
(``missing_names``): a control that only breaks the check shows nothing.

A claim also lists the ``conditions`` its sentence needs (ids of the ledger's
``[condition.ID]`` tables: what the sentence must name, and which of the ambient
conditions of ambient_conditions.py each covers) and, in ``out_of_domain``, the ambient
conditions under which its verdict flips for a reason outside its domain (ids of
``[reason.ID]`` tables, whose ``evidence`` text the flipped run must print).

Used by the ``claims`` Sphinx extension at build time, by tests/test_claims.py
(which runs every control), and on its own to check another torch version:

    python src/autograd_recipes/claims/claims_ledger.py [LEDGER]    # table of differing verdicts; exit 1 if any
"""

import ast
import contextlib
import copy
import functools
import hashlib
import io
import json
import os
import re
import sys
import tomllib
import traceback
import types

from autograd_recipes import source_text
from autograd_recipes.project import PROJECT

VERDICTS = ("holds", "does not hold", "holds in part")
MEASURED = ("time", "memory")  # what a measured claim's evidence measures (field `measured`)
ARTICLES = ("inplace", "no_grad", "site")  # "site": a statement of this site's own pages
FIELDS = (
    "id",
    "article",
    "section",
    "claim",
    "scope",
    "verdict",
    "page",
    "code",
    "control",
    "control_case",
    "control_verdict",
)
CELL = re.compile(r"```\{code-cell\} ipython3\n(.*?)```", re.S)


class LedgerError(ValueError):
    """The ledger itself is malformed (not TOML, a missing field, an unknown verdict...):
    ``<path>:<line>: ...``, the line of the claim or table at fault where there is one."""


def ledger_path():
    """docs/claims.toml of the project."""
    return PROJECT.docs / "claims.toml"


def __getattr__(name):
    """``LEDGER``: ``ledger_path()``, found when first asked for, not at import."""
    if name == "LEDGER":
        return ledger_path()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load(path=None):
    path = path or ledger_path()
    claims = _read(path)["claim"]
    vocabulary = load_vocabulary(path)
    headers = _header_lines(_text(path), "claim", len(claims), array=True)
    seen = {}
    for number, (claim, line) in enumerate(zip(claims, headers), 1):
        where = f"{_at(path, line)}: claim #{number} ({claim.get('id', '?')})"
        missing = [k for k in FIELDS if not claim.get(k)]
        if missing:
            raise LedgerError(f"{where}: missing {', '.join(missing)}")
        for key in ("verdict", "control_verdict"):
            if claim[key] not in VERDICTS:
                raise LedgerError(f"{where}: {key} {claim[key]!r} is not one of {VERDICTS}")
        if claim.get("measured", MEASURED[0]) not in MEASURED:
            raise LedgerError(f"{where}: measured {claim['measured']!r} is not one of {MEASURED}")
        if claim["article"] not in ARTICLES:
            raise LedgerError(f"{where}: article {claim['article']!r} is not one of {ARTICLES}")
        if claim["id"] in seen:
            first = seen[claim["id"]]
            raise LedgerError(f"{where}: duplicate id (its first claim: {_at(path, first)})")
        seen[claim["id"]] = line
        unknown = [c for c in claim.get("conditions", []) if c not in vocabulary["condition"]]
        if unknown:
            raise LedgerError(f"{where}: conditions {unknown} are not [condition.ID] tables of the ledger")
        for ambient, reason in claim.get("out_of_domain", {}).items():
            if reason not in vocabulary["reason"]:
                raise LedgerError(f"{where}: out_of_domain {ambient} = {reason!r} is not a [reason.ID] table")
    return claims


_parsed = {}  # (path, mtime, size) -> (the parsed ledger, its text): a build reads it for every page
TOML_PLACE = re.compile(r" \(at (?:line (\d+), column (\d+)|end of document)\)$")  # tomllib's


def _parsed_ledger(path):
    """(data, text) of the ledger, parsed once per version of the file."""
    stat = os.stat(path)
    key = (os.path.realpath(path), stat.st_mtime_ns, stat.st_size)
    if key not in _parsed:
        try:
            text = source_text.read(path)
        except source_text.NotUtf8 as error:
            raise LedgerError(str(error)) from None
        try:
            _parsed[key] = (tomllib.loads(text), text)
        except tomllib.TOMLDecodeError as error:
            # tomllib says where in its message only (Python 3.11: no lineno)
            message = str(error)
            place = TOML_PLACE.search(message)
            line = int(place.group(1)) if place and place.group(1) else text.count("\n") + 1
            column = f" (column {place.group(2)})" if place and place.group(2) else ""
            raise LedgerError(
                f"{_at(path, line)}: not valid TOML: {message[: place.start()] if place else message}{column}"
            ) from None
    return _parsed[key]


def _read(path):
    """The ledger's TOML (a copy: callers may change it)."""
    return copy.deepcopy(_parsed_ledger(path)[0])


def _text(path):
    return _parsed_ledger(path)[1]


def _at(path, line):
    """'docs/claims.toml:12', or the path alone where the line is unknown."""
    return f"{PROJECT.named(path)}:{line}" if line else PROJECT.named(path)


def _header_lines(text, key, count, array=False):
    """The line of each ``[key]`` header (``[[key]]`` with ``array``), in order; Nones where
    the text has not ``count`` of them (one inside a multi-line string, say)."""
    open_, close = (r"\[\[", r"\]\]") if array else (r"\[", r"\]")
    header = re.compile(rf"^\s*{open_}\s*{re.escape(key)}\s*{close}\s*(?:#.*)?$")
    found = [n for n, line in enumerate(text.splitlines(), 1) if header.match(line)]
    return found if len(found) == count else [None] * count


def load_vocabulary(path=None):
    """The ledger's ``condition`` and ``reason`` tables: {"condition": {id: table}, "reason": {...}}.

    A condition has a ``label`` (what the pages show), ``phrases`` (the words a sentence that needs it says, in English; each
    translated through sphinx.po) and ``covers`` (ambient condition ids); a reason has
    ``text`` and, optionally, ``evidence`` (what a run outside the domain prints)."""
    path = path or ledger_path()
    data = _read(path)
    vocabulary = {"condition": data.get("condition", {}), "reason": data.get("reason", {})}
    for kind, needed in (("condition", ("label", "phrases", "covers")), ("reason", ("text",))):
        for name, table in vocabulary[kind].items():
            missing = [k for k in needed if not table.get(k)]
            if missing:
                (line,) = _header_lines(_text(path), f"{kind}.{name}", 1)
                raise LedgerError(f"{_at(path, line)}: [{kind}.{name}]: missing {', '.join(missing)}")
    return vocabulary


def line_of(ledger_text, claim_id):
    """The line number of a claim's ``id = "…"`` in the ledger's text, or None."""
    for number, line in enumerate(ledger_text.splitlines(), 1):
        if line.strip() == f'id = "{claim_id}"':
            return number
    return None


def page_cell(ref):
    """The source of the code cell tagged TAG in docs/PAGE (``ref`` = "PAGE#TAG")."""
    page, tag = ref.split("#")
    for cell in CELL.findall((PROJECT.docs / page).read_text(encoding="utf-8")):
        if re.search(rf"^:tags: \[.*\b{tag}\b.*\]$", cell, re.M):
            return "\n".join(line for line in cell.splitlines() if not line.startswith(":"))
    raise LedgerError(f"no code cell tagged {tag!r} in docs/{page}")


def code_digest(claim):
    """The code that produces a claim's verdict, hashed: its own code and the page cells it
    uses, as syntax trees, so a comment or a line break changes nothing."""
    used = [_code_only(page_cell(ref)) for ref in claim.get("uses", [])]
    text = json.dumps({"code": _code_only(claim["code"]), "uses": used}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@functools.lru_cache(maxsize=1024)  # a build hashes each claim's code for every page that links it
def _code_only(source):
    try:
        return ast.dump(ast.parse(source))
    except SyntaxError:  # the run reports it; the hash still changes with the text
        return source


def control_code(claim):
    """The claim's code with its control substitutions applied (each must match exactly once)."""
    code = claim["code"]
    for old, new in claim["control"]:
        if code.count(old) != 1:
            raise LedgerError(f"claim {claim['id']}: control text {old!r} occurs {code.count(old)} times")
        start = code.index(old)
        end = code.find("\n", start + len(old))
        lines = code[code.rfind("\n", 0, start) + 1 : None if end == -1 else end]
        if "verdict" in lines or "verdict" in new:
            raise LedgerError(f"claim {claim['id']}: a control may change the case, not the verdict")
        code = code.replace(old, new)
    return code


@contextlib.contextmanager
def _importable(module):
    sys.modules[module.__name__] = module
    try:
        yield
    finally:
        sys.modules.pop(module.__name__, None)


def _execute(claim, code, after_setup=None):
    import torch

    torch.manual_seed(0)
    # the code runs in a module that imports by its name: torch.compile's tracing looks its
    # functions' module up in sys.modules on some releases (2.1 to 2.12)
    module = types.ModuleType(f"claim_{claim['id']}")
    module.torch = torch
    namespace = module.__dict__
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), torch.random.fork_rng(), _importable(module):
            for ref in claim.get("uses", []):
                exec(compile(page_cell(ref), f"<{ref}>", "exec"), namespace)
            if after_setup is not None:
                after_setup()
            exec(compile(code, f"<claim {claim['id']}>", "exec"), namespace)
    except Exception:
        return None, out.getvalue() + traceback.format_exc(limit=-1)
    verdict = namespace.get("verdict")
    return (verdict if verdict in VERDICTS else None), out.getvalue()


def run(claim, after_setup=None):
    """Run one claim's code; return (observed verdict or None, evidence text).
    ``after_setup()`` is called once the page cells it uses have run, before its own code."""
    return _execute(claim, claim["code"], after_setup)


def run_control(claim):
    """Run the same check on the claim's control case; return (verdict or None, evidence)."""
    return _execute(claim, control_code(claim))


def missing_names(code, module=None):
    """The torch names a piece of code uses that torch does not have: ``torch.a.b`` attribute
    chains, and names given as strings to ``getattr``/``hasattr`` on such a chain."""
    if module is None:
        import torch as module
    missing = []

    def resolve(node):
        """The object a ``torch.…`` chain names, or None where the chain is not rooted at torch."""
        if isinstance(node, ast.Name):
            return module if node.id == "torch" else None
        if isinstance(node, ast.Attribute):
            parent = resolve(node.value)
            if parent is None or parent is _MISSING:
                return parent
            found = getattr(parent, node.attr, _MISSING)
            if found is _MISSING:
                missing.append(ast.unparse(node))
            return found
        return None

    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Attribute):
            resolve(node)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", None) in ("getattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            owner = resolve(node.args[0])
            if owner is not None and owner is not _MISSING and not hasattr(owner, node.args[1].value):
                missing.append(f"{ast.unparse(node.args[0])}.{node.args[1].value}")
    return sorted(set(missing))


_MISSING = object()


def control_problem(claim):
    """None when the check returns control_verdict on its control case; else what went wrong."""
    if claim["control_verdict"] == claim["verdict"]:
        return f"claim {claim['id']}: control_verdict equals verdict: its control shows nothing"
    invented = [n for n in missing_names(control_code(claim)) if n not in missing_names(claim["code"])]
    if invented:
        return (
            f"claim {claim['id']}: its control uses names torch does not have ({', '.join(invented)}): "
            "a control must present a real case, not break the check"
        )
    observed, evidence = run_control(claim)
    if observed == claim["control_verdict"]:
        return None
    last = evidence.strip().splitlines()[-1] if evidence.strip() else "(no output)"
    return (
        f"claim {claim['id']}: its control gave {observed or 'an error'!r}, not "
        f"{claim['control_verdict']!r}: the check does not discriminate ({last})"
    )
