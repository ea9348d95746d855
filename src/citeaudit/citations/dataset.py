"""The dataset format of `citeaudit batch`: JSON Lines, one answer per line, in any citation format.

  {"answer_id": "a1", "source": "rfc7519.txt", "citations": [...]}          quote citations
  {"answer_id": "a2", "document": "data/lines/field_note.txt", "answer": "... [L2]"}   line citations
  {"answer_id": "a3", "answer": {...}, "sources": {...}, "reviews": {...}?}  source ids (seed 000)
  {"answer_id": "a4", "response": {...}, "documents": ["rfc7519.txt", ...]}  a vendor's API response

A quote line may add `"format"` (as `--format`). Paths are tried beside the dataset file first,
then as `formats.load_document` finds any source. Every line is validated on its own (Pydantic):
a line that is not JSON, lacks a key or repeats an `answer_id` becomes an `Item` with an `error`
(its answer is REJECTed with the reason naming the line) and the other lines go on. How the
answers are audited and scheduled is `batch.py`.
"""

from __future__ import annotations

import importlib
import itertools
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from citeaudit import strictjson
from citeaudit.citations.records import QuoteCitation
from citeaudit.errors import InputError, SourceError
from citeaudit.printable import printable
from citeaudit.registry import CITATION_KINDS
from citeaudit.sources.reading import HEAD_BYTES, MAX_TEXT_BYTES, bounded_lines, refuse_not_text, resolve_source

ANSWER_ID, LINE = "answer_id", "line"
MAX_DATASET_BYTES = 200_000_000  # a dataset is read line by line, up to this; each line has the text limit


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer_id: str = Field(min_length=1)

    @field_validator("answer_id", mode="before")
    @classmethod
    def _integer_ids_as_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("answer_id")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    def files(self) -> list[tuple[str, bool]]:
        """The source files the answer names, as the dataset gives them, each with whether its
        loader may download it (a pinned RFC); none for an answer that carries its sources."""
        return []

    def beside(self, base: Path | None) -> Self:
        """The line with its source paths found beside the dataset file made absolute (`_beside`)."""
        return self

    def problem(self, number: int) -> str | None:
        """What is wrong with a line that validated, in words naming it; None when nothing is."""
        return None


class QuoteLine(_Line):
    """Quote citations over one source document (a path or a name, as `citeaudit audit --source`)."""

    source: str = Field(min_length=1)
    citations: list[QuoteCitation]
    format: str | None = None

    def files(self) -> list[tuple[str, bool]]:
        return [(self.source, True)]

    def beside(self, base: Path | None) -> Self:
        return self.model_copy(update={"source": _beside(self.source, base)})

    def problem(self, number: int) -> str | None:
        counts = Counter(c.id for c in self.citations)  # linear: an answer may carry 60,000 citations
        repeated = sorted(i for i, n in counts.items() if n > 1)
        if repeated:
            return (f"line {number}: citation id {repeated[0]!r} repeats. "
                    "Fix: give every citation of an answer a unique id.")
        return None


class LinesLine(_Line):
    """An answer text with [Lx] / [Lx-Ly] markers over a plain-text document."""

    document: str = Field(min_length=1)
    answer: str

    def files(self) -> list[tuple[str, bool]]:
        return [(self.document, False)]  # a line-cited document is never downloaded

    def beside(self, base: Path | None) -> Self:
        return self.model_copy(update={"document": _beside(self.document, base)})


class SourceIdLine(_Line):
    """Seed 000's answer and sources documents (and optionally its reviews), as parsed JSON."""

    answer: dict[str, Any]
    sources: dict[str, Any]
    reviews: dict[str, Any] | None = None


class ResponseLine(_Line):
    """A saved vendor API response (its JSON body) and the documents it cites, in the order they were
    sent (`vendor_audit.audit_response`); `response_format` as `--response-format`."""

    response: dict[str, Any]
    documents: list[str] = Field(min_length=1)
    response_format: str | None = None
    require_coverage: bool = True  # as audit_response: uncited answer text keeps the answer in REVIEW
    format: str | None = None

    def files(self) -> list[tuple[str, bool]]:
        return [(document, True) for document in self.documents]

    def beside(self, base: Path | None) -> Self:
        return self.model_copy(update={"documents": [_beside(d, base) for d in self.documents]})


Entry = QuoteLine | LinesLine | SourceIdLine | ResponseLine


def cited_sources(entry: object) -> Iterator[tuple[str, bool]]:
    """The source files an answer names, as the dataset gives them, each with whether its loader
    may download it (a pinned RFC; a line-cited document never is); none for a source-id answer,
    which carries its sources, or an invalid line."""
    if isinstance(entry, _Line):
        yield from entry.files()


