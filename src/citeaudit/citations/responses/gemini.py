"""Gemini: `candidates[].groundingMetadata`, `groundingSupports` (answer segments) over
`groundingChunks` (web pages or `retrievedContext`), in REST camelCase or the SDK's snake_case.

Quirks: a segment's offsets are UTF-8 byte offsets into its text part, and proto3 omits
zero-valued fields (a missing `startIndex` or `partIndex` is 0). A retrieved context's text (or
its Vertex AI RAG chunk's) is the vendor's quote, with its page when given; a support's
`confidenceScores` are kept.
"""

from __future__ import annotations

from typing import Any

from citeaudit.citations.responses.checks import Reader, short
from citeaudit.citations.responses.parsed import AnswerParts, VendorCitation, VendorFormat, cited_source
from citeaudit.table import ResponseFormat


def parse(data: dict[str, Any], r: Reader) -> tuple[str, list[VendorCitation]]:
    from google.genai.types import Candidate

    parts, out = AnswerParts(), []
    for k, raw in enumerate(r.array(data.get("candidates"), "candidates")):
        base = f"candidates[{k}]"
        candidate = r.validate(Candidate, r.obj(raw, base), base)
        texts = [p.text or "" for p in (candidate.content.parts or [])] if candidate.content else []
        offsets = [parts.add(t) for t in texts]
        meta = candidate.grounding_metadata
        if meta is None:
            continue
        key = "groundingMetadata" if "groundingMetadata" in raw else "grounding_metadata"
        camel = key == "groundingMetadata"
        mwhere = f"{base}.{key}"
        chunks = meta.grounding_chunks or []
        chunks_name = "groundingChunks" if camel else "grounding_chunks"
        supports_name = "groundingSupports" if camel else "grounding_supports"
        for s, support in enumerate(meta.grounding_supports or []):
            swhere = f"{mwhere}.{supports_name}[{s}]"
            segment = support.segment
            if segment is None:
                raise r.fail(f"{swhere}.segment", "missing: citeaudit needs the answer segment a support grounds")
            part = segment.part_index or 0  # proto3: a zero index is omitted
            if not 0 <= part < len(texts):
                raise r.fail(f"{swhere}.segment.{'partIndex' if camel else 'part_index'}",
                             f"part {part} does not exist: the candidate has {len(texts)} text part(s)")
            encoded = texts[part].encode("utf-8")
            start, end = segment.start_index or 0, segment.end_index or 0
            r.span(start, end, len(encoded), f"{swhere}.segment.{'startIndex' if camel else 'start_index'}",
                   f"text part {part} (UTF-8 bytes)")
            try:  # UTF-8 byte offsets, as the API documents them
                lo = len(encoded[:start].decode("utf-8"))
                hi = lo + len(encoded[start:end].decode("utf-8"))
            except UnicodeDecodeError:
                raise r.fail(f"{swhere}.segment", f"bytes [{start}, {end}) cut a character of the answer in two",
                             "give segment offsets as UTF-8 byte offsets, as the Gemini API does") from None
            claim = texts[part][lo:hi]
            if segment.text is not None and " ".join(segment.text.split()) != " ".join(claim.split()):
                raise r.fail(f"{swhere}.segment.text", f"{short(segment.text)} is not the text at UTF-8 bytes "
                             f"[{start}, {end}) of the answer ({short(claim)})",
                             "keep the segment's offsets and text as the API returned them")
            indices = support.grounding_chunk_indices or []
            scores = support.confidence_scores or []
            for n, chunk_index in enumerate(indices):
                cwhere = f"{swhere}.{'groundingChunkIndices' if camel else 'grounding_chunk_indices'}[{n}]"
                if not 0 <= chunk_index < len(chunks):
                    raise r.fail(cwhere, f"chunk {chunk_index} does not exist: {mwhere}.{chunks_name} has "
                                 f"{len(chunks)}")
                chunk = chunks[chunk_index]
                quote, pages = None, None
                if chunk.retrieved_context is not None:
                    ctx = chunk.retrieved_context
                    rag = ctx.rag_chunk  # Vertex AI RAG: the chunk's own text and page span
                    quote = ctx.text or (rag.text if rag is not None else None) or None
                    source = cited_source(None, ctx.uri, ctx.title, ctx.document_name)
                    if ctx.page_number:
                        pages = (ctx.page_number, ctx.page_number)
                    elif rag is not None and rag.page_span is not None and rag.page_span.first_page:
                        first = rag.page_span.first_page
                        pages = (first, max(first, rag.page_span.last_page or first))
                elif chunk.web is not None:
                    source = cited_source(None, chunk.web.uri, chunk.web.title, chunk.web.domain)
                else:
                    source = cited_source(None)
                out.append(VendorCitation(cwhere, ResponseFormat.GEMINI, "grounding_support", claim.strip(),
                                          (offsets[part] + lo, offsets[part] + hi), quote, source, pages=pages,
                                          confidence=scores[n] if n < len(scores) else None))
    return parts.text, out


def detect(data: dict[str, Any]) -> bool:
    """A Gemini response: a `candidates` list."""
    return isinstance(data.get("candidates"), list)


FORMAT = VendorFormat(ResponseFormat.GEMINI, parse, detect, sdk="google.genai", extra="gemini",
                      distribution="google-genai")
