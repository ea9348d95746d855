"""A batch of human reviews in one go: a CSV or JSON Lines file of `id, verdict, note`.

An analyst labels many citations in a spreadsheet or a script, then records them all at once
(`citeaudit review --batch FILE`, `ReviewQueue.review_batch`). Each row becomes a review bound to
the evidence its citation shows now, exactly as one recorded by hand (`reviews.bound_review`:
fingerprint and selection), appended whole to the store (`reviews.store_review`).

The file: CSV with a header row naming at least `id` and `verdict` (`note` and `reviewer` are
optional, other columns are ignored, so an exported table with the claims beside the verdicts
works), or JSON Lines (`.jsonl`, `.ndjson`) of objects with the same keys. A row that cannot be a
review (no id, a verdict a reviewer cannot give, an id the audited input does not have, a citation
without evidence, an id given twice) is reported with its line and the fix, and the other rows
still go in. A review the store already holds as the latest of its citation (same fingerprint,
verdict and note) is not appended again, so a file can be run again after fixing its bad lines.
A file that cannot be read as a batch at all (unreadable, not UTF-8, a CSV without the `id` and
`verdict` columns) records nothing.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from citeaudit import strictjson
from citeaudit import table as C
from citeaudit.decide.reviews import Review, bound_review, load_reviews, store_review
from citeaudit.errors import InputError
from citeaudit.sources.reading import MAX_TEXT_BYTES, read_bounded
from citeaudit.table import REVIEW_VERDICTS

COLUMNS = ("id", "verdict", "note", "reviewer")
CSV_SUFFIXES = (".csv",)
JSONL_SUFFIXES = (".jsonl", ".ndjson")


@dataclass(frozen=True)
class BatchRow:
    """One row of a batch, as given: where it is (`line` of the file, or row of a frame), the
    citation's id, the verdict and the optional note and reviewer."""

    line: int
    id: str | None
    verdict: str | None
    note: str | None = None
    reviewer: str | None = None


@dataclass(frozen=True)
class BatchOutcome:
    """What a batch did: the reviews `recorded`, the ids `unchanged` (the store already held that
    review), and the `problems` (one line each: where, what, the fix) of the rows left out."""

    recorded: tuple[Review, ...] = ()
    unchanged: tuple[str, ...] = ()
    problems: tuple[str, ...] = field(default_factory=tuple)

    def summary(self, store: str | Path) -> str:
        """One line: how many reviews went into which store (by selection), how many were there
        already, how many rows were left out."""
        kinds = Counter(str(r.selection).replace("_", " ") for r in self.recorded if r.selection is not None)
        detail = f" ({', '.join(f'{n} {kind}' for kind, n in kinds.items())})" if kinds else ""
        line = f"recorded {len(self.recorded)} review(s){detail} in {store}"
        if self.unchanged:
            line += f"; {len(self.unchanged)} already there"
        if self.problems:
            line += f"; {len(self.problems)} row(s) left out: fix them and run the file again (what is recorded is " \
                    "not added twice)"
        return line


def _text(value: object) -> str | None:
    """A cell as stripped text; empty and missing cells are None."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    text = str(value).strip()
    return text or None


def read_batch(path: str | Path) -> tuple[list[BatchRow], list[str]]:
    """The rows of a batch file and the problems of the lines that are not rows (JSON Lines: not
    JSON, or not an object). A file that is not a batch at all raises `InputError`."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in CSV_SUFFIXES + JSONL_SUFFIXES:
        raise InputError(f"{path}: a review batch is a .csv file (columns id, verdict, note) or a .jsonl file "
                         '(one {"id", "verdict", "note"} per line); rename it or convert it.')
    try:
        text = read_bounded(path, MAX_TEXT_BYTES, "review batch", text=True).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text; save the review batch as UTF-8.") from None
    return _read_csv(path, text) if suffix in CSV_SUFFIXES else _read_jsonl(text)


