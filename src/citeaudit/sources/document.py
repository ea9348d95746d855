"""Source documents: raw text, page furniture removed, numbered sections and lines.

A `Document` keeps the raw text exactly as read and a *clean* copy (RFC page headers, footers
and form feeds removed, runs of blank lines folded) together with an offset map from every clean
character back to the raw text. Sections and lines carry `[start, end)` offsets into the raw text,
so anything located in the clean copy can be highlighted in the original file.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import itertools
import re
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

import numpy as np

from citeaudit.errors import SourceError
from citeaudit.settings import environment as config

# Official RFC texts the loader may download, with the SHA-256 of their text after line endings
# and form feeds are normalized (see `text_digest`).
PINNED_SOURCES = {
    "rfc7519.txt": "67870b397c107d4b819682f95c5fe55c5d7095c6575fb215901b45a017d8c14e",
    "rfc6749.txt": "9356c087799f71841153103ebc7a111d56e779317b823a8890b617de1c34a25b",
}
# the largest source or answer text read (loading and indexing peak near 20 bytes per byte of text)
MAX_TEXT_BYTES = 20_000_000  # every text: a source, an answer, a PDF's extracted text
MAX_FILE_BYTES = 100_000_000  # a file read whole before its text is extracted (a PDF)
RFC_EDITOR_URL = "https://www.rfc-editor.org/rfc/{name}"

_RFC_FOOTER = re.compile(r"^.*\S.*\s\[Page \d+\]\s*$")
_RFC_HEADER = re.compile(r"^RFC \d+\s{2,}.*\S\s{2,}\w+ \d{4}\s*$")
_SECTION_HEADER = re.compile(r"(?m)^(?:(\d+(?:\.\d+)*)\.\s{1,2}(\S.*)|Appendix [A-Z]\..*)$")
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

    def clean_slice(self, raw_start: int, raw_end: int) -> str:
        """The clean text of raw `[raw_start, raw_end)`: the raw slice without page furniture."""
        dtype = self.clean_to_raw.dtype.type  # a search with another dtype would copy the whole map
        lo = int(np.searchsorted(self.clean_to_raw, dtype(raw_start), side="left"))
        hi = int(np.searchsorted(self.clean_to_raw, dtype(raw_end), side="left"))
        return self.clean[lo:hi]

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


def text_digest(text: str) -> str:
    """SHA-256 of a text with CRLF/CR turned into LF and form feeds removed.

    A copy of an RFC saved with other line endings still has the same digest.
    """
    normalized = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "")
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()


def resolve_source(name_or_path: str | Path, download: bool = True) -> Path:
    """Find a source file the same way wherever citeaudit runs.

    In order: the path as given; the same relative path under the project root; the file's name in
    each of `config.source_dirs()` (`CITEAUDIT_DATA_DIR`, the working directory, `data/`,
    `../shared/data/rfc` beside the checkout); then, for names in `PINNED_SOURCES` only, a
    download checked against the pinned SHA-256 and saved under `data/` (written to a temporary
    file and renamed, never half-written). When nothing is found the error lists every place looked.
    """
    path = Path(name_or_path)
    candidates = [path]
    if not path.is_absolute():
        candidates.append(config.project_dir() / path)
    candidates += [folder / path.name for folder in config.source_dirs()]
    candidates = list(dict.fromkeys(candidates))
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    looked = "".join(f"\n  {c.absolute() if not c.is_absolute() else c}" for c in candidates)
    fix = (f"Pass the file's path, or set CITEAUDIT_DATA_DIR to the folder that holds {path.name} "
           f"(`export CITEAUDIT_DATA_DIR=/path/to/folder`).")
    if not download or path.name not in PINNED_SOURCES:
        raise SourceError(f"Source {str(name_or_path)!r} not found. Looked in:{looked}\n{fix}")
    try:
        return download_source(path.name, config.project_dir() / "data" / path.name)
    except SourceError as exc:
        raise SourceError(f"Source {str(name_or_path)!r} not found. Looked in:{looked}\n"
                          f"then tried to download it: {exc}") from exc


def download_source(name: str, dest: Path, url: str | None = None, sha256: str | None = None) -> Path:
    """Download a pinned source to `dest`, verify its digest, and only then move it into place."""
    url = url or RFC_EDITOR_URL.format(name=name)
    expected = sha256 if sha256 is not None else PINNED_SOURCES.get(name)
    if not expected:
        raise SourceError(f"No pinned SHA-256 for {name!r}; refusing to download it unverified.")
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            body = response.read()
    except OSError as exc:
        raise SourceError(
            f"Could not download {name} from {url}: {exc}. Save the file yourself and set "
            f"CITEAUDIT_DATA_DIR to its folder."
        ) from exc
    text = body.decode("utf-8")
    actual = text_digest(text)
    if actual != expected:
        raise SourceError(
            f"Downloaded {name} from {url} has SHA-256 {actual}, expected {expected}; not saved."
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(dest.suffix + ".part")
    tmp.write_bytes(body)
    tmp.replace(dest)
    return dest


class TooLargeError(SourceError):
    """An input over its size limit (`read_bounded`)."""


def read_bounded(path: str | Path, limit: int, what: str = "file") -> bytes:
    """The bytes of `path`, read in chunks and never more than `limit` of them: a regular file over
    the limit is refused before reading (by its size), anything else (a pipe, a device, a file that
    grows) as soon as the limit is passed. `TooLargeError` names the file, the limit and the fix;
    an `OSError` passes through for the caller to word."""
    path = Path(path)
    size = path.stat().st_size
    if path.is_file() and size > limit:
        raise TooLargeError(f"{path} is {size:,} bytes; citeaudit reads a {what} of up to {limit:,} bytes. "
                            "Split it and audit each part on its own.")
    chunks, total = [], 0
    with open(path, "rb") as handle:
        while chunk := handle.read(min(1 << 20, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise TooLargeError(f"{path} holds more than {limit:,} bytes (it is not a regular file, or it "
                                    f"grew while read); citeaudit reads a {what} of up to {limit:,} bytes. "
                                    "Split it and audit each part on its own.")
    return b"".join(chunks)


def read_text(path: Path, limit: int = MAX_TEXT_BYTES) -> str:
    """Read a UTF-8 file exactly (no newline translation), with a clear error if it cannot be.

    A file larger than `limit` bytes is refused (`read_bounded`: before reading, or while reading
    a pipe or a device): indexing costs memory in proportion to the text.
    """
    try:
        return read_bounded(path, limit, "text").decode("utf-8")
    except TooLargeError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"Cannot read source {path}: {exc}. Check the path and that it is UTF-8.") from exc


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


def _line_bounds(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    return Lines(raw, *_line_bounds(codes_of(raw)))


def _rfc_furniture_lines(raw: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Indices of the lines that are RFC page footers or headers.

    Only lines holding `[Page N]` or beginning (after form feeds) with `RFC N` can be either, so
    the two expressions run on those lines alone, not on every line of the text.
    """
    hits = [match.start() for match in re.finditer(r"\[Page \d|RFC \d", raw)]
    lines = np.searchsorted(starts, np.array(hits, dtype=np.int64), side="right") - 1
    candidates = set()
    for hit, i in zip(hits, lines.tolist()):
        if i >= 0 and hit < ends[i] and (raw[hit] == "[" or not raw[starts[i] : hit].strip("\f")):
            candidates.add(i)
    return np.array(sorted(i for i in candidates if _rfc_furniture(raw[starts[i] : ends[i]].lstrip("\f"))),
                    dtype=np.int64)


