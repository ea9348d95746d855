"""citeaudit: audit the citations in an LLM's answer against the documents they cite.

One table through four stages, one package each: documents (`sources`, `citations`) -> locate
(step 1) -> judge through the cache (step 2) -> route (step 3) -> decide (step 4: reviews and the
answer's ACCEPT / REVIEW / REJECT). `audit_quotes` and its kin run them and return an `Audit`.

The top level holds the analyst's verbs and nouns: load, audit, review, report, calibrate, the
judge, the table's words and the errors to catch (`__all__`, 45 names). The rest is public in named
modules: each package's `__all__` (`citeaudit.sources`, `.citations`, `.locate`, `.judge`,
`.decide`, `.calibrate`, `.pipeline`, `.workflows`, `.surfaces`, `.settings`) and the modules of
`PUBLIC_MODULES`, whose names without a leading underscore are all public. Anything else is inside
the package and free to move.
"""

from typing import TYPE_CHECKING

from citeaudit.lazy import Home, lazy_names

if TYPE_CHECKING:  # for type checkers; nothing is imported until used (`__getattr__` below)
    from citeaudit.calibrate.fit import fit_calibration as fit_calibration
    from citeaudit.calibrate.profile import fit_profile as fit_profile
    from citeaudit.citations.records import load_citations as load_citations
    from citeaudit.citations.responses import load_response as load_response
    from citeaudit.decide.calibration import Calibration as Calibration
    from citeaudit.decide.calibration import load_calibration as load_calibration
    from citeaudit.decide.calibration import save_calibration as save_calibration
    from citeaudit.decide.decision import apply_reviews as apply_reviews
    from citeaudit.decide.reviews import Review as Review
    from citeaudit.decide.reviews import load_reviews as load_reviews
    from citeaudit.decide.reviews import record_review as record_review
    from citeaudit.errors import CiteAuditError as CiteAuditError
    from citeaudit.errors import InputError as InputError
    from citeaudit.judge.cache import CallCache as CallCache
    from citeaudit.judge.judge import Judge as Judge
    from citeaudit.pipeline.audit import Audit as Audit
    from citeaudit.pipeline.audit import audit_citations as audit_citations
    from citeaudit.pipeline.audit import audit_files as audit_files
    from citeaudit.pipeline.audit import audit_lines as audit_lines
    from citeaudit.pipeline.audit import audit_quotes as audit_quotes
    from citeaudit.pipeline.audit import audit_sources as audit_sources
    from citeaudit.pipeline.batch import BatchResult as BatchResult
    from citeaudit.pipeline.batch import audit_dataset as audit_dataset
    from citeaudit.pipeline.batch import run_batch as run_batch
    from citeaudit.pipeline.loading import load_document as load_document
    from citeaudit.pipeline.loading import load_line_answer as load_line_answer
    from citeaudit.pipeline.loading import load_rfc as load_rfc
    from citeaudit.pipeline.loading import load_text as load_text
    from citeaudit.pipeline.loading import read_dataset as read_dataset
    from citeaudit.pipeline.run import AuditRun as AuditRun
    from citeaudit.pipeline.vendor_audit import audit_response as audit_response
    from citeaudit.settings.options import AuditOptions as AuditOptions
    from citeaudit.surfaces.dashboard import write_dashboard as write_dashboard
    from citeaudit.surfaces.report import explain as explain
    from citeaudit.surfaces.report import write_report as write_report
    from citeaudit.surfaces.widgets import ReviewQueue as ReviewQueue
    from citeaudit.surfaces.widgets import ThresholdExplorer as ThresholdExplorer
    from citeaudit.table import CacheMode as CacheMode
    from citeaudit.table import ErrorKind as ErrorKind
    from citeaudit.table import QuoteStatus as QuoteStatus
    from citeaudit.table import Route as Route
    from citeaudit.table import Status as Status
    from citeaudit.table import Strategy as Strategy
    from citeaudit.table import Verdict as Verdict
    from citeaudit.workflows.judge_setup import setup_judge as setup_judge

# Each public name and the module it lives in (a pair when the public name differs from the
# module's): the list is declared here, plainly; the `TYPE_CHECKING` block above says the same for
# type checkers (tests/test_public_api.py checks the two agree).
_HOME: Home = {
    # load
    "load_rfc": "citeaudit.pipeline.loading",
    "load_document": "citeaudit.pipeline.loading",
    "load_text": "citeaudit.pipeline.loading",
    "load_citations": "citeaudit.citations.records",
    "load_response": "citeaudit.citations.responses",
    "load_line_answer": "citeaudit.pipeline.loading",
    "read_dataset": "citeaudit.pipeline.loading",
    # audit
    "Audit": "citeaudit.pipeline.audit",
    "AuditOptions": "citeaudit.settings.options",
    "AuditRun": "citeaudit.pipeline.run",
    "audit_files": "citeaudit.pipeline.audit",
    "audit_quotes": "citeaudit.pipeline.audit",
    "audit_lines": "citeaudit.pipeline.audit",
    "audit_sources": "citeaudit.pipeline.audit",
    "audit_citations": "citeaudit.pipeline.audit",
    "audit_response": "citeaudit.pipeline.vendor_audit",
    "audit_dataset": "citeaudit.pipeline.batch",
    "run_batch": "citeaudit.pipeline.batch",
    "BatchResult": "citeaudit.pipeline.batch",
    # review
    "Review": "citeaudit.decide.reviews",
    "record_review": "citeaudit.decide.reviews",
    "load_reviews": "citeaudit.decide.reviews",
    "apply_reviews": "citeaudit.decide.decision",
    "ReviewQueue": "citeaudit.surfaces.widgets",
    # report
    "write_report": "citeaudit.surfaces.report",
    "write_dashboard": "citeaudit.surfaces.dashboard",
    "explain": "citeaudit.surfaces.report",
    # calibrate
    "Calibration": "citeaudit.decide.calibration",
    "fit_calibration": "citeaudit.calibrate.fit",
    "load_calibration": "citeaudit.decide.calibration",
    "save_calibration": "citeaudit.decide.calibration",
    "ThresholdExplorer": "citeaudit.surfaces.widgets",
    "fit_profile": "citeaudit.calibrate.profile",
    "setup_judge": "citeaudit.workflows.judge_setup",
    # the judge
    "Judge": "citeaudit.judge.judge",
    "CallCache": "citeaudit.judge.cache",
    # the table's words
    "Verdict": "citeaudit.table",
    "Status": "citeaudit.table",
    "QuoteStatus": "citeaudit.table",
    "Route": "citeaudit.table",
    "ErrorKind": "citeaudit.table",
    "CacheMode": "citeaudit.table",
    "Strategy": "citeaudit.table",
    # errors
    "CiteAuditError": "citeaudit.errors",
    "InputError": "citeaudit.errors",
}
__all__ = list(_HOME)