def _read_csv(path: Path, text: str) -> tuple[list[BatchRow], list[str]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [name.strip().lower() for name in next(reader)]
    except StopIteration:
        raise InputError(f"{path} is empty; a review batch's first line names its columns: id,verdict,note") from None
    except csv.Error as exc:
        raise InputError(f"{path}, line 1: {exc}; the first line names the columns: id,verdict,note") from None
    missing = [name for name in ("id", "verdict") if name not in header]
    if missing:
        raise InputError(f"{path}, line 1: no column {' or '.join(map(repr, missing))} (the header names "
                         f"{', '.join(map(repr, header)) or 'nothing'}); the first line names the columns: "
                         "id,verdict,note")
    where = {name: header.index(name) for name in COLUMNS if name in header}
    rows, problems = [], []
    start = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.append(f"line {start}: not a CSV row ({exc}); check its quotes")
            start = reader.line_num + 1
            continue
        if any(cell.strip() for cell in cells):
            values = {name: _text(cells[i]) if i < len(cells) else None for name, i in where.items()}
            rows.append(BatchRow(start, values.get("id"), values.get("verdict"), values.get("note"),
                                 values.get("reviewer")))
        start = reader.line_num + 1
    return rows, problems


def _read_jsonl(text: str) -> tuple[list[BatchRow], list[str]]:
    rows, problems = [], []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = strictjson.loads(line)
        except ValueError as exc:
            problems.append(f"line {n}: not JSON ({exc}); write one object per line, like "
                            '{"id": "c1", "verdict": "verified", "note": "..."}')
            continue
        if not isinstance(value, dict):
            problems.append(f'line {n}: not a JSON object; write {{"id": ..., "verdict": ..., "note": ...}}')
            continue
        rows.append(BatchRow(n, *(_text(value.get(name)) for name in COLUMNS)))
    return rows, problems


def frame_rows(frame: pd.DataFrame) -> list[BatchRow]:
    """The rows of a table with columns `id`, `verdict` and optionally `note`, `reviewer` (a
    notebook's batch), numbered from 1."""
    missing = [name for name in ("id", "verdict") if name not in frame.columns]
    if missing:
        raise InputError(f"the review batch has no column {' or '.join(map(repr, missing))}; give a table with "
                         "columns id, verdict and optionally note")
    return [BatchRow(n, *(_text(row.get(name)) for name in COLUMNS))
            for n, (_, row) in enumerate(frame.iterrows(), start=1)]


def review_batch(table: pd.DataFrame, batch: str | Path | pd.DataFrame, store: str | Path,
                 reviewer: str | None = None) -> BatchOutcome:
    """Record every good row of `batch` (a file, or a table as `frame_rows` reads it) as a review
    of the row of the settled, audited `table` with its id, bound to the evidence it shows now;
    `reviewer` stands for a row that names none. See the module doc for what is left out."""
    where = "row" if isinstance(batch, pd.DataFrame) else "line"
    rows, problems = (frame_rows(batch), []) if isinstance(batch, pd.DataFrame) else read_batch(batch)
    latest = {review.citation_id: review for review in load_reviews(store)}  # also checks the store first
    seen: dict[str, int] = {}
    ids = {str(i) for i in table[C.ID]}
    todo: list[Review] = []
    unchanged: list[str] = []
    for row in rows:
        at = f"{where} {row.line}"
        if row.id is None:
            problems.append(f"{at}: no id; give the citation's id as the audit table shows it")
            continue
        if row.verdict not in REVIEW_VERDICTS:
            given = f"verdict {row.verdict!r} is not" if row.verdict else "no verdict; a verdict is"
            problems.append(f"{at}: {given} one of {', '.join(REVIEW_VERDICTS)}; write one of them")
            continue
        if row.id in seen:
            problems.append(f"{at}: citation {row.id!r} is reviewed already at {where} {seen[row.id]}; keep one "
                            "of the two")
            continue
        seen[row.id] = row.line
        if row.id not in ids:
            problems.append(f"{at}: no citation {row.id!r} in the audited input; give an id of its audit table")
            continue
        try:
            review = bound_review(table, row.id, row.verdict, row.reviewer or reviewer, row.note)
        except InputError as exc:  # no evidence to bind a review to
            problems.append(f"{at}: {str(exc).rstrip('.')}; drop this row")
            continue
        before = latest.get(row.id)
        if before is not None and (before.fingerprint, before.verdict, before.note) == \
                (review.fingerprint, review.verdict, review.note):
            unchanged.append(row.id)
            continue
        todo.append(review)
    recorded = tuple(store_review(store, review) for review in todo)
    return BatchOutcome(recorded, tuple(unchanged), tuple(problems))

