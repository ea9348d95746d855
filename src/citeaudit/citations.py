"""Citation records and the quote-citation file format.

A quote-citation file is a JSON list of `{id, claim, quote|null, section}` with an optional gold
`expected` verdict. It is validated with Pydantic; a malformed file raises `InputError` naming the
file, the record index and the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from .errors import InputError

VERDICTS = ("verified", "contradicted", "unsupported", "fabricated")


@dataclass(frozen=True)
class Citation:
    """One citation of any format, as the pipeline sees it.

    `locator` is what the citation points at: a section id ("4.1.3"), a line range ("L2-L3") or a
    source id. `quote` is None for claim-only citations.
    """

    id: str
    claim: str
    quote: str | None
    locator: str | None
    expected: str | None = None


class QuoteCitation(BaseModel):
    """One record of a quote-citation file, validated strictly."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    id: str = Field(min_length=1)
    claim: str = Field(min_length=1)
    quote: str | None
    section: str = Field(min_length=1)
    expected: Literal["verified", "contradicted", "unsupported", "fabricated"] | None = None

    @field_validator("claim", "quote")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must not be blank")
        return value

    def to_citation(self) -> Citation:
        return Citation(self.id, self.claim, self.quote, self.section, self.expected)


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
        '"expected" of ' + ", ".join(VERDICTS) + "."
    )


def load_citations(path: str | Path) -> list[Citation]:
    """Read and validate a quote-citation JSON file; ids must be unique."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read citation file ({exc}). Check the path.") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid UTF-8 JSON ({exc}). Fix the syntax at that position.") from exc
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
