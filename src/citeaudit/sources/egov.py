"""Japanese statutes in e-Gov law XML (`--format egov`; recognized by its `<DataRoot>`/`<Law>` root).

The clean text reads as the Act is printed: a line per chapter title, then per article its caption
(（第三者提供の制限）), its title and first paragraph (第二十七条　個人情報取扱事業者は、…), a line per
item (一　法令に基づく場合) and per later paragraph (２　…). Sentences of a paragraph are joined
with nothing, as Japanese is written. Every character maps back to the raw XML.

Sections are the places a citation can name, in Arabic numerals (`japanese.place_id`): each
article (第27条, 第21条の2), each of its paragraphs (第27条第1項) and items (第27条第1項第1号), and
the supplementary provisions' articles apart (附則第1条; those of a later amendment as
附則(平成一五年五月三〇日法律第六一号)第1条), since their numbering restarts. An article comes
before its paragraphs and items, so a quote found outside the part a citation names is reported in
its article; and the judge reads a cited paragraph or item in its whole article (`article_evidence`:
an item alone says nothing without the paragraph it completes). Article captions are the titles.
Any locator `japanese.statute_place` reads resolves (第二十七条第一項, 27条1項, Article 27(1)(i)).

Parsed with defusedxml: a document type with entities (an XML bomb) or external references is
refused, and so is malformed XML, with a `SourceError` naming the file and the line; so is XML
nested deeper than `MAX_DEPTH` (expat builds the tree without recursing, the reader walks it
recursively, so the depth is measured, without recursion, before it walks).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from citeaudit.errors import SourceError
from citeaudit.sources.build import CleanText, align
from citeaudit.sources.document import Document, Section, key, lines_of
from citeaudit.sources.japanese import StatutePlace, place_id, statute_place
from citeaudit.sources.reading import read_text, resolve_source
from citeaudit.sources.registry import SourceFormat

# the root after an XML declaration, comments and a document type (which `load_egov` then refuses)
_ROOT = re.compile(r"^\ufeff?\s*(?:<\?xml[^>]*\?>\s*)?(?:(?:<!--.*?-->|<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>)\s*)*"
                   r"<(?:DataRoot|Law)\b", re.S)
_SENTENCE_TAGS = {"Sentence"}
_SKIPPED = {"ArticleCaption", "ArticleTitle", "ParagraphNum", "ItemTitle", "ParagraphCaption"}


def detect(head: str) -> bool:
    """Whether a text is e-Gov XML: its root element is `DataRoot` (what the e-Gov law API returns:
    a law, or an error response, which `load_egov` names as such) or `Law`."""
    return bool(_ROOT.match(head))


class _Reader:
    """Walks the parsed XML in document order and builds the clean text and the sections."""

    def __init__(self, raw: str):
        self.raw = raw
        self.cursor = 0
        self.out = CleanText(len(raw))
        self.spans: list[tuple[str, str, int, int]] = []  # (id, title, clean start, clean end)

    def add(self, text: str) -> None:
        """Append a text node, mapped to where it stands in the raw XML (after the cursor)."""
        text = text.strip()
        if not text:
            return
        offsets, self.cursor = align(self.raw, text, self.cursor, len(self.raw))
        self.out.add(text, offsets)

    def gap(self, text: str) -> None:
        """A separator that is not in the XML (a full-width space after a title), mapped to the
        last character before it."""
        self.out.add(text, [self.out.last_offset] * len(text))

    def line(self) -> None:
        self.out.separate("\n")

    def sentences(self, element: ET.Element | None) -> None:
        """The text of every sentence under `element` (none when it is None), in order, joined;
        the columns of an item (第五百九条の規定　公布の日) apart by a full-width space."""
        if element is None:
            return
        later = {id(c) for parent in element.iter() for c in parent.findall("Column")[1:]}
        for node in element.iter():
            if id(node) in later and self.out.size:
                self.gap("\u3000")
            elif node.tag in _SENTENCE_TAGS:
                self.add("".join(node.itertext()))

    def item(self, element: ET.Element, place: StatutePlace | None) -> None:
        """An item on its own line (its subitems on theirs); a section when it has a `place`."""
        start = self.out.size
        title = element.findtext("ItemTitle") or ""
        self.add(title)
        if title.strip():
            self.gap("\u3000")
        self.sentences(element.find("ItemSentence"))
        for sub in element:
            if sub.tag.startswith("Subitem"):
                self.line()
                self.sub(sub)
        if place is not None:
            self.spans.append((place_id(place), "", start, self.out.size))
        self.line()

    def sub(self, element: ET.Element) -> None:
        for child in element:
            if child.tag.endswith("Title"):
                self.add(child.text or "")
                self.gap("\u3000")
            elif child.tag.endswith("Sentence"):
                self.sentences(child)
            elif child.tag.startswith("Subitem"):
                self.line()
                self.sub(child)

    def article(self, element: ET.Element, supplementary: str | None) -> None:
        num = element.get("Num", "").split(":")[0]  # "1:3": articles 1 to 3, deleted together
        in_suppl = supplementary is not None
        first = len(self.spans)  # the article's span goes before those of its paragraphs and items
        caption = (element.findtext("ArticleCaption") or "").strip()
        start = self.out.size
        if caption:
            self.add(caption)
            self.line()
        title_at = self.out.size
        self.add(element.findtext("ArticleTitle") or "")
        self.gap("\u3000")
        for n, paragraph in enumerate(element.findall("Paragraph"), start=1):
            para = StatutePlace(num, in_suppl, _num(paragraph.get("Num"), n))
            para_start = title_at if n == 1 else self.out.size
            if n > 1:
                self.add(paragraph.findtext("ParagraphNum") or "")
                self.gap("\u3000")
            self.sentences(paragraph.find("ParagraphSentence"))
            self.line()
            items_at = len(self.spans)
            for m, item in enumerate(paragraph.findall("Item"), start=1):
                self.item(item, StatutePlace(num, in_suppl, para.paragraph, _num(item.get("Num"), m)))
            for child in paragraph:
                if child.tag not in {"ParagraphNum", "ParagraphSentence", "Item", "ParagraphCaption"}:
                    self.sentences(child)  # tables and lists inside a paragraph
                    self.line()
            self.spans.insert(items_at, (_prefixed(place_id(para), supplementary), "", para_start, self.out.size))
        title = caption.strip("（）() ")
        self.spans.insert(first, (_prefixed(place_id(StatutePlace(num, in_suppl)), supplementary), title, start,
                                  self.out.size))
        self.line()

    def walk(self, element: ET.Element, supplementary: str | None = None) -> None:
        """The articles under `element`, chapter titles as lines; a supplementary provision's
        articles with its amendment (`supplementary`: "" for the Act's own, "(…)" for a later one)."""
        for child in element:
            if child.tag == "Article":
                self.article(child, supplementary)
            elif child.tag == "SupplProvision":
                self.line()
                self.add(child.findtext("SupplProvisionLabel") or "")
                self.line()
                label = child.get("AmendLawNum")
                self.walk(child, f"({label})" if label else "")
            elif child.tag == "Paragraph":  # a supplementary provision made of paragraphs only
                if (child.findtext("ParagraphNum") or "").strip():
                    self.add(child.findtext("ParagraphNum") or "")
                    self.gap("\u3000")
                self.sentences(child.find("ParagraphSentence"))
                self.line()
                for item in child.findall("Item"):
                    self.item(item, None)
            elif child.tag.endswith("Title") and child.tag != "LawTitle":  # ChapterTitle, SectionTitle, ...
                self.line()
                self.add("".join(child.itertext()))
                self.line()
            elif child.tag not in _SKIPPED and child.tag not in {"SupplProvisionLabel", "LawNum", "TOC"}:
                self.walk(child, supplementary)


MAX_DEPTH = 200  # the reader walks the tree recursively; an Act of e-Gov nests about 15 deep


def _depth(root: ET.Element) -> int:
    """How deep the elements under `root` nest (root alone: 1), found without recursion."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        element, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in element)
    return deepest


def _num(value: str | None, fallback: int) -> int:
    """A paragraph's or item's number: e-Gov writes "1:2" for items 1 to 2 deleted together."""
    head = (value or "").split(":")[0]
    return int(head) if head.isdigit() else fallback


def _prefixed(section_id: str, supplementary: str | None) -> str:
    """A supplementary provision's article id names its amendment (附則(…)第1条) when it has one."""
    if supplementary:  # "" for the Act's own supplementary provisions
        return section_id.replace("附則", f"附則{supplementary}", 1)
    return section_id


def load_egov(source: str | Path) -> Document:
    """An Act in e-Gov law XML (see the module's docstring)."""
    from defusedxml import ElementTree as SafeET
    from defusedxml.common import DefusedXmlException

    path = resolve_source(source, download=False)
    raw = read_text(path)
    try:
        root = SafeET.fromstring(raw.encode("utf-8"), forbid_dtd=True)
    except DefusedXmlException as exc:
        raise SourceError(f"{path}: refused, the XML declares a document type or entities ({type(exc).__name__}); "
                          "e-Gov law XML has none. Pass the file the e-Gov law API returns.") from None
    except ET.ParseError as exc:
        raise SourceError(f"{path}: not well-formed XML ({exc}). Pass the file the e-Gov law API returns, "
                          "unchanged, or pass --format text to read it as plain text.") from None
    if root.tag == "DataRoot" and (root.findtext("Result/Code") or "0").strip() != "0":
        message = " ".join((root.findtext("Result/Message") or "").split())[:300]
        raise SourceError(f"{path} is an e-Gov API error response (code {root.findtext('Result/Code', '').strip()}"
                          f"{': ' + message if message else ''}), not a law. Ask the API again for the law's XML "
                          "(check the law's number or id) and pass that file.")
    deepest = _depth(root)
    if deepest > MAX_DEPTH:
        raise SourceError(f"{path}: refused, its elements are nested {deepest:,} deep; e-Gov law XML is nested at "
                          f"most a few dozen deep and citeaudit reads up to {MAX_DEPTH}. Pass the file the e-Gov "
                          "law API returns, unchanged.")
    body = root.find(".//LawBody") if root.tag != "LawBody" else root
    if body is None:
        kind = "an e-Gov API response that holds no law" if root.tag == "DataRoot" else f"XML with root <{root.tag}>"
        raise SourceError(f"{path}: no <LawBody> element; this is {kind}, not e-Gov law XML. Pass the law's XML "
                          "as the e-Gov law API returns it, or --format to read the file as another format.")
    reader = _Reader(raw)
    title = body.findtext("LawTitle")
    if title:
        reader.add(title)
        reader.line()
    reader.walk(body)
    clean, clean_to_raw = reader.out.build()
    sections: dict[str, Section] = {}
    for sid, section_title, lo, hi in reader.spans:
        chunk = clean[lo:hi]
        text = chunk.strip()
        if not text or sid in sections:
            continue
        lo += len(chunk) - len(chunk.lstrip())
        hi = lo + len(text)
        sections[sid] = Section(sid, section_title, text, int(clean_to_raw[lo]), int(clean_to_raw[hi - 1]) + 1, lo, hi)
    aliases = {key(s.title): sid for sid, s in sections.items() if s.title and "附則" not in sid}
    return Document(path.name, raw, clean, np.asarray(clean_to_raw), sections, lines_of(raw), aliases)


def resolve_locator(document: Document, locator: str) -> str | None:
    """The section a statute locator names (第27条第1項, 27条1項, Article 27(1)), when the Act has it."""
    place = statute_place(locator)
    if place is None:
        return None
    sid = place_id(place)
    return sid if sid in document.sections else None


_ARTICLE = re.compile(r"^(.*?条(?:の\d+)*)")


def article_evidence(document: Document, section: Section) -> str:
    """A paragraph or item is read in its article: an item alone (一　法令に基づく場合) says nothing
    without the paragraph it completes, and a paragraph leans on the ones before it (前項)."""
    found = _ARTICLE.match(section.id)
    article = document.sections.get(found.group(1)) if found else None
    return article.text if article is not None else section.text


FORMAT = SourceFormat("egov", load_egov, extensions=(), aliases=("e-gov", "statute"), detect=detect,
                      resolve_locator=resolve_locator, evidence=article_evidence)
