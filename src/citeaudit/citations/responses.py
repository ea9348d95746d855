"""Saved LLM API responses with the vendor's own citations, read into vendor-neutral records.

Six shapes, chosen by what the JSON is or named (`ResponseFormat`):

  anthropic         Messages API: `content` text blocks with `citations` (`char_location`,
                    `page_location`, `content_block_location`, `search_result_location`,
                    `web_search_result_location`)
  openai-responses  Responses API: `output` messages, `output_text` parts with `annotations`
                    (`url_citation`, `file_citation`, `container_file_citation`)
  openai-chat       Chat Completions: `choices[].message.annotations` (`url_citation`)
  gemini            `candidates[].groundingMetadata`: `groundingSupports` (answer segments) over
                    `groundingChunks` (web or `retrievedContext`), REST camelCase or SDK snake_case
  cohere            chat v2 (`message.citations[].sources`) or v1 (`citations[].document_ids` and
                    `documents`)
  langchain         a RAG result: an answer (`result`, `answer`, `output`, `output_text`) with
                    `source_documents` / `context` / `input_documents` (LangChain `Document`s) or a
                    `response` with `source_nodes` (LlamaIndex)

Each part citeaudit reads is validated with the vendor SDK's own Pydantic type where one exists
(the optional extras `anthropic`, `gemini`, `cohere`, `langchain`; `openai` is a dependency).
Only the parts used are validated, so a response saved by an older or newer SDK loads as long as
those parts have the fields citeaudit needs: unknown fields are ignored (dropped first where the
SDK forbids them, as google-genai does), a missing one is named. Vendor quirks: Gemini's segment
offsets are UTF-8 byte offsets and proto3 omits zero-valued fields (a missing `startIndex` or
`partIndex` is 0); OpenAI's `file_citation.index` is a position in the answer text, not a span;
Anthropic's character and block ranges are 0-based with an exclusive end, its page ranges 1-based
with an exclusive end; a LangChain `page` is 0-based (PyPDFLoader), a LlamaIndex `page_label`
1-based.

Every citation becomes a `VendorCitation`: the answer text it is attached to (`claim`, as the
answer wrote it), the vendor's quote if any, what it names as its source (`CitedSource`) and
the vendor's offsets into that source. Bad input raises `InputError` naming the file, the JSON
path of the field and the fix; nothing else escapes `parse_response`.
"""

from __future__ import annotations

import copy
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from citeaudit import strictjson
from citeaudit.errors import InputError
from citeaudit.sources.reading import MAX_TEXT_BYTES, read_bounded
from citeaudit.table import ResponseFormat

# the optional extra that installs each vendor's SDK (pyproject [project.optional-dependencies])
EXTRAS = {
    ResponseFormat.ANTHROPIC: ("anthropic", "anthropic"),
    ResponseFormat.GEMINI: ("google.genai", "gemini"),
    ResponseFormat.COHERE: ("cohere", "cohere"),
    ResponseFormat.LANGCHAIN: ("langchain_core", "langchain"),
}
_DROP_ROUNDS = 100  # unknown fields dropped, at most this many rounds of validation
_SENTENCE_END = re.compile(r"[.!?。][\"'”’)\]]*(?=\s)|\n")
_MARKDOWN_LINK = re.compile(r"^\s*\(?\s*\[[^\]]*\]\([^)]*\)\s*\)?\s*$")


@dataclass(frozen=True)
class CitedSource:
    """What a citation names as its source; any part may be missing.

    `index` is a position among the request's documents (Anthropic `document_index`, a Cohere
    `doc:N`) when the vendor gives one; `names` are the file names, titles, URLs and URIs the
    response gives for it, most specific first.
    """

    index: int | None = None
    names: tuple[str, ...] = ()

    def __str__(self) -> str:
        parts = [repr(n) for n in self.names[:2]]
        if self.index is not None:
            parts.insert(0, f"document {self.index}")
        return ", ".join(parts) or "no source named"


