"""The JSON Lines output: one record per citation, the command line's fields (DESIGN.md "Command
line"), in the order `table.RECORD_FIELDS` declares.

The records are what the pipeline returns to be written: `Audit.write_jsonl` and a batch's rows
(built on the worker that holds the document, `batch.Outcome.records`). `closest_passage` cuts the
passage nearest a near or missing quote on word boundaries, for the records and for the surfaces
that show it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from citeaudit import table as C
from citeaudit.sources.document import Document
from citeaudit.stores import atomic_write_text
from citeaudit.table import QuoteStatus, Relation


def records(table: pd.DataFrame, document: Document | None = None) -> list[dict]:
    """One JSON-ready dict per row with the command line's fields (DESIGN.md).

    With the `document`, `closest` (the passage nearest a near or missing quote) starts and ends
    on word boundaries instead of wherever the fuzzy alignment cut it.
    """
    # a vendor response's rows also say where its citation pointed and what of that held
    fields = [f for f in C.RECORD_FIELDS if f not in C.RESPONSE_FIELDS or f in table.columns]
    out = []
    for row in C.row_dicts(table):
        record = {}
        for field in fields:
            value = row.get(field)
            if field == C.SPAN and value is not None:
                value = {"start": int(value[0]), "end": int(value[1])}
            if field == C.PROBABILITIES and value is None:
                value = dict.fromkeys(map(str, Relation))
            if field == C.CLOSEST and value is not None and document is not None:
                value = closest_passage(row, document)
            if isinstance(value, float) and pd.isna(value):
                value = None
            record[field] = value
        out.append(record)
    return out


def write_jsonl(table: pd.DataFrame, path: str | Path, document: Document | None = None) -> Path:
    """Write the table as strict JSON Lines through a unique temporary file renamed into place."""
    lines = (json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n" for record in records(table, document))
    return atomic_write_text(path, "".join(lines))


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def snap_to_words(text: str, start: int, end: int) -> tuple[int, int]:
    """`[start, end)` of `text` widened to whole words, then stripped of outer spaces and of the
    punctuation that ends a previous sentence.

    >>> text = "data. The identifier of the data object"
    >>> s, e = snap_to_words(text, 7, 35); text[s:e]
    'The identifier of the data object'
    >>> s, e = snap_to_words(text, 4, 12); text[s:e]
    'The identifier'
    >>> s, e = snap_to_words(text, 2, 35); text[s:e]  # a cut word that ends a sentence is the sentence's
    'The identifier of the data object'
    """
    start, end = max(0, start), min(len(text), end)
    began = start
    while 0 < start < len(text) and _is_word(text[start - 1]) and _is_word(text[start]):
        start -= 1
    if start < began:  # the window began inside a word: drop it if it is the last word of the sentence before
        word_end = start
        while word_end < end and _is_word(text[word_end]):
            word_end += 1
        after = text[word_end:end]
        if after[:1] in (".", "!", "?") and after[1:2].isspace() and after[2:].strip():
            start = word_end
    while 0 < end < len(text) and _is_word(text[end - 1]) and _is_word(text[end]):
        end += 1
    while start < end and (text[start].isspace() or text[start] in ".,;:!?)]}"):
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def clean_span(document: Document, span: tuple[int, int]) -> tuple[int, int]:
    """The clean-text `[start, end)` of a raw span, snapped to whole words."""
    return snap_to_words(document.clean, document.clean_offset(span[0]), document.clean_offset(span[1]))


def closest_passage(row: C.Row, document: Document | None) -> str | None:
    """The source passage nearest the quote (a near match, or the best of a missing one), whole words."""
    if document is not None and row.get(C.QUOTE_STATUS) == QuoteStatus.NEAR and row.get(C.SPAN) is not None:
        lo, hi = clean_span(document, tuple(row[C.SPAN]))
        quote = row.get(C.QUOTE)
        return document.clean[_grow(document.clean, quote, lo, hi)] if isinstance(quote, str) else document.clean[lo:hi]
    closest = row.get(C.CLOSEST)
    if not isinstance(closest, str):
        return None
    at = document.clean.find(closest) if document is not None else -1
    if document is None or at < 0:
        return closest.strip()
    lo, hi = snap_to_words(document.clean, at, at + len(closest))
    return document.clean[lo:hi]


def _grow(text: str, quote: str, lo: int, hi: int) -> slice:
    """Widen `text[lo:hi]` by the whole words just outside it that the quote begins or ends with
    (a fuzzy alignment often leaves out a first "The" or a last word)."""
    from citeaudit.locate.textindex import normalize

    words = [normalize(w).rstrip(".,;:") for w in quote.split()]
    passage = [normalize(w).rstrip(".,;:") for w in text[lo:hi].split()]
    if not words or not passage:
        return slice(lo, hi)
    lead = words.index(passage[0]) if passage[0] in words[:4] else 0
    for _ in range(lead):
        before = text[:lo].rstrip()
        word_at = max(before.rfind(" "), before.rfind("\n")) + 1
        if normalize(before[word_at:]).rstrip(".,;:") not in words[:lead]:
            break
        lo = word_at
    tail = words[::-1].index(passage[-1]) if passage[-1] in words[-4:] else 0
    for _ in range(tail):
        after = text[hi:]
        start = hi + len(after) - len(after.lstrip())
        end = start
        while end < len(text) and not text[end].isspace():
            end += 1
        if normalize(text[start:end]).rstrip(".,;:") not in words[-tail:]:
            break
        hi = end
    return slice(lo, hi)
