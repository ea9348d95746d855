"""A document's own numbering of its parts, read as nested sections (plain text, Markdown, HTML, PDF).

Contracts, licences, policies, regulations and standards number their parts: "3. Grant of Patent
License", "3.2 Distribution", sub-items "(b)", "b)" or "(iv)", "Article 17" with paragraphs "1." or
"(1)", "Section 4" / "§ 164.512", "Clause 7.1", "Schedule 2". `read_numbering` finds those marks at
the start of lines of a clean text and keeps the ones that make a consistent outline:

- a mark is believed only where it continues the outline: the next sibling of an open clause (3 ->
  4, 3.2 -> 3.3, (b) -> (c)) or the first child of the innermost one (3 -> 3.1, 4 -> (a), (a) ->
  (i)); anything else is text (a list restarting inside a clause, a stray number);
- a line that continues a sentence is text: its number is followed by a lower-case word ("2.1 of
  this License shall terminate"), or the line before ends in a word that introduces a reference
  ("as in subsection" / "6b");
- dates and amounts ("15 March 2024", "1,000 units", "2024. Revenue") are not marks: a bare number
  must be followed by a short capitalised caption and continue the outline;
- a table of contents (dot leaders, or a run of numbers that restarts at the first one) is
  dropped: when the outline restarts, the longer run is kept.

Ids are the document's own numbers: "3", "3.2", "4(b)", "3.2(a)(iv)", "Article 17", "17(1)(a)"
(a paragraph of an article is `<article>(<n>)`), "Schedule 2"; titles are the captions. A clause
runs from its mark to the next mark that is not inside it, so a clause holds its sub-clauses.
Sections are listed innermost first (children before their parent), so that `Document.section_at`
names the innermost clause that holds a place.

`with_numbering(document, mode)` applies the reading to a loaded document: `auto` (the default)
uses it when it is believed (`Numbering.believed`) and, for a document with headings, when it finds
clauses its headings do not already give; `numbered` uses whatever consistent numbering is found;
`paragraphs` keeps the format's own sections. `Document.reading` says which reading was used and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import numpy as np

from citeaudit.sources.document import Document, Section, key
from citeaudit.table import SECTION_READINGS

_ROMAN = re.compile(r"^(?=[ivxlc])c{0,3}(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})$")
_ARTICLE = re.compile(r"^(?:ARTICLE|Article|Art\.)\s+(\d{1,4})(?![\d.]\d)\.?(?:\s*[-–—:.]\s*|\s+|$)(.*)$")
_KEYWORD = re.compile(r"^(?:SECTION|Section|Sec\.|CLAUSE|Clause|§+)\s*(\d{1,4}(?:\.\d{1,4})*)\.?"
                      r"(?:\s*[-–—:]\s*|\s+|$)(.*)$")
_ANNEX = re.compile(r"^(SCHEDULE|Schedule|ANNEX|Annex|APPENDIX|Appendix|EXHIBIT|Exhibit)\s+([A-Z]|\d{1,3}|[IVX]{1,5})"
                    r"\b\.?(?:\s*[-–—:.]\s*|\s+|$)(.*)$")
_DECIMAL = re.compile(r"^(\d{1,3}(?:\.\d{1,3})+)\.?\s+(\S.*)$")  # 3.2 / 3.2. / 1.2.3
_INTEGER = re.compile(r"^(\d{1,3})([.)])\s+(\S.*)$")  # 3. / 3)
_BARE = re.compile(r"^(\d{1,3})\s+([A-Z][^\n]*)$")  # "1 Scope" (a standard's heading)
_ITEM = re.compile(r"^\(([a-z]{1,2}|[ivxlc]{1,6}|[A-Z]|\d{1,3})\)\s*(\S.*)$|^([a-z]|[ivx]{1,5}|\d{1,2})\)\s+(\S.*)$"
                   r"|^([ivx]{1,5}|[a-z])\.\s+(\S.*)$")
_PREAMBLE_CHARS = 1000  # text before the first clause that, past half the document, makes its numbering a list
_KEYWORD_GAP = 20  # "Article 5" after "Article 3", "§ 164.514" after "§ 164.512": an excerpt skips some
_LEADER = re.compile(r"(?:\.\s?){4,}\s*\d*\s*$|…{2,}")
_MONTHS = frozenset(("january", "february", "march", "april", "may", "june", "july", "august", "september",
                     "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
                     "sept", "oct", "nov", "dec"))
# a line ending in one of these words goes on in the next line: "as in subsection" / "6b ..."
_REFERENCE_END = re.compile(r"(?:\b(?:sections?|subsections?|clauses?|paragraphs?|articles?|items?|schedules?|annex|"
                            r"appendix|see|under|in|of|per)|§)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Mark:
    """A line that opens a clause: its clean offset, kind, the value(s) it is numbered with, the
    text it is numbered as ("3.2", "(b)", "Article 17") and its caption."""

    pos: int
    kind: str  # decimal | article | annex | alpha | roman | number | upper
    value: tuple[int, ...]
    label: str
    caption: str
    keyword: bool = False  # written "Section 4", "§ 4", "Clause 4", "Article 4"


@dataclass
class _Open:
    mark: Mark
    id: str
    parent: str | None


@dataclass
class Numbering:
    """What `read_numbering` found: the clauses (id -> (mark, clean start, clean end, parent id)),
    how many numbered lines it refused for being out of order, and whether it is believed."""

    clauses: dict[str, tuple[Mark, int, int, str | None]] = field(default_factory=dict)
    refused: int = 0
    contents_at: int | None = None  # where a table of contents read before the outline begins

    @property
    def top(self) -> int:
        return sum(1 for _, _, _, parent in self.clauses.values() if parent is None)

    @property
    def believed(self) -> bool:
        """Consistent enough to be the document's sections: two top-level clauses or more, three
        clauses in all, and at most one numbered line refused for four believed."""
        n = len(self.clauses)
        return self.top >= 2 and n >= 3 and self.refused <= max(2, n // 4)

    def summary(self) -> str:
        subs = len(self.clauses) - self.top
        return f"numbered clauses: {self.top}" + (f", with {subs} sub-clauses" if subs else "")


def _letter_value(text: str) -> int:
    return ord(text) - ord("a") + 1 if len(text) == 1 else 26 + ord(text[0]) - ord("a") + 1


def _roman_value(text: str) -> int:
    values = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100}
    total = 0
    for a, b in zip(text, [*text[1:], ""]):
        total += -values[a] if b and values[b] > values[a] else values[a]
    return total


def _item_readings(label: str) -> list[tuple[str, int]]:
    """The ways an item label may count: "(i)" is the ninth letter or the first roman numeral."""
    readings = []
    if label.isdigit():
        readings.append(("number", int(label)))
    elif label.isupper() and len(label) == 1:
        readings.append(("upper", ord(label) - ord("A") + 1))
    else:
        if _ROMAN.match(label):
            readings.append(("roman", _roman_value(label)))
        if len(label) == 1 or (len(label) == 2 and label[0] == label[1]):
            readings.append(("alpha", _letter_value(label)))
    return readings


def _heading_like(caption: str) -> bool:
    words = caption.split()
    return 0 < len(words) <= 8 and caption[:1].isupper() and caption.rstrip()[-1:] not in ".,;:" \
        and words[0].lower().strip(",.") not in _MONTHS


def _capitalised(caption: str) -> bool:
    """A clause's text begins as a sentence or a caption does, not as the rest of a sentence."""
    return not caption or not caption[0].islower()


