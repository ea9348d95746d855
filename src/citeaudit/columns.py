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
                 REVIEW_STATE, FINAL_VERDICT, STATE]


def frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    """The table from row dicts: object columns, missing values as None (never NaN)."""
    table = pd.DataFrame(rows, columns=columns, dtype=object)
    for column in columns:
        table[column] = table[column].astype(object).where(table[column].notna(), None)
    return table
