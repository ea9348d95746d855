"""Column names of the audit table, defined once. One row per citation, the input's index."""

import pandas as pd

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
ANSWERS = "answers"  # yes/no strategies: P(yes) of each question, by its key (judge.QUESTIONS)
CONFIDENCE = "confidence"
METHOD = "method"
MODEL = "model"
CACHED = "cached"
ERROR = "error"
# step 3: route
SCORE = "score"  # what the threshold is compared with: the confidence, or its calibrated value
VERDICT = "verdict"
ROUTE = "route"
FLAGS = "flags"
THRESHOLD = "threshold"
# step 4: human review
FINGERPRINT = "fingerprint"
REVIEW_VERDICT = "review_verdict"
REVIEW_STATE = "review_state"

LOCATE_COLUMNS = [ID, KIND, CLAIM, QUOTE, CITED_SECTION, EXPECTED, QUOTE_STATUS, FOUND_SECTION,
                  SECTION_MATCH, MATCH_SCORE, SPAN, EVIDENCE, CLOSEST, FABRICATED_REASON]
JUDGE_COLUMNS = [RELATION, PROBABILITIES, ANSWERS, CONFIDENCE, METHOD, MODEL, CACHED, ERROR]

# the JSON Lines record of the command line (DESIGN.md "Command line")
OUTPUT_FIELDS = [ID, KIND, CLAIM, QUOTE, CITED_SECTION, QUOTE_STATUS, FOUND_SECTION, SECTION_MATCH, MATCH_SCORE,
                 SPAN, RELATION, PROBABILITIES, ANSWERS, CONFIDENCE, METHOD, SCORE, VERDICT, ROUTE, FLAGS, MODEL,
                 CACHED, ERROR, CLOSEST, FABRICATED_REASON, EXPECTED, REVIEW_VERDICT, REVIEW_STATE]


def frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    """The table from row dicts: object columns, missing values as None (never NaN)."""
    table = pd.DataFrame(rows, columns=columns, dtype=object)
    for column in columns:
        table[column] = table[column].astype(object).where(table[column].notna(), None)
    return table
