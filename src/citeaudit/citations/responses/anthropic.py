"""Anthropic's Messages API: `content` text blocks with their `citations`.

Citation types: `char_location` (0-based characters, exclusive end), `page_location` (1-based
pages, exclusive end), `content_block_location` (0-based blocks, exclusive end),
`search_result_location` and `web_search_result_location`. Each is attached to its whole text
block (leading and trailing whitespace left out); `cited_text` is the vendor's quote.
"""

from __future__ import annotations

from typing import Any

from citeaudit.citations.responses.checks import Reader, typed
from citeaudit.citations.responses.parsed import AnswerParts, VendorCitation, VendorFormat, cited_source
from citeaudit.table import ResponseFormat


def parse(data: dict[str, Any], r: Reader) -> tuple[str, list[VendorCitation]]:
    from anthropic import types as at

    types = {"char_location": at.CitationCharLocation, "page_location": at.CitationPageLocation,
             "content_block_location": at.CitationContentBlockLocation,
             "search_result_location": at.CitationsSearchResultLocation,
             "web_search_result_location": at.CitationsWebSearchResultLocation}
    parts, out = AnswerParts(), []
    content = r.array(data.get("content"), "content")
    for b, raw in enumerate(content):
        where = f"content[{b}]"
        block = r.obj(raw, where)
        if block.get("type") != "text":
            continue  # tool use, thinking, server tool results: no answer text
        parsed = r.validate(at.TextBlock, {**block, "citations": None}, where)
        citations = typed(r, block.get("citations"), f"{where}.citations", types)
        offset = parts.add(parsed.text, separator="")
        span = (offset, offset + len(parsed.text))
        # a block's leading or trailing whitespace is not part of its claim
        lead = len(parsed.text) - len(parsed.text.lstrip())
        span = (span[0] + lead, span[0] + lead + len(parsed.text.strip()))
        for cwhere, citation in citations:
            kind = citation.type
            chars = pages = blocks = None
            if kind == "char_location":
                chars = r.span(citation.start_char_index, citation.end_char_index, None,
                               f"{cwhere}.start_char_index", "a source")
                source = cited_source(citation.document_index, citation.document_title, citation.file_id)
            elif kind == "page_location":
                first, end = citation.start_page_number, citation.end_page_number
                if first < 1 or end < first:
                    raise r.fail(f"{cwhere}.start_page_number", f"page range {first}-{end} is not a page range "
                                 "(1-based, end exclusive)", "give pages as the API does: 1-based, end exclusive")
                pages = (first, max(first, end - 1))
                source = cited_source(citation.document_index, citation.document_title, citation.file_id)
            elif kind in ("content_block_location", "search_result_location"):
                first, end = citation.start_block_index, citation.end_block_index
                if first < 0 or end < first:
                    raise r.fail(f"{cwhere}.start_block_index", f"block range {first}-{end} is not a block range "
                                 "(0-based, end exclusive)", "give block indices as the API does")
                blocks = (first, max(first, end - 1))
                if kind == "search_result_location":
                    # search_result_index counts search results, not the request's documents: no index
                    source = cited_source(None, citation.source, citation.title)
                else:
                    source = cited_source(citation.document_index, citation.document_title, citation.file_id)
            else:  # web_search_result_location
                source = cited_source(None, citation.url, citation.title)
            out.append(VendorCitation(cwhere, ResponseFormat.ANTHROPIC, kind, parsed.text.strip(), span,
                                      citation.cited_text, source, chars, pages, blocks))
    return parts.text, out


def detect(data: dict[str, Any]) -> bool:
    """A Messages API response: a `content` list in a message (its type, role or stop reason)."""
    return isinstance(data.get("content"), list) and (data.get("type") == "message" or data.get("role") == "assistant"
                                                      or "stop_reason" in data)


FORMAT = VendorFormat(ResponseFormat.ANTHROPIC, parse, detect, sdk="anthropic", extra="anthropic")
