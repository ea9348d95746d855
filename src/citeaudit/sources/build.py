"""What a format's loader builds its `Document` with.

- `clean_lines`: a line-based text (RFC, plain text) without the lines that are page furniture,
  with every clean character's raw offset;
- `CleanText`: a clean text assembled piece by piece (Markdown, HTML, PDF), each piece with the raw
  offsets of its characters, blocks separated by blank lines;
- `align`: the raw offsets of a piece of text found in order in the raw file;
- `sections_from_headings` and `heading_aliases`: a section per heading (its number as the id when
  it has one, else its slug) and the names a citation may give it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from citeaudit.sources.document import Section, key, offset_dtype, slug, text_of

_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+(\S.*)$")


def clean_lines(raw: str, codes: np.ndarray, starts: np.ndarray, ends: np.ndarray,
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


class CleanText:
    """The clean text of a document, built piece by piece with every character's raw offset."""

    def __init__(self, raw_size: int) -> None:
        self.raw_size = raw_size
        self.parts: list[str] = []
        self.offsets: list[np.ndarray] = []
        self.size = 0
        self.last_offset = 0
        self.tail = ""  # the last two characters appended

    def add(self, text: str, offsets: np.ndarray | Iterable[int]) -> None:
        if not text:
            return
        array = np.asarray(list(offsets) if not isinstance(offsets, np.ndarray) else offsets, dtype=np.int64)
        self.parts.append(text)
        self.offsets.append(array)
        self.size += len(text)
        self.last_offset = int(array[-1])
        self.tail = (self.tail + text)[-2:]

    def separate(self, separator: str = "\n\n") -> None:
        """End the current block: a separator unless the text is empty or already ends in one."""
        if self.size and not self.tail.endswith(separator):
            # mapped to the raw character after the block (its line break), so that a span ending
            # at the block's last character does not take in the separator
            self.add(separator, [min(self.last_offset + 1, self.raw_size - 1)] * len(separator))

    def build(self) -> tuple[str, np.ndarray]:
        offsets = np.concatenate(self.offsets) if self.offsets else np.zeros(0, dtype=np.int64)
        return "".join(self.parts), np.maximum.accumulate(offsets) if len(offsets) else offsets


def align(raw: str, text: str, cursor: int, limit: int) -> tuple[np.ndarray, int]:
    """Raw offsets of `text`, found in order in `raw[cursor:limit]`; the new cursor.

    Text that occurs verbatim is mapped in one step; otherwise each character is looked for a
    little ahead (skipping escapes, entities and markup), and one not found maps to the cursor.
    """
    found = raw.find(text, cursor, limit)
    if found >= 0:
        return np.arange(found, found + len(text), dtype=np.int64), found + len(text)
    out = np.empty(len(text), dtype=np.int64)
    for i, ch in enumerate(text):
        pos = raw.find(ch, cursor, min(limit, cursor + 24)) if not ch.isspace() else -1
        if pos >= 0:
            out[i] = pos
            cursor = pos + 1
        else:
            out[i] = min(cursor, max(len(raw) - 1, 0))
    return out, cursor


def heading_id(text: str, taken: set[str]) -> tuple[str, str]:
    """A heading's section id and title: its number if it has one not yet taken, else its slug."""
    found = _NUMBERED.match(text.strip())
    if found and found.group(1) not in taken:
        return found.group(1), found.group(2).strip()
    base = slug(text) or "section"
    sid, n = base, 0
    while sid in taken:
        n += 1
        sid = f"{base}-{n}"
    return sid, text.strip()


def sections_from_headings(clean: str, clean_to_raw: np.ndarray, heads: list[tuple[int, str]],
                            ends: Iterable[int] | None = None) -> dict[str, Section]:
    """One section per heading (clean offset, heading text), each up to the next heading."""
    sections: dict[str, Section] = {}
    starts = [pos for pos, _ in heads]
    bounds = list(ends) if ends is not None else [*starts[1:], len(clean)]
    for (pos, text), end in zip(heads, bounds):
        sid, title = heading_id(text, set(sections))
        chunk = clean[pos:end]
        body = chunk.strip()
        if not body:
            continue
        lo = pos + len(chunk) - len(chunk.lstrip())
        hi = lo + len(body)
        sections[sid] = Section(sid, title, body, int(clean_to_raw[lo]), int(clean_to_raw[hi - 1]) + 1, lo, hi)
    return sections


def heading_aliases(sections: dict[str, Section]) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for sid, section in sections.items():
        for name in (sid, section.title, f"{sid} {section.title}", slug(f"{sid} {section.title}")):
            aliases.setdefault(key(name), sid)
    return aliases


def text_start(text: str, pos: int) -> int:
    """Where the text at `pos` begins, past the whitespace there (looked at within 200 characters)."""
    ahead = text[pos:pos + 200]
    return pos + len(ahead) - len(ahead.lstrip())


def heading_starts(clean: str, heads: list[tuple[int, str]]) -> frozenset[int]:
    """The clean offsets where the heading lines' text begins (`numbering.with_numbering`)."""
    return frozenset(text_start(clean, pos) for pos, _ in heads)
