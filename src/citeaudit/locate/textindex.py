"""The text index of a document that step 1 matches against, built once per document.

`normalize` folds a text the way quotes and documents are compared (NFKC, curly quotes, dashes,
zero-width characters, whitespace runs, hyphenated line breaks; in Japanese text, quotation
brackets, line breaks and the numerals of references); `index_document` keeps the
normalized clean text with, for every character, its offset in the clean text (so in the raw
file), and a token index (`tokens_of`) that lets `locate.py` find where a quote may occur without
scanning the whole text.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from citeaudit.sources.document import Document, Section, codes_of, offset_dtype, text_of
from citeaudit.sources.japanese import arabic_references

FOLDED = str.maketrans(
    {
        **dict.fromkeys("‘’‚‛′`´", "'"),
        **dict.fromkeys("“”„‟″«»「」『』", '"'),  # Japanese quotation brackets too
        **dict.fromkeys("‐‑‒–—―−﹘﹣－", "-"),
    }
)
DROPPED = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad")


# Unicode whitespace (str.isspace, which `re`'s \s also follows); none lies above U+3000
SPACE_CODES = np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)
_WHITESPACE = re.compile(r"\s")  # str.isspace, as SPACE_CODES
_ASCII_SPACE = np.zeros(256, dtype=bool)
_ASCII_SPACE[SPACE_CODES[SPACE_CODES < 128]] = True
# Japanese (and Chinese) characters: CJK punctuation, kana, ideographs, full-width forms. A line break
# or space beside one is nothing (Japanese is written without spaces; a quote broken across lines
# gets none), so a whitespace run next to one is dropped, not made one space.
_CJK_RANGES = ((0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xFF00, 0xFFEF))


def _cjk(codes: np.ndarray) -> np.ndarray:
    out = np.zeros(len(codes), dtype=bool)
    for lo, hi in _CJK_RANGES:
        out |= (codes >= lo) & (codes <= hi)
    return out


_WORD = np.zeros(256, dtype=bool)  # word characters of the token index: ASCII letters and digits
_WORD[[ord(c) for c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"]] = True


@functools.lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    """What one character becomes: NFKC, quotes and dashes folded, zero-width characters dropped."""
    return "".join(c for c in unicodedata.normalize("NFKC", ch).translate(FOLDED) if c not in DROPPED)


def _fold(text: str, offsets: np.ndarray) -> tuple[str, np.ndarray]:
    """Fold every character on its own (`_fold_char`); only non-ASCII characters and '`' change."""
    if text.isascii() and "`" not in text:
        return text, offsets
    codes = codes_of(text)
    special = np.flatnonzero((codes >= 128) | (codes == ord("`")))
    distinct, inverse = np.unique(codes[special], return_inverse=True)
    into = {int(c): _fold_char(chr(c)) for c in distinct}
    table = {c: out for c, out in into.items() if out != chr(c)}
    if not table:
        return text, offsets
    lengths = np.ones(len(codes), dtype=np.int64)
    lengths[special] = np.array([len(into[int(c)]) for c in distinct], dtype=np.int64)[inverse]
    return text.translate(table), np.repeat(offsets, lengths)


def normalize_chars(text: str, offsets: range | np.ndarray) -> tuple[str, np.ndarray]:
    """Normalize `text` (see `normalize`), mapping every output character to an input offset.

    Whole-array passes: characters are folded by a translation table, and each whitespace run
    becomes one space (or nothing, at either end and after a hyphen ending a line) by masks over
    the code points, never a Python step per character.
    """
    identity = isinstance(offsets, range) and offsets.step == 1 and (text.isascii() and "`" not in text)
    if isinstance(offsets, range) and not identity:
        offsets = np.arange(offsets.start, offsets.stop, offsets.step, dtype=offset_dtype(offsets.stop))
    folded, origin = (text, offsets) if identity else _fold(text, cast(np.ndarray, offsets))
    codes = codes_of(folded)
    n = len(codes)
    if n == 0:
        return "", np.zeros(0, dtype=offset_dtype(len(text)))
    space = _ASCII_SPACE[codes] if codes.dtype == np.uint8 else (
        _ASCII_SPACE[np.minimum(codes, 255)] & (codes < 128)) | ((codes >= 128) & np.isin(codes, SPACE_CODES))
    before = np.zeros(n, dtype=bool)
    before[1:] = space[:-1]
    run_starts = np.flatnonzero(space & ~before)
    del before
    if len(run_starts) == 0:
        if identity:
            return folded, _kept_offsets(np.ones(n, dtype=bool), cast(range, offsets))
        return arabic_references(folded, cast(np.ndarray, origin))
    after = np.zeros(n, dtype=bool)
    after[:-1] = space[1:]
    run_ends = np.flatnonzero(space & ~after) + 1
    del after
    line_break = (codes == 10) | (codes == 13)
    breaks = np.logical_or.reduceat(line_break, run_starts)  # a run and the characters up to the next run
    del line_break
    hyphen = np.zeros(len(run_starts), dtype=bool)
    inner = run_starts > 0
    hyphen[inner] = codes[run_starts[inner] - 1] == ord("-")
    one_space = (run_starts > 0) & (run_ends < n) & ~(hyphen & breaks)
    if codes.dtype != np.uint8:  # beside Japanese text a whitespace run is dropped (see _CJK_RANGES)
        cjk = _cjk(codes)
        one_space &= ~(cjk[np.maximum(run_starts - 1, 0)] | cjk[np.minimum(run_ends, n - 1)])
    keep = ~space
    del space
    kept_runs = run_starts[one_space]
    keep[kept_runs] = True
    codes = codes.copy()
    codes[kept_runs] = ord(" ")
    out, origin = text_of(codes[keep]), _kept_offsets(keep, cast(range, offsets)) if identity else origin[keep]
    return (out, origin) if identity else arabic_references(out, origin)  # 第十八条 and 第18条 compare equal


def _kept_offsets(keep: np.ndarray, offsets: range, chunk: int = 1 << 20) -> np.ndarray:
    """`offsets[keep]` for a range of offsets, without making the range an array first."""
    out = np.empty(int(keep.sum()), dtype=offset_dtype(offsets.stop))
    filled = 0
    for lo in range(0, len(keep), chunk):
        at = np.flatnonzero(keep[lo : lo + chunk])
        out[filled : filled + len(at)] = at + (lo + offsets.start)
        filled += len(at)
    return out


def normalize(text: str) -> str:
    """The form both quotes and documents are compared in.

    NFKC; curly quotes and dash variants folded to ASCII; zero-width characters and soft hyphens
    dropped; a hyphen followed by a line break joined to the next word; whitespace runs collapsed,
    and dropped beside Japanese text; Japanese quotation brackets folded to '"', and the kanji
    numerals of references in Arabic digits (`sources.japanese.arabic_references`).

    >>> normalize("“case-\\n   sensitive”\\u00a0strings\\u200b…")
    '"case-sensitive" strings...'
    >>> normalize("第十八条若しくは\\n第十九条の「規定」") == normalize("第１８条若しくは第19条の『規定』")
    True
    """
    if text.isascii() and "`" not in text and not _WHITESPACE.search(text):
        return text  # nothing to fold or collapse (a word: callers that go word by word ask this often)
    return normalize_chars(text, range(len(text)))[0]


def strip_enclosing_quotes(quote: str) -> str:
    """Remove one pair of quotation marks enclosing the whole (normalized) quote."""
    for left, right in (('"', '"'), ("'", "'")):
        if len(quote) > 1 and quote.startswith(left) and quote.endswith(right):
            return quote[1:-1].strip()
    return quote


_K1, _K2, _K3 = (np.uint64(k) for k in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9))


def tokens_of(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`[start, end)` and a 64-bit hash of every token (maximal run of ASCII letters and digits).

    The hash mixes a token's length, first 8 and last 8 characters (tokens of up to 16 characters
    are told apart exactly; longer ones rarely collide). A collision only costs a wasted
    comparison: every candidate the index yields is checked against the text.
    """
    word = _WORD[codes] if codes.dtype == np.uint8 else _WORD[np.minimum(codes, 255)] & (codes < 128)
    edge = np.zeros(len(word) + 1, dtype=bool)
    edge[:-1] = word
    edge[1:] ^= word  # True where a run of word characters starts or ends
    bounds = np.flatnonzero(edge)
    starts, ends = bounds[0::2], bounds[1::2]
    lengths = ends - starts
    head = np.zeros(len(starts), dtype=np.uint64)
    tail = np.zeros(len(starts), dtype=np.uint64)
    for k in range(8):
        present = (lengths > k).astype(np.uint64)
        head |= (codes[np.minimum(starts + k, ends - 1)].astype(np.uint64) * present) << np.uint64(8 * k)
        tail |= (codes[np.maximum(ends - 1 - k, starts)].astype(np.uint64) * present) << np.uint64(8 * k)
    return starts, ends, (head * _K1) ^ (tail * _K2) ^ (lengths.astype(np.uint64) * _K3)


