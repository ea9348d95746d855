"""Source documents of every format, loaded into the one `Document` the pipeline reads.

`load_document(path, format=None)` picks the loader by `format` or by the file's extension:

  rfc       an RFC text (`.txt` that looks like an RFC): page furniture removed, numbered sections
  text      any other plain text: paragraphs "1", "2", ... and lines
  markdown  `.md`: parsed with markdown-it-py (CommonMark + tables); the clean text is the text a
            reader sees (emphasis, link and code markers dropped, code blocks verbatim), every
            character mapped back to the raw file; a section per ATX or setext heading, its id the
            heading's number when it has one ("2.1 Scope" -> "2.1"), else its GitHub slug
  html      `.html`: parsed with selectolax (lexbor, an HTML5 parser: malformed markup is read the
            way a browser reads it); scripts, styles, templates and hidden elements dropped, and so
            is the page's chrome (`_is_chrome`: navigation, banners, footers, sidebars, search, and
            anything `hidden` or `aria-hidden="true"`); when the page has a `main` (or, failing
            that, `article`s) the text and sections come from it alone (a book's theme picker and
            keyboard help are outside it); a
            section per `h1`-`h6` (ids as for Markdown), and `id` anchors as locators. The raw text
            of an HTML document is its extracted text (what a browser shows, blocks separated by
            blank lines), so spans, lines and the report point into that text, not into the markup
  pdf       `.pdf`: text extracted page by page with pypdf; the raw text is the pages' text joined
            by form feeds; repeated running headers, footers and page numbers removed like RFC page
            furniture, so a sentence runs on across a page break, and a word hyphenated at the end of
            a line or page is joined ("rin-" + "sed" reads "rinsed": in a typeset PDF such a hyphen is
            the typesetter's, so a quote of the word matches exactly); a section
            per page ("page 3", cited as "p. 3") and per numbered heading found in the text

A document that cannot be read says why and what to do (`SourceError`): a binary file under a
text name, an encrypted or image-only PDF ("run OCR first"), a document with no text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from citeaudit.errors import SourceError
from citeaudit.locate.locators import key, page_id, slug
from citeaudit.sources.document import (
    MAX_FILE_BYTES,
    MAX_TEXT_BYTES,
    Document,
    Line,
    Section,
    TooLargeError,
    lines_of,
    load_rfc,
    load_text,
    read_text,
    resolve_source,
)

if TYPE_CHECKING:
    from selectolax.lexbor import LexborNode

FORMATS = ("rfc", "text", "markdown", "html", "pdf")
EXTENSIONS = {
    ".md": "markdown", ".markdown": "markdown", ".mdown": "markdown", ".mkd": "markdown",
    ".html": "html", ".htm": "html", ".xhtml": "html",
    ".pdf": "pdf",
}
_ALIASES = {"md": "markdown", "htm": "html", "txt": "text", "plain": "text"}
_RFC_SIGNS = re.compile(r"^(?:Request for Comments:\s*\d+|RFC \d+\s{2,}.*\S\s{2,}\w+ \d{4})\s*$|\[Page \d+\]\s*$",
                        re.MULTILINE)
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+(\S.*)$")


def detect_format(path: Path, format: str | None = None) -> str:
    """The loader for `path`: `format` if given (`md`, `htm`, `txt` accepted), else by extension;
    a `.txt` (or any other) text is an RFC when it has an RFC's header or page footers."""
    if format is not None:
        chosen = _ALIASES.get(format.lower(), format.lower())
        if chosen not in FORMATS:
            raise SourceError(f"unknown document format {format!r}: use one of {', '.join(FORMATS)}")
        return chosen
    by_extension = EXTENSIONS.get(path.suffix.lower())
    if by_extension:
        return by_extension
    head = _head(path, 20_000).decode("utf-8", errors="replace")
    return "rfc" if len(_RFC_SIGNS.findall(head)) >= 2 else "text"


def load_document(source: str | Path, format: str | None = None) -> Document:
    """Load a source document of any format (see the module's docstring)."""
    path = resolve_source(source)
    chosen = detect_format(path, format)
    loaders: dict[str, Callable[..., Document]] = {
        "rfc": load_rfc, "text": load_text, "markdown": load_markdown, "html": load_html, "pdf": load_pdf,
    }
    loader = loaders[chosen]
    if chosen != "pdf":
        _refuse_binary(path, chosen)
    document = loader(path)
    if not document.clean.strip():
        raise SourceError(f"{path} has no text to check citations against (an empty {chosen} document). "
                          "Pass the document the answer cites.")
    return document