def _clean(raw: str, codes: np.ndarray, starts: np.ndarray, ends: np.ndarray,
           dropped: np.ndarray) -> tuple[str, np.ndarray]:
    """Join the kept lines with newlines (form feeds removed) and fold 3+ newlines to 2.

    Returns the clean text and, for each of its characters, its offset in `raw`; the newline
    joining a line to the one before maps to the last character of the raw terminator before it.
    Whole-array passes: the kept characters are gathered by offset, not appended one by one.
    """
    keep = np.ones(len(starts), dtype=bool)
    keep[dropped] = False
    k_starts, k_ends = starts[keep], ends[keep]
    if len(k_starts) == 0:
        return "", np.zeros(0, dtype=offset_dtype(len(raw)))
    seg_starts = k_starts - 1  # each kept line but the first begins with its joining newline
    seg_starts[0] = k_starts[0]
    lengths = k_ends - seg_starts
    dtype = offset_dtype(len(raw))
    out_starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    # offsets rise by one within a segment and jump at each segment's start: a cumulative sum of
    # steps, computed in place (no second array the size of the text)
    offsets = np.ones(int(lengths.sum()), dtype=dtype)
    full = lengths > 0  # only the first segment can be empty
    s_starts, s_ends, s_out = seg_starts[full], k_ends[full], out_starts[full]
    if len(offsets):
        offsets[0] = s_starts[0]
        offsets[s_out[1:]] = (s_starts[1:] - s_ends[:-1] + 1).astype(dtype)
        np.cumsum(offsets, out=offsets)
    chars = codes[offsets]
    chars[out_starts[1:]] = 10  # a joining newline, whatever the terminator was
    kept = chars != 12  # form feeds
    chars, offsets = chars[kept], offsets[kept]
    newline = chars == 10
    kept = np.ones(len(chars), dtype=bool)
    kept[2:] = ~(newline[2:] & newline[1:-1] & newline[:-2])  # the third and later of a newline run
    del newline
    return text_of(chars[kept]), offsets[kept]


