"""Source documents: raw text, page furniture removed, numbered sections and lines.

A `Document` keeps the raw text exactly as read and a *clean* copy (RFC page headers, footers
and form feeds removed, runs of blank lines folded) together with an offset map from every clean
character back to the raw text. Sections and lines carry `[start, end)` offsets into the raw text,
so anything located in the clean copy can be highlighted in the original file.
"""

from __future__ import annotations

import hashlib
import re
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import config
from .errors import SourceError

# Official RFC texts the loader may download, with the SHA-256 of their text after line endings
# and form feeds are normalized (see `text_digest`).
PINNED_SOURCES = {
    "rfc7519.txt": "67870b397c107d4b819682f95c5fe55c5d7095c6575fb215901b45a017d8c14e",
    "rfc6749.txt": "9356c087799f71841153103ebc7a111d56e779317b823a8890b617de1c34a25b",
}
# the largest source or answer text read (the per-character index costs ~100x the text in memory)
MAX_TEXT_BYTES = 20_000_000
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
    lines: tuple[Line, ...] = field(repr=False)

    def section(self, section_id: str) -> Section | None:
        """The section a citation names, written `4.1.3`, `4.1.3.`, `Section 4.1.3` or `§4.1.3`."""
        canonical = canonical_section_id(section_id)
        return self.sections.get(canonical) if canonical else None

    def section_at(self, clean_offset: int) -> Section | None:
        """The numbered section whose clean text range holds `clean_offset`, if any."""
        for section in self.sections.values():
            if section.clean_start <= clean_offset < section.clean_end:
                return section
        return None

    def raw_span(self, clean_start: int, clean_end: int) -> tuple[int, int]:
        """Raw `[start, end)` covering the clean characters `[clean_start, clean_end)`."""
        return int(self.clean_to_raw[clean_start]), int(self.clean_to_raw[clean_end - 1]) + 1

    def clean_slice(self, raw_start: int, raw_end: int) -> str:
        """The clean text of raw `[raw_start, raw_end)`: the raw slice without page furniture."""
        lo = int(np.searchsorted(self.clean_to_raw, raw_start, side="left"))
        hi = int(np.searchsorted(self.clean_to_raw, raw_end, side="left"))
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


def read_text(path: Path, limit: int = MAX_TEXT_BYTES) -> str:
    """Read a UTF-8 file exactly (no newline translation), with a clear error if it cannot be.

    A file larger than `limit` bytes is refused: indexing costs memory in proportion to the text.
    """
    try:
        size = path.stat().st_size
        if size > limit:
            raise SourceError(f"{path} is {size:,} bytes; citeaudit reads texts of up to {limit:,} bytes. "
                              "Split the document and audit each part against its own citations.")
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"Cannot read source {path}: {exc}. Check the path and that it is UTF-8.") from exc


def _split_raw_lines(raw: str) -> list[tuple[int, int]]:
    """`[start, end)` of every line's content, line terminator excluded."""
    spans = []
    pos = 0
    for match in re.finditer(r"\r\n|\n|\r", raw):
        spans.append((pos, match.start()))
        pos = match.end()
    if pos < len(raw):
        spans.append((pos, len(raw)))
    return spans


def _clean(raw: str, spans: list[tuple[int, int]], furniture) -> tuple[str, np.ndarray]:
    """Join the kept lines (form feeds stripped) and fold 3+ newlines to 2, tracking offsets."""
    chars: list[str] = []
    offsets: list[int] = []
    first = True
    for start, end in spans:
        content = raw[start:end]
        if furniture(content.lstrip("\f")):
            continue
        if not first:
            chars.append("\n")
            offsets.append(start - 1 if start > 0 else 0)
        for i in range(start, end):
            if raw[i] != "\f":
                chars.append(raw[i])
                offsets.append(i)
        first = False
    text = "".join(chars)
    keep = np.ones(len(text), dtype=bool)
    for run in re.finditer(r"\n{3,}", text):
        keep[run.start() + 2 : run.end()] = False
    clean = "".join(c for c, k in zip(text, keep) if k)
    return clean, np.asarray(offsets, dtype=np.int64)[keep]


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


def _lines(raw: str, spans: list[tuple[int, int]]) -> tuple[Line, ...]:
    return tuple(Line(n, raw[s:e], s, e) for n, (s, e) in enumerate(spans, start=1))


def load_rfc(source: str | Path = "rfc7519.txt") -> Document:
    """Load a plain-text RFC: page furniture removed, numbered sections split, lines kept.

    `source` is a path or a file name resolved by `resolve_source`. Sections are the numbered
    headers ("4.1.3.  Title" at the start of a line); an appendix header ends the section before it.
    """
    path = resolve_source(source)
    raw = read_text(path)
    spans = _split_raw_lines(raw)
    clean, clean_to_raw = _clean(raw, spans, _rfc_furniture)
    return Document(path.name, raw, clean, clean_to_raw, _sections(clean, clean_to_raw), _lines(raw, spans))


def load_text(source: str | Path, sections: str = "paragraphs") -> Document:
    """Load any plain-text file. Sections are numbered paragraphs ("1", "2", ...) separated by blank
    lines, or, with `sections="headings"`, numbered headings as in an RFC ("2.1.  Title")."""
    if sections not in ("paragraphs", "headings"):
        raise ValueError(f"sections must be 'paragraphs' or 'headings', not {sections!r}")
    path = resolve_source(source, download=False)
    raw = read_text(path)
    spans = _split_raw_lines(raw)
    clean, clean_to_raw = _clean(raw, spans, lambda line: False)
    if sections == "headings":
        found = _sections(clean, clean_to_raw)
    else:
        found = {}
        for n, para in enumerate(re.finditer(r"\S(?:.|\n(?!\s*\n))*", clean), start=1):
            text = para.group().rstrip()
            c_start, c_end = para.start(), para.start() + len(text)
            found[str(n)] = Section(
                id=str(n),
                title=text.splitlines()[0][:60],
                text=text,
                start=int(clean_to_raw[c_start]),
                end=int(clean_to_raw[c_end - 1]) + 1,
                clean_start=c_start,
                clean_end=c_end,
            )
    return Document(path.name, raw, clean, clean_to_raw, found, _lines(raw, spans))