def _head(path: Path, size: int) -> bytes:
    """The first `size` bytes of a file (and no more: a huge file or a device is not read whole)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError as exc:
        raise SourceError(f"Cannot read source {path}: {exc.strerror or exc}. Check the path.") from exc


def _refuse_binary(path: Path, chosen: str) -> None:
    head = _head(path, 65_536)
    if head.startswith(b"%PDF-"):
        raise SourceError(f"{path} is a PDF file, not {chosen} text: rename it to .pdf or pass --format pdf.")
    if b"\x00" in head:
        raise SourceError(f"{path} holds binary data (NUL bytes), not {chosen} text. Check that the path names "
                          "the document the answer cites, and pass --format if its extension is wrong.")


class _Builder:
    """The clean text of a document, built piece by piece with every character's raw offset."""

    def __init__(self, raw_size: int) -> None:
        self.raw_size = raw_size
        self.parts: list[str] = []
        self.offsets: list[np.ndarray] = []
        self.size = 0
        self.last_offset = 0
        self.tail = ""  # the last two characters appended

    def add(self, text: str, offsets: np.ndarray | Iterable[int]) -> None:
        if not text:
            return
        array = np.asarray(list(offsets) if not isinstance(offsets, np.ndarray) else offsets, dtype=np.int64)
        self.parts.append(text)
        self.offsets.append(array)
        self.size += len(text)
        self.last_offset = int(array[-1])
        self.tail = (self.tail + text)[-2:]

    def separate(self, separator: str = "\n\n") -> None:
        """End the current block: a separator unless the text is empty or already ends in one."""
        if self.size and not self.tail.endswith(separator):
            # mapped to the raw character after the block (its line break), so that a span ending
            # at the block's last character does not take in the separator
            self.add(separator, [min(self.last_offset + 1, self.raw_size - 1)] * len(separator))

    def build(self) -> tuple[str, np.ndarray]:
        offsets = np.concatenate(self.offsets) if self.offsets else np.zeros(0, dtype=np.int64)
        return "".join(self.parts), np.maximum.accumulate(offsets) if len(offsets) else offsets


def _align(raw: str, text: str, cursor: int, limit: int) -> tuple[np.ndarray, int]:
    """Raw offsets of `text`, found in order in `raw[cursor:limit]`; the new cursor.

    Text that occurs verbatim is mapped in one step; otherwise each character is looked for a
    little ahead (skipping escapes, entities and markup), and one not found maps to the cursor.
    """
    found = raw.find(text, cursor, limit)
    if found >= 0:
        return np.arange(found, found + len(text), dtype=np.int64), found + len(text)
    out = np.empty(len(text), dtype=np.int64)
    for i, ch in enumerate(text):
        pos = raw.find(ch, cursor, min(limit, cursor + 24)) if not ch.isspace() else -1
        if pos >= 0:
            out[i] = pos
            cursor = pos + 1
        else:
            out[i] = min(cursor, max(len(raw) - 1, 0))
    return out, cursor


def _heading_id(text: str, taken: set[str]) -> tuple[str, str]:
    """A heading's section id and title: its number if it has one not yet taken, else its slug."""
    found = _NUMBERED.match(text.strip())
    if found and found.group(1) not in taken:
        return found.group(1), found.group(2).strip()
    base = slug(text) or "section"
    sid, n = base, 0
    while sid in taken:
        n += 1
        sid = f"{base}-{n}"
    return sid, text.strip()


def _sections_from_headings(clean: str, clean_to_raw: np.ndarray, heads: list[tuple[int, str]],
                            ends: Iterable[int] | None = None) -> dict[str, Section]:
    """One section per heading (clean offset, heading text), each up to the next heading."""
    sections: dict[str, Section] = {}
    starts = [pos for pos, _ in heads]
    bounds = list(ends) if ends is not None else [*starts[1:], len(clean)]
    for (pos, text), end in zip(heads, bounds):
        sid, title = _heading_id(text, set(sections))
        chunk = clean[pos:end]
        body = chunk.strip()
        if not body:
            continue
        lo = pos + len(chunk) - len(chunk.lstrip())
        hi = lo + len(body)
        sections[sid] = Section(sid, title, body, int(clean_to_raw[lo]), int(clean_to_raw[hi - 1]) + 1, lo, hi)
    return sections


def _heading_aliases(sections: dict[str, Section]) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for sid, section in sections.items():
        for name in (sid, section.title, f"{sid} {section.title}", slug(f"{sid} {section.title}")):
            aliases.setdefault(key(name), sid)
    return aliases


def _lines(raw: str) -> Sequence[Line]:
    return lines_of(raw)


# --- Markdown -------------------------------------------------------------------------------------