def marks_of_line(pos: int, line: str) -> list[Mark]:
    """The readings of one line as a mark (none, one, or two for an ambiguous item such as "(i)")."""
    text = line.strip()
    if not text or _LEADER.search(text):
        return []
    found = _ARTICLE.match(text)
    if found:
        caption = found.group(2).strip()
        return [Mark(pos, "article", (int(found.group(1)),), f"Article {found.group(1)}", caption, True)] \
            if _capitalised(caption) else []
    found = _ANNEX.match(text)
    if found:
        caption = found.group(3).strip()
        name = f"{found.group(1).title()} {found.group(2)}"
        return [Mark(pos, "annex", (0,), name, caption, True)] if _capitalised(caption) else []
    found = _KEYWORD.match(text)
    if found:
        caption = found.group(2).strip()
        value = tuple(int(n) for n in found.group(1).split("."))
        return [Mark(pos, "decimal", value, found.group(1), caption, True)] if _capitalised(caption) else []
    found = _DECIMAL.match(text)
    if found:
        caption = found.group(2).strip()
        if not _capitalised(caption) or caption[0].isdigit():
            return []
        return [Mark(pos, "decimal", tuple(int(n) for n in found.group(1).split(".")), found.group(1), caption)]
    found = _INTEGER.match(text)
    if found:
        caption = found.group(3).strip()
        if found.group(2) == ")":  # "1) text": an item numbered with one parenthesis
            return [Mark(pos, "number", (int(found.group(1)),), f"({found.group(1)})", caption)]
        if not _capitalised(caption) or caption[0].isdigit() or caption.split()[0].lower().strip(",.") in _MONTHS:
            return []
        return [Mark(pos, "decimal", (int(found.group(1)),), found.group(1), caption)]
    found = _BARE.match(text)
    if found:
        caption = found.group(2).strip()
        return [Mark(pos, "decimal", (int(found.group(1)),), found.group(1), caption)] if _heading_like(caption) else []
    found = _ITEM.match(text)
    if found:
        label, caption = next((found.group(i), found.group(i + 1)) for i in (1, 3, 5) if found.group(i))
        return [Mark(pos, kind, (value,), f"({label})", caption.strip()) for kind, value in _item_readings(label)]
    return []