# Modules public as a whole, beside the packages: their names without a leading underscore are their API.
PUBLIC_MODULES = (
    "citeaudit.table", "citeaudit.errors", "citeaudit.testing", "citeaudit.settings.environment",
    "citeaudit.judge.prompts", "citeaudit.judge.localmodel", "citeaudit.judge.hidden_states",
    "citeaudit.judge.strategies.probe", "citeaudit.calibrate.probe", "citeaudit.calibrate.profile",
    "citeaudit.calibrate.public_sets", "citeaudit.decide.contrast", "citeaudit.decide.contrast.passages",
)

# Names that were public here until the top level was cut to the analyst's (issue 51), and where
# they are now: reading one names its new home instead of a bare AttributeError.
_MOVED = {
    "citeaudit.calibrate": (
        "ProfileFit ProfileRefused StrategyComparison advise compare_strategies coverage_ceiling "
        "cross_validate domain_figures expected_calibration_error hold_out_sets leave_one_domain_out "
        "lowest_threshold public_labelled_sets reliability repeated_cross_validation save_profile "
        "side_by_side strategy_metrics threshold_table worst_domain_threshold"
    ),
    "citeaudit.citations": (
        "Citation CitedSource ContractViolation LineAnswer LineRange ParsedResponse SectionRef "
        "SourceIdAnswer SourceRef VendorCitation detect_response_format extract_line_citations "
        "parse_response validate_source_id"
    ),
    "citeaudit.decide": (
        "Agreement BatchOutcome Decision ReviewCommand Routing SpotChecks agreement check_contrast "
        "contrast_findings decide_answer fingerprint is_spot_check load_profile open_spot_checks "
        "precision_warning review_batch review_row review_store_path route row_fingerprint row_state "
        "settle spot_draw why_it_waits wilson_interval"
    ),
    "citeaudit.errors": "CacheMissError JudgeError JudgeUnavailableError LocalModelError SourceError StoreError",
    "citeaudit.judge": "Judgement PROMPT_VERSION PROMPT_VERSIONS build_messages local_server model_path",
    "citeaudit.locate": "DocumentIndex Location index_document locate_citations locate_quote normalize",
    "citeaudit.pipeline": (
        "audit_source_files check_contract check_contract_files judge_citations locate_response "
        "match_source records resolve_source response_view write_jsonl"
    ),
    "citeaudit.settings": (
        "DEFAULT_CONTRAST_CHECKS DEFAULT_MODEL DEFAULT_SPOT_CHECK DEFAULT_STRATEGY DEFAULT_THRESHOLD "
        "find_input project_dir review_dir source_dirs"
    ),
    "citeaudit.sources": "Document Section canonical_section_id",
    "citeaudit.surfaces": (
        "answer_cards answers_view audit_view citation_table contrast_html decision_counts "
        "failing_sources highlight_html how_to_record lines_view plot_strategy_comparison quote_html "
        "render_dashboard render_html score_histogram step1_view step2_view style_threshold_view "
        "styled threshold_view verdict_counts word_diff"
    ),
    "citeaudit.table": "ContrastCheck Flag Kind LocalModelKey Relation ResponseFormat ReviewState Selection State",
    "citeaudit.workflows": (
        "LABELLED_SETS LabelledTables SetupPlan SetupResult labelled_sets labelled_tables "
        "profile_from_reviews setup_plan"
    ),
}

_names, __dir__ = lazy_names(__name__, _HOME)


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use; a name that moved names its home."""
    if name in _HOME:
        return _names(name)
    for home, names in _MOVED.items():
        if name in names.split():
            raise AttributeError(f"citeaudit.{name} is in {home} now: from {home} import {name}")
    if name == "BatchSettings":  # public until the settings were folded into one AuditOptions
        raise AttributeError("citeaudit.BatchSettings is gone: a batch takes the one AuditOptions and its own "
                             "arguments, run_batch(items, AuditOptions.from_env(model=..., threshold=...), "
                             "locate_only=..., reviews=..., cards=citeaudit.surfaces.answer_cards) "
                             "(audit_dataset alike)")
    raise AttributeError(f"module 'citeaudit' has no attribute {name!r}")
