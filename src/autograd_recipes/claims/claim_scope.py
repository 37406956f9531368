"""What a claim's check tried, in the reader's language: its sentence, its scope, the conditions
it names, and how its verdict fared under the ambient conditions it does not vary.

The claims page (claims) and the disclosure beside each "(checked)" (claim_links) both show
it, from the same record (ambient_conditions, ``docs/conditions/torch-<version>.json``), so
the two cannot tell a reader different things. A claim's sentence and scope come in the
page's language from the claims catalog (``claims.po``, the claims page's own); the labels,
the ambient conditions, the conditions' phrases and the reasons from ``sphinx.po``.
"""

import functools
import re
from pathlib import Path

import polib
from sphinx.locale import _  # Korean: locales/ko/LC_MESSAGES/sphinx.po

from autograd_recipes.claims import ambient_conditions, claims_ledger
from autograd_recipes.project import PROJECT, torch_version


def ambient_labels():
    """The ambient conditions' labels in the page's language (the words of AMBIENT)."""
    return {
        "float64": _("default dtype float64"),
        "bfloat16": _("default dtype bfloat16"),
        "autocast": _("CPU autocast to bfloat16"),
        "no_grad": _("inside torch.no_grad()"),
        "inference_mode": _("inside torch.inference_mode()"),
        "grad_disabled": _("inside torch.set_grad_enabled(False)"),
        "foreach": _("optimizers built with foreach=True"),
        "fused": _("optimizers built with fused=True"),
        "keywords": _("modules called with keyword arguments"),
    }


def condition_phrases(condition):
    """The phrases that name a condition, in the page's language (sphinx.po translates each)."""
    return [_(phrase) for phrase in condition["phrases"]]


@functools.cache
def _catalog(path, mtime):
    return {e.msgid: e.msgstr for e in polib.pofile(str(path)).translated_entries()}


def in_language(text, config, docname="claims"):
    """``text`` as the catalog of page ``docname`` translates it into the build's language (a
    claim's sentence, scope or control case: the claims page's; a heading: its page's), as
    plain text; ``text`` itself where the language is the source or has no translation."""
    if config.language == PROJECT.source_language or not config.locale_dirs:
        return text
    path = Path(config.locale_dirs[0]) / config.language / "LC_MESSAGES" / f"{docname}.po"
    if not path.is_file():
        return text
    translated = _catalog(path, path.stat().st_mtime).get(text)
    # a catalog's message is reStructuredText: ``relu\_`` is relu_, and "\ " joins a particle
    return re.sub(r"\\(.)", lambda m: "" if m[1] == " " else m[1], translated) if translated else text


def _release():
    return torch_version().split("+")[0]  # 2.13.0+cpu and 2.13.0 are one release


def record(ledger):
    """The ambient record for the installed torch, beside ``ledger``, or None."""
    return ambient_conditions.read_record(_release(), Path(ledger).parent / "conditions")


def record_file(ledger):
    return ambient_conditions.record_path(_release(), Path(ledger).parent / "conditions")


def tried(claim, entry, vocabulary):
    """[(label, text)] saying how the claim fared under the ambient conditions, or one
    line saying it was not tried for its current code."""
    if entry is None or entry["code"] != claims_ledger.code_digest(claim):
        return [(_("Other conditions:"), _("not yet tried for this code."))]
    labels = ambient_labels()
    explained = ambient_conditions.explain(claim, entry["runs"], vocabulary)
    groups = {"same": [], "not applicable": []}
    changes = {}  # one explanation, the ambient conditions it covers (in AMBIENT's order)
    for cid in ambient_conditions.AMBIENT:
        if cid not in explained:
            continue
        kind, detail = explained[cid]
        if kind in groups:
            groups[kind].append(labels[cid])
        else:
            changes.setdefault((kind, detail), []).append(labels[cid])
    changed = []
    for (kind, detail), ambient in changes.items():
        ambient = _(", ").join(ambient)
        if kind == "condition":
            named = _(vocabulary["condition"][detail]["label"])
            changed.append(
                _("%(ambient)s (the condition “%(named)s”)") % {"ambient": ambient, "named": named}
            )
        elif kind == "reason":
            reason = _(vocabulary["reason"][detail]["text"])
            changed.append(
                _("%(ambient)s (outside its domain: %(reason)s)") % {"ambient": ambient, "reason": reason}
            )
        else:
            changed.append(_("%(ambient)s (not explained)") % {"ambient": ambient})
    groups["changes"] = changed
    tried_count = len(groups["same"]) + sum(len(ambient) for ambient in changes.values())
    lines = [(_("Also run under %d other conditions:") % tried_count, "")]
    if groups["same"]:
        lines.append((_("same verdict:"), _(", ").join(groups["same"]) + "."))
    if groups["changes"]:
        lines.append((_("another verdict:"), _("; ").join(groups["changes"]) + "."))
    if groups["not applicable"]:
        lines.append(
            (
                _("not applicable (the check builds no optimizer or calls no module):"),
                _(", ").join(groups["not applicable"]) + ".",
            )
        )
    return lines


def named_conditions(claim, vocabulary):
    """The labels of the conditions a claim names, in the page's language."""
    return [_(vocabulary["condition"][name]["label"]) for name in claim.get("conditions", [])]


GLOSS = re.compile(r"\([a-z][a-z ,'-]*\)")


def without_glosses(text):
    """A translated text without its English glosses, 리프 텐서(leaf tensor) -> 리프 텐서: a
    disclosure repeats a claim beside a page that has glossed its terms already."""
    return re.sub(r"(?<=[\uac00-\ud7a3])\s?\([a-z][a-z -]*[a-z]\)", "", text)


def missing_conditions(text, claim, vocabulary):
    """The conditions of ``claim`` that ``text`` (a sentence in the page's language) names by
    none of their phrases: [(condition id, its phrases)]."""
    # an English gloss after a Korean term, 기울기 추적(gradient tracking), is not part of the phrase
    said = " ".join(GLOSS.sub("", text).lower().split())
    missing = []
    for name in claim.get("conditions", []):
        phrases = condition_phrases(vocabulary["condition"][name])
        if not any(" ".join(p.lower().split()) in said for p in phrases):
            missing.append((name, phrases))
    return missing
