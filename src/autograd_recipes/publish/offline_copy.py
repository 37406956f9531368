"""Each language's whole site as one ZIP file, linked from its landing page with its size.

``.. offline-copy::`` (docs/index.rst) writes the paragraph with the link; src/autograd_recipes/publish/build.py
calls :func:`write_offline_copy` once the language is built, which writes
``build/html/<project>-<lang>.zip`` beside the language folders (published with them,
so the archive never contains itself) and puts its size into the landing page.

The archive holds ``<project>-<lang>/`` with every file of ``build/html/<lang>/``
except dot files (Sphinx's ``.buildinfo``). The pages already work from ``file://``;
the links that leave the language's folder (the language switch, this download link)
would lead nowhere in an unpacked copy, so in the archive they point at the published
site (conf.py's ``site_url``). It is deterministic: entries sorted, every timestamp
``SOURCE_DATE_EPOCH``'s, fixed permissions and compression, so identical pages give an
identical archive.

The size shown is a build figure (the pages carry measured run times), so it is marked
``measured``; and the landing page is inside the archive whose size it shows. The page
is written with a size, archived, and written again until the size it shows is the
archive's (one or two rounds; where rounding to 0.1 MB never settles, a finer figure does).
"""

import hashlib
import posixpath
import re
import time
import zipfile
from io import BytesIO
from pathlib import Path
from urllib.parse import unquote, urlsplit

from docutils import nodes
from sphinx.locale import _  # Korean for these strings: locales/ko/LC_MESSAGES/sphinx.po
from sphinx.util.docutils import SphinxDirective

UNKNOWN_SIZE = (
    "?"  # what Sphinx writes; src/autograd_recipes/publish/build.py puts the real size in its place
)
SIZE_SLOT = re.compile(r'(<span class="offline-size"><span class="measured">)(.*?)(</span></span>)')
LINK = re.compile(r'(\s(?:href|src)=")([^"]*)(")')
OUTSIDE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|/|#)", re.I)  # absolute, rooted or same-page
# Sphinx never removes an image or download that no page uses any more: an incremental build
# keeps them, so the copy takes from these folders only what a page refers to
GENERATED = re.compile(r"(?:_images|_downloads)/[^\"'\s)#?<>]+")
ZIP_EPOCH = 315532800  # 1980-01-01: the earliest time a ZIP entry can carry
ROUNDS = 4


def archive_name(project, lang):
    """``Autograd Recipes``, ``ko`` -> ``autograd-recipes-ko.zip``."""
    return f"{archive_folder(project, lang)}.zip"


def archive_folder(project, lang):
    slug = re.sub(r"[^a-z0-9]+", "-", project.lower()).strip("-")
    return f"{slug}-{lang}"


class OfflineCopy(SphinxDirective):
    """The landing page's paragraph: a link to the language's archive, and its size."""

    def run(self):
        config = self.config
        to_root = "../" * (self.env.docname.count("/") + 1)  # from this page to build/html/
        link = nodes.reference(
            "",
            _("download all pages in %s as one ZIP file") % config.site_languages[config.language],
            refuri=to_root + archive_name(config.project, config.language),
            classes=["offline-copy"],
        )
        size = nodes.inline("", "", nodes.inline(UNKNOWN_SIZE, UNKNOWN_SIZE, classes=["measured"]))
        size["classes"].append("offline-size")
        para = nodes.paragraph(classes=["offline-copy"], translatable=False)
        para += nodes.strong("", _("Offline copy:"))
        para += [nodes.Text(" "), link, nodes.Text(" ("), size, nodes.Text("). ")]
        para += nodes.Text(_("Unpack it and open index.html: every page works without a network connection."))
        return [para]


def format_size(size, lang, digits=1):
    """``size`` bytes in megabytes, in ``lang``'s digits and unit symbol: ``0.7 MB``. A space
    always parts the number from the unit, as in the site's other figures (``82 ms``,
    ``10.00 MiB``), though Korean's CLDR pattern has none (``0.7MB``)."""
    from babel.numbers import format_decimal
    from babel.units import format_unit

    pattern = "#,##0." + "0" * digits
    text = format_unit(size / 1_000_000, "digital-megabyte", length="short", locale=lang, format=pattern)
    number = format_decimal(size / 1_000_000, pattern, locale=lang)
    if text.startswith(number) and not text[len(number) :][:1].isspace():
        text = f"{number} {text[len(number) :]}"
    return text


