"""The per-character implementation of cleaning and normalization that the vectorized one replaced,
kept as the oracle the property tests compare it with (slow: one Python step per character)."""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from citeaudit.locate.textindex import DROPPED, FOLDED


def split_raw_lines(raw: str) -> list[tuple[int, int]]:
    spans = []
    pos = 0
    for match in re.finditer(r"\r\n|\n|\r", raw):
        spans.append((pos, match.start()))
        pos = match.end()
    if pos < len(raw):
        spans.append((pos, len(raw)))
    return spans


def clean(raw: str, spans: list[tuple[int, int]], furniture) -> tuple[str, np.ndarray]:
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
    cleaned = "".join(c for c, k in zip(text, keep) if k)
    return cleaned, np.asarray(offsets, dtype=np.int64)[keep]


def normalize_chars(text: str, offsets) -> tuple[str, np.ndarray]:
    folded: list[tuple[str, int]] = [
        (out, off)
        for ch, off in zip(text, offsets)
        for out in unicodedata.normalize("NFKC", ch).translate(FOLDED)
        if out not in DROPPED
    ]
    chars: list[str] = []
    origin: list[int] = []
    i = 0
    while i < len(folded):
        ch, off = folded[i]
        if not ch.isspace():
            chars.append(ch)
            origin.append(off)
            i += 1
            continue
        j = i
        while j < len(folded) and folded[j][0].isspace():
            j += 1
        run = "".join(c for c, _ in folded[i:j])
        hyphen_break = bool(chars) and chars[-1] == "-" and ("\n" in run or "\r" in run)
        if chars and j < len(folded) and not hyphen_break:
            chars.append(" ")
            origin.append(off)
        i = j
    return "".join(chars), np.asarray(origin, dtype=np.int64)
