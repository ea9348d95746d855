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
# a clause as LLMs cite it: "Section 4(b)", "§ 4(b)", "s. 4(b)", "Sec. 4b", "clause 4.2", "para. 3",
# "Art. 17(1)(a)", "Article 17", "subsection 6b", "Sections 5.1 and 5.2", "4(b)-(d)"
_KEYWORDS = (r"sub-?sections?|sub-?clauses?|sections?|secs?|ss?|clauses?|cls?|articles?|arts?|paragraphs?|paras?"
             r"|items?|rules?|chapter|part|heading")
_SUB = r"\((?:[a-z]{1,4}|[A-Z]|\d{1,3})\)"
_CLAUSE_NUMBER = rf"\d+(?:\.\d+)*(?:[a-z](?![a-z]))?(?:\s?{_SUB})*"
_CLAUSE = re.compile(rf"^(?:the\s+)?(?:(?P<kw>{_KEYWORDS})\b\.?\s*|(?P<sign>§{{1,2}}|¶)\s*)"
                     rf"(?P<body>{_CLAUSE_NUMBER})(?P<rest>.*)$", re.IGNORECASE)
_MORE = re.compile(rf"^\s*(?P<join>-|–|—|to|through|and|,|&)\s*(?:(?:{_KEYWORDS})\b\.?\s*|§{{1,2}}\s*)?"
                   rf"(?P<body>{_CLAUSE_NUMBER}|(?:{_SUB})+)", re.IGNORECASE)
_CODE = re.compile(r"^\d+\s+(?:C\.?F\.?R\.?|U\.?S\.?C\.?)\s*(?:§+\s*|part\s+|sec(?:tion)?\.?\s*)?", re.IGNORECASE)
_TRAILING_LETTER = re.compile(r"^(\d+(?:\.\d+)*)([a-z])$")
_FILLER = re.compile(r"^(?:the\s+)?(?:(?:section|heading|chapter|part)\s+)?|(?:\s+(?:section|heading|chapter|part))$",
                     re.IGNORECASE)


@dataclass(frozen=True)
class ParsedLocator:
    """What a locator names: pages, lines, a section number, an anchor or a heading name."""

    pages: tuple[int, int] | None = None
    lines: tuple[int, int] | None = None
    number: str | None = None
    name: str | None = None  # an anchor, a slug or a heading title
    numbers: tuple[str, ...] = ()  # every clause named when several are ("Sections 5.1 and 5.2", "4(b)-(d)")
    keyword: str | None = None  # how the clause was named, lower case: "section", "article", "paragraph", "§"

    @property
    def empty(self) -> bool:
        return self.pages is None and self.lines is None and self.number is None and not self.name


def _range(first: str, last: str | None) -> tuple[int, int]:
    return int(first), int(last) if last else int(first)


