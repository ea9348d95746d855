"""The audit table's words and column names, defined once.

Every status, verdict, relation, route and model name that appears in the table, the JSON Lines
output, the command line's choices or the HTML is a member of one of these `StrEnum`s. Members
are `str`s, so they compare equal to their values, serialize as plain JSON strings and can be
stored in the table as they are. What can be extended (strategies, formats, contrast checks,
citation kinds) is named by plain strings of a registry (`citeaudit.registry`); the enums here
name citeaudit's own.

Columns: one row per citation, the input's index. Each column is declared once, below, with
`column(name, stage, output)`: the step that writes it and its place in the JSON Lines record; the
lists the stages use (`LOCATE_COLUMNS`, `JUDGE_COLUMNS`, `AUDIT_COLUMNS`, `RECORD_FIELDS`, ...)
are derived from those declarations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:  # pandas is imported where a table is made, so `citeaudit --help` does without it
    import pandas as pd

# one row of the table: a Series, or a dict of one (`table.to_dict("records")`: reading rows as
# dicts is many times faster than `iterrows`, so the per-row steps take either)
Row: TypeAlias = "pd.Series | Mapping[str, Any]"


class Kind(StrEnum):
    """The citation format a row came from (DESIGN.md "Citation formats"): the names of citeaudit's
    own citation kinds, each an object registered by name (`citations.kinds`, `registry.CITATION_KINDS`,
    which plugins add to)."""

    QUOTE = "quote"  # {id, claim, quote|null, section} over one source
    LINES = "lines"  # an answer text with [L2-L3] markers over a line-numbered document
    SOURCE = "source"  # seed 000: claims citing retrieved sources by id
    RESPONSE = "response"  # a vendor's own citation in a saved API response (responses.py)


class QuoteStatus(StrEnum):
    """What step 1 found for a citation's quote."""

    EXACT = "exact"
    ELIDED = "elided"
    NEAR = "near"
    MISSING = "missing"
    NONE = "none"  # no quote given: the cited section, lines or source is the evidence


class Relation(StrEnum):
    """The judge's answer: how the evidence relates to the claim."""

    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    SAYS_NOTHING = "says_nothing"


class Verdict(StrEnum):
    """A citation's verdict, from the judge's relation or from step 1."""

    VERIFIED = "verified"
    CONTRADICTED = "contradicted"
    UNSUPPORTED = "unsupported"
    FABRICATED = "fabricated"


RELATION_TO_VERDICT = {
    Relation.SUPPORTS: Verdict.VERIFIED,
    Relation.CONTRADICTS: Verdict.CONTRADICTED,
    Relation.SAYS_NOTHING: Verdict.UNSUPPORTED,
}
FAILING_VERDICTS = frozenset({Verdict.FABRICATED, Verdict.CONTRADICTED, Verdict.UNSUPPORTED})
# what a human reviewer may say of a citation that has evidence
REVIEW_VERDICTS = (Verdict.VERIFIED, Verdict.CONTRADICTED, Verdict.UNSUPPORTED)


class Route(StrEnum):
    """Whether a verdict stands on its own (`auto`) or waits for a human (`review`)."""

    AUTO = "auto"
    REVIEW = "review"


class Flag(StrEnum):
    """Remarks on a citation. Every flag but `FAILURE_KIND_UNSURE` sends it to review whatever the
    judge's confidence (`BLOCKING_FLAGS`)."""

    NEAR_QUOTE = "near_quote"
    SECTION_MISMATCH = "section_mismatch"
    JUDGE_ERROR = "judge_error"
    # informational: the citation fails, but contradicts and says-nothing are close, so the word
    # (contradicted or unsupported) is uncertain; the answer is rejected either way
    FAILURE_KIND_UNSURE = "contradicted_or_unsupported"
    # a vendor response's own location of the quote is wrong (vendor_audit.py): its character
    # offsets or block indices, its pages, or its source (the quote is in another given source)
    OFFSET_MISMATCH = "offset_mismatch"
    PAGE_MISMATCH = "page_mismatch"
    SOURCE_MISMATCH = "source_mismatch"
    # the calibration does not cover the document: the model said no to every question for more of
    # its citations than for any document the calibration was fitted on (`Calibration.uncovered`)
    UNCOVERED = "uncovered"
    # a contrast check between claim and evidence fired (`decide.contrast`: obligation level, numbers,
    # polarity, entities): keeps a `verified` verdict from standing; a failing verdict stands as it is
    CONTRAST = "contrast"