# how every mark's line begins (after its indentation, or the "*" of a box of asterisks around a
# warranty disclaimer): only these lines are parsed
_MARK_START = re.compile(r"(?m)^[^\S\n]*(?:\*[^\S\n]+)?(?=\d|\(|[a-zA-Z]\)|[a-z]\.\s|[ivx]{1,5}[.)]|ARTICLE|Article"
                         r"|Art\.|SECTION|Section|Sec\.|CLAUSE|Clause|§|SCHEDULE|Schedule|ANNEX|Annex|APPENDIX|Appendix"
                         r"|EXHIBIT|Exhibit)")


def _line_marks(clean: str, implicit: dict[int, str]) -> list[list[Mark]]:
    """The candidate marks of every line, in order (lines that continue a reference dropped). One
    expression finds the lines that may open a clause, so a long text is not parsed line by line."""
    out: list[list[Mark]] = []
    starts = sorted({found.end() for found in _MARK_START.finditer(clean)} | set(implicit))
    for pos in starts:
        end = clean.find("\n", pos)
        line = clean[pos : end if end >= 0 else len(clean)]
        if "*" in clean[clean.rfind("\n", 0, pos) + 1 : pos]:  # "*  6. Disclaimer of Warranty      *"
            line = line.rstrip(" *")
        prefix = implicit.get(pos)
        candidates = marks_of_line(pos, f"{prefix} {line}" if prefix else line)
        if not candidates:
            continue
        newline = clean.rfind("\n", 0, pos)
        previous = clean[clean.rfind("\n", 0, newline) + 1 : newline] if newline >= 0 else ""
        if not (previous.strip() and _REFERENCE_END.search(previous)):
            out.append(candidates)
    return out


def _decimal_parent(stack: list[_Open]) -> int | None:
    return next((i for i in range(len(stack) - 1, -1, -1) if stack[i].mark.kind == "decimal"), None)


def _place(stack: list[_Open], mark: Mark) -> tuple[int, str, str | None] | None:
    """Where `mark` continues the outline: (how many open clauses stay open, its id, its parent's
    id), or None when it does not."""
    article = next((i for i in range(len(stack) - 1, -1, -1) if stack[i].mark.kind == "article"), None)
    if mark.kind == "annex":
        return 0, mark.label, None
    if mark.kind == "article":
        if article is None:
            return (0, mark.label, None) if not stack or stack[0].mark.kind != "decimal" else None
        step = mark.value[0] - stack[article].mark.value[0]
        return (article, mark.label, None) if 1 <= step <= _KEYWORD_GAP else None
    if mark.kind == "decimal":
        base = article + 1 if article is not None else 0
        if stack and stack[0].mark.kind == "annex" and article is None:
            return None
        at = _decimal_parent(stack)
        if at is None or at < base:
            first = mark.value in ((0,), (1,)) or (mark.keyword and article is None and not stack)
            if not first:
                return None
            under = stack[article].id if article is not None else None
            return base, _decimal_id(mark, under), under
        previous = stack[at].mark.value
        value = mark.value
        under = stack[article].id if article is not None else None
        if value == (*previous, 1):  # the first child of the open clause
            return at + 1, _decimal_id(mark, under), stack[at].id
        for k in range(len(previous)):
            step = value[k] - previous[k] if len(value) == k + 1 and value[:k] == previous[:k] else 0
            if step == 1 or (mark.keyword and 1 <= step <= _KEYWORD_GAP):  # "§ 164.512" -> "§ 164.514"
                # the next sibling at depth k: close the clauses of depth > k
                keep = at
                while keep > base and stack[keep - 1].mark.kind == "decimal" and len(stack[keep - 1].mark.value) > k:
                    keep -= 1
                parent = stack[keep - 1].id if keep > base and stack[keep - 1].mark.kind == "decimal" else under
                return keep, _decimal_id(mark, under), parent
        return None
    # an item: the next sibling of an open item of its kind, or the first child of the innermost clause
    for i in range(len(stack) - 1, -1, -1):
        if stack[i].mark.kind == mark.kind and stack[i].mark.value[0] + 1 == mark.value[0]:
            parent = stack[i].parent
            return i, _child_id(parent, mark.label), parent
        if stack[i].mark.kind in ("decimal", "article", "annex"):
            break
    if stack and mark.value[0] == 1 and stack[-1].mark.kind != mark.kind:
        parent = stack[-1].id
        return len(stack), _child_id(parent, mark.label), parent
    return None


