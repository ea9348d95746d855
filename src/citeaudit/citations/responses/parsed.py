"""Saved LLM API responses read into vendor-neutral records, whichever vendor wrote them.

Every citation becomes a `VendorCitation`: the answer text it is attached to (`claim`, as the
answer wrote it), the vendor's quote if any, what it names as its source (`CitedSource`) and
the vendor's offsets into that source. A vendor's shape is a `VendorFormat` registered by name
(one module per vendor in this package); `parse_response` picks it by name or by the JSON's shape
(`detect_response_format`) and `load_response` reads a saved file. Bad input raises `InputError`
naming the file, the JSON path of the field and the fix; nothing else escapes `parse_response`.

Each part citeaudit reads is validated with the vendor SDK's own Pydantic type where one exists
(the optional extras `anthropic`, `gemini`, `cohere`, `langchain`; `openai` is a dependency).
Only the parts used are validated, so a response saved by an older or newer SDK loads as long as
those parts have the fields citeaudit needs: unknown fields are ignored (dropped first where the
SDK forbids them, as google-genai does), a missing one is named.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from citeaudit import registry, strictjson
from citeaudit.citations.responses.checks import Reader, kind
from citeaudit.errors import InputError
from citeaudit.sources.reading import MAX_TEXT_BYTES, read_bounded

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
    vendor: str  # its format's name (a `ResponseFormat` for citeaudit's own)
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

    format: str
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

class AnswerParts:
    """The answer assembled from its text parts, each at a known offset."""

    def __init__(self) -> None:
        self.text = ""

    def add(self, text: str, separator: str = "\n\n") -> int:
        if self.text and separator:
            self.text += separator
        offset = len(self.text)
        self.text += text
        return offset


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


def span_claim(text: str, start: int, end: int, markers: tuple[str, ...] = ()) -> tuple[int, int, int]:
    """The claim a span of the answer carries, as `(lo, claim_end, covered_end)`: the span itself,
    or, when the span is only a citation marker (a Markdown link, the URL), the sentence that leads
    up to it (the claim stops before the marker; the marker is covered too)."""
    body = text[start:end]
    if body.strip() and not _MARKDOWN_LINK.match(body) and not any(m and m in body for m in markers):
        return start, end, end
    lo = sentence_before(text, start)
    return (lo, start, end) if text[lo:start].strip() else (start, end, end)


def cited_source(index: int | None, *names: object) -> CitedSource:
    """A `CitedSource` of the names given that are non-empty strings, each once, in order."""
    kept = tuple(dict.fromkeys(n.strip() for n in names if isinstance(n, str) and n.strip()))
    return CitedSource(index, kept)


# ---- formats, detection, loading ----------------------------------------------------------------

@dataclass(frozen=True)
class VendorFormat:
    """One vendor's response shape, registered by its name (`register_vendor_format`; another
    package's through the entry-point group `citeaudit.vendor_formats`, `citeaudit.registry`).

    `parse(data, reader)` reads a response's JSON object into the answer text and its citations
    (`reader` checks shapes and validates with the SDK's types, naming the file and JSON path of
    anything wrong); `detect(data)` recognizes the shape; `sdk` is the module whose types validate
    it, `extra` the pip extra that installs that module (None: a dependency of citeaudit), and
    `distribution` the module's name on PyPI when it differs.
    """

    name: str  # a `ResponseFormat` for citeaudit's own
    parse: Callable[[dict[str, Any], Reader], tuple[str, list[VendorCitation]]]
    detect: Callable[[dict[str, Any]], bool]
    sdk: str = "openai"
    extra: str | None = None
    distribution: str | None = None


# name -> format, in the order shapes are detected (citeaudit's own, then plugins')
VENDOR_FORMATS: registry.Registry[VendorFormat] = registry.VENDOR_FORMATS


def register_vendor_format(vendor: VendorFormat) -> VendorFormat:
    """Add a vendor format to `VENDOR_FORMATS` (detected after those before it); `ValueError` when
    its name is taken."""
    return VENDOR_FORMATS.register(vendor.name, vendor)


def detect_response_format(data: object) -> str | None:
    """The format a response's JSON has, by its shape (the first registered format that recognizes
    it); None when it is none of them.

    >>> detect_response_format({"type": "message", "content": []}), detect_response_format({"candidates": []})
    (<ResponseFormat.ANTHROPIC: 'anthropic'>, <ResponseFormat.GEMINI: 'gemini'>)
    >>> detect_response_format(["not", "a", "response"]) is None
    True
    """
    if not isinstance(data, dict):
        return None
    return next((vendor.name for vendor in VENDOR_FORMATS.values() if vendor.detect(data)), None)


def read_response(path: str | Path) -> object:
    """The parsed JSON of a saved response, or `InputError` naming the file and the fix."""
    path = Path(path)
    try:
        raw = read_bounded(path, MAX_TEXT_BYTES, "response file", text=True)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the response file ({exc.strerror or exc}). Check the path.") from exc
    try:
        return strictjson.loads(raw.decode("utf-8"))
    except strictjson.RepeatedKeyError as exc:
        raise InputError(f"{path}: {exc}. Fix: give each field once.") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 (bad byte at offset {exc.start}). Save the response as UTF-8.") from None
    except strictjson.TooDeepError:
        raise InputError(f"{path}: JSON nested too deeply to read.") from None
    except ValueError as exc:
        raise InputError(f"{path}: not JSON ({exc}). Save the API response body as it came back, as JSON.") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply to read.") from None


def _sdk(vendor: VendorFormat) -> str | None:
    """Import the vendor SDK (`InputError` naming the extra when it is missing); its name and version."""
    try:
        imported = importlib.import_module(vendor.sdk)
    except ImportError:
        if vendor.extra is None:
            raise  # a dependency of citeaudit: a broken installation, not a missing extra
        raise InputError(f"reading a {vendor.name} response needs the {vendor.name} SDK's types, which are not "
                         f"installed. Fix: pip install 'citeaudit[{vendor.extra}]' (or 'citeaudit[vendors]' for "
                         "every vendor).") from None
    dist = vendor.distribution or vendor.sdk
    try:
        return f"{dist} {version(dist)}"
    except PackageNotFoundError:
        return getattr(imported, "__version__", None)


def parse_response(data: object, format: str | None = None, name: str = "response") -> ParsedResponse:
    """A response's JSON (parsed) as a `ParsedResponse`; `format` as named, else by its shape.

    Raises `InputError` (naming `name`, the JSON path and the fix) for anything else: an unknown
    shape, a schema violation, offsets out of range, a missing SDK extra.
    """
    if format is None:
        detected = detect_response_format(data)
        if detected is None:
            raise InputError(f"{name}: not a response of a known shape ({kind(data)}"
                             + (f" with keys {', '.join(sorted(map(str, data))[:8])}" if isinstance(data, dict) else "")
                             + "). Fix: give the saved response body of one of " + ", ".join(VENDOR_FORMATS)
                             + ", or name its format with --response-format.")
        chosen = VENDOR_FORMATS[detected]
    elif str(format) in VENDOR_FORMATS:
        chosen = VENDOR_FORMATS[str(format)]
    else:
        raise InputError(f"unknown response format {format!r}: use one of {', '.join(VENDOR_FORMATS)}")
    reader = Reader(name, chosen.name)
    if not isinstance(data, dict):
        raise reader.fail("(top level)", f"expected a response object, found {kind(data)}")
    sdk = _sdk(chosen)
    try:
        answer, citations = chosen.parse(data, reader)
    except RecursionError:
        raise reader.fail("(top level)", "nested too deeply to validate") from None
    for citation in citations:
        if not citation.claim.strip():
            raise reader.fail(citation.id, "the citation is attached to no answer text (an empty span)",
                              "keep the offsets of the answer text each citation supports")
    return ParsedResponse(chosen.name, answer, tuple(citations), name, sdk)


def load_response(path: str | Path, format: str | None = None) -> ParsedResponse:
    """`parse_response` of a saved response file."""
    return parse_response(read_response(path), format, str(path))