def load_markdown(source: str | Path) -> Document:
    """A Markdown document (see the module's docstring)."""
    from markdown_it import MarkdownIt

    path = resolve_source(source, download=False)
    raw = read_text(path)
    line_starts = [0] + [m.end() for m in re.finditer(r"\r\n|\n|\r", raw)]

    def raw_range(token_map: list[int] | None) -> tuple[int, int]:
        if not token_map:
            return 0, len(raw)
        first, last = token_map
        return line_starts[min(first, len(line_starts) - 1)], line_starts[last] if last < len(line_starts) else len(raw)

    parser = MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(raw)
    out = _Builder(len(raw))
    heads: list[tuple[int, str]] = []
    heading_text: list[str] | None = None
    for token in tokens:
        if token.type == "heading_open":
            out.separate()
            heads.append((out.size, ""))
            heading_text = []
        elif token.type == "heading_close" and heading_text is not None:
            heads[-1] = (heads[-1][0], "".join(heading_text))
            heading_text = None
        elif token.type in ("paragraph_open", "blockquote_open", "bullet_list_open", "ordered_list_open", "table_open"):
            out.separate()
        elif token.type == "list_item_open" or token.type == "tr_open":
            out.separate("\n")
        elif token.type in ("th_open", "td_open") and not out.tail.endswith("\n"):
            out.separate(" | ")
        elif token.type in ("fence", "code_block"):
            out.separate()
            cursor, limit = raw_range(token.map)
            for line in token.content.rstrip("\n").split("\n"):
                offsets, cursor = _align(raw, line, cursor, limit)
                out.add(line, offsets)
                out.separate("\n")
            out.separate()
        elif token.type == "html_block":
            out.separate()
            cursor, limit = raw_range(token.map)
            text = _html_text(token.content).strip()
            out.add(text, _align(raw, text, cursor, limit)[0])
            out.separate()
        elif token.type == "inline":
            cursor, limit = raw_range(token.map)
            for child in token.children or []:
                if child.type in ("softbreak", "hardbreak"):
                    out.add("\n", [min(cursor, len(raw) - 1)])  # the line break after the text
                    continue
                if child.type not in ("text", "code_inline", "text_special", "image"):  # image: its alt text
                    continue
                text = child.content
                offsets, cursor = _align(raw, text, cursor, limit)
                out.add(text, offsets)
                if heading_text is not None:
                    heading_text.append(text)
    if max((t.level for t in tokens), default=0) >= parser.options["maxNesting"] - 2:
        _add_unparsed_lines(raw, line_starts, tokens, out)
    clean, clean_to_raw = out.build()
    sections = _sections_from_headings(clean, clean_to_raw, heads)
    return Document(path.name, raw, clean, clean_to_raw, sections, _lines(raw), _heading_aliases(sections))


LEAF_TOKENS = ("inline", "fence", "code_block", "html_block")


def _add_unparsed_lines(raw: str, line_starts: list[int], tokens: list, out: _Builder) -> None:
    """The lines the parser dropped, as plain paragraphs at the end of the clean text.

    markdown-it stops at its nesting limit (lists nested 20 deep) and silently drops the rest of
    the block; a true quote after it would be `fabricated`. Every line with text that no leaf token
    covers is kept as it is written (list markers and all), so the quote is still found (its
    section may then be the last one, which flags the citation for review, never rejects it).
    """
    covered = np.zeros(len(line_starts) + 1, dtype=bool)
    for token in tokens:
        if token.type in LEAF_TOKENS and token.map:
            covered[token.map[0]:token.map[1]] = True
    out.separate()
    for number, start in enumerate(line_starts):
        end = line_starts[number + 1] if number + 1 < len(line_starts) else len(raw)
        line = raw[start:end].rstrip("\r\n")
        if covered[number] or not line.strip():
            continue
        out.add(line, np.arange(start, start + len(line)))
        out.separate("\n")


# --- HTML -----------------------------------------------------------------------------------------

_SKIP = frozenset({"script", "style", "noscript", "template", "head", "title", "meta", "link", "iframe", "object",
                   "svg", "canvas", "-comment", "-doctype"})