def _child_id(parent: str | None, label: str) -> str:
    """An item's id: its parent's number and its label ("4" + "(b)"; "Article 17" + "(1)" -> "17(1)")."""
    return f"{(parent or '').split()[-1] if (parent or '').startswith('Article ') else parent}{label}"


def _decimal_id(mark: Mark, article: str | None) -> str:
    if article is None:
        return mark.label
    return f"{article.split()[-1]}({mark.label})"


def _contents_list(clean: str, current: Numbering, at: int) -> bool:
    """Whether the clauses read so far are a table of contents: one line each, nothing between."""
    first = min((mark.pos for mark, _, _, _ in current.clauses.values()), default=at)
    return clean[first:at].count("\n") <= 2 * len(current.clauses) + 2


def _read_run(lines: list[list[Mark]], clean: str) -> tuple[list[Numbering], int]:
    """Read the outline; a restart of the top-level numbering begins a new run (a table of contents
    or a second list before it). Returns every run, each with the clean offset where it ends."""
    end = len(clean)
    runs: list[Numbering] = []
    current = Numbering()
    stack: list[_Open] = []
    first_top: tuple[str, tuple[int, ...]] | None = None  # the kind and number of the first top-level clause

    def close(keep: int, at: int) -> None:
        while len(stack) > keep:
            done = stack.pop()
            mark, _, _, parent = current.clauses[done.id]
            current.clauses[done.id] = (mark, mark.pos, at, parent)

    for candidates in lines:
        placed = None
        for mark in candidates:  # "(i)": the sibling of an open "(h)" before the first of a roman list
            where = _place(stack, mark)
            if where is not None and where[1] not in current.clauses and (placed is None or where[0] < placed[1][0]):
                placed = mark, where
        if placed is None:
            mark = candidates[0]
            restart = first_top is not None and (mark.kind, mark.value) == first_top and current.top >= 2 \
                and not any(o.mark.kind == "annex" for o in stack) and _contents_list(clean, current, mark.pos)
            if restart:
                close(0, mark.pos)
                runs.append(current)
                current, first_top = Numbering(), None
                where = _place(stack, mark)
                if where is not None:
                    placed = mark, where
            if placed is None:
                in_annex = any(o.mark.kind == "annex" for o in stack)  # a schedule numbers its own lists
                if mark.kind != "annex" and not in_annex and (mark.keyword or mark.kind == "decimal" or stack):
                    current.refused += 1
                continue
        mark, (keep, sid, parent) = placed
        close(keep, mark.pos)
        if parent is None and mark.kind in ("decimal", "article") and first_top is None:
            first_top = mark.kind, mark.value
        current.clauses[sid] = (mark, mark.pos, end, parent)
        stack.append(_Open(mark, sid, parent))
    close(0, end)
    runs.append(current)
    return runs, end


def read_numbering(clean: str, implicit: dict[int, str] | None = None) -> Numbering:
    """The document's numbered outline (see the module's docstring). `implicit` gives list numbers
    that are not in the text (a Markdown or HTML ordered list): clean offset of an item's first
    character -> its marker ("3.")."""
    runs, _ = _read_run(_line_marks(clean, implicit or {}), clean)
    best = max(reversed(runs), key=lambda run: len(run.clauses))  # the longest; the later on a tie
    earlier = [mark.pos for run in runs[: runs.index(best)] for mark, _, _, _ in run.clauses.values()]
    best.contents_at = min(earlier, default=None)
    best.refused += sum(len(run.clauses) for run in runs if run is not best and run.top > 1 and
                        len(run.clauses) > 2 * run.top)  # a second outline with sub-clauses is no contents list
    return best


