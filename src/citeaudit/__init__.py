"""citeaudit: audit the citations in an LLM's answer against the documents they cite.

One table through four stages, one module each:
documents -> locate (step 1) -> judge through the cache (step 2) -> route (step 3) -> decide
(step 4: reviews and the answer's ACCEPT / REVIEW / REJECT). `audit` runs them and returns an
`Audit`; the words of the table and its column names are in `table`.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for type checkers; nothing is imported until used (`__getattr__` below)
    from citeaudit.calibrate.crossval import cross_validate as cross_validate
    from citeaudit.calibrate.crossval import repeated_cross_validation as repeated_cross_validation
    from citeaudit.calibrate.crossval import strategy_metrics as strategy_metrics
    from citeaudit.calibrate.domains import domain_figures as domain_figures
    from citeaudit.calibrate.domains import hold_out_sets as hold_out_sets
    from citeaudit.calibrate.domains import leave_one_domain_out as leave_one_domain_out
    from citeaudit.calibrate.domains import side_by_side as side_by_side
    from citeaudit.calibrate.domains import worst_domain_threshold as worst_domain_threshold
    from citeaudit.calibrate.fit import StrategyComparison as StrategyComparison
    from citeaudit.calibrate.fit import compare_strategies as compare_strategies
    from citeaudit.calibrate.fit import fit_calibration as fit_calibration
    from citeaudit.calibrate.maps import coverage_ceiling as coverage_ceiling
    from citeaudit.calibrate.profile import ProfileFit as ProfileFit
    from citeaudit.calibrate.profile import ProfileRefused as ProfileRefused
    from citeaudit.calibrate.profile import fit_profile as fit_profile
    from citeaudit.calibrate.profile import save_profile as save_profile
    from citeaudit.calibrate.public_sets import public_labelled_sets as public_labelled_sets
    from citeaudit.calibrate.scoring import advise as advise
    from citeaudit.calibrate.scoring import expected_calibration_error as expected_calibration_error
    from citeaudit.calibrate.scoring import lowest_threshold as lowest_threshold
    from citeaudit.calibrate.scoring import reliability as reliability
    from citeaudit.calibrate.scoring import threshold_table as threshold_table
    from citeaudit.citations.lines import LineAnswer as LineAnswer
    from citeaudit.citations.lines import extract_line_citations as extract_line_citations
    from citeaudit.citations.records import Citation as Citation
    from citeaudit.citations.records import LineRange as LineRange
    from citeaudit.citations.records import SectionRef as SectionRef
    from citeaudit.citations.records import SourceRef as SourceRef
    from citeaudit.citations.records import load_citations as load_citations
    from citeaudit.citations.responses import CitedSource as CitedSource
    from citeaudit.citations.responses import ParsedResponse as ParsedResponse
    from citeaudit.citations.responses import VendorCitation as VendorCitation
    from citeaudit.citations.responses import detect_response_format as detect_response_format
    from citeaudit.citations.responses import load_response as load_response
    from citeaudit.citations.responses import parse_response as parse_response
    from citeaudit.citations.sourceid import ContractViolation as ContractViolation
    from citeaudit.citations.sourceid import SourceIdAnswer as SourceIdAnswer
    from citeaudit.citations.sourceid import validate_source_id as validate_source_id
    from citeaudit.decide.agreement import Agreement as Agreement
    from citeaudit.decide.agreement import SpotChecks as SpotChecks
    from citeaudit.decide.agreement import agreement as agreement
    from citeaudit.decide.agreement import precision_warning as precision_warning
    from citeaudit.decide.agreement import wilson_interval as wilson_interval
    from citeaudit.decide.batch_review import BatchOutcome as BatchOutcome
    from citeaudit.decide.batch_review import review_batch as review_batch
    from citeaudit.decide.calibration import Calibration as Calibration
    from citeaudit.decide.calibration import Routing as Routing
    from citeaudit.decide.calibration import load_calibration as load_calibration
    from citeaudit.decide.calibration import load_profile as load_profile
    from citeaudit.decide.calibration import save_calibration as save_calibration
    from citeaudit.decide.contrast import check_contrast as check_contrast
    from citeaudit.decide.contrast import contrast_findings as contrast_findings
    from citeaudit.decide.decision import Decision as Decision
    from citeaudit.decide.decision import apply_reviews as apply_reviews
    from citeaudit.decide.decision import decide as decide_answer  # noqa: F401 (public under this name: _HOME)
    from citeaudit.decide.decision import row_state as row_state
    from citeaudit.decide.decision import settle as settle
    from citeaudit.decide.decision import why_it_waits as why_it_waits
    from citeaudit.decide.fingerprint import fingerprint as fingerprint
    from citeaudit.decide.reviews import Review as Review
    from citeaudit.decide.reviews import ReviewCommand as ReviewCommand
    from citeaudit.decide.reviews import load_reviews as load_reviews
    from citeaudit.decide.reviews import record_review as record_review
    from citeaudit.decide.reviews import review_row as review_row
    from citeaudit.decide.reviews import review_store_path as review_store_path
    from citeaudit.decide.reviews import row_fingerprint as row_fingerprint
    from citeaudit.decide.route import route as route
    from citeaudit.decide.spotcheck import is_spot_check as is_spot_check
    from citeaudit.decide.spotcheck import open_spot_checks as open_spot_checks
    from citeaudit.decide.spotcheck import spot_draw as spot_draw
    from citeaudit.errors import CacheMissError as CacheMissError
    from citeaudit.errors import CiteAuditError as CiteAuditError
    from citeaudit.errors import InputError as InputError
    from citeaudit.errors import JudgeError as JudgeError
    from citeaudit.errors import JudgeUnavailableError as JudgeUnavailableError
    from citeaudit.errors import LocalModelError as LocalModelError
    from citeaudit.errors import SourceError as SourceError
    from citeaudit.errors import StoreError as StoreError
    from citeaudit.judge.cache import CallCache as CallCache
    from citeaudit.judge.judge import Judge as Judge
    from citeaudit.judge.judge import Judgement as Judgement
    from citeaudit.judge.localmodel import local_server as local_server
    from citeaudit.judge.localmodel import model_path as model_path
    from citeaudit.judge.prompts import PROMPT_VERSION as PROMPT_VERSION
    from citeaudit.judge.prompts import build_messages as build_messages
    from citeaudit.judge.strategies import PROMPT_VERSIONS as PROMPT_VERSIONS
    from citeaudit.locate.quotes import Location as Location
    from citeaudit.locate.quotes import locate as locate_quote  # noqa: F401 (public under this name: _HOME)
    from citeaudit.locate.quotes import locate_citations as locate_citations
    from citeaudit.locate.textindex import DocumentIndex as DocumentIndex
    from citeaudit.locate.textindex import index_document as index_document
    from citeaudit.locate.textindex import normalize as normalize
    from citeaudit.pipeline.audit import Audit as Audit
    from citeaudit.pipeline.audit import audit_citations as audit_citations
    from citeaudit.pipeline.audit import audit_files as audit_files
    from citeaudit.pipeline.audit import audit_lines as audit_lines
    from citeaudit.pipeline.audit import audit_quotes as audit_quotes
    from citeaudit.pipeline.audit import audit_source_files as audit_source_files
    from citeaudit.pipeline.audit import audit_sources as audit_sources
    from citeaudit.pipeline.audit import judge_citations as judge_citations
    from citeaudit.pipeline.batch import BatchResult as BatchResult
    from citeaudit.pipeline.batch import audit_dataset as audit_dataset
    from citeaudit.pipeline.batch import run_batch as run_batch
    from citeaudit.pipeline.contract import check_contract as check_contract
    from citeaudit.pipeline.contract import check_contract_files as check_contract_files
    from citeaudit.pipeline.jsonl import records as records
    from citeaudit.pipeline.jsonl import write_jsonl as write_jsonl
    from citeaudit.pipeline.loading import load_document as load_document
    from citeaudit.pipeline.loading import load_line_answer as load_line_answer
    from citeaudit.pipeline.loading import load_rfc as load_rfc
    from citeaudit.pipeline.loading import load_text as load_text
    from citeaudit.pipeline.loading import read_dataset as read_dataset
    from citeaudit.pipeline.loading import resolve_source as resolve_source
    from citeaudit.pipeline.run import AuditRun as AuditRun
    from citeaudit.pipeline.vendor_audit import audit_response as audit_response
    from citeaudit.pipeline.vendor_audit import locate_response as locate_response
    from citeaudit.pipeline.vendor_audit import match_source as match_source
    from citeaudit.pipeline.vendor_audit import response_view as response_view
    from citeaudit.settings.environment import DEFAULT_CONTRAST_CHECKS as DEFAULT_CONTRAST_CHECKS
    from citeaudit.settings.environment import DEFAULT_MODEL as DEFAULT_MODEL
    from citeaudit.settings.environment import DEFAULT_SPOT_CHECK as DEFAULT_SPOT_CHECK
    from citeaudit.settings.environment import DEFAULT_STRATEGY as DEFAULT_STRATEGY
    from citeaudit.settings.environment import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
    from citeaudit.settings.environment import find_input as find_input
    from citeaudit.settings.environment import project_dir as project_dir
    from citeaudit.settings.environment import review_dir as review_dir
    from citeaudit.settings.environment import source_dirs as source_dirs
    from citeaudit.settings.options import AuditOptions as AuditOptions
    from citeaudit.sources.document import Document as Document
    from citeaudit.sources.document import Section as Section
    from citeaudit.sources.document import canonical_section_id as canonical_section_id
    from citeaudit.surfaces.dashboard import answer_cards as answer_cards
    from citeaudit.surfaces.dashboard import citation_table as citation_table
    from citeaudit.surfaces.dashboard import decision_counts as decision_counts
    from citeaudit.surfaces.dashboard import failing_sources as failing_sources
    from citeaudit.surfaces.dashboard import render_dashboard as render_dashboard
    from citeaudit.surfaces.dashboard import score_histogram as score_histogram
    from citeaudit.surfaces.dashboard import verdict_counts as verdict_counts
    from citeaudit.surfaces.dashboard import write_dashboard as write_dashboard
    from citeaudit.surfaces.plots import plot_strategy_comparison as plot_strategy_comparison
    from citeaudit.surfaces.report import explain as explain
    from citeaudit.surfaces.report import render_html as render_html
    from citeaudit.surfaces.report import write_report as write_report
    from citeaudit.surfaces.views import answers_view as answers_view
    from citeaudit.surfaces.views import audit_view as audit_view
    from citeaudit.surfaces.views import contrast_html as contrast_html
    from citeaudit.surfaces.views import highlight_html as highlight_html
    from citeaudit.surfaces.views import how_to_record as how_to_record
    from citeaudit.surfaces.views import lines_view as lines_view
    from citeaudit.surfaces.views import quote_html as quote_html
    from citeaudit.surfaces.views import step1_view as step1_view
    from citeaudit.surfaces.views import step2_view as step2_view
    from citeaudit.surfaces.views import styled as styled
    from citeaudit.surfaces.views import word_diff as word_diff
    from citeaudit.surfaces.widgets import ReviewQueue as ReviewQueue
    from citeaudit.surfaces.widgets import ThresholdExplorer as ThresholdExplorer
    from citeaudit.surfaces.widgets import style_threshold_view as style_threshold_view
    from citeaudit.surfaces.widgets import threshold_view as threshold_view
    from citeaudit.table import CacheMode as CacheMode
    from citeaudit.table import ContrastCheck as ContrastCheck
    from citeaudit.table import ErrorKind as ErrorKind
    from citeaudit.table import Flag as Flag
    from citeaudit.table import Kind as Kind
    from citeaudit.table import LocalModelKey as LocalModelKey
    from citeaudit.table import QuoteStatus as QuoteStatus
    from citeaudit.table import Relation as Relation
    from citeaudit.table import ResponseFormat as ResponseFormat
    from citeaudit.table import ReviewState as ReviewState
    from citeaudit.table import Route as Route
    from citeaudit.table import Selection as Selection
    from citeaudit.table import State as State
    from citeaudit.table import Status as Status
    from citeaudit.table import Strategy as Strategy
    from citeaudit.table import Verdict as Verdict
    from citeaudit.workflows.judge_setup import LABELLED_SETS as LABELLED_SETS
    from citeaudit.workflows.judge_setup import LabelledTables as LabelledTables
    from citeaudit.workflows.judge_setup import SetupPlan as SetupPlan
    from citeaudit.workflows.judge_setup import SetupResult as SetupResult
    from citeaudit.workflows.judge_setup import labelled_sets as labelled_sets
    from citeaudit.workflows.judge_setup import labelled_tables as labelled_tables
    from citeaudit.workflows.judge_setup import setup_judge as setup_judge
    from citeaudit.workflows.judge_setup import setup_plan as setup_plan
    from citeaudit.workflows.profile_fit import profile_from_reviews as profile_from_reviews

# Each public name and the module it lives in (a pair when the public name differs from the
# module's): the list is declared here, plainly; the `TYPE_CHECKING` block above says the same for
# type checkers (tests/test_public_api.py checks the two agree).
_HOME: dict[str, str | tuple[str, str]] = {
    "DEFAULT_CONTRAST_CHECKS": "citeaudit.settings.environment",
    "DEFAULT_MODEL": "citeaudit.settings.environment",
    "DEFAULT_SPOT_CHECK": "citeaudit.settings.environment",
    "DEFAULT_STRATEGY": "citeaudit.settings.environment",
    "DEFAULT_THRESHOLD": "citeaudit.settings.environment",
    "LABELLED_SETS": "citeaudit.workflows.judge_setup",
    "PROMPT_VERSION": "citeaudit.judge.prompts",
    "PROMPT_VERSIONS": "citeaudit.judge.strategies",
    "Agreement": "citeaudit.decide.agreement",
    "Audit": "citeaudit.pipeline.audit",
    "AuditOptions": "citeaudit.settings.options",
    "AuditRun": "citeaudit.pipeline.run",
    "BatchOutcome": "citeaudit.decide.batch_review",
    "BatchResult": "citeaudit.pipeline.batch",
    "CacheMissError": "citeaudit.errors",
    "CacheMode": "citeaudit.table",
    "Calibration": "citeaudit.decide.calibration",
    "CallCache": "citeaudit.judge.cache",
    "Citation": "citeaudit.citations.records",
    "CiteAuditError": "citeaudit.errors",
    "CitedSource": "citeaudit.citations.responses",
    "ContractViolation": "citeaudit.citations.sourceid",
    "ContrastCheck": "citeaudit.table",
    "Decision": "citeaudit.decide.decision",
    "Document": "citeaudit.sources.document",
    "DocumentIndex": "citeaudit.locate.textindex",
    "ErrorKind": "citeaudit.table",
    "Flag": "citeaudit.table",
    "InputError": "citeaudit.errors",
    "Judge": "citeaudit.judge.judge",
    "JudgeError": "citeaudit.errors",
    "JudgeUnavailableError": "citeaudit.errors",
    "Judgement": "citeaudit.judge.judge",
    "Kind": "citeaudit.table",
    "LabelledTables": "citeaudit.workflows.judge_setup",
    "LineAnswer": "citeaudit.citations.lines",
    "LineRange": "citeaudit.citations.records",
    "LocalModelError": "citeaudit.errors",
    "LocalModelKey": "citeaudit.table",
    "Location": "citeaudit.locate.quotes",
    "ParsedResponse": "citeaudit.citations.responses",
    "ProfileFit": "citeaudit.calibrate.profile",
    "ProfileRefused": "citeaudit.calibrate.profile",
    "QuoteStatus": "citeaudit.table",
    "Relation": "citeaudit.table",
    "ResponseFormat": "citeaudit.table",
    "Review": "citeaudit.decide.reviews",
    "ReviewCommand": "citeaudit.decide.reviews",
    "ReviewQueue": "citeaudit.surfaces.widgets",
    "ReviewState": "citeaudit.table",
    "Route": "citeaudit.table",
    "Routing": "citeaudit.decide.calibration",
    "Section": "citeaudit.sources.document",
    "SectionRef": "citeaudit.citations.records",
    "Selection": "citeaudit.table",
    "SetupPlan": "citeaudit.workflows.judge_setup",
    "SetupResult": "citeaudit.workflows.judge_setup",
    "SourceError": "citeaudit.errors",
    "SourceIdAnswer": "citeaudit.citations.sourceid",
    "SourceRef": "citeaudit.citations.records",
    "SpotChecks": "citeaudit.decide.agreement",
    "State": "citeaudit.table",
    "Status": "citeaudit.table",
    "StoreError": "citeaudit.errors",
    "Strategy": "citeaudit.table",
    "StrategyComparison": "citeaudit.calibrate.fit",
    "ThresholdExplorer": "citeaudit.surfaces.widgets",
    "VendorCitation": "citeaudit.citations.responses",
    "Verdict": "citeaudit.table",
    "advise": "citeaudit.calibrate.scoring",
    "agreement": "citeaudit.decide.agreement",
    "answer_cards": "citeaudit.surfaces.dashboard",
    "answers_view": "citeaudit.surfaces.views",
    "apply_reviews": "citeaudit.decide.decision",
    "audit_citations": "citeaudit.pipeline.audit",
    "audit_dataset": "citeaudit.pipeline.batch",
    "audit_files": "citeaudit.pipeline.audit",
    "audit_lines": "citeaudit.pipeline.audit",
    "audit_quotes": "citeaudit.pipeline.audit",
    "audit_response": "citeaudit.pipeline.vendor_audit",
    "audit_source_files": "citeaudit.pipeline.audit",
    "audit_sources": "citeaudit.pipeline.audit",
    "audit_view": "citeaudit.surfaces.views",
    "build_messages": "citeaudit.judge.prompts",
    "canonical_section_id": "citeaudit.sources.document",
    "check_contract": "citeaudit.pipeline.contract",
    "check_contract_files": "citeaudit.pipeline.contract",
    "check_contrast": "citeaudit.decide.contrast",
    "citation_table": "citeaudit.surfaces.dashboard",
    "compare_strategies": "citeaudit.calibrate.fit",
    "contrast_findings": "citeaudit.decide.contrast",
    "contrast_html": "citeaudit.surfaces.views",
    "coverage_ceiling": "citeaudit.calibrate.maps",
    "cross_validate": "citeaudit.calibrate.crossval",
    "decide_answer": ("citeaudit.decide.decision", "decide"),
    "decision_counts": "citeaudit.surfaces.dashboard",
    "detect_response_format": "citeaudit.citations.responses",
    "domain_figures": "citeaudit.calibrate.domains",
    "expected_calibration_error": "citeaudit.calibrate.scoring",
    "explain": "citeaudit.surfaces.report",
    "extract_line_citations": "citeaudit.citations.lines",
    "failing_sources": "citeaudit.surfaces.dashboard",
    "find_input": "citeaudit.settings.environment",
    "fingerprint": "citeaudit.decide.fingerprint",
    "fit_calibration": "citeaudit.calibrate.fit",
    "fit_profile": "citeaudit.calibrate.profile",
    "highlight_html": "citeaudit.surfaces.views",
    "hold_out_sets": "citeaudit.calibrate.domains",
    "how_to_record": "citeaudit.surfaces.views",
    "index_document": "citeaudit.locate.textindex",
    "is_spot_check": "citeaudit.decide.spotcheck",
    "judge_citations": "citeaudit.pipeline.audit",
    "labelled_sets": "citeaudit.workflows.judge_setup",
    "labelled_tables": "citeaudit.workflows.judge_setup",
    "leave_one_domain_out": "citeaudit.calibrate.domains",
    "lines_view": "citeaudit.surfaces.views",
    "load_calibration": "citeaudit.decide.calibration",
    "load_citations": "citeaudit.citations.records",
    "load_document": "citeaudit.pipeline.loading",
    "load_line_answer": "citeaudit.pipeline.loading",
    "load_profile": "citeaudit.decide.calibration",
    "load_response": "citeaudit.citations.responses",
    "load_reviews": "citeaudit.decide.reviews",
    "load_rfc": "citeaudit.pipeline.loading",
    "load_text": "citeaudit.pipeline.loading",
    "local_server": "citeaudit.judge.localmodel",
    "locate_citations": "citeaudit.locate.quotes",
    "locate_quote": ("citeaudit.locate.quotes", "locate"),
    "locate_response": "citeaudit.pipeline.vendor_audit",
    "lowest_threshold": "citeaudit.calibrate.scoring",
    "match_source": "citeaudit.pipeline.vendor_audit",
    "model_path": "citeaudit.judge.localmodel",
    "normalize": "citeaudit.locate.textindex",
    "open_spot_checks": "citeaudit.decide.spotcheck",
    "parse_response": "citeaudit.citations.responses",
    "plot_strategy_comparison": "citeaudit.surfaces.plots",
    "precision_warning": "citeaudit.decide.agreement",
    "profile_from_reviews": "citeaudit.workflows.profile_fit",
    "project_dir": "citeaudit.settings.environment",
    "public_labelled_sets": "citeaudit.calibrate.public_sets",
    "quote_html": "citeaudit.surfaces.views",
    "read_dataset": "citeaudit.pipeline.loading",
    "record_review": "citeaudit.decide.reviews",
    "records": "citeaudit.pipeline.jsonl",
    "reliability": "citeaudit.calibrate.scoring",
    "render_dashboard": "citeaudit.surfaces.dashboard",
    "render_html": "citeaudit.surfaces.report",
    "repeated_cross_validation": "citeaudit.calibrate.crossval",
    "resolve_source": "citeaudit.pipeline.loading",
    "response_view": "citeaudit.pipeline.vendor_audit",
    "review_batch": "citeaudit.decide.batch_review",
    "review_dir": "citeaudit.settings.environment",
    "review_row": "citeaudit.decide.reviews",
    "review_store_path": "citeaudit.decide.reviews",
    "route": "citeaudit.decide.route",
    "row_fingerprint": "citeaudit.decide.reviews",
    "row_state": "citeaudit.decide.decision",
    "run_batch": "citeaudit.pipeline.batch",
    "save_calibration": "citeaudit.decide.calibration",
    "save_profile": "citeaudit.calibrate.profile",
    "score_histogram": "citeaudit.surfaces.dashboard",
    "settle": "citeaudit.decide.decision",
    "setup_judge": "citeaudit.workflows.judge_setup",
    "setup_plan": "citeaudit.workflows.judge_setup",
    "side_by_side": "citeaudit.calibrate.domains",
    "source_dirs": "citeaudit.settings.environment",
    "spot_draw": "citeaudit.decide.spotcheck",
    "step1_view": "citeaudit.surfaces.views",
    "step2_view": "citeaudit.surfaces.views",
    "strategy_metrics": "citeaudit.calibrate.crossval",
    "style_threshold_view": "citeaudit.surfaces.widgets",
    "styled": "citeaudit.surfaces.views",
    "threshold_table": "citeaudit.calibrate.scoring",
    "threshold_view": "citeaudit.surfaces.widgets",
    "validate_source_id": "citeaudit.citations.sourceid",
    "verdict_counts": "citeaudit.surfaces.dashboard",
    "why_it_waits": "citeaudit.decide.decision",
    "wilson_interval": "citeaudit.decide.agreement",
    "word_diff": "citeaudit.surfaces.views",
    "worst_domain_threshold": "citeaudit.calibrate.domains",
    "write_dashboard": "citeaudit.surfaces.dashboard",
    "write_jsonl": "citeaudit.pipeline.jsonl",
    "write_report": "citeaudit.surfaces.report",
}
__all__ = list(_HOME)


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use (`import citeaudit` and `citeaudit
    --help` import none of the pipeline's dependencies: pandas, scikit-learn, the SDKs)."""
    if name in _HOME:
        home = _HOME[name]
        module, attribute = home if isinstance(home, tuple) else (home, name)
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
