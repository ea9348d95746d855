"""One citation record for every format, and the quote-citation file that produces them.

Three input formats become the same `Citation`: a claim, an optional quote and a typed locator
saying what the citation points at. The locator's type is the citation's `kind`:

  SectionRef  a section as written ("4.1.3", "Section 4.1.3", "§4.1.3")   kind `quote`
  LineRange   a line range of a numbered document ([L5], [L2-L3], [L2-3])   kind `lines`
  SourceRef   the id of a retrieved source (seed 000)                       kind `source`

The adapters at the edges validate strictly and name the file, the record and the fix:
`load_citations` here (quote files, Pydantic), `lines.extract_line_citations` (answer texts) and
`sourceid` (seed-000 JSON).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from citeaudit import strictjson
from citeaudit.errors import InputError
from citeaudit.sources.reading import MAX_TEXT_BYTES, read_bounded
from citeaudit.table import Kind, Verdict


@dataclass(frozen=True)
class SectionRef:
    """A section as the citation writes it; `documents.canonical_section_id` reads it."""

    section: str

    def __str__(self) -> str:
        return self.section


@dataclass(frozen=True)
class LineRange:
    """Lines `first..last` (1-based, inclusive) as named by `marker` (e.g. "[L2-3]")."""

    first: int
    last: int
    marker: str

    @property
    def label(self) -> str:
        """`L5` or `L2-L3`: the canonical name of the range."""
        return f"L{self.first}" if self.first == self.last else f"L{self.first}-L{self.last}"

    def __str__(self) -> str:
        return self.marker


@dataclass(frozen=True)
class SourceRef:
    """A retrieved source, by id."""

    source_id: str

    def __str__(self) -> str:
        return self.source_id


Locator = SectionRef | LineRange | SourceRef

_KINDS: dict[type, Kind] = {SectionRef: Kind.QUOTE, LineRange: Kind.LINES, SourceRef: Kind.SOURCE}


@dataclass(frozen=True)
class Citation:
    """One citation of any format, as the pipeline sees it.

    `quote` is None for claim-only citations (line and source citations never quote).
    `expected` is a gold verdict from a labelled set, else None.
    """

    id: str
    claim: str
    quote: str | None
    locator: Locator
    expected: Verdict | None = None

    @property
    def kind(self) -> Kind:
        return _KINDS[type(self.locator)]


class QuoteCitation(BaseModel):
    """One record of a quote-citation file, validated strictly."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    id: str = Field(min_length=1)
    claim: str = Field(min_length=1)
    quote: str | None
    section: str = Field(min_length=1)
    expected: Verdict | None = None

    @field_validator("claim", "quote")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank")
        return value

    def to_citation(self) -> Citation:
        return Citation(self.id, self.claim, self.quote, SectionRef(self.section), self.expected)


_FILE = TypeAdapter(list[QuoteCitation])


def _describe(path: Path, error: ValidationError) -> str:
    lines = []
    for item in error.errors():
        loc = list(item["loc"])
        where = f"record {loc[0]}" if loc and isinstance(loc[0], int) else "top level"
        field = ".".join(str(p) for p in loc[1:]) or "(whole record)"
        lines.append(f"  {where}, field {field!r}: {item['msg']}")
    return (
        f"{path}: invalid citation file\n" + "\n".join(lines) + "\nFix: each record is "
        '{"id": str, "claim": str, "quote": str or null, "section": str} with an optional '
        '"expected" of ' + ", ".join(Verdict) + "."
    )


def load_citations(path: str | Path) -> list[Citation]:
    """Read and validate a quote-citation JSON file; ids must be unique, and keys within a record."""
    path = Path(path)
    try:
        data = strictjson.loads(read_bounded(path, MAX_TEXT_BYTES, "citation file", text=True).decode("utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read citation file ({exc.strerror or exc}). Check the path.") from exc
    except strictjson.RepeatedKeyError as exc:
        raise InputError(f"{path}: {exc}. Fix: give each field once.") from None
    except (RecursionError, strictjson.TooDeepError):
        raise InputError(f"{path}: JSON nested too deeply to read. Fix: a citation file is a flat list.") from None
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError, or a number too long to convert
        raise InputError(f"{path}: not valid UTF-8 JSON ({exc}). Fix the syntax at that position.") from None
    try:
        records = _FILE.validate_python(data)
    except ValidationError as exc:
        raise InputError(_describe(path, exc)) from None
    seen: dict[str, int] = {}
    for i, record in enumerate(records):
        if record.id in seen:
            raise InputError(
                f"{path}: record {i}, field 'id': {record.id!r} repeats record {seen[record.id]}. "
                "Fix: give every citation a unique id."
            )
        seen[record.id] = i
    return [r.to_citation() for r in records]
