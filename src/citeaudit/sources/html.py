"""HTML (`.html`): the text a browser shows, a section per heading, `id` anchors as locators.

Parsed with selectolax (lexbor, an HTML5 parser: malformed markup is read the way a browser reads
it); scripts, styles, templates and hidden elements dropped, and so is the page's chrome
(`_is_chrome`: navigation, banners, footers, sidebars, search, and anything `hidden` or
`aria-hidden="true"`); when the page has a `main` (or, failing that, `article`s) the text and
sections come from it alone (a book's theme picker and keyboard help are outside it). A section per
`h1`-`h6` (ids as for Markdown), and `id` anchors as locators. The raw text of an HTML document is
its extracted text (what a browser shows, blocks separated by blank lines), so spans, lines and
the report point into that text, not into the markup. A page numbered beyond its headings (clauses
"3.2", items "(b)", an `ol` of clauses, an `ol` inside one of its items read as sub-clauses "3.1")
has its numbered clauses as sections (`numbering`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from citeaudit.sources.build import heading_aliases, heading_starts, sections_from_headings, text_start
from citeaudit.sources.document import Document, Section, key, lines_of
from citeaudit.sources.numbering import with_numbering
from citeaudit.sources.reading import read_text, resolve_source
from citeaudit.sources.registry import SourceFormat

if TYPE_CHECKING:
    from selectolax.lexbor import LexborNode

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
    or with a landmark role of navigation, banner, footer, sidebar or search; a heading's permalink
    (`a.headerlink`)."""
    tag, attributes = node.tag, node.attributes
    if tag == "a" and "headerlink" in (attributes.get("class") or "").split():
        return True  # the "¶" permalink that Sphinx and MkDocs put in every heading
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


def html_text(markup: str) -> str:
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
        self.items: list[tuple[int, str]] = []  # (start, "3." or "3.1.") of each numbered `ol` item
        self._counts: dict[int, int] = {}  # an `ol`'s mem_id -> the number of its next item
        self._labels: dict[int, str] = {}  # a numbered `li`'s mem_id -> its number ("3", "3.1")

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
            if tag == "li":
                self._number_item(child)
            elif tag in ("td", "th"):
                self.separate(" | ") if self.parts and not self._tail().endswith("\n") else None
            anchor = child.attributes.get("id") or (child.attributes.get("name") if tag == "a" else None)
            stack.append(("end", tag, self.size, anchor, block))
            stack.append(("children", child, inside_pre or tag in ("pre", "textarea"), inside or tag in _SECTIONING))


    def _number_item(self, item: LexborNode) -> None:
        """Note the number of an item of an ordered list: "2." at the top, "2.1." for an item of an
        ordered list inside item 2 (a sub-clause, as a reader cites it); none inside a bullet list."""
        parent = item.parent
        if parent is None or parent.tag != "ol":
            return
        outer = ""
        above = parent.parent
        while above is not None:
            if above.tag in ("ol", "ul"):  # a list straight inside a list (malformed), or a bullet list
                return
            if above.tag == "li":
                if above.mem_id not in self._labels:  # an item of a bullet list
                    return
                outer = self._labels[above.mem_id] + "."
                break
            above = above.parent
        start = parent.attributes.get("start") or "1"
        number = self._counts.get(parent.mem_id, int(start) if start.strip().isdigit() else 1)
        value = item.attributes.get("value")
        number = int(value) if value and value.strip().isdigit() else number
        self._counts[parent.mem_id] = number + 1
        self._labels[item.mem_id] = f"{outer}{number}"
        self.items.append((self.size, f"{outer}{number}."))


def load_html(source: str | Path, sections: str = "auto") -> Document:
    """An HTML page (see the module's docstring); the raw text is the page's extracted text;
    `sections` as for `numbering.with_numbering`."""
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
    headed = sections_from_headings(raw, clean_to_raw, heads)
    aliases = heading_aliases(headed)
    by_start = sorted((s.clean_start, sid) for sid, s in headed.items())
    regions: dict[str, Section] = {}
    for anchor, start, end in text.anchors:
        start, end = max(start - lead, 0), max(end - lead, 0)
        following = next((sid for pos, sid in by_start if pos >= start and not raw[start:pos].strip()), None)
        if following is not None:  # the anchor is on a heading, or on an element that opens with one
            aliases.setdefault(key(anchor), following)
            continue
        chunk = raw[start:end]
        body = chunk.strip()
        if body and f"#{anchor}" not in headed:
            lo = start + len(chunk) - len(chunk.lstrip())
            regions[f"#{anchor}"] = Section(f"#{anchor}", anchor, body, lo, lo + len(body), lo, lo + len(body))
            aliases.setdefault(key(anchor), f"#{anchor}")
    document = Document(path.name, raw, raw, clean_to_raw, {**headed, **regions}, lines_of(raw), aliases)
    implicit = {text_start(raw, max(pos - lead, 0)): number for pos, number in text.items}
    return with_numbering(document, sections, headings=heading_starts(raw, heads), implicit=implicit)


FORMAT = SourceFormat("html", load_html, extensions=(".html", ".htm", ".xhtml"), aliases=("htm",), numbered=True)
