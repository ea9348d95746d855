"""citeaudit: audit the citations in an LLM's answer against the documents they cite.

One table through four stages, one module each:
documents -> locate (step 1) -> judge through the cache (step 2) -> route (step 3) -> decide
(step 4: reviews and the answer's ACCEPT / REVIEW / REJECT). `audit` runs them and returns an
`Audit`; the words of the table and its column names are in `table`.
"""

import ast
import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # read by type checkers and by _public_names below; nothing is imported until used
    from citeaudit.calibrate.crossval import cross_validate, repeated_cross_validation, strategy_metrics
    from citeaudit.calibrate.domains import (
        domain_figures,
        hold_out_sets,
        leave_one_domain_out,
        side_by_side,
        worst_domain_threshold,
    )
    from citeaudit.calibrate.fit import StrategyComparison, compare_strategies, fit_calibration
    from citeaudit.calibrate.maps import coverage_ceiling
    from citeaudit.calibrate.profile import ProfileFit, ProfileRefused, fit_profile, save_profile
    from citeaudit.calibrate.public_sets import public_labelled_sets
    from citeaudit.calibrate.scoring import (
        advise,
        expected_calibration_error,
        lowest_threshold,
        reliability,
        threshold_table,
    )
    from citeaudit.citations.lines import LineAnswer, extract_line_citations
    from citeaudit.citations.records import Citation, LineRange, SectionRef, SourceRef, load_citations
    from citeaudit.citations.responses import (
        CitedSource,
        ParsedResponse,
        VendorCitation,
        detect_response_format,
        load_response,
        parse_response,
    )
    from citeaudit.citations.sourceid import ContractViolation, SourceIdAnswer, validate_source_id
    from citeaudit.decide.agreement import Agreement, SpotChecks, agreement, precision_warning, wilson_interval
    from citeaudit.decide.batch_review import BatchOutcome, review_batch
    from citeaudit.decide.calibration import Calibration, Routing, load_calibration, load_profile, save_calibration
    from citeaudit.decide.contrast import check_contrast, contrast_findings
    from citeaudit.decide.decision import Decision, apply_reviews, row_state, settle, why_it_waits
    from citeaudit.decide.decision import decide as decide_answer
    from citeaudit.decide.fingerprint import fingerprint
    from citeaudit.decide.reviews import (
        Review,
        ReviewCommand,
        load_reviews,
        record_review,
        review_row,
        review_store_path,
        row_fingerprint,
    )
    from citeaudit.decide.route import route
    from citeaudit.decide.spotcheck import is_spot_check, open_spot_checks, spot_draw
    from citeaudit.errors import (
        CacheMissError,
        CiteAuditError,
        InputError,
        JudgeError,
        JudgeUnavailableError,
        LocalModelError,
        SourceError,
        StoreError,
    )
    from citeaudit.judge.cache import CallCache
    from citeaudit.judge.judge import Judge, Judgement
    from citeaudit.judge.localmodel import local_server, model_path
    from citeaudit.judge.prompts import PROMPT_VERSION, build_messages
    from citeaudit.judge.strategies import PROMPT_VERSIONS
    from citeaudit.locate.quotes import Location, locate_citations
    from citeaudit.locate.quotes import locate as locate_quote
    from citeaudit.locate.textindex import DocumentIndex, index_document, normalize
    from citeaudit.pipeline.audit import (
        Audit,
        audit_citations,
        audit_files,
        audit_lines,
        audit_quotes,
        audit_source_files,
        audit_sources,
        judge_citations,
    )
    from citeaudit.pipeline.batch import BatchResult, audit_dataset, run_batch
    from citeaudit.pipeline.contract import check_contract, check_contract_files
    from citeaudit.pipeline.jsonl import records, write_jsonl
    from citeaudit.pipeline.loading import (
        load_document,
        load_line_answer,
        load_rfc,
        load_text,
        read_dataset,
        resolve_source,
    )
    from citeaudit.pipeline.run import AuditRun
    from citeaudit.pipeline.vendor_audit import audit_response, locate_response, match_source, response_view
    from citeaudit.settings.environment import (
        DEFAULT_CONTRAST_CHECKS,
        DEFAULT_MODEL,
        DEFAULT_SPOT_CHECK,
        DEFAULT_STRATEGY,
        DEFAULT_THRESHOLD,
        find_input,
        project_dir,
        review_dir,
        source_dirs,
    )
    from citeaudit.settings.options import AuditOptions
    from citeaudit.sources.document import Document, Section, canonical_section_id
    from citeaudit.surfaces.dashboard import (
        answer_cards,
        citation_table,
        decision_counts,
        failing_sources,
        render_dashboard,
        score_histogram,
        verdict_counts,
        write_dashboard,
    )
    from citeaudit.surfaces.plots import plot_strategy_comparison
    from citeaudit.surfaces.report import explain, render_html, write_report
    from citeaudit.surfaces.views import (
        answers_view,
        audit_view,
        contrast_html,
        highlight_html,
        how_to_record,
        lines_view,
        quote_html,
        step1_view,
        step2_view,
        styled,
        word_diff,
    )
    from citeaudit.surfaces.widgets import ReviewQueue, ThresholdExplorer, style_threshold_view, threshold_view
    from citeaudit.table import (
        CacheMode,
        ContrastCheck,
        ErrorKind,
        Flag,
        Kind,
        LocalModelKey,
        QuoteStatus,
        Relation,
        ResponseFormat,
        ReviewState,
        Route,
        Selection,
        State,
        Status,
        Strategy,
        Verdict,
    )
    from citeaudit.workflows.judge_setup import (
        LABELLED_SETS,
        LabelledTables,
        SetupPlan,
        SetupResult,
        labelled_sets,
        labelled_tables,
        setup_judge,
        setup_plan,
    )
    from citeaudit.workflows.profile_fit import profile_from_reviews

