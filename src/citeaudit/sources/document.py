"""The `Document` every source format is loaded into, and the offsets it carries.

A `Document` keeps the raw text exactly as read and a *clean* copy (page furniture removed: an
RFC's page headers, footers and form feeds, a PDF's running headers; runs of blank lines folded;
for Markdown and HTML the text a reader sees) together with an offset map from every clean
character back to the raw text. Sections and lines carry `[start, end)` offsets into the raw text,
so anything located in the clean copy can be highlighted in the original file.

Section ids and locator keys are named here too (`slug`, `key`, `page_id`, `line_id`): a format
names its sections with them and `locate.locators` resolves a citation's locator with them.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np

_SECTION_ID = re.compile(r"^\s*(?:section\s*|§\s*)?(\d+(?:\.\d+)*)\.?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Section:
    """A numbered section: `id` like "4.1.3", its title, its clean text and raw `[start, end)`."""

    id: str
    title: str
    text: str
    start: int
    end: int
    clean_start: int
    clean_end: int


@dataclass(frozen=True)
class Line:
    """Line `number` (from 1) of the raw file, its text and raw `[start, end)` (newline excluded)."""

    number: int
    text: str
    start: int
    end: int


@dataclass(frozen=True, eq=False)
class Document:
    """A loaded source: raw text, clean text with its offset map, sections and lines."""

    name: str
    raw: str
    clean: str
    clean_to_raw: np.ndarray = field(repr=False)
    sections: dict[str, Section] = field(repr=False)
    lines: Sequence[Line] = field(repr=False)
    aliases: dict[str, str] = field(default_factory=dict, repr=False)  # locator key -> section id (anchors)
    format: str = ""  # the name of the format that loaded it (`load_document` sets it)
    parents: dict[str, str] = field(default_factory=dict, repr=False)  # clause id -> its parent's (numbering)
    reading: str = ""  # how the sections were read and why ("numbered clauses: 9, with 26 sub-clauses")

    def section(self, section_id: str) -> Section | None:
        """The section a citation names, written `4.1.3`, `4.1.3.`, `Section 4.1.3` or `§4.1.3`."""
        canonical = canonical_section_id(section_id)
        return self.sections.get(canonical) if canonical else None

    def section_at(self, clean_offset: int) -> Section | None:
        """The first section (in document order of `sections`) whose clean range holds `clean_offset`.

        Sections of an RFC do not overlap and are found by bisection; those of other formats may
        (pages and headings, anchors inside sections), and the first one listed that holds the
        offset is the answer, as for a document without overlaps.
        """
        starts, ordered, overlapping = self._sections_by_start
        if overlapping:
            return next((s for s in self.sections.values() if s.clean_start <= clean_offset < s.clean_end), None)
        i = bisect.bisect_right(starts, clean_offset) - 1
        if i >= 0 and ordered[i].clean_start <= clean_offset < ordered[i].clean_end:
            return ordered[i]
        return None

    @functools.cached_property
    def _sections_by_start(self) -> tuple[list[int], list[Section], bool]:
        """Sections sorted by clean start, and whether any two overlap (then `section_at` scans)."""
        ordered = sorted(self.sections.values(), key=lambda s: s.clean_start)
        overlapping = any(a.clean_end > b.clean_start for a, b in itertools.pairwise(ordered))
        return [s.clean_start for s in ordered], ordered, overlapping

    def raw_span(self, clean_start: int, clean_end: int) -> tuple[int, int]:
        """Raw `[start, end)` covering the clean characters `[clean_start, clean_end)`."""
        return int(self.clean_to_raw[clean_start]), int(self.clean_to_raw[clean_end - 1]) + 1

    def clean_offset(self, raw: int) -> int:
        """The clean index of raw offset `raw`: the first clean character at or after it."""
        # searched with the map's own dtype: an int64 (a span read back from a table) against an
        # int32 map would copy the whole map, O(document) per search
        return int(np.searchsorted(self.clean_to_raw, self.clean_to_raw.dtype.type(raw), side="left"))

    def clean_slice(self, raw_start: int, raw_end: int) -> str:
        """The clean text of raw `[raw_start, raw_end)`: the raw slice without page furniture."""
        return self.clean[self.clean_offset(raw_start):self.clean_offset(raw_end)]

    def line_range(self, first: int, last: int) -> str:
        """Lines `first..last` (1-based, inclusive) verbatim, joined by newlines."""
        return "\n".join(line.text for line in self.lines[first - 1 : last])


def canonical_section_id(section_id: str | None) -> str | None:
    """`"Section 4.1.3."` -> `"4.1.3"`; None when the text is not a section number.

    >>> [canonical_section_id(s) for s in ("4.1.3", "4.1.3.", "Section 4.1.3", "§4.1.3", "A.1")]
    ['4.1.3', '4.1.3', '4.1.3', '4.1.3', None]
    """
    if section_id is None:
        return None
    match = _SECTION_ID.match(section_id)
    return match.group(1) if match else None


def slug(text: str) -> str:
    """A heading's anchor as GitHub writes it: lower case, punctuation dropped, spaces to hyphens.

    >>> slug("2.1 Token Lifetime (Access Tokens)")
    '21-token-lifetime-access-tokens'
    """
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def key(text: str) -> str:
    """A lenient comparison key: runs of anything but letters and digits become one hyphen.

    >>> key("#Token_Lifetime") == key("Token lifetime") == key("token-lifetime")
    True
    """
    return re.sub(r"[\W_]+", "-", text.strip().lower()).strip("-")


def page_id(first: int, last: int | None = None) -> str:
    """The section id of a page (`page 3`) or of a page range (`pages 3-4`)."""
    return f"page {first}" if last is None or last == first else f"pages {first}-{last}"


def line_id(first: int, last: int | None = None) -> str:
    """The section id of cited lines, as line citations label them: `L5`, `L2-L3`."""
    return f"L{first}" if last is None or last == first else f"L{first}-L{last}"


def codes_of(text: str) -> np.ndarray:
    """The code points of `text` as an array: one byte per character for ASCII, else four."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def text_of(codes: np.ndarray) -> str:
    """The inverse of `codes_of`."""
    if codes.dtype == np.uint8:
        return codes.tobytes().decode("ascii")
    return codes.astype(np.uint32, copy=False).tobytes().decode("utf-32-le", "surrogatepass")