_BLOCK = frozenset({"address", "article", "aside", "blockquote", "dd", "details", "dialog", "div", "dl", "dt",
                    "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
                    "header", "hgroup", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table",
                    "tbody", "thead", "tfoot", "tr", "ul", "caption", "body", "html"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# the page's chrome: never text, never a section (`_is_chrome`)
_CHROME_TAGS = frozenset({"nav", "aside", "search"})
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
# a header or footer inside these is the heading or byline of that content, not the page's banner
# or footer (their ARIA roles, banner and contentinfo, apply only outside them)
_SECTIONING = frozenset({"article", "section", "main", "aside", "nav"})


def _is_chrome(node: LexborNode, scoped: bool) -> bool:
    """Whether an element is page chrome, not content: `nav`, `aside`, `search`; a `header` or
    `footer` outside sectioning content (`scoped` False); anything `hidden`, `aria-hidden="true"`,
    or with a landmark role of navigation, banner, footer, sidebar or search."""
    tag, attributes = node.tag, node.attributes
    if tag in _CHROME_TAGS or (tag in ("header", "footer") and not scoped) or "hidden" in attributes:
        return True
    if (attributes.get("aria-hidden") or "").strip().lower() == "true":
        return True
    return bool(set((attributes.get("role") or "").lower().split()) & _CHROME_ROLES)


def _content_roots(body: LexborNode) -> list[LexborNode]:
    """Where a page's content is: its `main` elements (or `role="main"`), else its outermost
    `article`s, else the whole body; chrome and skipped elements are not searched. One pass per
    kind over the tree with an explicit stack (a page nested thousands deep is no RecursionError)."""
    for wanted in ("main", "article"):
        roots: list[LexborNode] = []
        stack: list[tuple[LexborNode, bool]] = [(child, False) for child in reversed(list(body.iter()))]
        while stack:
            node, scoped = stack.pop()
            tag = node.tag
            if tag in _SKIP or _is_chrome(node, scoped):
                continue
            if tag == wanted or (wanted == "main" and (node.attributes.get("role") or "").strip().lower() == "main"):
                roots.append(node)
                continue
            inner = scoped or tag in _SECTIONING
            stack.extend((child, inner) for child in reversed(list(node.iter())))
        if roots:
            return roots
    return [body]


def _html_text(markup: str) -> str:
    """The visible text of an HTML fragment (for raw HTML blocks inside Markdown)."""
    from selectolax.lexbor import LexborHTMLParser

    body = LexborHTMLParser(markup).body
    return body.text(separator=" ", strip=True) if body is not None else ""


class _HtmlText:
    """The visible text of an HTML tree, blocks separated by blank lines, headings and anchors noted."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.heads: list[tuple[int, str]] = []
        self.anchors: list[tuple[str, int, int]] = []  # (id, start, end) in the text

    def _tail(self) -> str:
        return self.parts[-1][-2:] if self.parts else ""

    def add(self, text: str, pre: bool = False) -> None:
        if not pre:
            text = re.sub(r"[ \t\n\r\f]+", " ", text)
            if text.startswith(" ") and (not self.parts or self._tail()[-1:] in (" ", "\n")):
                text = text[1:]
        if text:
            self.parts.append(text)
            self.size += len(text)

    def separate(self, separator: str = "\n\n") -> None:
        if not self.parts:
            return
        last = self.parts[-1]
        if last.endswith(" "):
            self.parts[-1] = last.rstrip(" ")
            self.size -= len(last) - len(self.parts[-1])
        tail = "".join(self.parts[-2:])
        if tail.endswith(separator) or tail.endswith("\n\n"):
            return
        self.add("\n" if separator == "\n\n" and tail.endswith("\n") else separator, pre=True)

    def walk(self, node: LexborNode, pre: bool = False, scoped: bool = False, itself: bool = False) -> None:
        """The text of `node`'s descendants (and of `node` itself, its `id` an anchor, when `itself`)
        in document order, chrome left out (`_is_chrome`; `scoped`: `node` is inside sectioning
        content). Iterative (an explicit stack), so a page nested thousands of levels deep is read
        like any other, never a RecursionError."""
        # ("node", child, pre, scoped) visits a child; ("end", tag, start, anchor, block) closes an element
        stack: list[tuple] = [("node" if itself else "children", node, pre, scoped)]
        while stack:
            frame = stack.pop()
            if frame[0] == "end":
                _, tag, start, anchor, block = frame
                if tag in _HEADINGS:
                    # its first line: a heading left open by malformed markup holds what follows it
                    self.heads.append((start, "".join(self.parts)[start:].strip().split("\n", 1)[0][:200]))
                if anchor:
                    self.anchors.append((anchor, start, self.size))
                if block:
                    self.separate()
                continue
            if frame[0] == "children":
                _, parent, inside_pre, inside = frame
                stack.extend(("node", child, inside_pre, inside)
                             for child in reversed(list(parent.iter(include_text=True))))
                continue
            _, child, inside_pre, inside = frame
            tag = child.tag
            if tag == "-text":
                self.add(child.text_content or "", inside_pre)
                continue
            if tag in _SKIP or _is_chrome(child, inside):
                continue
            if tag == "br":
                self.separate("\n")
                continue
            block = tag in _BLOCK
            if block:
                self.separate()
            elif tag in ("td", "th"):
                self.separate(" | ") if self.parts and not self._tail().endswith("\n") else None
            anchor = child.attributes.get("id") or (child.attributes.get("name") if tag == "a" else None)
            stack.append(("end", tag, self.size, anchor, block))
            stack.append(("children", child, inside_pre or tag in ("pre", "textarea"), inside or tag in _SECTIONING))


def load_html(source: str | Path) -> Document:
    """An HTML page (see the module's docstring); the raw text is the page's extracted text."""
    from selectolax.lexbor import LexborHTMLParser

    path = resolve_source(source, download=False)
    markup = read_text(path)
    tree = LexborHTMLParser(markup)
    text = _HtmlText()
    page = tree.body
    if page is not None:
        roots = _content_roots(page)
        whole = roots[0] is page
        for root in roots:
            text.walk(root, itself=not whole)
        if not whole and not "".join(text.parts).strip():  # an empty main: read the page, less its chrome
            text = _HtmlText()
            text.walk(page)
    raw = "".join(text.parts).strip("\n ")
    lead = len("".join(text.parts)) - len("".join(text.parts).lstrip("\n "))
    clean_to_raw = np.arange(len(raw), dtype=np.int64)
    heads = [(max(pos - lead, 0), title) for pos, title in text.heads if title]
    heads.sort()
    sections = _sections_from_headings(raw, clean_to_raw, heads)
    aliases = _heading_aliases(sections)
    by_start = sorted((s.clean_start, sid) for sid, s in sections.items())
    regions: dict[str, Section] = {}
    for anchor, start, end in text.anchors:
        start, end = max(start - lead, 0), max(end - lead, 0)
        following = next((sid for pos, sid in by_start if pos >= start and not raw[start:pos].strip()), None)
        if following is not None:  # the anchor is on a heading, or on an element that opens with one
            aliases.setdefault(key(anchor), following)
            continue
        chunk = raw[start:end]
        body = chunk.strip()
        if body and f"#{anchor}" not in sections:
            lo = start + len(chunk) - len(chunk.lstrip())
            regions[f"#{anchor}"] = Section(f"#{anchor}", anchor, body, lo, lo + len(body), lo, lo + len(body))
            aliases.setdefault(key(anchor), f"#{anchor}")
    return Document(path.name, raw, raw, clean_to_raw, {**sections, **regions}, _lines(raw), aliases)


# --- PDF ------------------------------------------------------------------------------------------

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
    """Running headers and footers: a first or last line (digits ignored) repeated on half the pages
    or more, and a bare page number ("12", "Page 3 of 9", "- 4 -") at the top or bottom of a page."""
    def shape(line: str) -> str:
        return re.sub(r"\d+", "#", " ".join(line.split()).lower())

    edges: Counter[str] = Counter()
    for lines in pages:
        filled = [line for line in lines if line.strip()]
        edges.update({shape(line) for line in filled[:2] + filled[-2:]})
    repeated = {s for s, n in edges.items() if len(pages) >= 2 and n >= max(2, (len(pages) + 1) // 2)}

    # the indices of each page's first two and last two lines with text, found once per page (a
    # rescan for every line made a 30,000-line page quadratic)
    edge_lines: list[frozenset[int]] = []
    for lines in pages:
        indices = [i for i, text in enumerate(lines) if text.strip()]
        edge_lines.append(frozenset(indices[:2] + indices[-2:]))

    def is_furniture(page: int, index: int, line: str) -> bool:
        return index in edge_lines[page] and (shape(line) in repeated or bool(_PAGE_NUMBER.match(line.strip())))

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


def load_pdf(source: str | Path) -> Document:
    """A PDF (see the module's docstring): pages and numbered headings as sections."""
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
    out = _Builder(len(raw))
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
    sections: dict[str, Section] = {}
    for number, (lo, hi) in page_ranges.items():
        chunk = clean[lo:hi]
        body = chunk.strip()
        if body:
            start = lo + len(chunk) - len(chunk.lstrip())
            sections[page_id(number)] = Section(page_id(number), page_id(number), body, int(clean_to_raw[start]),
                                                int(clean_to_raw[start + len(body) - 1]) + 1, start, start + len(body))
    headings = _sections_from_headings(clean, clean_to_raw, _pdf_heads(clean))
    aliases = _heading_aliases(headings)
    return Document(path.name, raw, clean, clean_to_raw, {**sections, **headings}, _lines(raw), aliases)
