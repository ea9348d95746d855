"""Seed 003's step 1, reimplemented as the article describes it, as the benchmark's baseline.

The article's method: read the RFC, drop every line that is a page footer or page header (a regular
expression per line, after stripping form feeds), fold 3+ newlines to 2, split the text into numbered
sections at header lines; then, for every quote, normalize it (curly quotes folded, whitespace runs
collapsed) and look for it in each section in section-number order, normalizing each section again
for every quote. A quote is `found` in the first section that contains it, else `missing`. There is
no index, no fuzzy matching, no elision, no offsets into the raw text.

The article's expressions name RFC 7519's header and footer; for a corpus of copies of RFC 7519
and RFC 6749 the same expressions are written for both documents' furniture.
"""

from __future__ import annotations

import re
from pathlib import Path

FOOTERS = (r"Jones, et al\.\s.*\[Page \d+\]$", r"Hardt\s.*\[Page \d+\]$")
HEADERS = (r"RFC 7519\s+JSON Web Token \(JWT\)\s+May 2015$", r"RFC 6749\s+OAuth 2\.0\s+October 2012$")
_BOUNDARY = re.compile(r"(?m)^(?:(\d+(?:\.\d+)*)\.  .+|Appendix [A-Z]\..*)$")
_CURLY = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def load_source(path: Path) -> str:
    """The text without page furniture: each line tested against the footer and header patterns."""
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines():
        bare = line.lstrip("\f")
        if any(re.match(p, bare) for p in FOOTERS) or any(re.match(p, bare) for p in HEADERS):
            continue
        kept.append(bare)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept))


def split_sections(source: str) -> dict[str, str]:
    """Numbered section id -> its text; an appendix header only ends the section before it."""
    marks = list(_BOUNDARY.finditer(source))
    sections = {}
    for mark, nxt in zip(marks, [*marks[1:], None]):
        if mark.group(1) is None:
            continue
        sections[mark.group(1)] = source[mark.start() : nxt.start() if nxt else len(source)].strip()
    return sections


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text.translate(_CURLY)).strip()


def find_quote(sections: dict[str, str], quote: str) -> str | None:
    """The first section, in section-number order, whose normalized text holds the normalized quote."""
    needle = normalize(quote)
    for number in sorted(sections, key=lambda n: [int(p) for p in n.split(".")]):
        if needle in normalize(sections[number]):
            return number
    return None


def locate(sections: dict[str, str], quote: str | None, section: str) -> tuple[str, str | None]:
    """("section-only", cited) for no quote, ("found", section id) or ("missing", None)."""
    if quote is None:
        return "section-only", section
    number = find_quote(sections, quote)
    return ("missing", None) if number is None else ("found", number)
