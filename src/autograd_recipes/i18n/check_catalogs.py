"""Check the Korean catalogs: ``python src/autograd_recipes/i18n/check_catalogs.py [--pot build/gettext]``.

Prints one line per problem, ``<po path>:<line>: <kind>: <msgid>``, and exits 1
if there is any. ``src/autograd_recipes/publish/build.py`` runs the same check before every Korean
build and refuses to build on a problem; the tests run it too (CI). It finds:

- untranslated, fuzzy or obsolete messages, and documents with no catalog at
  all (the documents come from the source tree, so a stale ``.mo`` left behind
  by a deleted ``.po`` cannot hide it): each would put English on a Korean page;
- translations that change what the page means or how it parses: inline code,
  role names and targets, link targets or numbers that differ from the
  msgid's, unbalanced backticks, and directives or raw HTML the msgid lacks.
  The rules read reST (``code``, :role:`title <target>`, `text <url>`_) and
  MyST (`code`, {role}`target`, [text](url)) alike, so one tokenizer serves
  .rst, .md and sphinx-gallery catalogs; a link's title may be translated,
  its target may not. ``sphinx.po`` holds interface strings that Sphinx puts
  into HTML templates unparsed, so it gets gentler rules: its ``%s``/``{0}``
  placeholders, numbers and HTML must match the msgid's, and where the msgid is
  %-formatted, every ``%`` of the msgstr must start a conversion (``%%`` for a
  percent sign);
- given the .pot templates of the current English source (from
  ``python src/autograd_recipes/publish/build.py --gettext``), drift: English messages with no Korean
  entry, and Korean entries whose English is gone. A gettext build reads the whole
  English source, too slow to precede every build: the Korean build finds the first
  kind itself, as it reads each page (translation_guard.py).

Counts come from polib, never from ``sphinx-intl stat`` (which always exits 0).
"""

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

import polib

from autograd_recipes.project import PROJECT

# Interface strings for the theme and extensions, not made from the documents
NOT_FROM_DOCUMENTS = {"sphinx"}

# Inline markup of reST and MyST, tried in this order at each position.
MARKUP = re.compile(
    r"""
    (?P<role>(?::[\w.+-]+(?::[\w.+-]+)?:|\{[\w:.+-]+\})(?P<rq>`+)(?P<rbody>.+?)(?P=rq)(?!`))
  | (?P<ref>`(?P<refbody>[^`]+)`__?)                             # reST `text <url>`_
  | (?P<code>(?P<q>`+)(?P<body>.+?)(?P=q)(?!`))                   # ``code``, `code`
  | (?P<link>!?\[[^\]]*\]\((?P<target>[^)\s]*)[^)]*\))            # MyST [text](target)
  | (?P<url><?https?://[^\s<>`]+>?)
""",
    re.VERBOSE,
)
TITLED_TARGET = re.compile(r"(?s).*?<([^<>]+)>\s*$")  # "title <target>"
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
HTML = re.compile(r"<[A-Za-z!/][^<>\s]*>?")
DIRECTIVE = re.compile(r"\.\.\s+(?:[\w:.+-]+::|_[^:\s]*:|\|)|(?:`{3,}|:{3,})\s*\{")
PLACEHOLDER = re.compile(r"%(?:\(\w+\))?[#0 +-]?\d*(?:\.\d+)?[sdifreExXgGc%]|\{[\w.\[\]]*\}")
POSITIONAL = {"%s", "%d", "%i", "%f", "%r", "{}"}  # filled in order: Korean word order cannot move them
# a conversion as Python's % operator reads one (%% included): where the msgid has one, the code
# formats the message with %, and a % in the msgstr that starts none fails there (a crash)
PERCENT_FORMAT = re.compile(r"%(?:\([^)]*\))?[#0 +-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[diouxXeEfFgGcrsa%]")


def _target(body):
    titled = TITLED_TARGET.match(body)
    return (titled.group(1) if titled else body).strip()


def markup(text):
    """What a message's markup pins down, and the prose left around it."""
    found = {"inline code differs": [], "roles differ": [], "link targets differ": []}  # by report
    for m in MARKUP.finditer(text):
        if m["role"]:
            name = m["role"][: m.start("rq") - m.start()]
            found["roles differ"].append(f"{name}`{_target(m['rbody'])}`")
        elif m["ref"]:
            found["link targets differ"].append(_target(m["refbody"]))
        elif m["code"]:
            found["inline code differs"].append(m["body"].strip() or m["body"])
        else:
            found["link targets differ"].append(m["target"] if m["link"] else m["url"].strip("<>"))
    return found, MARKUP.sub(" ", text)


def _differs(what, english, korean):
    """'<what> (msgid [...], msgstr [...])' when the two use different tokens, in any order.

    Sets, not counts: Korean often names the subject again where English says "it"
    (``out``\\ 을 ... ``out``\\ 으로), which changes no code."""
    only_en, only_ko = set(english) - set(korean), set(korean) - set(english)
    if only_en or only_ko:
        return f"{what} (msgid {sorted(only_en)}, msgstr {sorted(only_ko)})"
    return None


def _added(kind, pattern, english, korean):
    extra = Counter(pattern.findall(korean)) - Counter(pattern.findall(english))
    return f"{kind} in msgstr {sorted(extra.elements())}" if extra else None