BLOCKING_FLAGS = frozenset({Flag.NEAR_QUOTE, Flag.SECTION_MISMATCH, Flag.JUDGE_ERROR, Flag.OFFSET_MISMATCH,
                            Flag.PAGE_MISMATCH, Flag.SOURCE_MISMATCH, Flag.UNCOVERED})


class EvidenceMode(StrEnum):
    """What the judge is asked about (`pipeline.focus`): the whole cited `section`, or a `focused`
    passage of a long one; what `--evidence` and `CITEAUDIT_EVIDENCE` name."""

    SECTION = "section"
    FOCUSED = "focused"


# how a plain-text, Markdown, HTML or PDF source is divided (`sources.numbering`, `--sections`): its own
# numbered clauses when their numbering is consistent, always, or as the format divides it
SECTION_READINGS = ("auto", "numbered", "paragraphs")


class ContrastCheck(StrEnum):
    """The names of citeaudit's own deterministic contrast checks between a claim and its evidence,
    each an object registered by name (`decide.contrast`, `registry.CONTRAST_CHECKS`, which plugins
    add to); what `--contrast-checks` and `CITEAUDIT_CONTRAST_CHECKS` name."""

    NORMATIVE = "normative"  # the obligation level: must / should / may / optional, BCP 14 keywords
    NUMBERS = "numbers"  # values, units, percentages, dates, ranges
    POLARITY = "polarity"  # the best-matching evidence sentence negates the claim, or the reverse
    ENTITIES = "entities"  # a name, identifier or quoted term swapped for another
    IDENTIFIERS = "identifiers"  # the claim is about one quoted term, defined name or keyword, the evidence another


# A judge strategy's name (DESIGN.md "Step 2"): what `--strategy` and `CITEAUDIT_STRATEGY` take. The
# strategies are objects registered by name (`citeaudit.registry.STRATEGIES`, filled by
# `citeaudit.judge.strategies` and by plugins), so a name is a plain string; the registry says which exist.
Strategy: TypeAlias = str


class ReviewState(StrEnum):
    """A row's human review: none, current (fingerprint matches) or stale (it no longer does)."""

    NONE = "none"
    CURRENT = "current"
    STALE = "stale"


class State(StrEnum):
    """Where a citation stands after step 4 (`decide.settle`): the one answer every surface reads."""

    FABRICATED = "fabricated"  # step 1 found nothing: fails without a model
    STANDS = "stands"  # the model's verdict stands (score at or above the threshold, no flag)
    REVIEWED = "reviewed"  # a current human review gives the verdict
    WAITING = "waiting"  # the model's verdict waits for a human (not confident enough, or flagged)
    JUDGE_ERROR = "judge_error"  # the judge gave no verdict (see `error_kind`); waits for a human
    NOT_JUDGED = "not_judged"  # step 1 only: no model was asked; waits for a human
    UNCHECKED = "unchecked"  # the source it cites was not given: nothing to check it against; waits


WAITING_STATES = frozenset({State.WAITING, State.JUDGE_ERROR, State.NOT_JUDGED, State.UNCHECKED})


class Selection(StrEnum):
    """How a reviewed citation came before a human (a review's `selection`, `decide.state.selection_of`):
    the only reviews that sample standing verdicts without bias are the spot checks."""

    SPOT_CHECK = "spot_check"  # a standing verdict drawn at random (`decide.spotcheck`): never held the decision
    WAITING = "waiting"  # it waited for a human (not confident enough, flagged, no verdict)
    OVERRIDE = "override"  # a verdict that stood (the model's, or fabricated), reviewed by choice


class ErrorKind(StrEnum):
    """Why the judge gave no verdict for a row (the `error_kind` column; `error` has the words)."""

    REPLAY_MISS = "replay_miss"  # replay mode and no recorded answer: record it (views.how_to_record)
    ENDPOINT = "endpoint"  # the endpoint failed after the client's retries
    UNUSABLE = "unusable"  # the endpoint answered, but not with usable log-probabilities or letters


class Status(StrEnum):
    """The decision on a whole answer."""

    ACCEPT = "ACCEPT"
    REVIEW = "REVIEW"
    REJECT = "REJECT"


class ResponseFormat(StrEnum):
    """The names of citeaudit's own vendor response formats, whose citations it reads, each an object
    registered by name (`citations.responses`, `registry.VENDOR_FORMATS`, which plugins add to)."""

    ANTHROPIC = "anthropic"  # Messages API text blocks with citations
    OPENAI_RESPONSES = "openai-responses"  # Responses API output_text annotations
    OPENAI_CHAT = "openai-chat"  # Chat Completions message.annotations
    GEMINI = "gemini"  # groundingMetadata: groundingSupports over groundingChunks
    COHERE = "cohere"  # chat citations (v2 message.citations, v1 citations + documents)
    LANGCHAIN = "langchain"  # a RAG result: answer + source_documents (LangChain) or source_nodes (LlamaIndex)


