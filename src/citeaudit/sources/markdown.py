"""Markdown (`.md`): the text a reader sees, a section per heading.

Parsed with markdown-it-py (CommonMark + tables). The clean text is the text a reader sees
(emphasis, link and code markers dropped, code blocks verbatim), every character mapped back to
the raw file; a section per ATX or setext heading, its id the heading's number when it has one
("2.1 Scope" -> "2.1"), else its GitHub slug; headings are also found by title and slug. A
document numbered beyond its headings (clauses "3.2", items "(b)", an ordered list of clauses
"1. **Definitions.**", its nested ordered lists read as sub-clauses "1.1", "1.1.1") has its
numbered clauses as sections (`numbering`).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from citeaudit.sources.build import CleanText, align, heading_aliases, heading_starts, sections_from_headings
from citeaudit.sources.document import Document, lines_of
from citeaudit.sources.html import html_text
from citeaudit.sources.numbering import with_numbering
from citeaudit.sources.reading import read_text, resolve_source
from citeaudit.sources.registry import SourceFormat


def load_markdown(source: str | Path, sections: str = "auto") -> Document:
    """A Markdown document (see the module's docstring); `sections` as for `numbering.with_numbering`
    (the numbers of an ordered list count as written: "3. **Grant.**" is clause 3)."""
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
    out = CleanText(len(raw))
    heads: list[tuple[int, str]] = []
    heading_text: list[str] | None = None
    lists: list[bool] = []  # open lists, innermost last: ordered or not
    numbers: list[str] = []  # the open ordered items' numbers as written, outermost first
    implicit: dict[int, str] = {}  # clean offset of an ordered list item's text -> its number ("2.", "2.1.")
    pending: str | None = None
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
            if token.type.endswith("list_open"):
                lists.append(token.type == "ordered_list_open")
        elif token.type in ("bullet_list_close", "ordered_list_close") and lists:
            lists.pop()
        elif token.type == "list_item_open" or token.type == "tr_open":
            out.separate("\n")
            if token.type == "list_item_open" and lists and all(lists):  # ordered, in ordered items only
                numbers[len(lists) - 1:] = [token.info]
                # a nested item is its outer items' sub-clause: "2." then "2.1.", as a reader cites it
                pending = f"{token.info}{token.markup}" if len(lists) == 1 else ".".join(numbers) + "."
        elif token.type in ("th_open", "td_open") and not out.tail.endswith("\n"):
            out.separate(" | ")
        elif token.type in ("fence", "code_block"):
            out.separate()
            cursor, limit = raw_range(token.map)
            for line in token.content.rstrip("\n").split("\n"):
                offsets, cursor = align(raw, line, cursor, limit)
                out.add(line, offsets)
                out.separate("\n")
            out.separate()
        elif token.type == "html_block":
            out.separate()
            cursor, limit = raw_range(token.map)
            text = html_text(token.content).strip()
            out.add(text, align(raw, text, cursor, limit)[0])
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
                if pending is not None and text.strip():
                    implicit[out.size + len(text) - len(text.lstrip())] = pending
                    pending = None
                offsets, cursor = align(raw, text, cursor, limit)
                out.add(text, offsets)
                if heading_text is not None:
                    heading_text.append(text)
    if max((t.level for t in tokens), default=0) >= parser.options["maxNesting"] - 2:
        _add_unparsed_lines(raw, line_starts, tokens, out)
    clean, clean_to_raw = out.build()
    headed = sections_from_headings(clean, clean_to_raw, heads)
    document = Document(path.name, raw, clean, clean_to_raw, headed, lines_of(raw), heading_aliases(headed))
    return with_numbering(document, sections, headings=heading_starts(clean, heads), implicit=implicit)


LEAF_TOKENS = ("inline", "fence", "code_block", "html_block")


def _add_unparsed_lines(raw: str, line_starts: list[int], tokens: list, out: CleanText) -> None:
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


FORMAT = SourceFormat("markdown", load_markdown, extensions=(".md", ".markdown", ".mdown", ".mkd"), aliases=("md",),
                      numbered=True)