def outward_links(html, page, site_url):
    """``html`` of ``page`` (its path below build/html/, e.g. ``en/recipes/x.html``) with
    every relative link that leaves the page's language folder made absolute on
    ``site_url``."""
    folder = page.split("/", 1)[0]
    base = site_url.rstrip("/") + "/"

    def absolute(match):
        url = match.group(2)
        if not url or OUTSIDE.match(url):
            return match.group(0)
        parts = urlsplit(url)
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page), parts.path))
        if target == folder or target.startswith(folder + "/"):
            return match.group(0)
        rest = ("?" + parts.query if parts.query else "") + ("#" + parts.fragment if parts.fragment else "")
        return match.group(1) + base + target + rest + match.group(3)

    return LINK.sub(absolute, html)


def used_generated_files(tree):
    """The files under ``_images/`` and ``_downloads/`` that a page of ``tree`` refers to."""
    return {
        unquote(m.group(0)) for p in tree.rglob("*.html") for m in GENERATED.finditer(p.read_text("utf-8"))
    }


def archive_bytes(tree, folder, epoch, site_url):
    """The ZIP of ``tree`` (build/html/<lang>) below ``folder``/, as bytes: every file but
    hidden ones and images or downloads no page uses (left by an earlier build)."""
    stamp = time.gmtime(max(int(epoch), ZIP_EPOCH))[:6]
    lang = tree.name
    used = used_generated_files(tree)
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(p for p in tree.rglob("*") if p.is_file()):
            rel = path.relative_to(tree).as_posix()
            if any(part.startswith(".") for part in rel.split("/")):
                continue
            if rel.split("/")[0] in ("_images", "_downloads") and rel not in used:
                continue
            data = path.read_bytes()
            if path.suffix == ".html":
                data = outward_links(data.decode("utf-8"), f"{lang}/{rel}", site_url).encode("utf-8")
            info = zipfile.ZipInfo(f"{folder}/{rel}", date_time=stamp)
            info.create_system = 3  # Unix, wherever it is built
            info.external_attr = 0o100644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(
                info, data, compresslevel=6
            )  # zlib's default: 9 takes twice the time for 0.6 % less
    return buffer.getvalue()


def write_offline_copy(html, lang, project, site_url, epoch):
    """Write ``html/<project>-<lang>.zip`` and its size into ``html/<lang>/index.html``;
    return (archive path, size text). Where the tree, the settings, this module and the
    archive are those the last write left (``.<archive>.key`` beside ``html``: a rebuild
    that changed no page), the archive is kept as it is."""
    html = Path(html)
    tree, index = html / lang, html / lang / "index.html"
    page = index.read_text(encoding="utf-8")
    slots = SIZE_SLOT.findall(page)
    if len(slots) != 1:
        raise ValueError(
            f"{index}: no place for the offline copy's size (is `.. offline-copy::` on the page?)"
        )
    folder = archive_folder(project, lang)
    target = html / archive_name(project, lang)
    memo = html.parent / f".{target.name}.key"
    if (
        target.is_file()
        and memo.is_file()
        and memo.read_text() == _key(tree, target, folder, epoch, site_url)
    ):
        return target, slots[0][1]
    data, shown = _settle(tree, index, page, folder, lang, epoch, site_url)
    target.write_bytes(data)
    memo.write_text(_key(tree, target, folder, epoch, site_url))
    return target, shown


def _key(tree, target, *settings):
    """A digest of everything the archive is made from (every file of ``tree``, ``settings``,
    this module) and of the archive itself."""
    digest = hashlib.sha256(repr(settings).encode() + Path(__file__).read_bytes())
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        digest.update(path.relative_to(tree).as_posix().encode() + b"\0" + path.read_bytes())
    digest.update(b"\0archive\0" + target.read_bytes())
    return digest.hexdigest()


def _settle(tree, index, page, folder, lang, epoch, site_url):
    """(archive, size text) such that the archive's landing page shows the archive's size."""
    shown = None
    for digits in (1, 2, 3):
        shown = None
        for _round in range(ROUNDS):
            data = archive_bytes(tree, folder, epoch, site_url)  # of the page as it is now
            size = format_size(len(data), lang, digits)
            if size == shown:
                return data, size
            shown = size
            index.write_text(SIZE_SLOT.sub(rf"\g<1>{size}\g<3>", page), encoding="utf-8")
    # never settled (not seen): the page shows a size within rounding of its archive's
    return archive_bytes(tree, folder, epoch, site_url), shown


def setup(app):
    app.add_directive("offline-copy", OfflineCopy)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