class CacheMode(StrEnum):
    """How the judge's calls use the recordings (DESIGN.md "Cache and replay")."""

    REPLAY = "replay"
    RECORD = "record"
    REFRESH = "refresh"


class ThresholdRule(StrEnum):
    """How `calibrate` recommends a threshold (`calibrate.domains.hold_out_calibration`): the one
    fitted on all the sets pooled, or the lowest at which the worst held-out domain still reaches
    the target."""

    POOLED = "pooled"
    WORST_DOMAIN = "worst-domain"


THRESHOLD_RULES = tuple(str(rule) for rule in ThresholdRule)


class LocalModelKey(StrEnum):
    """The local judge models that ship in PyPI packages (see `localmodel.py`)."""

    SMOLLM2 = "smollm2"
    QWEN = "qwen"


class Stage(StrEnum):
    """The step that writes a column (DESIGN.md "One flow, one table")."""

    LOCATE = "locate"  # step 1 (the citation's own fields, then what was found)
    JUDGE = "judge"  # step 2: each is the field of the same name of `judge.Judgement`
    ROUTE = "route"  # step 3
    REVIEW = "review"  # step 4: the human review, then each row's outcome (`decide.settle`)
    RESPONSE = "response"  # vendor responses only (`vendor_audit.py`), beside step 1's


@dataclass(frozen=True)
class Column:
    """One column of the table: its name, the step that writes it, and its place in the JSON Lines
    record of the command line (`output`: 1 first; None: not written)."""

    name: str
    stage: Stage
    output: int | None = None


COLUMNS: list[Column] = []  # every column, in the table's order (the order of the declarations below)


def column(name: str, stage: Stage, output: int | None = None) -> str:
    """Declare a column (after the ones declared before it) and return its name; the lists below
    are derived from these declarations. A new column takes the next free `output` place, so the
    records' existing fields keep their order."""
    COLUMNS.append(Column(name, stage, output))
    return name


ID = column("id", Stage.LOCATE, output=1)
KIND = column("kind", Stage.LOCATE, output=2)  # Kind: quote, lines, source or response
CLAIM = column("claim", Stage.LOCATE, output=3)
QUOTE = column("quote", Stage.LOCATE, output=4)
CITED_SECTION = column("cited_section", Stage.LOCATE, output=5)
EXPECTED = column("expected", Stage.LOCATE, output=27)  # the gold verdict of a labelled set
# step 1: locate
QUOTE_STATUS = column("quote_status", Stage.LOCATE, output=6)
FOUND_SECTION = column("found_section", Stage.LOCATE, output=7)
SECTION_MATCH = column("section_match", Stage.LOCATE, output=8)
MATCH_SCORE = column("match_score", Stage.LOCATE, output=9)
SPAN = column("span", Stage.LOCATE, output=10)
EVIDENCE = column("evidence", Stage.LOCATE)  # what the judge reads: too long for the records
CLOSEST = column("closest", Stage.LOCATE, output=25)
FABRICATED_REASON = column("fabricated_reason", Stage.LOCATE, output=26)
# step 2: judge
RELATION = column("relation", Stage.JUDGE, output=11)
PROBABILITIES = column("probabilities", Stage.JUDGE, output=12)
# yes/no strategies: P(yes) of each question, by its key (prompts.QUESTIONS)
ANSWERS = column("answers", Stage.JUDGE, output=13)
CONFIDENCE = column("confidence", Stage.JUDGE, output=14)
METHOD = column("method", Stage.JUDGE, output=15)
MODEL = column("model", Stage.JUDGE, output=21)
CACHED = column("cached", Stage.JUDGE, output=22)
ERROR = column("error", Stage.JUDGE, output=23)
ERROR_KIND = column("error_kind", Stage.JUDGE, output=24)  # ErrorKind, set with `error`
# step 3: route
# P(the citation passes): the calibration's map of the answers, else P(supports)
P_PASS = column("p_pass", Stage.ROUTE, output=16)
# what the threshold is compared with: max(P(pass), 1 - P(pass)), or a sampled bound
SCORE = column("score", Stage.ROUTE, output=17)
VERDICT = column("verdict", Stage.ROUTE, output=18)
ROUTE = column("route", Stage.ROUTE, output=19)
FLAGS = column("flags", Stage.ROUTE, output=20)
# [{"check": ContrastCheck, "says": str, "claim": [[start, end]], "evidence": [[start, end]]}]: the contrast
# checks that fired (`decide.contrast`; offsets into the claim and the evidence text); None: not run
CONTRAST = column("contrast", Stage.ROUTE, output=38)
# why a contrast check stayed silent on this row (the claim is in a language it cannot read), or None
CONTRAST_NOTE = column("contrast_note", Stage.ROUTE, output=39)
# step 4: human review, then each row's outcome, written once (`decide.settle`)
FINGERPRINT = column("fingerprint", Stage.REVIEW)
REVIEW_VERDICT = column("review_verdict", Stage.REVIEW, output=28)
REVIEW_STATE = column("review_state", Stage.REVIEW, output=29)
# the review's verdict when a current review exists, else `verdict`
FINAL_VERDICT = column("final_verdict", Stage.REVIEW, output=30)
STATE = column("state", Stage.REVIEW, output=31)  # State
# True: a standing verdict drawn as a spot check (`decide.spotcheck`): listed for review, but its state
# stays `stands` (it holds nothing) until a current review settles it like any review
SPOT_CHECK = column("spot_check", Stage.REVIEW, output=37)

