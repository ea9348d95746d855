"""The `glossary` source format: a `.gloss` file whose lines `term: definition` are its sections,
each named by its term; a locator `entry TERM` names one (its own locator, tried before citeaudit's)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from citeaudit.sources import Document, Section, SourceFormat
from citeaudit.sources.document import lines_of
from citeaudit.sources.reading import read_text

_ENTRY = re.compile(r"(?m)^([\w-]+): (.*)$")


def load(path: Path) -> Document:
    raw = read_text(path)
    sections = {m[1]: Section(m[1], m[1], m[2], m.start(2), m.end(2), m.start(2), m.end(2))
                for m in _ENTRY.finditer(raw)}
    return Document(path.name, raw, raw, np.arange(len(raw), dtype=np.int64), sections, lines_of(raw))


def resolve_locator(document: Document, locator: str) -> str | None:
    found = re.fullmatch(r"entry\s+([\w-]+)", locator.strip(), re.IGNORECASE)
    return found[1] if found and found[1] in document.sections else None


FORMAT = SourceFormat("glossary", load, extensions=(".gloss",), aliases=("gloss",), resolve_locator=resolve_locator)
