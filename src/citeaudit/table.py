"""The audit table's words and column names, defined once.

Every status, verdict, relation, route and model name that appears in the table, the JSON Lines
output, the command line's choices or the HTML is a member of one of these `StrEnum`s. Members
are `str`s, so they compare equal to their values, serialize as plain JSON strings and can be
stored in the table as they are.

Column names: one row per citation, the input's index.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from enum import EnumType, StrEnum

import pandas as pd


class Kind(StrEnum):
    """The citation format a row came from (DESIGN.md "Citation formats")."""

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


BLOCKING_FLAGS = frozenset({Flag.NEAR_QUOTE, Flag.SECTION_MISMATCH, Flag.JUDGE_ERROR, Flag.OFFSET_MISMATCH,
                            Flag.PAGE_MISMATCH, Flag.SOURCE_MISMATCH, Flag.UNCOVERED})


class _StrategyNames(EnumType):
    """`Strategy`'s metaclass: iterating it (and `len`, `in`) covers the names registered after
    import as well, after the shipped ones, so every list of choices reads the registry."""

    def __iter__(cls) -> Iterator[Strategy]:  # type: ignore[override]  # the names of one enum: Strategy's
        return iter([*super().__iter__(), *_REGISTERED_STRATEGIES.values()])

    def __len__(cls) -> int:
        return super().__len__() + len(_REGISTERED_STRATEGIES)

    def __contains__(cls, value: object) -> bool:  # a member or its value (a name)
        return isinstance(value, str) and value in [str(member) for member in cls]


class Strategy(StrEnum, metaclass=_StrategyNames):
    """A judge strategy's name (DESIGN.md "Step 2"): what `--strategy` and `CITEAUDIT_STRATEGY` take.

    The strategies themselves are objects registered by name (`citeaudit.judge.strategies`, which
    says how each asks). The members below name the shipped ones, for code that refers to them; a
    strategy registered later (`register_strategy`) is a `Strategy` too (`Strategy("mine")`).
    """

    CHOICE = "choice"
    YESNO = "yesno"
    PANEL = "panel"
    EXAMPLES = "examples"
    PANEL_EXAMPLES = "panel+examples"

    @classmethod
    def _missing_(cls, value: object) -> Strategy | None:
        return _REGISTERED_STRATEGIES.get(value) if isinstance(value, str) else None


# names of strategies registered after import (`add_strategy_name`), each a `Strategy` made the way
# the enum module makes a Flag's pseudo-members
_REGISTERED_STRATEGIES: dict[str, Strategy] = {}


def add_strategy_name(name: str) -> Strategy:
    """`name` as a `Strategy` (the registry calls this when it registers a strategy): a shipped
    member as it is, any other name a `Strategy` from now on."""
    try:
        return Strategy(name)
    except ValueError:
        member: Strategy = str.__new__(Strategy, name)
        member._name_ = re.sub(r"\W", "_", name).upper()
        member._value_ = name
        _REGISTERED_STRATEGIES[name] = member
        return member


def drop_strategy_name(name: str) -> None:
    """Undo `add_strategy_name` for a name registered after import (the shipped members stay)."""
    _REGISTERED_STRATEGIES.pop(name, None)


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
    """The saved API responses whose own citations citeaudit reads (`responses.py`)."""

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


class LocalModelKey(StrEnum):
    """The local judge models that ship in PyPI packages (see `localmodel.py`)."""

    SMOLLM2 = "smollm2"
    QWEN = "qwen"


ID = "id"
KIND = "kind"  # vocab.Kind: quote, lines or source
CLAIM = "claim"
QUOTE = "quote"
CITED_SECTION = "cited_section"
EXPECTED = "expected"
# step 1: locate
QUOTE_STATUS = "quote_status"
FOUND_SECTION = "found_section"
SECTION_MATCH = "section_match"
MATCH_SCORE = "match_score"
SPAN = "span"
EVIDENCE = "evidence"
CLOSEST = "closest"
FABRICATED_REASON = "fabricated_reason"
# step 2: judge
RELATION = "relation"
PROBABILITIES = "probabilities"
ANSWERS = "answers"  # yes/no strategies: P(yes) of each question, by its key (prompts.QUESTIONS)
CONFIDENCE = "confidence"
METHOD = "method"
MODEL = "model"
CACHED = "cached"
ERROR = "error"
ERROR_KIND = "error_kind"  # vocab.ErrorKind, set with `error`
# step 3: route
P_PASS = "p_pass"  # P(the citation passes): the calibration's map of the answers, else P(supports)
SCORE = "score"  # what the threshold is compared with: max(P(pass), 1 - P(pass)), or a sampled bound
VERDICT = "verdict"
ROUTE = "route"
FLAGS = "flags"
# step 4: human review, then each row's outcome, written once (`decide.settle`)
FINGERPRINT = "fingerprint"
REVIEW_VERDICT = "review_verdict"
REVIEW_STATE = "review_state"
FINAL_VERDICT = "final_verdict"  # the review's verdict when a current review exists, else `verdict`
STATE = "state"  # vocab.State
# True: a standing verdict drawn as a spot check (`decide.spotcheck`): listed for review, but its state
# stays `stands` (it holds nothing) until a current review settles it like any review
SPOT_CHECK = "spot_check"

# vendor responses only (`vendor_audit.py`): where a vendor's own citation points and what of it holds
SOURCE_FILE = "source_file"  # the --source a vendor citation was matched to (or where its quote really is)
VENDOR = "vendor"  # vocab.ResponseFormat of the response
VENDOR_LOCATION = "vendor_location"  # the vendor's offsets, pages or blocks in words ("chars 120-180")
FINDINGS = "findings"  # [{"flag": vocab.Flag, "says": str}]: the vendor's location checks that failed
UNCHECKED_REASON = "unchecked_reason"  # why a citation could not be checked (its source was not given)
RESPONSE_FIELDS = [SOURCE_FILE, VENDOR, VENDOR_LOCATION, FINDINGS, UNCHECKED_REASON]

LOCATE_COLUMNS = [ID, KIND, CLAIM, QUOTE, CITED_SECTION, EXPECTED, QUOTE_STATUS, FOUND_SECTION,
                  SECTION_MATCH, MATCH_SCORE, SPAN, EVIDENCE, CLOSEST, FABRICATED_REASON]
JUDGE_COLUMNS = [RELATION, PROBABILITIES, ANSWERS, CONFIDENCE, METHOD, MODEL, CACHED, ERROR, ERROR_KIND]

# the JSON Lines record of the command line (DESIGN.md "Command line")
OUTPUT_FIELDS = [ID, KIND, CLAIM, QUOTE, CITED_SECTION, QUOTE_STATUS, FOUND_SECTION, SECTION_MATCH, MATCH_SCORE,
                 SPAN, RELATION, PROBABILITIES, ANSWERS, CONFIDENCE, METHOD, P_PASS, SCORE, VERDICT, ROUTE, FLAGS,
                 MODEL, CACHED, ERROR, ERROR_KIND, CLOSEST, FABRICATED_REASON, EXPECTED, REVIEW_VERDICT,
                 REVIEW_STATE, FINAL_VERDICT, STATE, SPOT_CHECK]


def frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    """The table from row dicts: object columns, missing values as None (never NaN)."""
    table = pd.DataFrame(rows, columns=columns, dtype=object)
    for column in columns:
        table[column] = table[column].astype(object).where(table[column].notna(), None)
    return table