# vendor responses only (`vendor_audit.py`): where a vendor's own citation points and what of it
# holds; written in the records only when the table has them
# the --source a vendor citation was matched to (or where its quote really is)
SOURCE_FILE = column("source_file", Stage.RESPONSE, output=32)
VENDOR = column("vendor", Stage.RESPONSE, output=33)  # ResponseFormat of the response
# the vendor's offsets, pages or blocks in words ("chars 120-180")
VENDOR_LOCATION = column("vendor_location", Stage.RESPONSE, output=34)
# [{"flag": Flag, "says": str}]: the vendor's location checks that failed
FINDINGS = column("findings", Stage.RESPONSE, output=35)
# why a citation could not be checked (its source was not given)
UNCHECKED_REASON = column("unchecked_reason", Stage.RESPONSE, output=36)


def names(stage: Stage) -> list[str]:
    """The columns `stage` writes, in the table's order."""
    return [c.name for c in COLUMNS if c.stage == stage]


LOCATE_COLUMNS = names(Stage.LOCATE)
JUDGE_COLUMNS = names(Stage.JUDGE)
RESPONSE_FIELDS = names(Stage.RESPONSE)
# an audited answer's table, every step, in order (a vendor response's own columns aside)
AUDIT_COLUMNS = [c.name for c in COLUMNS if c.stage != Stage.RESPONSE]
# the JSON Lines record of the command line (DESIGN.md "Command line"), in order: every column with
# an `output` place; RESPONSE_FIELDS only in the records of a vendor response's rows
RECORD_FIELDS = [c.name for c in sorted((c for c in COLUMNS if c.output is not None), key=lambda c: c.output or 0)]
OUTPUT_FIELDS = [name for name in RECORD_FIELDS if name not in RESPONSE_FIELDS]  # every record's fields


def row_dicts(table: pd.DataFrame) -> list[dict[str, Any]]:
    """`table.to_dict("records")`, read as one array: pandas' own indexes each column of each row,
    and a Series per column costs more than an answer's few rows; numpy scalars become Python's, as
    there."""
    columns = [str(column) for column in table.columns]
    return [dict(zip(columns, map(_python, row))) for row in table.to_numpy(dtype=object).tolist()]


def _python(value: Any) -> Any:
    return value.item() if hasattr(value, "item") and type(value).__module__ == "numpy" else value


def frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    """The table from row dicts: object columns, missing values as None (never NaN), keys not in
    `columns` left out. Each column is filled cell by cell, so a list or dict stays one cell."""
    import numpy as np
    import pandas as pd

    data = {}
    for column in columns:
        cells = np.empty(len(rows), dtype=object)
        for n, row in enumerate(rows):
            value = row.get(column)
            cells[n] = None if _missing(value) else value
        data[column] = cells
    return pd.DataFrame(data, columns=columns, dtype=object, copy=False)


def _missing(value: Any) -> bool:
    """What pandas' `notna` calls missing in a cell: None, NaN, NA, NaT (never a list or dict)."""
    if value is None:
        return True
    if isinstance(value, (str, bool, int, dict, list, tuple)):
        return False
    import pandas as pd

    return bool(pd.api.types.is_scalar(value) and pd.isna(value))
