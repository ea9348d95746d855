"""Locators as LLMs write them, resolved to a part of a `Document`.

A quote citation names where its quote is: `4.1.3`, `Section 4.1.3`, `§2`, a heading title or its
slug (`Token lifetime`, `#token-lifetime`), an HTML anchor, a page (`p. 7`, `page 3`), a page range
(`pages 3-4`, `pp. 3-4`), a page and a section (`page 3, section 2.1`) or lines (`[L2-L3]`,
`lines 2-3`). `resolve` turns that text into the id of one of the document's sections (headings,
pages, anchors, and the page or line ranges `with_cited_regions` adds), or None when the document
has no such part: a citation of an unknown part whose quote is found nowhere is `fabricated`. A
format may offer locators of its own (`SourceFormat.resolve_locator`): they are tried first.

Resolution is strict: every part of a locator must exist ("page 99, section 2.1" names no part of
a 4-page document even if it has a section 2.1). A page and a section together resolve to the
section when it overlaps the page, else to the page (the quote is then looked for on that page).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from citeaudit.citations.records import Citation, SectionRef
from citeaudit.sources.document import Document, Section, key, line_id, page_id
from citeaudit.sources.registry import FORMATS

_DASH = r"\s*(?:-|–|—|to|through|and)\s*"
_PAGES = re.compile(rf"\b(?:pages?|pp?|pgs?)(?![a-z])\.?\s*(\d{{1,6}})(?:{_DASH}(?:pp?\.?\s*)?(\d{{1,6}}))?",
                    re.IGNORECASE)
_LINES = re.compile(rf"\[\s*L(\d{{1,9}})(?:\s*-\s*L?(\d{{1,9}}))?\s*\]|\bL(\d{{1,9}})(?:\s*-\s*L?(\d{{1,9}}))?\b"
                    rf"|\blines?\s+(\d{{1,9}})(?:{_DASH}(\d{{1,9}}))?", re.IGNORECASE)
_NUMBER = re.compile(r"^(?:(?:section|sec|clause|chapter|part|heading)\b\.?\s*|§+\s*)?(\d+(?:\.\d+)*)\.?(?:\s+(.*))?$",
                     re.IGNORECASE)
_FILLER = re.compile(r"^(?:the\s+)?(?:(?:section|heading|chapter|part)\s+)?|(?:\s+(?:section|heading|chapter|part))$",
                     re.IGNORECASE)


@dataclass(frozen=True)
class ParsedLocator:
    """What a locator names: pages, lines, a section number, an anchor or a heading name."""

    pages: tuple[int, int] | None = None
    lines: tuple[int, int] | None = None
    number: str | None = None
    name: str | None = None  # an anchor, a slug or a heading title

    @property
    def empty(self) -> bool:
        return self.pages is None and self.lines is None and self.number is None and not self.name


def _range(first: str, last: str | None) -> tuple[int, int]:
    return int(first), int(last) if last else int(first)


def parse_locator(text: str) -> ParsedLocator:
    """Split a locator into its parts.

    >>> parse_locator("page 3, section 2.1")
    ParsedLocator(pages=(3, 3), lines=None, number='2.1', name=None)
    >>> parse_locator("pp. 3-4").pages, parse_locator("§2").number, parse_locator("#token-lifetime").name
    ((3, 4), '2', 'token-lifetime')
    >>> parse_locator("[L2-3]").lines, parse_locator("the Token lifetime section").name
    ((2, 3), 'Token lifetime')
    """
    rest = text.strip()
    pages = lines = None
    found = _PAGES.search(rest)
    if found:
        pages = _range(found.group(1), found.group(2))
        rest = rest[: found.start()] + " " + rest[found.end() :]
    found = _LINES.search(rest)
    if found:
        groups = [g for g in found.groups() if g is not None]
        lines = _range(groups[0], groups[1] if len(groups) > 1 else None)
        rest = rest[: found.start()] + " " + rest[found.end() :]
    rest = rest.strip(" \t\n,;:()[]/").strip()
    if "#" in rest:  # an anchor, perhaps at the end of a URL
        return ParsedLocator(pages, lines, None, rest.rsplit("#", 1)[1].strip() or None)
    number = None
    found = _NUMBER.match(rest)
    if found:
        number, rest = found.group(1), found.group(2) or ""
    name = _FILLER.sub("", rest.strip().strip("\"'“”‘’")).strip().strip("\"'“”‘’").strip() or None
    if number is not None:
        name = None  # "Section 3.1 Offers": the number decides
    return ParsedLocator(pages, lines, number, name)


def _by_name(document: Document, name: str) -> str | None:
    wanted = key(name)
    if not wanted:
        return None
    if wanted in document.aliases:
        return document.aliases[wanted]
    for sid, section in document.sections.items():
        if wanted in (key(sid), key(section.title), key(f"{sid} {section.title}")):
            return sid
    return None


def _overlaps(a: Section, b: Section) -> bool:
    return a.clean_start < b.clean_end and b.clean_start < a.clean_end


def resolve(document: Document, locator: str | None) -> str | None:
    """The id of the part of `document` that `locator` names, or None if it names none.

    An id of `document.sections` written as is resolves to itself; then the locators of the
    document's own format (`SourceFormat.resolve_locator`) are tried; otherwise the locator is
    parsed (`parse_locator`) and every part it names must exist.
    """
    if locator is None or not locator.strip():
        return None
    text = locator.strip()
    if text in document.sections:
        return text
    own = FORMATS.get(document.format)
    if own is not None and own.resolve_locator is not None:  # the document's format's own locators first
        found = own.resolve_locator(document, text)
        if found is not None:
            return found
    parsed = parse_locator(text)
    if parsed.empty:
        return None
    if parsed.lines is not None:
        lid = line_id(*parsed.lines)
        return lid if lid in document.sections and parsed.pages is None else None
    target = None
    if parsed.number is not None:
        target = parsed.number if parsed.number in document.sections else None
        if target is None:
            return None
    elif parsed.name:
        target = _by_name(document, parsed.name)
        if target is None:
            return None
    if parsed.pages is None:
        return target
    pid = page_id(*parsed.pages)
    if pid not in document.sections:
        return None
    if target is not None and _overlaps(document.sections[target], document.sections[pid]):
        return target
    return pid


def _region(document: Document, sid: str, title: str, c_start: int, c_end: int) -> Section | None:
    """A section over the clean text `[c_start, c_end)`, trimmed of surrounding whitespace."""
    chunk = document.clean[c_start:c_end]
    text = chunk.strip()
    if not text:
        return None
    lo = c_start + len(chunk) - len(chunk.lstrip())
    hi = lo + len(text)
    return Section(sid, title, text, int(document.clean_to_raw[lo]), int(document.clean_to_raw[hi - 1]) + 1, lo, hi)


def _cited_region(document: Document, parsed: ParsedLocator) -> Section | None:
    if parsed.pages is not None and parsed.pages[0] < parsed.pages[1]:
        first, last = parsed.pages
        pages = [document.sections.get(page_id(n)) for n in range(first, last + 1)]
        if any(p is None for p in pages):
            return None
        return _region(document, page_id(first, last), page_id(first, last),
                       pages[0].clean_start, pages[-1].clean_end)  # type: ignore[union-attr]
    if parsed.lines is not None and parsed.pages is None:
        first, last = parsed.lines
        if not 1 <= first <= last <= len(document.lines):
            return None
        raw_start, raw_end = document.lines[first - 1].start, document.lines[last - 1].end
        return _region(document, line_id(first, last), line_id(first, last),
                       document.clean_offset(raw_start), document.clean_offset(raw_end))
    return None


def with_cited_regions(document: Document, citations: Iterable[Citation]) -> Document:
    """`document` with a section for every page range and line range the citations cite.

    Pages are sections of a PDF from the start; a range of them ("pages 3-4") or of lines
    ("lines 2-3") becomes one only when cited, so the quote search does not scan every range.
    The document is returned unchanged when no citation cites such a range.
    """
    extra: dict[str, Section] = {}
    for citation in citations:
        if not isinstance(citation.locator, SectionRef) or citation.locator.section in document.sections:
            continue
        region = _cited_region(document, parse_locator(citation.locator.section))
        if region is not None and region.id not in document.sections:
            extra[region.id] = region
    if not extra:
        return document
    return replace(document, sections={**document.sections, **extra})