def _line_kinds() -> list[tuple[str, type[_Line], str]]:
    """(key, model, shape) of each registered citation kind a dataset line can hold
    (`citations.kinds`), in the order they are tried."""
    return [(kind.dataset_key, _model(kind.dataset_line), kind.dataset_shape) for kind in CITATION_KINDS.values()
            if kind.dataset_key is not None and kind.dataset_line is not None]


def _model(line: type[_Line] | str) -> type[_Line]:
    """A citation kind's line model: the class, or its `module:Class` path."""
    if isinstance(line, str):
        module, _, name = line.partition(":")
        found: type[_Line] = getattr(importlib.import_module(module), name)
        return found
    return line


def format_help() -> str:
    """The shapes of a dataset line, in words (every registered citation kind's)."""
    return "; ".join(shape for _, _, shape in _line_kinds())


@dataclass(frozen=True)
class Item:
    """One line of the dataset: its entry, or why it is not one."""

    line: int
    answer_id: str
    entry: Entry | None = None
    error: str | None = None


def _validation_reason(error: ValidationError) -> str:
    parts = []
    for item in error.errors()[:3]:
        where = ".".join(str(p) for p in item["loc"]) or "(whole line)"
        parts.append(f"field {where!r}: {item['msg']}")
    more = len(error.errors()) - 3
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_line(text: str, number: int, base: Path | None = None, confine: bool = True,
               allowed: Sequence[Path] | None = None, *, dirs: Sequence[Path] = ()) -> Item:
    """One dataset line as an `Item`; every problem is its `error`, naming the line. With `confine`
    (the default), a source outside `allowed` (default `allowed_folders(base)`: the dataset's folder
    alone) is the line's error; a source named without a usable path is looked for in `dirs`
    (`resolve_source`) to tell where it is."""
    fallback = f"line {number}"
    try:
        data = strictjson.loads(text)
    except strictjson.RepeatedKeyError as exc:
        return Item(number, fallback, error=f"line {number}: {exc}. Fix: give each field once.")
    except (ValueError, RecursionError) as exc:
        return Item(number, fallback, error=f"line {number}: not valid JSON ({exc}). Fix the syntax of that line.")
    if not isinstance(data, dict):
        return Item(number, fallback, error=f"line {number}: a JSON object is expected, not {type(data).__name__}. "
                                            f"Each line is one of: {format_help()}.")
    answer_id = data.get(ANSWER_ID)
    if isinstance(answer_id, int) and not isinstance(answer_id, bool):
        answer_id = str(answer_id)
    name = answer_id if isinstance(answer_id, str) and answer_id.strip() else fallback
    if not _is_text(name):  # a lone surrogate (JSON's "\ud800") cannot be written out as UTF-8
        return Item(number, fallback, error=f"line {number}: answer_id {printable(name)} holds a lone surrogate, "
                                            "which is not text. Fix: give the answer an id of ordinary text.")
    if not _is_text(json.dumps(data, ensure_ascii=False)):
        return Item(number, name, error=f"line {number}: a string of the line holds a lone surrogate (an escape "
                                        "\\ud800-\\udfff with no pair), which is not text. Fix: write that "
                                        "text as UTF-8.")
    kinds = [(model, shape) for key, model, shape in _line_kinds() if key in data]
    if len(kinds) != 1:
        found = ", ".join(repr(k) for k in data) or "no keys"
        return Item(number, name, error=f"line {number}: cannot tell the citation format from its keys ({found}). "
                                         f"Each line is one of: {format_help()}.")
    model, shape = kinds[0]
    try:
        entry = model.model_validate(data)
    except ValidationError as exc:
        return Item(number, name, error=f"line {number}: {_validation_reason(exc)}. Fix: the line is {shape}.")
    problem = entry.problem(number)
    if problem is not None:
        return Item(number, name, error=problem)
    entry = entry.beside(base)
    outside = _outside(entry, allowed if allowed is not None else allowed_folders(base), dirs) if confine else None
    if outside is not None:
        return Item(number, name, error=f"line {number}: the source {printable(outside)} is outside the dataset's "
                                        "folder and the data folders, which a dataset may read by default (a "
                                        "dataset often comes from the system under audit). Fix: move the file "
                                        "there, or allow it explicitly (--allow-outside-sources).")
    return Item(number, entry.answer_id, entry)  # type: ignore[arg-type]


def allowed_folders(base: Path | None, data_dirs: Sequence[Path] = ()) -> list[Path]:
    """Where a dataset's sources may be by default: its own folder and the data folders passed
    (`citeaudit.read_dataset` passes `pipeline.loading.dataset_dirs()`: `CITEAUDIT_DATA_DIR`, the
    shipped `data/`, downloaded sources, `../shared/data/rfc` beside a checkout), not the working
    directory or anywhere else on the machine."""
    return [folder.resolve() for folder in (base, *data_dirs) if folder is not None]