def _caption(mark: Mark, clean: str, start: int, end: int) -> str:
    """A clause's title: its caption up to the first full stop ("Grant of Patent License. Subject
    to ..." -> "Grant of Patent License"), or its next line when the mark stands alone."""
    caption = mark.caption
    if not caption:
        rest = clean[start:end].split("\n")
        caption = next((line.strip() for line in rest[1:4] if line.strip()), "")
        if len(caption.split()) > 10:
            caption = ""
    head = re.split(r"(?<=[^\s.]{2})\.(?:\s|$)", caption, maxsplit=1)[0]
    return (head if len(head.split()) <= 12 else caption[:60]).strip()


def numbered_sections(clean: str, clean_to_raw: np.ndarray,
                      numbering: Numbering) -> tuple[dict[str, Section], dict[str, str], dict[str, str]]:
    """The clauses as sections (innermost first), their parents, and the names they are cited by."""
    children: dict[str | None, list[str]] = {}
    for sid, (_, _, _, parent) in numbering.clauses.items():
        children.setdefault(parent, []).append(sid)
    ordered: list[str] = []

    def visit(sid: str) -> None:
        for child in children.get(sid, []):
            visit(child)
        ordered.append(sid)

    for sid in children.get(None, []):
        visit(sid)
    sections: dict[str, Section] = {}
    parents: dict[str, str] = {}
    aliases: dict[str, str] = {}
    for sid in ordered:
        mark, lo, hi, parent = numbering.clauses[sid]
        chunk = clean[lo:hi]
        body = chunk.rstrip()
        if not body:
            continue
        title = _caption(mark, clean, lo, hi)
        sections[sid] = Section(sid, title, body, int(clean_to_raw[lo]), int(clean_to_raw[lo + len(body) - 1]) + 1,
                                lo, lo + len(body))
        if parent is not None:
            parents[sid] = parent
        names = [sid, f"{sid} {title}", title] if title else [sid]
        if mark.kind == "article":
            number = sid.split()[-1]
            names += [number, f"Art. {number}", f"Art {number}"]
        for name in names:
            aliases.setdefault(key(name), sid)
    return sections, parents, aliases


def with_numbering(document: Document, mode: str = "auto", headings: frozenset[int] = frozenset(),
                   implicit: dict[int, str] | None = None, replaces: bool = False) -> Document:
    """`document` with its numbered clauses as sections, when `mode` asks for them and (in `auto`)
    the numbering is believed; `Document.reading` says which reading was used and why.

    `headings`: clean offsets of the document's own heading lines (Markdown, HTML, PDF): in `auto`,
    a numbering whose every clause is a heading changes nothing (the headings already are the
    sections). `replaces`: the format's sections are paragraphs, dropped when clauses are used;
    otherwise the clauses come first and the format's other sections (pages, unnumbered headings,
    anchors) are kept after them, less the numbered headings the clauses replace.
    """
    if mode not in SECTION_READINGS:
        raise ValueError(f"sections must be one of {', '.join(SECTION_READINGS)}, not {mode!r}")
    kept = "paragraphs" if replaces else "headings"
    if mode == "paragraphs":
        return replace(document, reading=f"{kept}: chosen (--sections paragraphs)")
    numbering = read_numbering(document.clean, implicit)
    if not numbering.clauses:
        return replace(document, reading=f"{kept}: no numbered clauses found")
    if mode == "auto":
        if not numbering.believed:
            why = "no consistent numbering" if numbering.refused else "too few numbered clauses"
            return replace(document, reading=f"{kept}: {why}")
        first = min(mark.pos for mark, _, _, _ in numbering.clauses.values())
        first = min(first, numbering.contents_at if numbering.contents_at is not None else first)
        if first > max(len(document.clean) // 2, _PREAMBLE_CHARS):
            return replace(document, reading=f"{kept}: numbering only in the second half (a list, not clauses)")
        if headings and all(mark.pos in headings for mark, _, _, _ in numbering.clauses.values()):
            return replace(document, reading="headings: every numbered clause is a heading")
    sections, parents, aliases = numbered_sections(document.clean, document.clean_to_raw, numbering)
    if replaces:
        others: dict[str, Section] = {}
    else:
        numbered_heads = {s.clean_start for s in sections.values()}
        others = {sid: s for sid, s in document.sections.items()
                  if sid not in sections and not (s.clean_start in numbered_heads and s.id[:1].isdigit())}
    merged = {**sections, **others}
    names = {**aliases, **{k: v for k, v in document.aliases.items() if v in merged}}
    reading = numbering.summary() + (f" ({numbering.refused} numbered lines read as text)" if numbering.refused else "")
    return replace(document, sections=merged, aliases=names, parents=parents, reading=reading)
