"""The source formats by name, and `load_document`, which picks one and loads a file with it.

A format is a `SourceFormat`: its name, the extensions it claims, how it recognizes a file whose
extension no format claims (`detect`, on the file's first 20,000 bytes), its loader, and the
locators of its own it resolves (`resolve_locator`). `FORMATS` is `citeaudit.registry`'s registry
of them: each built-in format is one module of this package that declares `FORMAT`, the package
registers them (`citeaudit/sources/__init__.py`), and another package adds one through the
entry-point group `citeaudit.formats` (or a program with `register_format`).

How a file's format is chosen (`detect_format`): first its bytes, whatever its name (a compressed
file, an archive, an office document or UTF-16/32 text is refused for what it is,
`reading.not_text`); then the format named (`format=`, or `--format`), else the one that claims
the file's extension, else the first whose `detect` recognizes the text, else (XML no format
recognized is refused, naming its root) plain text (`FALLBACK`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from citeaudit import registry
from citeaudit.errors import SourceError
from citeaudit.sources.document import Document, Section
from citeaudit.sources.reading import HEAD_BYTES, read_head, refuse_not_text, resolve_source
from citeaudit.table import SECTION_READINGS

FALLBACK = "text"  # the format of a text no format claims or recognizes
_HEAD_BYTES = 20_000  # what `detect` sees of a file


@dataclass(frozen=True)
class SourceFormat:
    """One source format.

    `load(path)` returns the `Document` (raw text, clean text with its offset map, sections,
    lines; see `document.Document`) or raises `SourceError` saying what is wrong and what to do.
    `extensions` (".md") choose it by a file's name; `aliases` are other names `--format` accepts;
    `detect(head)` recognizes a text by its first characters when no format claims its extension;
    `binary`: the file is not text (a PDF), so it is not refused for holding NUL bytes;
    `resolve_locator(document, locator)` names the section a locator of this format's own
    denotes (None: not one of its locators; the common ones, `locate.locators`, are tried next);
    `evidence(document, section)` is the text the judge reads for a citation found in `section`
    (None: the section's own text; a statute's paragraph or item is read in its article);
    `numbered`: the document's own numbering of its parts makes its sections (`numbering`), and
    `load(path, sections=...)` takes the reading (`auto`, `numbered`, `paragraphs`).
    """

    name: str
    load: Callable[..., Document]
    extensions: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    detect: Callable[[str], bool] | None = None
    binary: bool = False
    resolve_locator: Callable[[Document, str], str | None] | None = None
    evidence: Callable[[Document, Section], str] | None = None
    numbered: bool = False


def evidence_of(document: Document, section: Section) -> str:
    """What the judge reads for a citation found in `section` (`SourceFormat.evidence`); a numbered
    clause is read under the numbers and captions of the clauses that hold it, outermost first ("4.
    Termination" above "(b) ..."), so a sub-item names what it is a part of. The table's `evidence`
    (what a reviewer reads and a review binds) is this same text."""
    own = FORMATS.find(document.format)
    if own is not None and own.evidence is not None:
        return own.evidence(document, section)
    captions: list[str] = []
    parent = document.parents.get(section.id)
    while parent is not None and parent in document.sections and len(captions) < 4:
        above = document.sections[parent]
        first = above.text.split("\n", 1)[0][:200].strip()
        # its number and caption: "2. Grant of Licence" (not the sentence after it); "Article 17"
        # with its caption on the next line reads "Article 17 Right to erasure"
        at = first.find(above.title) if above.title else -1
        captions.append(first[: at + len(above.title)] if at >= 0 else f"{first} {above.title}".strip())
        parent = document.parents.get(parent)
    return "\n".join([*reversed(captions), section.text]) if captions else section.text


FORMATS: registry.Registry[SourceFormat] = registry.FORMATS  # name -> format, in the order --format lists them


def _claims_nothing_taken(name: str, source_format: SourceFormat) -> None:
    """`FORMATS.validate`: `ValueError` when a format's name, an alias or an extension is taken."""
    registered = FORMATS.registered()
    taken = {name.lower(): fmt.name for fmt in registered for name in (fmt.name, *fmt.aliases)}
    for each in (source_format.name, *source_format.aliases):
        if each.lower() in taken:
            raise ValueError(f"format name {each!r} is taken by the {taken[each.lower()]!r} format")
    claimed = {ext: fmt.name for fmt in registered for ext in fmt.extensions}
    for ext in source_format.extensions:
        if not ext.startswith(".") or ext != ext.lower():
            raise ValueError(f"extension {ext!r}: write it in lower case with its dot, like '.md'")
        if ext in claimed:
            raise ValueError(f"extension {ext!r} is claimed by the {claimed[ext]!r} format")


FORMATS.validate = _claims_nothing_taken


def register_format(source_format: SourceFormat) -> SourceFormat:
    """Add a format to `FORMATS`; `ValueError` when its name, an alias or an extension is taken."""
    return FORMATS.register(source_format.name, source_format)


def _named(format: str) -> SourceFormat:
    wanted = format.lower()
    for fmt in FORMATS.values():
        if wanted in (fmt.name.lower(), *(alias.lower() for alias in fmt.aliases)):
            return fmt
    raise SourceError(f"unknown document format {format!r}: use one of {', '.join(FORMATS)}")


def detect_format(path: Path, format: str | None = None) -> str:
    """The name of the format `path` is loaded with (see the module's docstring): `format` if
    given (a name or an alias such as `md`, `htm`, `txt`), else by extension, else by content; a
    text that opens with an XML declaration is XML whatever its extension (e-Gov, XHTML by the
    extension that claims it, or refused naming its root)."""
    raw = read_head(path, _HEAD_BYTES)
    refuse_not_text(path, raw[:HEAD_BYTES], "source document")  # a .txt that is gzip is gzip
    if format is not None:
        return _named(format).name
    head = raw.decode("utf-8", errors="replace")
    declared = _XML_DECLARATION.match(head) is not None  # XML by its bytes, whatever its name says
    suffix = path.suffix.lower()
    by_name = next((fmt.name for fmt in FORMATS.values() if suffix in fmt.extensions), None)
    if by_name is not None and not declared:
        return by_name
    for fmt in FORMATS.values():
        if fmt.detect is not None and fmt.detect(head):
            return fmt.name
    root = xml_root(head)
    if root is not None:  # XML no format recognized: refused, not read as plain text, tags and all
        raise SourceError(f"{path} is XML (root <{root}>), not e-Gov law XML (root <Law> or <DataRoot>), the "
                          "one XML citeaudit reads. Export the document as text, HTML or PDF, or pass --format "
                          "text to read it as plain text, tags and all.")
    return by_name or FALLBACK


_XML_DECLARATION = re.compile(r"^\ufeff?\s*<\?xml\s")
_XML_ROOT = re.compile(r"^\ufeff?\s*(<\?xml[^>]*\?>\s*)?"  # a declaration, then comments, instructions, a DOCTYPE
                       r"(?:(?:<!--.*?-->|<\?.*?\?>|<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>)\s*)*<([A-Za-z_][\w.:-]*)", re.S)


def xml_root(head: str) -> str | None:
    """The root element's name when a text is XML: it opens with an XML declaration, or its first
    element (after comments and a document type) closes later in `head`; None for anything else,
    HTML included (a format of its own).

    >>> xml_root('<?xml version="1.0"?><rss version="2.0">'), xml_root("<b>bold</b> text"), xml_root("text")
    ('rss', None, None)
    """
    found = _XML_ROOT.match(head)
    if found is None or found.group(2).lower() == "html":
        return None
    root = found.group(2)
    return root if found.group(1) or head.rstrip().endswith(f"</{root}>") else None


def load_document(source: str | Path, format: str | None = None, sections: str = "auto", *,
                  dirs: Sequence[Path] = (), download_dir: Path | None = None) -> Document:
    """Load a source document of any registered format; `format` names one (default: detected).

    `source` is a path or a name `resolve_source` finds in `dirs` (a pinned RFC found nowhere is
    downloaded to `download_dir`); the format's loader is given the path found. A text format's file that holds binary
    data, and a document with no text, are refused with a `SourceError` that says what to do.
    `sections`: for the formats that read a document's own numbering (plain text, Markdown, HTML,
    PDF), `auto` (numbered clauses when their numbering is consistent), `numbered` or `paragraphs`
    (the format's own sections); `Document.reading` says which was used and why.
    """
    if sections not in SECTION_READINGS:
        raise SourceError(f"unknown sections reading {sections!r}: use {', '.join(SECTION_READINGS[:-1])} "
                          f"or {SECTION_READINGS[-1]}")
    path = resolve_source(source, dirs=dirs, download_dir=download_dir)
    chosen = FORMATS[detect_format(path, format)]
    if not chosen.binary:
        _refuse_binary(path, chosen.name)
    document = chosen.load(path, sections=sections) if chosen.numbered else chosen.load(path)
    if not document.clean.strip():
        raise SourceError(f"{path} has no text to check citations against (an empty {chosen.name} document). "
                          "Pass the document the answer cites.")
    return document if document.format else replace(document, format=chosen.name)


def _refuse_binary(path: Path, chosen: str) -> None:
    head = read_head(path, 65_536)
    if head.startswith(b"%PDF-"):
        raise SourceError(f"{path} is a PDF file, not {chosen} text: rename it to .pdf or pass --format pdf.")
    if b"\x00" in head:
        raise SourceError(f"{path} holds binary data (NUL bytes), not {chosen} text. Check that the path names "
                          "the document the answer cites, and pass --format if its extension is wrong.")