__all__ = [
    "DEFAULT_CONTRAST_CHECKS",
    "DEFAULT_MODEL",
    "DEFAULT_SPOT_CHECK",
    "DEFAULT_STRATEGY",
    "DEFAULT_THRESHOLD",
    "LABELLED_SETS",
    "PROMPT_VERSION",
    "PROMPT_VERSIONS",
    "Agreement",
    "Audit",
    "AuditOptions",
    "AuditRun",
    "BatchOutcome",
    "BatchResult",
    "CacheMissError",
    "CacheMode",
    "Calibration",
    "CallCache",
    "Citation",
    "CiteAuditError",
    "CitedSource",
    "ContractViolation",
    "ContrastCheck",
    "Decision",
    "Document",
    "DocumentIndex",
    "ErrorKind",
    "Flag",
    "InputError",
    "Judge",
    "JudgeError",
    "JudgeUnavailableError",
    "Judgement",
    "Kind",
    "LabelledTables",
    "LineAnswer",
    "LineRange",
    "LocalModelError",
    "LocalModelKey",
    "Location",
    "ParsedResponse",
    "ProfileFit",
    "ProfileRefused",
    "QuoteStatus",
    "Relation",
    "ResponseFormat",
    "Review",
    "ReviewCommand",
    "ReviewQueue",
    "ReviewState",
    "Route",
    "Routing",
    "Section",
    "SectionRef",
    "Selection",
    "SetupPlan",
    "SetupResult",
    "SourceError",
    "SourceIdAnswer",
    "SourceRef",
    "SpotChecks",
    "State",
    "Status",
    "StoreError",
    "Strategy",
    "StrategyComparison",
    "ThresholdExplorer",
    "VendorCitation",
    "Verdict",
    "advise",
    "agreement",
    "answer_cards",
    "answers_view",
    "apply_reviews",
    "audit_citations",
    "audit_dataset",
    "audit_files",
    "audit_lines",
    "audit_quotes",
    "audit_response",
    "audit_source_files",
    "audit_sources",
    "audit_view",
    "build_messages",
    "canonical_section_id",
    "check_contract",
    "check_contract_files",
    "check_contrast",
    "citation_table",
    "compare_strategies",
    "contrast_findings",
    "contrast_html",
    "coverage_ceiling",
    "cross_validate",
    "decide_answer",
    "decision_counts",
    "detect_response_format",
    "domain_figures",
    "expected_calibration_error",
    "explain",
    "extract_line_citations",
    "failing_sources",
    "find_input",
    "fingerprint",
    "fit_calibration",
    "fit_profile",
    "highlight_html",
    "hold_out_sets",
    "how_to_record",
    "index_document",
    "is_spot_check",
    "judge_citations",
    "labelled_sets",
    "labelled_tables",
    "leave_one_domain_out",
    "lines_view",
    "load_calibration",
    "load_citations",
    "load_document",
    "load_line_answer",
    "load_profile",
    "load_response",
    "load_reviews",
    "load_rfc",
    "load_text",
    "local_server",
    "locate_citations",
    "locate_quote",
    "locate_response",
    "lowest_threshold",
    "match_source",
    "model_path",
    "normalize",
    "open_spot_checks",
    "parse_response",
    "plot_strategy_comparison",
    "precision_warning",
    "profile_from_reviews",
    "project_dir",
    "public_labelled_sets",
    "quote_html",
    "read_dataset",
    "record_review",
    "records",
    "reliability",
    "render_dashboard",
    "render_html",
    "repeated_cross_validation",
    "resolve_source",
    "response_view",
    "review_batch",
    "review_dir",
    "review_row",
    "review_store_path",
    "route",
    "row_fingerprint",
    "row_state",
    "run_batch",
    "save_calibration",
    "save_profile",
    "score_histogram",
    "settle",
    "setup_judge",
    "setup_plan",
    "side_by_side",
    "source_dirs",
    "spot_draw",
    "step1_view",
    "step2_view",
    "strategy_metrics",
    "style_threshold_view",
    "styled",
    "threshold_table",
    "threshold_view",
    "validate_source_id",
    "verdict_counts",
    "why_it_waits",
    "wilson_interval",
    "word_diff",
    "worst_domain_threshold",
    "write_dashboard",
    "write_jsonl",
    "write_report",
]



def _public_names() -> dict[str, tuple[str, str]]:
    """Each public name -> (module, attribute), read from the `TYPE_CHECKING` imports of this file,
    so the list is written once and `import citeaudit` (and `citeaudit --help`) imports none of the
    pipeline's dependencies (pandas, scikit-learn, the SDKs) until a name is used."""
    with open(__file__, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    block = next(node for node in tree.body
                 if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    return {alias.asname or alias.name: (node.module, alias.name)
            for node in block.body if isinstance(node, ast.ImportFrom) and node.module
            for alias in node.names}


_PUBLIC = _public_names()


def __getattr__(name: str) -> object:
    if name in _PUBLIC:
        module, attribute = _PUBLIC[name]
        value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value  # the next use is a plain attribute
        return value
    if name == "BatchSettings":  # public until the settings were folded into one AuditOptions
        raise AttributeError("citeaudit.BatchSettings is gone: a batch takes the one AuditOptions and its own "
                             "arguments, run_batch(items, AuditOptions.from_env(model=..., threshold=...), "
                             "locate_only=..., reviews=..., cards=citeaudit.answer_cards) (audit_dataset alike)")
    raise AttributeError(f"module 'citeaudit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
