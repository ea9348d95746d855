"""Citation kinds as objects registered by name (`citeaudit.registry.CITATION_KINDS`): how each
kind of citation is named wherever a row is put into words.

A row's `kind` column (`table.Kind`: `quote`, `lines`, `source`, `response`, or a plugin's) names
its `CitationKind`; the stages look the object up (`kind_of(row)`) instead of branching on the name:

- `label(row, position)`: how a decision's reason names the citation (`decide.decision`);
- `target(row)`: what the citation points at, in words (`source "S1"`, `lines [L2-L3]`);
- `where(row, document_name)`: how the judge's prompt names the evidence (`pipeline.audit`: part of
  the request, so of its cache key: each kind's words are the ones the recordings were made with);
- `place(row)`: how a contrast finding names the evidence (`decide.contrast`);
- `no_quote_evidence`: what is the evidence of a citation that gives no quote (the report);
  `evidence_whole`: the evidence is shown whole and marked, not as a window of a section;
- `dataset_key`, `dataset_line`, `dataset_shape`: the key that marks a dataset line of this kind,
  its Pydantic model (the class, or its `module:Class` path, as an entry point names it: the
  models are imported when a dataset is read, so naming the kinds imports no pydantic) and its shape
  in words (`citations.dataset`; none for a kind no dataset holds).
"""

from __future__ import annotations

from dataclasses import dataclass

from citeaudit import registry
from citeaudit import table as C
from citeaudit.printable import quoted
from citeaudit.table import Kind

CITATION_KINDS: registry.Registry[CitationKind] = registry.CITATION_KINDS


def _section_or_page(found: str) -> str:
    return found if found.startswith("page") else f"section {found}"


@dataclass(frozen=True)
class CitationKind:
    """A kind of citation: quote citations over one document's sections (this class's own words);
    the other kinds override what they name differently."""

    name: str
    no_quote_evidence: str = "the cited section is"
    evidence_whole: bool = False
    dataset_key: str | None = None
    dataset_line: type | str | None = None
    dataset_shape: str = ""

    def label(self, row: C.Row, position: int) -> str:
        return str(row[C.ID])

    def target(self, row: C.Row) -> str:
        cited = row[C.FOUND_SECTION] or row[C.CITED_SECTION]
        return f"section {cited}" if cited else "the source"

    def where(self, row: C.Row, document_name: str) -> str:
        found = row[C.FOUND_SECTION]
        if not found:
            return f"an excerpt of {document_name}"
        return f"{self.found_name(found)} of {document_name}"

    def place(self, row: C.Row) -> str:
        found = row.get(C.FOUND_SECTION)
        if not isinstance(found, str) or not found:
            return "the evidence"
        return self.found_name(found)

    def found_name(self, found: str) -> str:
        """How `where` and `place` name the place a citation was found (`section 4.1.4`, `page 3`)."""
        return _section_or_page(found)


class LinesKind(CitationKind):
    """Line citations (`[L2-L3]`) over a line-numbered document."""

    def target(self, row: C.Row) -> str:
        return f"lines {row[C.FOUND_SECTION] or row[C.CITED_SECTION]}"

    def found_name(self, found: str) -> str:
        return f"lines {found[1:].replace('-L', '-')}"  # L2-L3 -> lines 2-3


class SourceKind(CitationKind):
    """Seed 000's claims citing retrieved sources by id."""

    def label(self, row: C.Row, position: int) -> str:
        return f"answer.claims[{position}] {quoted(row[C.ID])}"

    def target(self, row: C.Row) -> str:
        return f"source {quoted(row[C.FOUND_SECTION] or row[C.CITED_SECTION])}"

    def where(self, row: C.Row, document_name: str) -> str:
        return f"source {row[C.FOUND_SECTION]}"

    def place(self, row: C.Row) -> str:
        found = row.get(C.FOUND_SECTION)
        if not isinstance(found, str) or not found:
            return "the evidence"
        return f"source {found}"


class ResponseKind(CitationKind):
    """A vendor's own citation in a saved API response: each points into its own source file."""

    def target(self, row: C.Row) -> str:
        where = row.get(C.SOURCE_FILE) or "its source"
        found = row[C.FOUND_SECTION]
        return f"{'' if not found or found.startswith('page') else 'section '}{found} of {where}" if found else where

    def where(self, row: C.Row, document_name: str) -> str:
        source = row.get(C.SOURCE_FILE)
        return super().where(row, source if isinstance(source, str) else document_name)


def kind_of(row: C.Row) -> CitationKind:
    """The `CitationKind` a row's `kind` names (`InputError` naming the registered kinds for a name
    none registered); a row without a kind is read as a quote citation's, as it always was."""
    name = row.get(C.KIND)
    return CITATION_KINDS.get(name if isinstance(name, str) else Kind.QUOTE)


# the built-ins, in the order a dataset line's keys are tried
_DATASET = "citeaudit.citations.dataset"
CITATION_KINDS.register(Kind.QUOTE, CitationKind(
    Kind.QUOTE, dataset_key="citations", dataset_line=f"{_DATASET}:QuoteLine",
    dataset_shape='{"answer_id", "source", "citations": [...]}'))
CITATION_KINDS.register(Kind.LINES, LinesKind(
    Kind.LINES, no_quote_evidence="the cited lines are", evidence_whole=True, dataset_key="document",
    dataset_line=f"{_DATASET}:LinesLine",
    dataset_shape='{"answer_id", "document", "answer": "text with [L..] markers"}'))
CITATION_KINDS.register(Kind.SOURCE, SourceKind(
    Kind.SOURCE, no_quote_evidence="the cited source is", dataset_key="sources",
    dataset_line=f"{_DATASET}:SourceIdLine", dataset_shape='{"answer_id", "answer": {...}, "sources": {...}}'))
CITATION_KINDS.register(Kind.RESPONSE, ResponseKind(
    Kind.RESPONSE, dataset_key="response", dataset_line=f"{_DATASET}:ResponseLine",
    dataset_shape='{"answer_id", "response": {...}, "documents": ["source", ...]}'))
