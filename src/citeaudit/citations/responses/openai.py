"""OpenAI: the Responses API and Chat Completions.

`openai-responses`: `output` messages whose `output_text` parts carry `annotations` (`url_citation`
and `container_file_citation` over a span of the text, `file_citation` at a point: its `index` is
a position in the answer text, not a span, so its claim is the sentence that leads up to it;
`file_path` is a generated file, not a citation). `openai-chat`: `choices[].message.annotations`,
each `url_citation` nested under its own key. A span that is only a citation marker (a Markdown
link, the URL) carries the sentence before it as its claim.
"""

from __future__ import annotations

import re
from typing import Any

from citeaudit.citations.responses.checks import Reader, kind, typed
from citeaudit.citations.responses.parsed import (
    AnswerParts,
    VendorCitation,
    VendorFormat,
    cited_source,
    sentence_before,
    span_claim,
)
from citeaudit.table import ResponseFormat


def _point_claims(text: str, points: list[int]) -> dict[int, tuple[int, int]]:
    """Claim spans of citations that sit at a point of the text: the sentence up to the point,
    not before the previous distinct point."""
    spans, floor = {}, 0
    for point in sorted(set(points)):
        lo = sentence_before(text, point, floor)
        spans[point] = (lo, point)
        floor = point
    return spans


def _openai_text(text: str, annotations: list, base: str, offset: int, vendor: ResponseFormat,
                 r: Reader) -> list[VendorCitation]:
    """The citations of one text: `annotations` are SDK objects, or (where, SDK object) pairs."""
    out = []
    points = [a.index for a in annotations if getattr(a, "type", "") == "file_citation"]
    for n, a in enumerate(annotations):
        if a.type == "file_citation" and not 0 <= a.index <= len(text):
            r.span(a.index, a.index, len(text), f"{base}[{n}].index")
    claims = _point_claims(text, points)
    for n, a in enumerate(annotations):
        where = f"{base}[{n}]"
        kind = a.type
        if kind == "url_citation":
            start, end = r.span(a.start_index, a.end_index, len(text), f"{where}.start_index")
            lo, claim_end, hi = span_claim(text, start, end, (a.url,))
            source = cited_source(None, a.url, a.title)
        elif kind == "container_file_citation":
            start, end = r.span(a.start_index, a.end_index, len(text), f"{where}.start_index")
            lo, claim_end, hi = span_claim(text, start, end)
            source = cited_source(None, a.filename, a.file_id)
        elif kind == "file_citation":
            lo, hi = claims[a.index]
            claim_end = hi
            source = cited_source(None, a.filename, a.file_id)
        else:
            continue  # file_path: a generated file, not a citation
        claim = text[lo:claim_end].strip()
        if not claim:
            raise r.fail(where, "the citation is attached to no answer text",
                         "give the index or span of the text the citation supports")
        out.append(VendorCitation(where, vendor, kind, claim, (offset + lo, offset + hi), None, source))
    return out


def parse_responses(data: dict[str, Any], r: Reader) -> tuple[str, list[VendorCitation]]:
    from openai.types.responses import ResponseOutputText
    from openai.types.responses import response_output_text as ot

    types = {"file_citation": ot.AnnotationFileCitation, "url_citation": ot.AnnotationURLCitation,
             "container_file_citation": ot.AnnotationContainerFileCitation, "file_path": ot.AnnotationFilePath}
    parts, out = AnswerParts(), []
    for i, raw in enumerate(r.array(data.get("output"), "output")):
        item = r.obj(raw, f"output[{i}]")
        if item.get("type") != "message":
            continue  # reasoning, tool calls, web search calls
        for j, raw_part in enumerate(r.array(item.get("content"), f"output[{i}].content")):
            where = f"output[{i}].content[{j}]"
            part = r.obj(raw_part, where)
            if part.get("type") != "output_text":
                continue  # refusals
            parsed = r.validate(ResponseOutputText, {**part, "annotations": []}, where)
            if not isinstance(part.get("annotations"), list):
                raise r.fail(f"{where}.annotations", "missing: citeaudit needs this field" if "annotations" not
                             in part else f"expected a list, found {kind(part['annotations'])}")
            annotations = [a for _, a in typed(r, part["annotations"], f"{where}.annotations", types)]
            offset = parts.add(parsed.text)
            out += _openai_text(parsed.text, annotations, f"{where}.annotations", offset,
                                ResponseFormat.OPENAI_RESPONSES, r)
    return parts.text, out


def parse_chat(data: dict[str, Any], r: Reader) -> tuple[str, list[VendorCitation]]:
    from openai.types.chat import ChatCompletionMessage

    parts, out = AnswerParts(), []
    for i, raw in enumerate(r.array(data.get("choices"), "choices")):
        where = f"choices[{i}].message"
        choice = r.obj(raw, f"choices[{i}]")
        body = dict(r.obj(choice.get("message"), where))
        if isinstance(body.get("annotations"), list):  # a title is not needed: an older save may lack it
            body["annotations"] = [{**a, "url_citation": {"title": "", **a["url_citation"]}}
                                   if isinstance(a, dict) and isinstance(a.get("url_citation"), dict) else a
                                   for a in body["annotations"]]
        message = r.validate(ChatCompletionMessage, body, where)
        if message.content is None:
            continue
        offset = parts.add(message.content)
        # Chat Completions nests each url_citation under its own key; the Responses shape is flat
        flat = [_FlatURL(a.url_citation) for a in message.annotations or []]
        out += _openai_text(message.content, flat, f"{where}.annotations", offset, ResponseFormat.OPENAI_CHAT, r)
    for c in out:
        object.__setattr__(c, "id", re.sub(r"(annotations\[\d+\])$", r"\1.url_citation", c.id))
    return parts.text, out


class _FlatURL:
    type = "url_citation"

    def __init__(self, nested: Any):
        self.url, self.title = nested.url, nested.title
        self.start_index, self.end_index = nested.start_index, nested.end_index


def detect_responses(data: dict[str, Any]) -> bool:
    """A Responses API response: an `output` list."""
    return isinstance(data.get("output"), list)


def detect_chat(data: dict[str, Any]) -> bool:
    """A Chat Completions response: a `choices` list."""
    return isinstance(data.get("choices"), list)


RESPONSES_FORMAT = VendorFormat(ResponseFormat.OPENAI_RESPONSES, parse_responses, detect_responses)
CHAT_FORMAT = VendorFormat(ResponseFormat.OPENAI_CHAT, parse_chat, detect_chat)