@dataclass(frozen=True)
class VendorCitation:
    """One citation of a vendor response, vendor-neutral.

    `id` is the citation's JSON path in the response (`content[1].citations[0]`). `claim` is the
    answer text the citation is attached to and `claim_span` its `[start, end)` in
    `ParsedResponse.answer`. The vendor's location in the source, when given: `chars` `[start,
    end)` (0-based characters), `pages` `(first, last)` (1-based, inclusive), `blocks` `(first,
    last)` (0-based, inclusive).
    """

    id: str
    vendor: ResponseFormat
    type: str  # the vendor's word for the citation: char_location, url_citation, grounding_support, ...
    claim: str
    claim_span: tuple[int, int]
    quote: str | None
    source: CitedSource
    chars: tuple[int, int] | None = None
    pages: tuple[int, int] | None = None
    blocks: tuple[int, int] | None = None
    confidence: float | None = None

    @property
    def location(self) -> str:
        """The vendor's location in the source in words: `chars 120-180`, `page 3`, `pages 3-4`."""
        if self.chars is not None:
            return f"chars {self.chars[0]}-{self.chars[1]}"
        if self.pages is not None:
            first, last = self.pages
            return f"page {first}" if first == last else f"pages {first}-{last}"
        if self.blocks is not None:
            first, last = self.blocks
            return f"block {first}" if first == last else f"blocks {first}-{last}"
        return ""


@dataclass(frozen=True)
class ParsedResponse:
    """A response's answer text (its text parts joined) and its citations, in response order."""

    format: ResponseFormat
    answer: str
    citations: tuple[VendorCitation, ...]
    name: str = "response"
    sdk: str | None = field(default=None, compare=False)  # "anthropic 2.10.0": the types that validated it

    def uncited(self) -> list[str]:
        """The answer's sentences (or pieces of them) outside every citation's claim span that
        hold a word: what the answer asserts without a citation."""
        covered = sorted(c.claim_span for c in self.citations)
        pieces, pos = [], 0
        for start, end in [*covered, (len(self.answer), len(self.answer))]:
            if start > pos:
                pieces.append(self.answer[pos:start])
            pos = max(pos, end)
        out = []
        for piece in pieces:
            for sentence in re.split(r"(?<=[.!?])\s+|\n+", piece):
                text = " ".join(sentence.split())
                # a lead-in that ends in a comma or colon ("On the sync protocol,") asserts nothing itself
                if re.search(r"[^\W\d_]{2,}", text) and not re.search(r"[,:;—-]$", text):
                    out.append(text)
        return out


class _Parts:
    """The answer assembled from its text parts, each at a known offset."""

    def __init__(self) -> None:
        self.text = ""

    def add(self, text: str, separator: str = "\n\n") -> int:
        if self.text and separator:
            self.text += separator
        offset = len(self.text)
        self.text += text
        return offset


# ---- reading and shape checks ----------------------------------------------------------------

def read_response(path: str | Path) -> object:
    """The parsed JSON of a saved response, or `InputError` naming the file and the fix."""
    path = Path(path)
    try:
        raw = read_bounded(path, MAX_TEXT_BYTES, "response file")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the response file ({exc.strerror or exc}). Check the path.") from exc
    try:
        return strictjson.loads(raw.decode("utf-8"))
    except strictjson.RepeatedKeyError as exc:
        raise InputError(f"{path}: {exc}. Fix: give each field once.") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 (bad byte at offset {exc.start}). Save the response as UTF-8.") from None
    except ValueError as exc:
        raise InputError(f"{path}: not JSON ({exc}). Save the API response body as it came back, as JSON.") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply to read.") from None


