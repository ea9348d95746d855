"""PDF (`.pdf`): the pages' text, running headers and footers removed, a section per page.

Text is extracted page by page with pypdf; the raw text is the pages' text joined by form feeds;
repeated running headers, footers and page numbers are removed like RFC page furniture, so a
sentence runs on across a page break, and a word hyphenated at the end of a line or page is joined
("rin-" + "sed" reads "rinsed": in a typeset PDF such a hyphen is the typesetter's, so a quote of
the word matches exactly). A section per page ("page 3", cited as "p. 3") and per numbered heading
found in the text (or, in a document numbered beyond its headings, its numbered clauses, listed
before the pages: `numbering`). An encrypted or image-only PDF is refused with what to do (decrypt it, run OCR).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from citeaudit.errors import SourceError
from citeaudit.sources.build import CleanText, heading_aliases, heading_starts, sections_from_headings
from citeaudit.sources.document import Document, Section, lines_of, page_id
from citeaudit.sources.numbering import with_numbering
from citeaudit.sources.reading import MAX_FILE_BYTES, MAX_TEXT_BYTES, TooLargeError, resolve_source
from citeaudit.sources.registry import SourceFormat

_PAGE_NUMBER = re.compile(r"^(?:page\s*)?[-–—]?\s*\d{1,5}\s*[-–—]?(?:\s*(?:of|/)\s*\d{1,5})?$", re.IGNORECASE)
_SPLIT_WORD = re.compile(r"[^\W\d_]-$")
_PDF_HEADING = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,4})\.?\s+([A-Z][^\n]{0,80})$")


def _pdf_pages(path: Path) -> list[str]:
    """The text of every page, or a `SourceError` that says what to do."""
    import pypdf
    from pypdf.errors import DependencyError, FileNotDecryptedError

    if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
        raise TooLargeError(f"{path} is not a regular file of at most {MAX_FILE_BYTES:,} bytes; citeaudit reads "
                            "PDF files up to that size. Split it and audit each part on its own.")
    try:
        reader = pypdf.PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise SourceError(f"{path} is encrypted with a password: decrypt it first (for example "
                              "`qpdf --password=PASSWORD --decrypt in.pdf out.pdf`) and audit the decrypted copy.")
        return [page.extract_text() or "" for page in reader.pages]
    except SourceError:
        raise
    except (DependencyError, FileNotDecryptedError) as exc:
        raise SourceError(f"{path} is encrypted and cannot be read here ({exc}): decrypt it first (for example "
                          "`qpdf --decrypt in.pdf out.pdf`) and audit the decrypted copy.") from None
    except Exception as exc:  # pypdf raises many types on a damaged or non-PDF file
        raise SourceError(f"{path} is not a readable PDF ({type(exc).__name__}: {exc}). Check that the file is a "
                          "complete PDF, or pass --format if its extension is wrong.") from None


def _furniture(pages: list[list[str]]) -> Callable[[int, int, str], bool]:
    """Running headers and footers: one of the first two lines (digits ignored) repeated at the top
    of half the pages or more, one of the last two repeated at the foot of half the pages or more,
    and a bare page number ("12", "Page 3 of 9", "- 4 -") at the top or bottom of a page."""
    def shape(line: str) -> str:
        return re.sub(r"\d+", "#", " ".join(line.split()).lower())

    # a header repeats at the tops of pages and a footer at their feet: counted apart, so that
    # "Article 4" at the foot of one page and "Article 5" at the top of the next are not furniture
    tops: Counter[str] = Counter()
    feet: Counter[str] = Counter()
    for lines in pages:
        filled = [line for line in lines if line.strip()]
        tops.update({shape(line) for line in filled[:2]})
        feet.update({shape(line) for line in filled[-2:]})
    need = max(2, (len(pages) + 1) // 2)
    repeated_top = {s for s, n in tops.items() if len(pages) >= 2 and n >= need}
    repeated_foot = {s for s, n in feet.items() if len(pages) >= 2 and n >= need}

    # the indices of each page's first two and last two lines with text, found once per page (a
    # rescan for every line made a 30,000-line page quadratic)
    top_lines: list[frozenset[int]] = []
    foot_lines: list[frozenset[int]] = []
    for lines in pages:
        indices = [i for i, text in enumerate(lines) if text.strip()]
        top_lines.append(frozenset(indices[:2]))
        foot_lines.append(frozenset(indices[-2:]))

    def is_furniture(page: int, index: int, line: str) -> bool:
        top, foot = index in top_lines[page], index in foot_lines[page]
        if not (top or foot):
            return False
        form = shape(line)
        return (top and form in repeated_top) or (foot and form in repeated_foot) \
            or bool(_PAGE_NUMBER.match(line.strip()))

    return is_furniture


def _successor(prev: tuple[int, ...] | None, number: tuple[int, ...]) -> bool:
    """Whether a heading number plausibly follows the previous one (1 -> 1.1, 2, 3; 2.1 -> 2.2, 3)."""
    if prev is None:
        return number[0] <= 2 and all(n <= 2 for n in number[1:])
    for k in range(min(len(prev), len(number) - 1) + 1):
        if number[:k] != prev[:k]:
            return False
        step = number[k] - (prev[k] if k < len(prev) else 0)
        if 1 <= step <= 2 and all(n <= 2 for n in number[k + 1 :]):
            return True
    return False


def _pdf_heads(clean: str) -> list[tuple[int, str]]:
    heads: list[tuple[int, str]] = []
    prev: tuple[int, ...] | None = None
    for line in re.finditer(r"[^\n]+", clean):
        found = _PDF_HEADING.match(line.group().strip())
        if not found or len(found.group(2).split()) > 10 or found.group(2).rstrip()[-1] in ".,;:":
            continue
        number = tuple(int(n) for n in found.group(1).split("."))
        if _successor(prev, number):
            heads.append((line.start(), line.group().strip()))
            prev = number
    return heads


def load_pdf(source: str | Path, sections: str = "auto") -> Document:
    """A PDF (see the module's docstring): pages and numbered headings as sections, or numbered
    clauses before the pages (`sections` as for `numbering.with_numbering`)."""
    path = resolve_source(source, download=False)
    texts = [text.replace("\r\n", "\n").replace("\r", "\n").rstrip() for text in _pdf_pages(path)]
    if not any(text.strip() for text in texts):
        raise SourceError(f"{path}: this PDF has no text layer ({len(texts)} page(s) of images or drawings only): "
                          "run OCR first (for example `ocrmypdf in.pdf out.pdf`) and audit the OCR'd copy.")
    raw = "\n\f".join(texts)
    if len(raw) > MAX_TEXT_BYTES // 4 and len(raw.encode("utf-8")) > MAX_TEXT_BYTES:  # the limit of every text
        raise TooLargeError(f"{path} holds more than {MAX_TEXT_BYTES:,} bytes of text once extracted; citeaudit "
                            f"reads texts of up to {MAX_TEXT_BYTES:,} bytes. Split it and audit each part on its own.")
    pages = [text.split("\n") for text in texts]
    is_furniture = _furniture(pages)
    kept: list[tuple[int, int, str]] = []  # (page number, raw offset, line) of every line that is text
    base = 0
    for number, lines in enumerate(pages):
        pos = base
        for index, line in enumerate(lines):
            if line.strip() and not is_furniture(number, index, line):
                kept.append((number + 1, pos, line.rstrip()))
            pos += len(line) + 1
        base += len(texts[number]) + 2  # "\n\f" between pages
    out = CleanText(len(raw))
    page_ranges: dict[int, tuple[int, int]] = {}
    joined = False
    for i, (number, pos, line) in enumerate(kept):
        # a word hyphenated at the end of a line (or page) is joined: "rin-" + "sed" reads "rinsed"
        hyphenated = i + 1 < len(kept) and _SPLIT_WORD.search(line) and kept[i + 1][2].lstrip()[:1].islower()
        text = line[:-1] if hyphenated else line
        if not joined:
            out.separate("\n")
        first = page_ranges.get(number, (out.size, 0))[0]
        out.add(text, np.arange(pos, pos + len(text), dtype=np.int64))
        page_ranges[number] = (first, out.size)
        joined = bool(hyphenated)
    clean, clean_to_raw = out.build()
    page_sections: dict[str, Section] = {}
    for number, (lo, hi) in page_ranges.items():
        chunk = clean[lo:hi]
        body = chunk.strip()
        if body:
            start = lo + len(chunk) - len(chunk.lstrip())
            page_sections[page_id(number)] = Section(page_id(number), page_id(number), body, int(clean_to_raw[start]),
                                                int(clean_to_raw[start + len(body) - 1]) + 1, start, start + len(body))
    heads = _pdf_heads(clean)
    headings = sections_from_headings(clean, clean_to_raw, heads)
    aliases = heading_aliases(headings)
    document = Document(path.name, raw, clean, clean_to_raw, {**page_sections, **headings}, lines_of(raw), aliases)
    return with_numbering(document, sections, headings=heading_starts(clean, heads))


FORMAT = SourceFormat("pdf", load_pdf, extensions=(".pdf",), binary=True, numbered=True)
