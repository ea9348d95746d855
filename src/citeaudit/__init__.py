"""citeaudit: audit the citations in an LLM's answer against the documents they cite.

Stages (one module each): documents -> locate -> judge (through cache) -> route -> decide.
"""

from .audit import audit_lines, audit_quotes, judge_citations, locate_citations
from .cache import CallCache
from .citations import Citation, load_citations
from .config import DEFAULT_MODEL, DEFAULT_THRESHOLD
from .contract import ContractResult, check_contract, check_contract_files
from .documents import Document, Section, canonical_section_id, load_rfc, load_text, resolve_source
from .errors import CacheMissError, CiteAuditError, InputError, JudgeError, LocalModelError, SourceError
from .fingerprint import fingerprint
from .judge import PROMPT_VERSION, Judge, Judgement, build_messages
from .locate import DocumentIndex, Location, index_document, locate, normalize
from .localmodel import local_server, model_path
from .route import Decision, decide, route
from .lines import LineAnswer, extract_line_citations, load_line_answer
from .calibrate import advise, expected_calibration_error, lowest_threshold, reliability, threshold_table
from .report import render_html, write_report
from .reviews import (Review, apply_reviews, load_reviews, record_review, review_row, review_store_path,
                      row_fingerprint)
from .widgets import ReviewQueue, ThresholdExplorer, style_threshold_view, threshold_view
from .views import highlight_html, lines_view, records, step1_view, step2_view, write_jsonl

__all__ = [
    "ReviewQueue", "ThresholdExplorer", "advise", "expected_calibration_error", "lowest_threshold",
    "reliability", "render_html", "review_store_path", "style_threshold_view", "threshold_table",
    "threshold_view", "write_report",
    "LineAnswer", "Review", "apply_reviews", "audit_lines", "extract_line_citations", "lines_view",
    "load_line_answer", "load_reviews", "record_review", "review_row", "row_fingerprint",
    "CacheMissError", "CallCache", "Citation", "CiteAuditError", "ContractResult", "DEFAULT_MODEL",
    "DEFAULT_THRESHOLD", "Decision", "Document", "DocumentIndex", "InputError", "Judge", "JudgeError",
    "Judgement", "LocalModelError", "Location", "PROMPT_VERSION", "Section", "SourceError",
    "audit_quotes", "build_messages", "canonical_section_id", "check_contract", "check_contract_files",
    "decide", "fingerprint", "highlight_html", "index_document", "judge_citations", "load_citations", "load_rfc",
    "load_text", "local_server", "locate", "locate_citations", "model_path", "normalize", "records",
    "resolve_source", "route", "step1_view", "step2_view", "write_jsonl",
]