def parse_locator(text: str) -> ParsedLocator:
    """Split a locator into its parts.

    >>> parse_locator("page 3, section 2.1")
    ParsedLocator(pages=(3, 3), lines=None, number='2.1', name=None, numbers=(), keyword='section')
    >>> [parse_locator(t).number for t in ("Section 4(b)", "s. 4(b)", "Sec. 4b", "Art. 17(1)(a)", "subsection 6b")]
    ['4(b)', '4(b)', '4(b)', '17(1)(a)', '6(b)']
    >>> parse_locator("4(b)-(d)").numbers, parse_locator("Sections 5.1 and 5.2").numbers
    (('4(b)', '4(c)', '4(d)'), ('5.1', '5.2'))
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
    rest = rest.strip(" \t\n,;:[]/").strip()
    while rest.startswith("(") and rest.endswith(")"):  # "(Section 4(b))"
        rest = rest[1:-1].strip()
    rest = rest.lstrip("(").strip(" \t\n,;:[]/").strip()
    if rest.count(")") > rest.count("("):
        rest = rest.rstrip(")").strip()
    if "#" in rest:  # an anchor, perhaps at the end of a URL
        return ParsedLocator(pages, lines, None, rest.rsplit("#", 1)[1].strip() or None)
    clause = _clause(rest)
    if clause is not None:
        return replace(clause, pages=pages, lines=lines)
    number = None
    found = _NUMBER.match(rest)
    if found:
        number, rest = found.group(1), found.group(2) or ""
    name = _FILLER.sub("", rest.strip().strip("\"'“”‘’")).strip().strip("\"'“”‘’").strip() or None
    if number is not None:
        name = None  # "Section 3.1 Offers": the number decides
    return ParsedLocator(pages, lines, number, name)


def _canonical_clause(body: str) -> str:
    """`4 (b)` -> `4(b)`; `4b` -> `4(b)` (a letter written after the number is its sub-item)."""
    body = re.sub(r"\s+", "", body)
    head = re.match(r"\d+(?:\.\d+)*[a-z]?", body, re.IGNORECASE)
    assert head is not None
    found = _TRAILING_LETTER.match(head.group())
    return (f"{found.group(1)}({found.group(2)})" if found else head.group()) + body[head.end():]


def _spread(first: str, last: str) -> tuple[str, ...]:
    """The clauses from `first` to `last` when they differ in their last part (4(b)-(d), 5.1-5.3)."""
    a = re.match(r"^(.*?)(?:\(([a-z])\)|\.(\d+)|(\d+))$", first)
    b = re.match(r"^(.*?)(?:\(([a-z])\)|\.(\d+)|(\d+))$", last)
    if a is None or b is None or a.group(1) != b.group(1):
        return (first, last)
    if a.group(2) and b.group(2) and a.group(2) < b.group(2) <= "z":
        return tuple(f"{a.group(1)}({chr(c)})" for c in range(ord(a.group(2)), ord(b.group(2)) + 1))
    for g, fmt in ((3, "{}.{}"), (4, "{}{}")):
        if a.group(g) and b.group(g) and 0 < int(b.group(g)) - int(a.group(g)) <= 50:
            return tuple(fmt.format(a.group(1), n) for n in range(int(a.group(g)), int(b.group(g)) + 1))
    return (first, last)


def _clause(text: str) -> ParsedLocator | None:
    """A clause locator ("Section 4(b)", "Art. 17(1)(a)", "4(b)-(d)"), or None when `text` is not one."""
    text = _CODE.sub("§ ", text)  # "45 CFR 164.512(b)": the section of the code the document holds
    found = _CLAUSE.match(text)
    if found is None:
        found = re.match(rf"^(?P<kw>)(?P<sign>)(?P<body>\d+(?:\.\d+)*(?:\s?{_SUB})+)(?P<rest>.*)$", text)
        if found is None:
            return None
    word = (found.group("kw") or found.group("sign") or "").lower().replace("-", "")
    keyword = ("article" if word.startswith("art") else "paragraph" if word.startswith("para") or word == "¶"
               else "§" if word.startswith("§") else "clause" if word.startswith("cl") or word.startswith("subcl")
               else "section" if word else None)
    numbers = [_canonical_clause(found.group("body"))]
    rest = found.group("rest")
    while (more := _MORE.match(rest)) is not None:
        body = re.sub(r"\s+", "", more.group("body"))
        if body.startswith("("):  # "4(b)-(d)": the last part of the one before, changed
            body = re.sub(rf"(?:{_SUB})+$", "", numbers[-1]) + body if body.count("(") > 1 else \
                re.sub(rf"{_SUB}$", "", numbers[-1]) + body
        else:
            body = _canonical_clause(body)
        if more.group("join").strip().lower() in ("-", "–", "—", "to", "through"):
            numbers[-1:] = _spread(numbers[-1], body)
        else:
            numbers.append(body)
        rest = rest[more.end():]
    if rest.strip() and not re.match(r"^[\s.,;:)]*(?:[A-Z\"'“‘(]|of\b|and\b|$)", rest.strip()):
        return None  # "3 copies": not a clause
    return ParsedLocator(number=numbers[0], numbers=tuple(numbers) if len(numbers) > 1 else (), keyword=keyword)


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


def clause_range_id(numbers: tuple[str, ...]) -> str:
    """The id of the region several cited clauses make together: `5.1-5.2`, `4(b)-4(d)`."""
    return f"{numbers[0]}-{numbers[-1]}"


def _clause_id(document: Document, number: str, keyword: str | None) -> str | None:
    """The section a clause number names, or None: never another text in its place. An article
    ("Art. 17") is `Article 17`; a plain text read as paragraphs has no sections, clauses or
    articles, so only a bare number or a paragraph ("para. 3") names one of its paragraphs."""
    if keyword == "article" and f"Article {number}" in document.sections:
        return f"Article {number}"
    if number in document.sections:
        paragraphs = document.format == "text" and document.reading.startswith("paragraphs")
        return None if paragraphs and keyword not in (None, "paragraph") else number
    alias = document.aliases.get(key(number))
    return alias if alias is not None and alias.startswith("Article ") else None


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
    own = FORMATS.find(document.format)
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
    if parsed.numbers:
        region = clause_range_id(parsed.numbers)
        target = region if region in document.sections else _clause_id(document, parsed.numbers[0], parsed.keyword)
        if target is None:
            return None
    elif parsed.number is not None:
        target = _clause_id(document, parsed.number, parsed.keyword)
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


def _clauses_region(document: Document, parsed: ParsedLocator) -> Section | None:
    """The region from the first to the last of several cited clauses, when every one exists."""
    found = [document.sections.get(_clause_id(document, n, parsed.keyword) or "") for n in parsed.numbers]
    if not found or any(s is None for s in found):
        return None
    lo = min(s.clean_start for s in found if s is not None)
    hi = max(s.clean_end for s in found if s is not None)
    return _region(document, clause_range_id(parsed.numbers), clause_range_id(parsed.numbers), lo, hi)


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
        parsed = parse_locator(citation.locator.section)
        region = _cited_region(document, parsed) if not parsed.numbers else _clauses_region(document, parsed)
        if region is not None and region.id not in document.sections:
            extra[region.id] = region
    if not extra:
        return document
    return replace(document, sections={**document.sections, **extra})