def _rfc_furniture(line: str) -> bool:
    return bool(_RFC_FOOTER.match(line) or _RFC_HEADER.match(line))


def _sections(clean: str, clean_to_raw: np.ndarray) -> dict[str, Section]:
    marks = list(_SECTION_HEADER.finditer(clean))
    sections: dict[str, Section] = {}
    for mark, nxt in zip(marks, [*marks[1:], None]):
        if mark.group(1) is None:  # an appendix header only ends the section before it
            continue
        chunk_end = nxt.start() if nxt else len(clean)
        chunk = clean[mark.start() : chunk_end]
        text = chunk.strip()
        lead = len(chunk) - len(chunk.lstrip())
        c_start = mark.start() + lead
        c_end = c_start + len(text)
        sections[mark.group(1)] = Section(
            id=mark.group(1),
            title=mark.group(2).strip(),
            text=text,
            start=int(clean_to_raw[c_start]),
            end=int(clean_to_raw[c_end - 1]) + 1,
            clean_start=c_start,
            clean_end=c_end,
        )
    return sections


def load_rfc(source: str | Path = "rfc7519.txt") -> Document:
    """Load a plain-text RFC: page furniture removed, numbered sections split, lines kept.

    `source` is a path or a file name resolved by `resolve_source`. Sections are the numbered
    headers ("4.1.3.  Title" at the start of a line); an appendix header ends the section before it.
    """
    path = resolve_source(source)
    raw = read_text(path)
    codes = codes_of(raw)
    starts, ends = _line_bounds(codes)
    clean, clean_to_raw = _clean(raw, codes, starts, ends, _rfc_furniture_lines(raw, starts, ends))
    del codes
    return Document(path.name, raw, clean, clean_to_raw, _sections(clean, clean_to_raw), Lines(raw, starts, ends))


_BLANK_LINE_BREAK = re.compile(r"\n(?=[^\S\n]*\n)")  # a line break followed by a line of whitespace only
_NON_SPACE = re.compile(r"\S")


def paragraph_spans(text: str) -> Iterator[tuple[int, int]]:
    r"""`[start, end)` of each paragraph: from its first non-space character to its last, paragraphs
    separated by lines of whitespace only. Linear in time and in memory (a single regular
    expression with an alternation under a star held ~135 bytes per character of a text without
    blank lines).

    >>> list(paragraph_spans("  one\ntwo  \n \n\nthree\n"))
    [(2, 9), (15, 20)]
    """
    start = 0
    for cut in [*(m.start() for m in _BLANK_LINE_BREAK.finditer(text)), len(text)]:
        first = _NON_SPACE.search(text, start, cut)
        if first is not None:
            end = cut
            while end > first.start() and text[end - 1].isspace():
                end -= 1
            yield first.start(), end
        start = cut + 1


def load_text(source: str | Path, sections: str = "paragraphs") -> Document:
    """Load any plain-text file. Sections are numbered paragraphs ("1", "2", ...) separated by blank
    lines, or, with `sections="headings"`, numbered headings as in an RFC ("2.1.  Title")."""
    if sections not in ("paragraphs", "headings"):
        raise ValueError(f"sections must be 'paragraphs' or 'headings', not {sections!r}")
    path = resolve_source(source, download=False)
    raw = read_text(path)
    codes = codes_of(raw)
    starts, ends = _line_bounds(codes)
    clean, clean_to_raw = _clean(raw, codes, starts, ends, np.zeros(0, dtype=np.int64))
    del codes
    if sections == "headings":
        found = _sections(clean, clean_to_raw)
    else:
        found = {}
        for n, (c_start, c_end) in enumerate(paragraph_spans(clean), start=1):
            text = clean[c_start:c_end]
            found[str(n)] = Section(
                id=str(n),
                title=text.splitlines()[0][:60],
                text=text,
                start=int(clean_to_raw[c_start]),
                end=int(clean_to_raw[c_end - 1]) + 1,
                clean_start=c_start,
                clean_end=c_end,
            )
    return Document(path.name, raw, clean, clean_to_raw, found, Lines(raw, starts, ends))