def offset_dtype(n: int) -> type[np.signedinteger]:
    """int32 offsets while they fit (half the memory of int64), else int64."""
    return np.int32 if n < 2**31 - 1 else np.int64


def line_bounds(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`[start, end)` of every line's content (terminators `\r\n`, `\n`, `\r` excluded)."""
    n = len(codes)
    is_n = codes == 10
    is_r = codes == 13
    next_n = np.zeros(n, dtype=bool)
    next_n[:-1] = is_n[1:]
    term_last = np.flatnonzero(is_n | (is_r & ~next_n))  # the last character of each terminator
    crlf = np.zeros(len(term_last), dtype=bool)
    inner = term_last > 0
    crlf[inner] = is_n[term_last[inner]] & is_r[term_last[inner] - 1]
    starts = np.concatenate([[0], term_last + 1])
    ends = np.concatenate([term_last - crlf, [n]])
    if starts[-1] >= n:  # the text is empty or ends with a terminator: no last line
        starts, ends = starts[:-1], ends[:-1]
    return starts.astype(np.int64), ends.astype(np.int64)


class Lines(Sequence[Line]):
    """The lines of a raw text, made on access (a `Line` per line of a 10 MB text costs 5x its size)."""

    def __init__(self, raw: str, starts: np.ndarray, ends: np.ndarray):
        self._raw, self._starts, self._ends = raw, starts, ends

    def __len__(self) -> int:
        return len(self._starts)

    def _line(self, i: int) -> Line:
        start, end = int(self._starts[i]), int(self._ends[i])
        return Line(i + 1, self._raw[start:end], start, end)

    @overload
    def __getitem__(self, i: int) -> Line: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[Line, ...]: ...

    def __getitem__(self, i: int | slice) -> Line | tuple[Line, ...]:
        if isinstance(i, slice):
            return tuple(self._line(j) for j in range(*i.indices(len(self))))
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("line index out of range")
        return self._line(i)

    def __iter__(self) -> Iterator[Line]:
        return (self._line(j) for j in range(len(self)))

    def __repr__(self) -> str:
        return f"<{len(self)} lines>"


def lines_of(raw: str) -> Lines:
    """The lines of `raw`, numbered from 1, made on access."""
    return Lines(raw, *line_bounds(codes_of(raw)))
