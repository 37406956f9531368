"""Check the Korean catalogs: ``python docs/check_catalogs.py [--pot build/gettext]``.

Prints one line per problem and exits 1 if there is any:
untranslated, fuzzy or obsolete messages, and (given the .pot templates of the
current English source, from ``python docs/build.py --gettext``) drift: English
messages with no Korean entry, and Korean entries whose English is gone.
Counts come from polib, never from ``sphinx-intl stat`` (which always exits 0).
"""

import argparse
import sys
from pathlib import Path

import polib

ROOT = Path(__file__).resolve().parents[1]
# Interface strings for the theme and extensions, not made from the documents
NOT_FROM_DOCUMENTS = {"sphinx"}


def catalog_problems(locale_dir, pot_dir=None):
    problems = []
    catalogs = sorted(locale_dir.rglob("*.po"))
    for po_path in catalogs:
        name = po_path.relative_to(locale_dir).with_suffix("").as_posix()
        po = polib.pofile(str(po_path))
        for kind, entries in (("untranslated", po.untranslated_entries()),
                              ("fuzzy", po.fuzzy_entries()), ("obsolete", po.obsolete_entries())):
            for entry in entries:
                problems.append(f"{po_path}:{entry.linenum}: {kind}: {entry.msgid[:70]!r}")
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
        known = {p.relative_to(locale_dir).with_suffix("").as_posix() for p in catalogs}
        for pot_path in sorted(pot_dir.rglob("*.pot")):
            name = pot_path.relative_to(pot_dir).with_suffix("").as_posix()
            if name not in known:
                problems.append(f"{pot_path}: document has no Korean catalog (run nox -s i18n)")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pot", type=Path, help="folder of .pot templates to check drift against")
    parser.add_argument("--locale", type=Path, default=ROOT / "locales" / "ko" / "LC_MESSAGES")
    args = parser.parse_args(argv)
    problems = catalog_problems(args.locale, args.pot)
    for line in problems:
        print(line)
    total = sum(len(polib.pofile(str(p)).translated_entries()) for p in args.locale.rglob("*.po"))
    print(f"{total} translated messages, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