class _Reader:
    """Shape checks that name the file and the JSON path of what is wrong."""

    def __init__(self, name: str, vendor: ResponseFormat):
        self.name, self.vendor = name, vendor

    def fail(self, where: str, problem: str, fix: str = "") -> InputError:
        fix = fix or f"save the {self.vendor} response body exactly as the API returned it"
        return InputError(f"{self.name}: {where}: {problem}. Fix: {fix}.")

    def obj(self, value: object, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, found {_kind(value)}")
        return value

    def array(self, value: object, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list, found {_kind(value)}")
        return value

    def span(self, start: int, end: int, length: int | None, where: str,
             what: str = "the answer text") -> tuple[int, int]:
        """`(start, end)` when `0 <= start <= end <= length` (`length` None: a source's, unknown here)."""
        if not 0 <= start <= end or (length is not None and end > length):
            size = f": {what} has {length:,} characters" if length is not None else ""
            raise self.fail(where, f"[{start}, {end}) is out of range{size}",
                            "give offsets inside the text they index (0 <= start <= end <= length)")
        return start, end

    def validate(self, model: Any, data: object, where: str) -> Any:
        """`data` validated by the SDK's `model` (a type or a `TypeAdapter`); unknown fields are
        dropped and validation retried (SDKs that forbid them would refuse a newer response)."""
        validate: Callable[[object], Any] = getattr(model, "model_validate", None) or model.validate_python
        data = copy.deepcopy(data)
        for _ in range(_DROP_ROUNDS):
            try:
                return validate(data)
            except ValidationError as exc:
                errors = exc.errors()
                extra = [e["loc"] for e in errors if e["type"] == "extra_forbidden"]
                if not extra or not all(_drop(data, loc) for loc in extra):
                    raise self._schema_error(where, errors, model) from None
            except (TypeError, ValueError, AttributeError) as exc:  # an SDK validator that raised instead
                raise self.fail(where, f"rejected by the {self.vendor} SDK's types ({type(exc).__name__}: {exc})") \
                    from None
        raise self.fail(where, "too many unknown fields")

    def _schema_error(self, where: str, errors: list[Any], model: Any) -> InputError:
        first = errors[0]
        # a union member's class name or tag in the location is no field of the response
        loc = _path(where, [p for p in first["loc"]
                            if not _is_tag(p, model) and not (isinstance(p, str) and p[:1].isupper())])
        if first["type"] == "missing":
            problem = "missing: citeaudit needs this field"
        else:
            problem = f"{first['msg']} (found {_short(first.get('input'))})"
        more = f" ({len(errors) - 1} more problem(s) in this part)" if len(errors) > 1 else ""
        name = getattr(model, "__name__", None) or type(model).__name__
        return InputError(f"{self.name}: {loc}: {problem}{more}; checked with the {self.vendor} SDK's {name}. "
                          f"Fix: save the {self.vendor} response body exactly as the API returned it.")


def _is_tag(part: object, model: Any) -> bool:
    """A discriminated union's tag in an error location (`char_location`), not a field name."""
    return (isinstance(part, str) and part in {"char_location", "page_location", "content_block_location",
                                              "search_result_location", "web_search_result_location",
                                              "file_citation", "url_citation", "container_file_citation",
                                              "file_path", "function-after[_validate()]"}) or \
        (isinstance(part, str) and part.startswith(("function-", "tagged-union[", "union[")))


def _drop(data: object, loc: tuple) -> bool:
    """Remove the field at `loc` from nested dicts and lists; False when it is not there."""
    node: Any = data
    for part in loc[:-1]:
        inside_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if (isinstance(node, dict) and part in node) or inside_list:
            node = node[part]
        elif isinstance(node, dict | list):
            continue  # a union's branch name in the location
        else:
            return False
    if isinstance(node, dict) and loc and loc[-1] in node:
        del node[loc[-1]]
        return True
    return False


def _path(base: str, parts: list) -> str:
    out = base
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _sdk(vendor: ResponseFormat) -> str | None:
    """Import the vendor SDK (`InputError` naming the extra when it is missing); its name and version."""
    if vendor not in EXTRAS:
        import openai

        return f"openai {openai.__version__}"
    module, extra = EXTRAS[vendor]
    try:
        imported = importlib.import_module(module)
    except ImportError:
        raise InputError(f"reading a {vendor} response needs the {vendor} SDK's types, which are not installed. "
                         f"Fix: pip install 'citeaudit[{extra}]' (or 'citeaudit[vendors]' for every vendor).") from None
    from importlib.metadata import PackageNotFoundError, version

    dist = {"google.genai": "google-genai", "langchain_core": "langchain-core"}.get(module, module)
    try:
        return f"{dist} {version(dist)}"
    except PackageNotFoundError:
        return getattr(imported, "__version__", None)


# ---- claims -------------------------------------------------------------------------------------

def sentence_before(text: str, end: int, floor: int = 0) -> int:
    """Where the claim that ends at `end` starts: after the last sentence end before it (or the
    previous citation point, `floor`).

    >>> text = "JWTs are compact. They use JSON [1]."
    >>> text[sentence_before(text, 31):31]
    'They use JSON'
    """
    body = text[floor:end].rstrip()
    cut = 0
    for match in _SENTENCE_END.finditer(body):
        if match.end() < len(body):
            cut = match.end()
    start = floor + cut
    while start < end and text[start].isspace():
        start += 1
    return start


def _span_claim(text: str, start: int, end: int, markers: tuple[str, ...] = ()) -> tuple[int, int, int]:
    """The claim a span of the answer carries, as `(lo, claim_end, covered_end)`: the span itself,
    or, when the span is only a citation marker (a Markdown link, the URL), the sentence that leads
    up to it (the claim stops before the marker; the marker is covered too)."""
    body = text[start:end]
    if body.strip() and not _MARKDOWN_LINK.match(body) and not any(m and m in body for m in markers):
        return start, end, end
    lo = sentence_before(text, start)
    return (lo, start, end) if text[lo:start].strip() else (start, end, end)


def _source(index: int | None, *names: object) -> CitedSource:
    kept = tuple(dict.fromkeys(n.strip() for n in names if isinstance(n, str) and n.strip()))
    return CitedSource(index, kept)


# ---- anthropic ----------------------------------------------------------------------------------

# fields an SDK type requires that citeaudit does not read: a response saved by an SDK version
# without them (OpenAI's file_citation had no filename at first) still loads
_NOT_NEEDED: dict[str, dict[str, object]] = {
    "file_citation": {"filename": ""},
    "url_citation": {"title": ""},
    "container_file_citation": {"filename": "", "container_id": "", "file_id": ""},
    "web_search_result_location": {"encrypted_index": ""},
}


def _typed(r: _Reader, items: object, where: str, types: dict[str, Any], skip: tuple[str, ...] = ()) -> list[Any]:
    """Each item of a list validated by the SDK type its `type` names (the SDKs' unions are not
    discriminated for Pydantic, which would report every member's errors); `skip` types are left out."""
    out = []
    for n, raw in enumerate(r.array(items, where) if items is not None else []):
        item = r.obj(raw, f"{where}[{n}]")
        kind = item.get("type")
        if kind in skip:
            continue
        if not isinstance(kind, str) or kind not in types:
            raise r.fail(f"{where}[{n}].type", f"{_short(kind)} is not a citation type citeaudit knows "
                         f"({', '.join(types)})", "save the response body as the API returned it; a new citation "
                         "type needs a newer citeaudit")
        filled = {**_NOT_NEEDED.get(kind, {}), **item}
        out.append((f"{where}[{n}]", r.validate(types[kind], filled, f"{where}[{n}]")))
    return out


def _anthropic(data: dict, r: _Reader) -> tuple[str, list[VendorCitation]]:
    from anthropic import types as at

    types = {"char_location": at.CitationCharLocation, "page_location": at.CitationPageLocation,
             "content_block_location": at.CitationContentBlockLocation,
             "search_result_location": at.CitationsSearchResultLocation,
             "web_search_result_location": at.CitationsWebSearchResultLocation}
    parts, out = _Parts(), []
    content = r.array(data.get("content"), "content")
    for b, raw in enumerate(content):
        where = f"content[{b}]"
        block = r.obj(raw, where)
        if block.get("type") != "text":
            continue  # tool use, thinking, server tool results: no answer text
        parsed = r.validate(at.TextBlock, {**block, "citations": None}, where)
        citations = _typed(r, block.get("citations"), f"{where}.citations", types)
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
                source = _source(citation.document_index, citation.document_title, citation.file_id)
            elif kind == "page_location":
                first, end = citation.start_page_number, citation.end_page_number
                if first < 1 or end < first:
                    raise r.fail(f"{cwhere}.start_page_number", f"page range {first}-{end} is not a page range "
                                 "(1-based, end exclusive)", "give pages as the API does: 1-based, end exclusive")
                pages = (first, max(first, end - 1))
                source = _source(citation.document_index, citation.document_title, citation.file_id)
            elif kind in ("content_block_location", "search_result_location"):
                first, end = citation.start_block_index, citation.end_block_index
                if first < 0 or end < first:
                    raise r.fail(f"{cwhere}.start_block_index", f"block range {first}-{end} is not a block range "
                                 "(0-based, end exclusive)", "give block indices as the API does")
                blocks = (first, max(first, end - 1))
                if kind == "search_result_location":
                    # search_result_index counts search results, not the request's documents: no index
                    source = _source(None, citation.source, citation.title)
                else:
                    source = _source(citation.document_index, citation.document_title, citation.file_id)
            else:  # web_search_result_location
                source = _source(None, citation.url, citation.title)
            out.append(VendorCitation(cwhere, ResponseFormat.ANTHROPIC, kind, parsed.text.strip(), span,
                                      citation.cited_text, source, chars, pages, blocks))
    return parts.text, out


# ---- openai -------------------------------------------------------------------------------------

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
                 r: _Reader) -> list[VendorCitation]:
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
            lo, claim_end, hi = _span_claim(text, start, end, (a.url,))
            source = _source(None, a.url, a.title)
        elif kind == "container_file_citation":
            start, end = r.span(a.start_index, a.end_index, len(text), f"{where}.start_index")
            lo, claim_end, hi = _span_claim(text, start, end)
            source = _source(None, a.filename, a.file_id)
        elif kind == "file_citation":
            lo, hi = claims[a.index]
            claim_end = hi
            source = _source(None, a.filename, a.file_id)
        else:
            continue  # file_path: a generated file, not a citation
        claim = text[lo:claim_end].strip()
        if not claim:
            raise r.fail(where, "the citation is attached to no answer text",
                         "give the index or span of the text the citation supports")
        out.append(VendorCitation(where, vendor, kind, claim, (offset + lo, offset + hi), None, source))
    return out


def _openai_responses(data: dict, r: _Reader) -> tuple[str, list[VendorCitation]]:
    from openai.types.responses import ResponseOutputText
    from openai.types.responses import response_output_text as ot

    types = {"file_citation": ot.AnnotationFileCitation, "url_citation": ot.AnnotationURLCitation,
             "container_file_citation": ot.AnnotationContainerFileCitation, "file_path": ot.AnnotationFilePath}
    parts, out = _Parts(), []
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
                             in part else f"expected a list, found {_kind(part['annotations'])}")
            annotations = [a for _, a in _typed(r, part["annotations"], f"{where}.annotations", types)]
            offset = parts.add(parsed.text)
            out += _openai_text(parsed.text, annotations, f"{where}.annotations", offset,
                                ResponseFormat.OPENAI_RESPONSES, r)
    return parts.text, out


