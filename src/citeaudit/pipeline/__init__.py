"""The stages run over one table: `audit` (one answer), `batch` (a dataset on Dask), `contract`
(source-id acceptance), `vendor_audit` (a vendor response's own citations) and `jsonl` (the JSON
Lines records). The pipeline imports no surface: the surfaces render what it returns."""

from typing import TYPE_CHECKING

from citeaudit.lazy import Home, lazy_names

if TYPE_CHECKING:  # for type checkers; a name's module is imported when the name is first used
    from citeaudit.pipeline.audit import Audit as Audit
    from citeaudit.pipeline.audit import audit_citations as audit_citations
    from citeaudit.pipeline.audit import audit_files as audit_files
    from citeaudit.pipeline.audit import audit_lines as audit_lines
    from citeaudit.pipeline.audit import audit_quotes as audit_quotes
    from citeaudit.pipeline.audit import audit_source_files as audit_source_files
    from citeaudit.pipeline.audit import audit_sources as audit_sources
    from citeaudit.pipeline.audit import judge_citations as judge_citations
    from citeaudit.pipeline.audit import judge_questions as judge_questions
    from citeaudit.pipeline.batch import BatchResult as BatchResult
    from citeaudit.pipeline.batch import audit_dataset as audit_dataset
    from citeaudit.pipeline.batch import run_batch as run_batch
    from citeaudit.pipeline.contract import check_contract as check_contract
    from citeaudit.pipeline.contract import check_contract_files as check_contract_files
    from citeaudit.pipeline.focus import FOCUS_CHARS as FOCUS_CHARS
    from citeaudit.pipeline.jsonl import records as records
    from citeaudit.pipeline.jsonl import write_jsonl as write_jsonl
    from citeaudit.pipeline.loading import load_document as load_document
    from citeaudit.pipeline.loading import load_line_answer as load_line_answer
    from citeaudit.pipeline.loading import load_rfc as load_rfc
    from citeaudit.pipeline.loading import load_text as load_text
    from citeaudit.pipeline.loading import read_dataset as read_dataset
    from citeaudit.pipeline.loading import resolve_source as resolve_source
    from citeaudit.pipeline.run import AuditRun as AuditRun
    from citeaudit.pipeline.scheduling import local_cluster as local_cluster
    from citeaudit.pipeline.vendor_audit import audit_response as audit_response
    from citeaudit.pipeline.vendor_audit import locate_response as locate_response
    from citeaudit.pipeline.vendor_audit import match_source as match_source
    from citeaudit.pipeline.vendor_audit import response_view as response_view

_HOME: Home = {
    "FOCUS_CHARS": "citeaudit.pipeline.focus",
    "Audit": "citeaudit.pipeline.audit",
    "AuditRun": "citeaudit.pipeline.run",
    "BatchResult": "citeaudit.pipeline.batch",
    "audit_citations": "citeaudit.pipeline.audit",
    "audit_dataset": "citeaudit.pipeline.batch",
    "audit_files": "citeaudit.pipeline.audit",
    "audit_lines": "citeaudit.pipeline.audit",
    "audit_quotes": "citeaudit.pipeline.audit",
    "audit_response": "citeaudit.pipeline.vendor_audit",
    "audit_source_files": "citeaudit.pipeline.audit",
    "audit_sources": "citeaudit.pipeline.audit",
    "check_contract": "citeaudit.pipeline.contract",
    "check_contract_files": "citeaudit.pipeline.contract",
    "judge_citations": "citeaudit.pipeline.audit",
    "judge_questions": "citeaudit.pipeline.audit",
    "load_document": "citeaudit.pipeline.loading",
    "load_line_answer": "citeaudit.pipeline.loading",
    "load_rfc": "citeaudit.pipeline.loading",
    "load_text": "citeaudit.pipeline.loading",
    "local_cluster": "citeaudit.pipeline.scheduling",
    "locate_response": "citeaudit.pipeline.vendor_audit",
    "match_source": "citeaudit.pipeline.vendor_audit",
    "read_dataset": "citeaudit.pipeline.loading",
    "records": "citeaudit.pipeline.jsonl",
    "resolve_source": "citeaudit.pipeline.loading",
    "response_view": "citeaudit.pipeline.vendor_audit",
    "run_batch": "citeaudit.pipeline.batch",
    "write_jsonl": "citeaudit.pipeline.jsonl",
}
__all__ = list(_HOME)
__getattr__, __dir__ = lazy_names(__name__, _HOME)