def translation_faults(msgid, msgstr, interface=False):
    """Kinds of fault in one translation: markup or numbers that the msgid does not have."""
    if interface:  # put into HTML templates as is, not parsed as reST or MyST
        english, korean = PLACEHOLDER.findall(msgid), PLACEHOLDER.findall(msgstr)
        positional = [[p for p in side if p in POSITIONAL] for side in (english, korean)]
        return [
            fault
            for fault in (
                _differs("placeholders differ", english, korean),
                positional[0] != positional[1]
                and Counter(english) == Counter(korean)
                and f"placeholders reordered (msgid {positional[0]}, msgstr {positional[1]})",
                _differs(
                    "numbers differ",
                    NUMBER.findall(PLACEHOLDER.sub(" ", msgid)),
                    NUMBER.findall(PLACEHOLDER.sub(" ", msgstr)),
                ),
                _added("raw HTML", HTML, msgid, msgstr),
                PERCENT_FORMAT.search(msgid)
                and "%" in PERCENT_FORMAT.sub("", msgstr)
                and "a bare % in msgstr, which the code's % formatting fails on (write %% for a percent sign)",
            )
            if fault
        ]
    english, english_prose = markup(msgid)
    korean, korean_prose = markup(msgstr)
    if korean_prose.count("`") != english_prose.count("`"):
        return ["unbalanced backticks"]  # the other comparisons would only repeat it
    faults = [_differs(what, english[what], korean[what]) for what in english]
    faults.append(_differs("numbers differ", NUMBER.findall(english_prose), NUMBER.findall(korean_prose)))
    faults.append(_added("directive", DIRECTIVE, msgid, msgstr))
    faults.append(_added("raw HTML", HTML, english_prose, korean_prose))
    return [fault for fault in faults if fault]


def document_names(root):
    """The documents Sphinx builds, named as their catalogs are (docs/x.md -> x)."""
    names = {p.stem for p in (root / "docs").glob("*") if p.suffix in {".rst", ".md"}}
    recipes, gallery = root / PROJECT.recipes_dir.relative_to(PROJECT.root), PROJECT.gallery_dir
    names |= {PROJECT.recipe_docname(p, recipes) for p in PROJECT.recipes(recipes)}
    if PROJECT.gallery_header(recipes):
        names.add(f"{gallery}/index")  # sphinx-gallery's index page, made from the header
    return names


def catalog_problems(locale_dir, pot_dir=None):
    """Every problem of the catalogs in ``locale_dir``, ``<project>/locales/<lang>/LC_MESSAGES``."""
    problems = []
    catalogs = sorted(locale_dir.rglob("*.po"))
    known = {p.relative_to(locale_dir).with_suffix("").as_posix() for p in catalogs}
    missing = sorted(document_names(locale_dir.parents[2]) - known)
    for name in missing:
        problems.append(
            f"{locale_dir / name}.po: missing catalog: document {name} would be "
            "published in English (run nox -s i18n)"
        )
    for po_path in catalogs:
        name = po_path.relative_to(locale_dir).with_suffix("").as_posix()
        po = polib.pofile(str(po_path))
        for kind, entries in (
            ("untranslated", po.untranslated_entries()),
            ("fuzzy", po.fuzzy_entries()),
            ("obsolete", po.obsolete_entries()),
        ):
            for entry in entries:
                problems.append(f"{po_path}:{entry.linenum}: {kind}: {entry.msgid[:70]!r}")
        for entry in po.translated_entries():
            for fault in translation_faults(entry.msgid, entry.msgstr, name in NOT_FROM_DOCUMENTS):
                problems.append(f"{po_path}:{entry.linenum}: {fault}: {entry.msgid[:70]!r}")
        if pot_dir is None or name in NOT_FROM_DOCUMENTS:
            continue
        pot_path = pot_dir / f"{name}.pot"
        if not pot_path.is_file():
            problems.append(f"{po_path}: no English document {name} any more")
            continue
        english = {e.msgid for e in polib.pofile(str(pot_path))}
        korean = {e.msgid for e in po if not e.obsolete}
        for msgid in sorted(english - korean):
            problems.append(f"{po_path}: English changed, no Korean for: {msgid[:70]!r}")
        for msgid in sorted(korean - english):
            problems.append(f"{po_path}: Korean for English that is gone: {msgid[:70]!r}")
    if pot_dir is not None:
        for pot_path in sorted(pot_dir.rglob("*.pot")):
            name = pot_path.relative_to(pot_dir).with_suffix("").as_posix()
            if name not in known and name not in missing:
                problems.append(f"{pot_path}: document has no Korean catalog (run nox -s i18n)")
    return problems


def translated_locales():
    """locales/<lang>/LC_MESSAGES of every language but the source, from conf.py's site_languages."""
    return [PROJECT.catalogs(lang) for lang in PROJECT.translations]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pot", type=Path, help="folder of .pot templates to check drift against")
    parser.add_argument(
        "--locale",
        type=Path,
        action="append",
        help="a locales/<lang>/LC_MESSAGES folder (default: every translation's)",
    )
    args = parser.parse_args(argv)
    problems, total = [], 0
    for locale in args.locale or translated_locales():
        problems += catalog_problems(locale, args.pot)
        total += sum(len(polib.pofile(str(p)).translated_entries()) for p in locale.rglob("*.po"))
    for line in problems:
        print(line)
    print(f"{total} translated messages, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
