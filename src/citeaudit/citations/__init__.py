"""Citation inputs, all read into one `Citation` record (`records`): quote files, line answers
(`lines`), source-id answers (`sourceid`), vendor API responses (`responses`) and datasets (`dataset`)."""

from typing import TYPE_CHECKING

from citeaudit.lazy import Home, lazy_names

if TYPE_CHECKING:  # for type checkers; a name's module is imported when the name is first used
    from citeaudit.citations.dataset import Item as Item
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

_HOME: Home = {
    "Citation": "citeaudit.citations.records",
    "CitedSource": "citeaudit.citations.responses",
    "ContractViolation": "citeaudit.citations.sourceid",
    "Item": "citeaudit.citations.dataset",
    "LineAnswer": "citeaudit.citations.lines",
    "LineRange": "citeaudit.citations.records",
    "ParsedResponse": "citeaudit.citations.responses",
    "SectionRef": "citeaudit.citations.records",
    "SourceIdAnswer": "citeaudit.citations.sourceid",
    "SourceRef": "citeaudit.citations.records",
    "VendorCitation": "citeaudit.citations.responses",
    "detect_response_format": "citeaudit.citations.responses",
    "extract_line_citations": "citeaudit.citations.lines",
    "load_citations": "citeaudit.citations.records",
    "load_response": "citeaudit.citations.responses",
    "parse_response": "citeaudit.citations.responses",
    "validate_source_id": "citeaudit.citations.sourceid",
}
__all__ = list(_HOME)
__getattr__, __dir__ = lazy_names(__name__, _HOME)