def _openai_chat(data: dict, r: _Reader) -> tuple[str, list[VendorCitation]]:
    from openai.types.chat import ChatCompletionMessage

    parts, out = _Parts(), []
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


# ---- gemini -------------------------------------------------------------------------------------

def _gemini(data: dict, r: _Reader) -> tuple[str, list[VendorCitation]]:
    from google.genai.types import Candidate

    parts, out = _Parts(), []
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
                raise r.fail(f"{swhere}.segment.text", f"{_short(segment.text)} is not the text at UTF-8 bytes "
                             f"[{start}, {end}) of the answer ({_short(claim)})",
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
                    source = _source(None, ctx.uri, ctx.title, ctx.document_name)
                    if ctx.page_number:
                        pages = (ctx.page_number, ctx.page_number)
                    elif rag is not None and rag.page_span is not None and rag.page_span.first_page:
                        first = rag.page_span.first_page
                        pages = (first, max(first, rag.page_span.last_page or first))
                elif chunk.web is not None:
                    source = _source(None, chunk.web.uri, chunk.web.title, chunk.web.domain)
                else:
                    source = _source(None)
                out.append(VendorCitation(cwhere, ResponseFormat.GEMINI, "grounding_support", claim.strip(),
                                          (offsets[part] + lo, offsets[part] + hi), quote, source, pages=pages,
                                          confidence=scores[n] if n < len(scores) else None))
    return parts.text, out


# ---- cohere -------------------------------------------------------------------------------------

_COHERE_INDEX = re.compile(r"^doc[:_](\d{1,6})(?::\d+)?$")


def _cohere_source(doc_id: str | None, document: dict | None, fallback: int | None) -> CitedSource:
    document = document or {}
    found = _COHERE_INDEX.match(doc_id or "")
    index = int(found.group(1)) if found else fallback
    names = [document.get(k) for k in ("url", "source", "file_name", "filename", "title")]
    return _source(index, *names, document.get("id") if document.get("id") != doc_id else None)


def _cohere_quote(document: dict | None) -> str | None:
    for key in ("snippet", "text", "content"):
        value = (document or {}).get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _cohere(data: dict, r: _Reader) -> tuple[str, list[VendorCitation]]:
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


def _cohere_v2(data: dict, r: _Reader) -> tuple[str, list[VendorCitation]]:
    from cohere.types import AssistantMessageResponse

    message = r.validate(AssistantMessageResponse, data["message"], "message")
    parts, texts, offsets = _Parts(), [], []
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


# ---- langchain / llamaindex ---------------------------------------------------------------------

class _LlamaNode(BaseModel):
    """A LlamaIndex node as `Response.source_nodes[].node` dumps it (the fields citeaudit reads;
    llama-index-core is not a dependency)."""

    model_config = ConfigDict(extra="allow")
    text: str | None = None
    text_resource: dict[str, Any] | None = None  # llama-index-core >= 0.12 keeps the text here
    metadata: dict[str, Any] = {}
    start_char_idx: int | None = None
    end_char_idx: int | None = None


class _LlamaSourceNode(BaseModel):
    model_config = ConfigDict(extra="allow")
    node: _LlamaNode
    score: float | None = None


_ANSWER_KEYS = ("result", "answer", "output", "response", "output_text")
_DOCS_KEYS = ("source_documents", "context", "input_documents", "source_nodes")


def _page(meta: dict[str, Any]) -> tuple[int, int] | None:
    page = meta.get("page")
    if isinstance(page, int) and not isinstance(page, bool) and page >= 0:
        return page + 1, page + 1  # PyPDFLoader numbers pages from 0
    label = meta.get("page_label")
    if isinstance(label, str) and label.isdigit() and int(label) >= 1:
        return int(label), int(label)
    return None


def _langchain(data: dict, r: _Reader) -> tuple[str, list[VendorCitation]]:
    answer_key = next((k for k in _ANSWER_KEYS if isinstance(data.get(k), str)), None)
    docs_key = next((k for k in _DOCS_KEYS if isinstance(data.get(k), list)), None)
    if answer_key is None or docs_key is None:
        missing = "the answer (one of " + ", ".join(_ANSWER_KEYS) + ")" if answer_key is None else \
            "the source documents (one of " + ", ".join(_DOCS_KEYS) + ")"
        raise r.fail("(top level)", f"{missing} is missing or not of the right type")
    answer = data[answer_key]
    if not answer.strip():
        raise r.fail(answer_key, "the answer is empty")
    out = []
    for n, raw in enumerate(data[docs_key]):
        where = f"{docs_key}[{n}]"
        item = r.obj(raw, where)
        chars = None
        if docs_key == "source_nodes":
            node = r.validate(_LlamaSourceNode, item, where).node
            text, meta = node.text, node.metadata
            if text is None and isinstance((node.text_resource or {}).get("text"), str):
                text = node.text_resource["text"]
            if text is None:
                raise r.fail(f"{where}.node.text", "missing: citeaudit needs the node's text")
            if node.start_char_idx is not None and node.end_char_idx is not None:
                chars = r.span(node.start_char_idx, node.end_char_idx, None, f"{where}.node.start_char_idx",
                               "a source")
        else:
            from langchain_core.documents import Document as LCDocument

            if item.get("lc") == 1 and isinstance(item.get("kwargs"), dict):  # langchain's dumpd() form
                item, where = item["kwargs"], f"{where}.kwargs"
            doc = r.validate(LCDocument, {k: v for k, v in item.items() if k != "type"}, where)
            text, meta = doc.page_content, doc.metadata
            start = meta.get("start_index")
            if isinstance(start, int) and not isinstance(start, bool):
                chars = r.span(start, start + len(text), None, f"{where}.metadata.start_index", "a source")
        names = [meta.get(k) for k in ("source", "file_path", "file_name", "url", "title")]
        pages = _page(meta)
        if pages is not None:
            chars = None  # a split page's start_index counts from the top of its page, not of the file
        out.append(VendorCitation(where, ResponseFormat.LANGCHAIN, "source_document", answer.strip(),
                                  (0, len(answer)), text if text.strip() else None, _source(None, *names), chars,
                                  pages))
    return answer, out


# ---- dispatch -----------------------------------------------------------------------------------

_PARSERS: dict[ResponseFormat, Callable[[dict, _Reader], tuple[str, list[VendorCitation]]]] = {
    ResponseFormat.ANTHROPIC: _anthropic,
    ResponseFormat.OPENAI_RESPONSES: _openai_responses,
    ResponseFormat.OPENAI_CHAT: _openai_chat,
    ResponseFormat.GEMINI: _gemini,
    ResponseFormat.COHERE: _cohere,
    ResponseFormat.LANGCHAIN: _langchain,
}


def detect_response_format(data: object) -> ResponseFormat | None:
    """The format a response's JSON has, by its shape; None when it is none of them."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("candidates"), list):
        return ResponseFormat.GEMINI
    if isinstance(data.get("output"), list):
        return ResponseFormat.OPENAI_RESPONSES
    if isinstance(data.get("choices"), list):
        return ResponseFormat.OPENAI_CHAT
    if isinstance(data.get("content"), list) and (data.get("type") == "message" or data.get("role") == "assistant"
                                                  or "stop_reason" in data):
        return ResponseFormat.ANTHROPIC
    message = data.get("message")
    if isinstance(message, dict) and ("citations" in message or isinstance(message.get("content"), list)):
        return ResponseFormat.COHERE
    if isinstance(data.get("text"), str) and ("citations" in data or "documents" in data or "generation_id" in data):
        return ResponseFormat.COHERE
    if any(isinstance(data.get(k), list) for k in _DOCS_KEYS) and any(isinstance(data.get(k), str)
                                                                       for k in _ANSWER_KEYS):
        return ResponseFormat.LANGCHAIN
    return None


def parse_response(data: object, format: str | ResponseFormat | None = None, name: str = "response") -> ParsedResponse:
    """A response's JSON (parsed) as a `ParsedResponse`; `format` as named, else by its shape.

    Raises `InputError` (naming `name`, the JSON path and the fix) for anything else: an unknown
    shape, a schema violation, offsets out of range, a missing SDK extra.
    """
    if format is None:
        chosen = detect_response_format(data)
        if chosen is None:
            raise InputError(f"{name}: not a response of a known shape ({_kind(data)}"
                             + (f" with keys {', '.join(sorted(map(str, data))[:8])}" if isinstance(data, dict) else "")
                             + "). Fix: give the saved response body of one of " + ", ".join(ResponseFormat)
                             + ", or name its format with --response-format.")
    else:
        try:
            chosen = ResponseFormat(format)
        except ValueError:
            raise InputError(f"unknown response format {format!r}: use one of {', '.join(ResponseFormat)}") from None
    reader = _Reader(name, chosen)
    if not isinstance(data, dict):
        raise reader.fail("(top level)", f"expected a response object, found {_kind(data)}")
    sdk = _sdk(chosen)
    try:
        answer, citations = _PARSERS[chosen](data, reader)
    except RecursionError:
        raise reader.fail("(top level)", "nested too deeply to validate") from None
    for citation in citations:
        if not citation.claim.strip():
            raise reader.fail(citation.id, "the citation is attached to no answer text (an empty span)",
                              "keep the offsets of the answer text each citation supports")
    return ParsedResponse(chosen, answer, tuple(citations), name, sdk)


def load_response(path: str | Path, format: str | ResponseFormat | None = None) -> ParsedResponse:
    """`parse_response` of a saved response file."""
    return parse_response(read_response(path), format, str(path))