def _text_tokens(text: str, chunk: int = 1 << 20) -> tuple[np.ndarray, np.ndarray]:
    """Starts (int32 when they fit) and hashes of the tokens of a long text, a chunk at a time
    (cut at a non-word character), so the temporary arrays stay small."""
    all_starts, all_hashes = [], []
    pos = 0
    while pos < len(text):
        end = min(len(text), pos + chunk)
        while end < len(text) and text[end - 1].isascii() and text[end - 1].isalnum():
            end += 1
        starts, _, hashes = tokens_of(codes_of(text[pos:end]))
        all_starts.append((starts + pos).astype(offset_dtype(len(text))))
        all_hashes.append(hashes)
        pos = end
    if not all_starts:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint64)
    return np.concatenate(all_starts), np.concatenate(all_hashes)


@dataclass(frozen=True, eq=False)
class DocumentIndex:
    """A document's normalized clean text, with maps back to clean and raw offsets.

    The token index (`token_hash` sorted, `token_pos` the normalized offset of each token, in
    text order within one hash) finds where a quote can occur without scanning the text; the
    section arrays (`section_lo`, `section_hi`, sorted by start) say which section holds a position.
    """

    document: Document
    text: str
    to_clean: np.ndarray
    section_ranges: dict[str, tuple[int, int]]
    token_hash: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.uint64))
    token_pos: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.int32))
    section_lo: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.int64))
    section_hi: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=np.int64))
    section_ids: tuple[str, ...] = field(repr=False, default=())
    section_rank: dict[str, int] = field(repr=False, default_factory=dict)  # place in `section_ranges`

    def section_of(self, pos: int) -> Section | None:
        return self.document.section_at(int(self.to_clean[pos]))

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        """Raw `[start, end)` of the normalized characters `[start, end)`."""
        return self.document.raw_span(int(self.to_clean[start]), int(self.to_clean[end - 1]) + 1)

    def postings(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each token hash, the `[lo, hi)` of its positions in `token_pos`."""
        return (np.searchsorted(self.token_hash, hashes, side="left"),
                np.searchsorted(self.token_hash, hashes, side="right"))

    def section_holding(self, start: int, end: int) -> str | None:
        """The id of the section whose normalized range holds `[start, end)`, if any."""
        i = int(np.searchsorted(self.section_lo, start, side="right")) - 1
        return self.section_ids[i] if i >= 0 and end <= self.section_hi[i] else None


@functools.lru_cache(maxsize=16)
def index_document(document: Document) -> DocumentIndex:
    """Normalize a document once and index its tokens; every quote is matched against this index."""
    text, to_clean = normalize_chars(document.clean, range(len(document.clean)))
    bounds = np.array([(s.clean_start, s.clean_end) for s in document.sections.values()], dtype=to_clean.dtype)
    found = np.searchsorted(to_clean, bounds.reshape(-1), side="left").reshape(-1, 2).tolist()
    ranges = {sid: (lo, hi) for sid, (lo, hi) in zip(document.sections, found)}
    starts, hashes = _text_tokens(text)
    order = np.argsort(hashes, kind="stable")
    by_start = sorted(ranges.items(), key=lambda item: item[1])
    return DocumentIndex(
        document, text, to_clean, ranges,
        token_hash=hashes[order], token_pos=starts[order],
        section_lo=np.array([r[0] for _, r in by_start], dtype=np.int64),
        section_hi=np.array([r[1] for _, r in by_start], dtype=np.int64),
        section_ids=tuple(sid for sid, _ in by_start),
        section_rank={sid: i for i, sid in enumerate(ranges)},
    )
