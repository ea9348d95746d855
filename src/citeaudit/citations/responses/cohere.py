"""Cohere chat: v2 (`message.citations[].sources`) or v1 (`citations[].document_ids` over the
response's `documents`).

A citation covers a span of the answer; each source it names becomes one `VendorCitation`, its
document's snippet or text the vendor's quote, and a `doc:N` id the position of the request's
document. A v2 citation of the tool plan (`type: PLAN`) is not in the answer and is left out.
"""

from __future__ import annotations

import re
from typing import Any

from citeaudit.citations.responses.checks import Reader
from citeaudit.citations.responses.parsed import AnswerParts, CitedSource, VendorCitation, VendorFormat, cited_source
from citeaudit.table import ResponseFormat

_COHERE_INDEX = re.compile(r"^doc[:_](\d{1,6})(?::\d+)?$")


def _cohere_source(doc_id: str | None, document: dict | None, fallback: int | None) -> CitedSource:
    document = document or {}
    found = _COHERE_INDEX.match(doc_id or "")
    index = int(found.group(1)) if found else fallback
    names = [document.get(k) for k in ("url", "source", "file_name", "filename", "title")]
    return cited_source(index, *names, document.get("id") if document.get("id") != doc_id else None)


def _cohere_quote(document: dict | None) -> str | None:
    for key in ("snippet", "text", "content"):
        value = (document or {}).get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def parse(data: dict[str, Any], r: Reader) -> tuple[str, list[VendorCitation]]:
    if isinstance(data.get("message"), dict):
        return _cohere_v2(data, r)
    from cohere import NonStreamedChatResponse

    parsed = r.validate(NonStreamedChatResponse, data, "")
    text = parsed.text
    documents = {}
    for n, doc in enumerate(parsed.documents or []):
        if isinstance(doc, dict) and isinstance(doc.get("id"), str):
            documents[doc["id"]] = (n, doc)
    out = []
    for c, citation in enumerate(parsed.citations or []):
        where = f"citations[{c}]"
        lo, hi = r.span(citation.start, citation.end, len(text), f"{where}.start")
        for d, doc_id in enumerate(citation.document_ids):
            found = documents.get(doc_id)
            if found is None:
                raise r.fail(f"{where}.document_ids[{d}]", f"{doc_id!r} is not the id of any of `documents`",
                             "keep the response's documents with it")
            n, doc = found
            out.append(VendorCitation(f"{where}.document_ids[{d}]", ResponseFormat.COHERE, "citation",
                                      text[lo:hi].strip(), (lo, hi), _cohere_quote(doc),
                                      _cohere_source(doc_id, doc, n)))
    return text, out


def _cohere_v2(data: dict[str, Any], r: Reader) -> tuple[str, list[VendorCitation]]:
    from cohere.types import AssistantMessageResponse

    message = r.validate(AssistantMessageResponse, data["message"], "message")
    parts, texts, offsets = AnswerParts(), [], []
    for item in message.content or []:
        text = getattr(item, "text", None)
        texts.append(text if isinstance(text, str) else "")
        offsets.append(parts.add(texts[-1]))
    out = []
    for c, citation in enumerate(message.citations or []):
        where = f"message.citations[{c}]"
        if citation.type == "PLAN":
            continue  # a citation in the tool plan, not in the answer
        index = citation.content_index or 0
        if not 0 <= index < len(texts):
            raise r.fail(f"{where}.content_index", f"content item {index} does not exist (the message has "
                         f"{len(texts)})")
        if citation.start is None or citation.end is None:
            raise r.fail(f"{where}.{'start' if citation.start is None else 'end'}",
                         "missing: citeaudit needs the span of the answer the citation supports")
        lo, hi = r.span(citation.start, citation.end, len(texts[index]), f"{where}.start")
        for s, source in enumerate(citation.sources or []):
            document = getattr(source, "document", None) or getattr(source, "tool_output", None)
            out.append(VendorCitation(f"{where}.sources[{s}]", ResponseFormat.COHERE, "citation",
                                      texts[index][lo:hi].strip(), (offsets[index] + lo, offsets[index] + hi),
                                      _cohere_quote(document), _cohere_source(source.id, document, None)))
    return parts.text, out


def detect(data: dict[str, Any]) -> bool:
    """A Cohere chat response: a v2 `message` with citations or content, or a v1 `text` with its
    citations, documents or generation id."""
    message = data.get("message")
    if isinstance(message, dict) and ("citations" in message or isinstance(message.get("content"), list)):
        return True
    return isinstance(data.get("text"), str) and ("citations" in data or "documents" in data
                                                  or "generation_id" in data)


FORMAT = VendorFormat(ResponseFormat.COHERE, parse, detect, sdk="cohere", extra="cohere")