def _outside(entry: object, allowed: Sequence[Path], dirs: Sequence[Path]) -> str | None:
    """The source an entry names when it resolves (in `dirs`) to a file outside `allowed`, else None
    (a source not found is left for the loader to report)."""
    names = [name for name, _ in cited_sources(entry)]  # none for a source-id answer: it carries its sources
    for named in names:
        try:
            found = resolve_source(named, download=False, dirs=dirs).resolve()
        except SourceError:
            continue
        if not any(found.is_relative_to(folder) for folder in allowed):
            return named
    return None


def _beside(path: str, base: Path | None) -> str:
    """A relative path that exists beside the dataset file (else in the working directory) is made
    absolute, so every worker reads the same file; anything else is a name `load_document` looks up."""
    if Path(path).is_absolute():
        return path
    for folder in (base, Path.cwd()):
        if folder is not None and (folder / path).is_file():
            return str((folder / path).resolve())
    return path


def read_dataset(path: str | Path, allow_outside_sources: bool = False, *, dirs: Sequence[Path] = (),
                 data_dirs: Sequence[Path] = ()) -> list[Item]:
    """Every answer of a JSON Lines dataset, in a list: `iter_dataset`'s items."""
    return list(iter_dataset(path, allow_outside_sources, dirs=dirs, data_dirs=data_dirs))


Line = tuple[bytes, int]  # a line's bytes (cut past the text limit) and its length (`reading.bounded_lines`)


def raw_lines(path: Path) -> Iterator[Line]:
    """The dataset's lines as bytes, split on `\n` alone, each with its length, read one at a time
    (`reading.bounded_lines`: a line over the text limit is held cut, so an endless line is never
    read whole; a regular file over `MAX_DATASET_BYTES` is refused before reading, anything else
    once it passes the limit)."""
    return bounded_lines(path, MAX_DATASET_BYTES, MAX_TEXT_BYTES, "dataset")


def iter_dataset(path: str | Path, allow_outside_sources: bool = False, *, dirs: Sequence[Path] = (),
                 data_dirs: Sequence[Path] = ()) -> Iterator[Item]:
    """Every non-blank line of a JSON Lines dataset (UTF-8) as an `Item`, read line by line (a batch
    holds a few partitions of a dataset, never the whole of it); a repeated `answer_id` is an error
    for the later line. An unreadable file raises `InputError` (before the first item). A line whose
    source lies outside the dataset's folder and the data folders `data_dirs` is an error unless
    `allow_outside_sources` (`allowed_folders`); a source named without a usable path is looked for
    in `dirs` to tell where it is. This stage reads no setting: `citeaudit.read_dataset` and
    `pipeline.loading.iter_dataset` pass settings' `source_dirs()` and `loading.dataset_dirs()`.

    Lines are split on `\n` alone (a U+2028 or U+0085 inside a JSON string is text, not a line
    break, so line numbers match what an editor counts); a UTF-8 byte-order mark at the start is
    dropped; a line that is not UTF-8 is that line's error, never the whole dataset's.
    """
    path = Path(path)
    try:
        lines = raw_lines(path)
        first = next(lines, None)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the dataset ({exc.strerror or exc}). Check the path.") from None
    if first is not None:
        refuse_not_text(path, first[0][:HEAD_BYTES], "dataset")
    return _items(path, first, lines, allow_outside_sources, dirs, data_dirs)


def _items(path: Path, first: Line | None, rest: Iterator[Line], allow_outside_sources: bool,
           dirs: Sequence[Path], data_dirs: Sequence[Path]) -> Iterator[Item]:
    if first is None:
        return
    allowed = allowed_folders(path.parent, data_dirs)  # once per dataset, not once per line
    seen: dict[str, int] = {}
    for number, (raw, length) in enumerate(itertools.chain([(first[0].removeprefix(b"\xef\xbb\xbf"), first[1])],
                                                            rest), start=1):
        if length > MAX_TEXT_BYTES:  # the text limit of `audit`, for an answer inside a dataset too
            yield Item(number, f"line {number}", error=f"line {number}: {length:,} bytes, over the "
                                                         f"{MAX_TEXT_BYTES:,}-byte limit of a text. Fix: "
                                                         "split the answer.")
            continue
        try:
            line = raw.decode("utf-8").removesuffix("\r")
        except UnicodeDecodeError as exc:
            yield Item(number, f"line {number}", error=f"line {number}: not UTF-8 text (byte {exc.start + 1} "
                                                         "of the line). Fix: save the dataset as UTF-8.")
            continue
        if not line.strip():
            continue
        item = parse_line(line, number, path.parent, confine=not allow_outside_sources, allowed=allowed, dirs=dirs)
        if item.entry is not None:
            if item.answer_id in seen:
                item = Item(number, item.answer_id, error=f"line {number}: answer_id {item.answer_id!r} repeats "
                                                          f"line {seen[item.answer_id]}. Fix: give every answer a "
                                                          "unique answer_id.")
            else:
                seen[item.answer_id] = number
        yield item
