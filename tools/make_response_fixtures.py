"""Write the project's own saved vendor responses, `data/responses/*.json`, and their labels.

Each file has the shape its vendor's API returns (Anthropic Messages, OpenAI Responses and Chat
Completions, Gemini REST, Cohere chat v2, a LangChain RetrievalQA result, a LlamaIndex response)
over the project's documents: RFC 7519 (through CITEAUDIT_DATA_DIR) and data/formats/. The answers
and citations are written here, by the project, not by a vendor's model; what is computed is
computed from the documents, so offsets and pages are right where the label says "right": character
offsets into the raw file, 1-based pages of the PDF, Gemini's UTF-8 byte offsets into the answer.
Each citation is one case: right, shifted offsets, wrong page, misattributed (another source),
fabricated (the quote is nowhere), unsupported or contradicted (the quote is there, the claim is
not), unchecked (its source is not given). `labels.json` holds, per file, the sources to give,
and per citation its case, the gold verdict (`expected`) and the location flags it must carry.

    CITEAUDIT_DATA_DIR=../shared/data/rfc python tools/make_response_fixtures.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from citeaudit import load_document  # noqa: E402

OUT = ROOT / "data" / "responses"
RFC, MD, HTML, PDF, NOTE = ("rfc7519.txt", "data/formats/lantern-sync.md", "data/formats/token-service.html",
                            "data/formats/reservoir-report.pdf", "data/formats/field-note.txt")
DOCS = {name: load_document(name) for name in (RFC, MD, HTML, PDF, NOTE)}


def at(name: str, quote: str) -> tuple[int, int]:
    """The raw [start, end) of `quote` in the document: it must be there verbatim."""
    raw = DOCS[name].raw
    start = raw.find(quote)
    assert start >= 0 and raw.find(quote, start + 1) < 0, (name, quote)
    return start, start + len(quote)


def page_of(name: str, text: str) -> int:
    """The 1-based page of the PDF whose text holds `text`."""
    for sid, section in DOCS[name].sections.items():
        if sid.startswith("page ") and text in section.text:
            return int(sid.split()[1])
    raise AssertionError(text)


class Labels:
    def __init__(self) -> None:
        self.files: dict[str, Any] = {}

    def file(self, name: str, vendor: str, sources: list[str], about: str) -> dict[str, Any]:
        entry = {"format": vendor, "sources": sources, "about": about, "citations": {}}
        self.files[name] = entry
        return entry


def cite(entry: dict, path: str, case: str, expected: str, flags: tuple[str, ...] = ()) -> None:
    entry["citations"][path] = {"case": case, "expected": expected, "flags": list(flags)}


# ---- Anthropic Messages: char_location over RFC 7519, page_location over the PDF -----------------

def anthropic(labels: Labels) -> dict:
    entry = labels.file("anthropic_messages.json", "anthropic", [RFC, MD, PDF],
                        "Messages API with citations enabled; documents sent in this order: RFC 7519 (plain "
                        "text), lantern-sync.md (plain text), reservoir-report.pdf (PDF)")
    blocks: list[dict] = [{"type": "text", "text": "Here is what the three documents say.\n\n"}]

    def block(text: str, *citations: dict) -> int:
        blocks.append({"type": "text", "text": text, "citations": list(citations)})
        return len(blocks) - 1

    def chars(quote: str, shift: int = 0, index: int = 0, title: str = "rfc7519.txt",
              name: str = RFC) -> dict:
        start, end = at(name, quote) if name else (1200, 1200 + len(quote))
        return {"type": "char_location", "cited_text": quote, "document_index": index, "document_title": title,
                "start_char_index": start + shift, "end_char_index": end + shift, "file_id": None}

    def pages(quote: str, first: int) -> dict:
        return {"type": "page_location", "cited_text": quote, "document_index": 2,
                "document_title": "reservoir-report.pdf", "start_page_number": first, "end_page_number": first + 1}

    q = ("The claims in a JWT\n   are encoded as a JSON object that is used as the payload of a JSON\n"
         "   Web Signature (JWS) structure or as the plaintext of a JSON Web\n   Encryption (JWE) structure")
    b = block("The claims of a JWT are encoded as a JSON object, used as the payload of a JWS structure or as the "
              "plaintext of a JWE structure.", chars(q))
    cite(entry, f"content[{b}].citations[0]", "right", "verified")
    blocks.append({"type": "text", "text": " "})
    q = ('The "exp" (expiration time) claim identifies the expiration time on\n   or after which the JWT MUST NOT '
         'be accepted for processing.')
    b = block("A JWT must not be accepted for processing on or after its expiration time.", chars(q, shift=212))
    cite(entry, f"content[{b}].citations[0]", "shifted offsets", "verified", ("offset_mismatch",))
    blocks.append({"type": "text", "text": "\n\nFor the reservoir survey, "})
    q = ("Dissolved oxygen is measured in the field with an optical probe, because the value\nchanges within "
         "minutes once a sample is sealed in a bottle.")
    b = block("dissolved oxygen is measured in the field with an optical probe, since the value changes within "
              "minutes once a sample is sealed.", pages(q, page_of(PDF, q) - 1))
    cite(entry, f"content[{b}].citations[0]", "wrong page", "verified", ("page_mismatch",))
    blocks.append({"type": "text", "text": " "})
    q = "Readings above\n40 NTU are repeated on a second portion of the same sample"
    b = block("Turbidity readings above 40 NTU are repeated on a second portion of the same sample.",
              pages(q, page_of(PDF, q)))
    cite(entry, f"content[{b}].citations[0]", "right page", "verified")
    blocks.append({"type": "text", "text": "\n\nOn the sync protocol, "})
    q = "Every message starts with a four-byte length prefix in network byte order"
    b = block("every Lantern Sync message begins with a four-byte length prefix in network byte order.",
              chars(q, name=""))  # attributed to RFC 7519 (document 0); the quote is in lantern-sync.md
    cite(entry, f"content[{b}].citations[0]", "misattributed", "verified", ("source_mismatch",))
    blocks.append({"type": "text", "text": "\n\nA few more points on JWTs: "})
    q = "A JWT MUST always be encrypted using JWE before it is transmitted."
    b = block("JWTs must always be encrypted with JWE.", chars(q, name=""))
    cite(entry, f"content[{b}].citations[0]", "fabricated", "fabricated")
    blocks.append({"type": "text", "text": " "})
    q = 'The "jti" (JWT ID) claim provides a unique identifier for the JWT.'
    b = block('The "jti" value must be a version 4 UUID.', chars(q))
    cite(entry, f"content[{b}].citations[0]", "unsupported", "unsupported")
    blocks.append({"type": "text", "text": " "})
    b = block("JWS secures content with digital signatures or MACs using JSON-based data structures.",
              {"type": "web_search_result_location", "cited_text": "JSON Web Signature (JWS) represents content "
               "secured with digital signatures or Message Authentication Codes (MACs) using JSON-based data "
               "structures.", "url": "https://datatracker.ietf.org/doc/html/rfc7515",
               "title": "RFC 7515 - JSON Web Signature (JWS)", "encrypted_index": "EpMBCioIAhgC"})
    cite(entry, f"content[{b}].citations[0]", "unchecked (source not given)", "unchecked")
    blocks.append({"type": "text", "text": "\n\nOverall, the JWT claims above are all optional to use."})
    entry["uncited"] = 2  # the opening line, the closing sentence
    return {"id": "msg_01VendorsFixture0001", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": blocks, "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 31250, "output_tokens": 612, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "service_tier": "standard"}}


# ---- OpenAI Responses: file_search answer with file_citation annotations -------------------------

def openai_responses(labels: Labels) -> dict:
    entry = labels.file("openai_responses.json", "openai-responses", [RFC, HTML],
                        "Responses API with the file_search tool over a vector store holding rfc7519.txt and "
                        "token-service.html")
    sentences = [
        ("Here is a short summary.", None),
        ("The token service's access tokens expire fifteen minutes after they are issued.",
         ("token-service.html", "file-TokSvc8fQ2", "right", "verified")),
        ("Revoking a refresh token also revokes every access token issued from it.",
         ("token-service.html", "file-TokSvc8fQ2", "right", "verified")),
        ('A JWT\'s "exp" claim gives the time on or after which the JWT must not be accepted for processing.',
         ("rfc7519.txt", "file-Rfc7519aa01", "right", "verified")),
        ("Revocation takes effect within one hour across all regions.",
         ("token-service.html", "file-TokSvc8fQ2", "contradicted", "contradicted")),
        ('The "iss" claim is a case-sensitive string containing a StringOrURI value.',
         ("token-service.html", "file-TokSvc8fQ2", "misattributed (claim-only: the cited file does not say it)",
          "unsupported")),
        ("Clients must renew their client secret every 90 days.",
         ("client-onboarding.pdf", "file-Onb0ard1ng7", "unchecked (source not given)", "unchecked")),
    ]
    text, annotations = "", []
    for sentence, cited in sentences:
        text += ("" if not text else " ") + sentence
        if cited:
            filename, file_id, case, expected = cited
            annotations.append({"type": "file_citation", "file_id": file_id, "filename": filename,
                                "index": len(text)})
            cite(entry, f"output[1].content[0].annotations[{len(annotations) - 1}]", case, expected)
    entry["uncited"] = 1
    return {"id": "resp_68f0c1d2e3vendors", "object": "response", "created_at": 1764583200, "status": "completed",
            "model": "gpt-4.1-2025-04-14",
            "output": [{"id": "fs_68f0c1d2e3a1", "type": "file_search_call", "status": "completed",
                        "queries": ["token lifetime revocation", "JWT exp claim"], "results": None},
                       {"id": "msg_68f0c1d2e3b2", "type": "message", "status": "completed", "role": "assistant",
                        "content": [{"type": "output_text", "text": text, "annotations": annotations,
                                     "logprobs": []}]}],
            "usage": {"input_tokens": 4821, "output_tokens": 140, "total_tokens": 4961}}


# ---- OpenAI Chat Completions: web search answer with url_citation annotations --------------------

def openai_chat(labels: Labels) -> dict:
    entry = labels.file("openai_chat.json", "openai-chat", [RFC],
                        "Chat Completions with web search (gpt-4o-search-preview): Markdown links as citation "
                        "markers, each annotated with its url_citation")
    parts = [
        ("JWTs are always represented using the JWS Compact Serialization or the JWE Compact Serialization",
         "https://www.rfc-editor.org/rfc/rfc7519.html", "rfc-editor.org", "RFC 7519: JSON Web Token (JWT)",
         "right", "verified"),
        ('Use of the "nbf" claim is mandatory in every JWT',
         "https://www.rfc-editor.org/rfc/rfc7519.html", "rfc-editor.org", "RFC 7519: JSON Web Token (JWT)",
         "contradicted", "contradicted"),
        ("Most JWT libraries default to the HS256 algorithm",
         "https://jwt.io/introduction?utm_source=openai", "jwt.io", "JSON Web Token Introduction - jwt.io",
         "unchecked (source not given)", "unchecked"),
    ]
    text, annotations = "", []
    for n, (claim, url, label, title, case, expected) in enumerate(parts):
        text += ("" if not text else " ") + claim + " "
        link = f"([{label}]({url}))"
        annotations.append({"type": "url_citation", "url_citation": {"start_index": len(text),
                                                                     "end_index": len(text) + len(link),
                                                                     "url": url, "title": title}})
        text += link + "."
        cite(entry, f"choices[0].message.annotations[{n}].url_citation", case, expected)
    entry["uncited"] = 0
    return {"id": "chatcmpl-VendorsFixture01", "object": "chat.completion", "created": 1764583260,
            "model": "gpt-4o-search-preview-2025-03-11",
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": text, "refusal": None,
                                     "annotations": annotations}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 96, "total_tokens": 108}}


# ---- Gemini: grounding with retrieved contexts, REST camelCase -----------------------------------

def gemini(labels: Labels) -> dict:
    entry = labels.file("gemini_grounding.json", "gemini", [PDF, HTML, MD],
                        "generateContent REST response (camelCase) grounded on a RAG corpus of the three files; "
                        "the answer has non-ASCII text, so its UTF-8 byte offsets differ from character offsets")
    chunks: list[dict] = []

    def chunk(uri: str, title: str, text: str | None = None, page: int | None = None) -> int:
        if text is None:
            chunks.append({"web": {"uri": uri, "title": title}})
        else:
            ctx: dict[str, Any] = {"uri": uri, "title": title, "text": text}
            if page is not None:
                ctx["pageNumber"] = page
            chunks.append({"retrievedContext": ctx})
        return len(chunks) - 1

    report = "gs://survey-docs/reservoir-report.pdf"
    q1 = "Samples are kept in the dark at four degrees Celsius and must reach the laboratory\nwithin 24 hours"
    q2 = "Readings above\n40 NTU are repeated on a second portion of the same sample"
    segments = [
        ("Samples are kept dark at 4 °C and must reach the laboratory within 24 hours of collection.",
         chunk(report, "reservoir-report.pdf", q1, page_of(PDF, q1)), "right", "verified", ()),
        ("A turbidity reading above 40 NTU is repeated on a second portion — the same sample.",
         chunk(report, "reservoir-report.pdf", q2, page_of(PDF, q2) + 1), "wrong page", "verified",
         ("page_mismatch",)),
        ("Access tokens expire fifteen minutes after they are issued.",
         chunk("gs://survey-docs/lantern-sync.md", "lantern-sync.md",
               "Access tokens expire fifteen minutes after they are issued."), "misattributed", "verified",
         ("source_mismatch",)),
        ("Nitrate is measured by ion chromatography.",
         chunk(report, "reservoir-report.pdf", "Nitrate is measured by ion chromatography within 48 hours of "
               "sampling.", 3), "fabricated", "fabricated", ()),
        ("Raw instrument files are stored in the water utility's cloud archive.",
         chunk(report, "reservoir-report.pdf", "Raw instrument files are kept for ten years.", 4),
         "unsupported", "unsupported", ()),
        ("Turbidity is a key indicator of drinking-water quality.",
         chunk("https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQHvendors01", "epa.gov"),
         "unchecked (source not given)", "unchecked", ()),
    ]
    text, supports = "Survey rules, in short: ", []
    for n, (claim, index, case, expected, flags) in enumerate(segments):
        if n:
            text += " "
        start = len(text.encode("utf-8"))
        text += claim
        segment: dict[str, Any] = {"startIndex": start, "endIndex": len(text.encode("utf-8")), "text": claim}
        supports.append({"segment": segment, "groundingChunkIndices": [index], "confidenceScores": [0.91]})
        cite(entry, f"candidates[0].groundingMetadata.groundingSupports[{n}].groundingChunkIndices[0]", case,
             expected, flags)
    # proto3 JSON leaves out zero-valued fields: a part at index 0 has no partIndex anywhere; the
    # lead-in "Survey rules, in short:" asserts nothing, so it is not listed as uncited
    entry["uncited"] = 0
    return {"candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP",
                            "groundingMetadata": {"groundingChunks": chunks, "groundingSupports": supports,
                                                  "retrievalMetadata": {}},
                            "avgLogprobs": -0.21}],
            "usageMetadata": {"promptTokenCount": 2210, "candidatesTokenCount": 118, "totalTokenCount": 2328},
            "modelVersion": "gemini-2.5-flash", "responseId": "VendorsFixtureGemini01"}


# ---- Cohere chat v2: documents with snippets ----------------------------------------------------

def cohere(labels: Labels) -> dict:
    entry = labels.file("cohere_chat.json", "cohere", [NOTE, HTML],
                        "Chat v2 with documents=[field-note.txt, token-service.html] sent as {id, data: {title, "
                        "snippet}}; citations list their document sources")

    def doc(doc_id: str, title: str, snippet: str) -> dict:
        return {"type": "document", "id": doc_id, "document": {"id": doc_id, "title": title, "snippet": snippet}}

    parts = [
        ("The shallow sample was skipped because a west wind made the surface choppy.",
         doc("doc:0", "field-note.txt", "Wind from the west made the surface choppy, so the shallow sample was "
             "skipped."), "right", "verified", ()),
        ("Turbidity at the intake tower read 3.1 NTU and then 3.3 NTU.",
         doc("doc:0", "field-note.txt", "Turbidity read 3.1 NTU on the first portion and\n3.3 NTU on the second."),
         "right", "verified", ()),
        ("All bottles were back in the cold store by 15:00.",
         doc("doc:0", "field-note.txt", "All bottles were back in the cold store by 13:00, well inside the 24-hour "
             "limit."), "contradicted", "contradicted", ()),
        ("A refresh token is rotated every time it is used.",
         doc("doc:0", "field-note.txt", "a refresh token is rotated every time\n     it is used"),
         "misattributed", "verified", ("source_mismatch",)),
        ("The samples were frozen at the shoreline point.",
         doc("doc:0", "field-note.txt", "Samples were frozen at the shoreline point before transport."),
         "fabricated", "fabricated", ()),
        ("Sample bottles are labelled with a QR code.",
         doc("doc:2", "lab-manual.pdf", "Every bottle carries a QR code label."), "unchecked (source not given)",
         "unchecked", ()),
    ]
    text, citations = "", []
    for n, (claim, source, case, expected, flags) in enumerate(parts):
        text += ("" if not text else " ") + claim
        citations.append({"start": len(text) - len(claim), "end": len(text), "text": claim, "sources": [source],
                          "type": "TEXT_CONTENT"})
        cite(entry, f"message.citations[{n}].sources[0]", case, expected, flags)
    entry["uncited"] = 0
    return {"id": "c14c80c3-18eb-4519-9460-vendors00001", "finish_reason": "COMPLETE",
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}], "citations": citations},
            "usage": {"billed_units": {"input_tokens": 410, "output_tokens": 78},
                      "tokens": {"input_tokens": 1220, "output_tokens": 78}}}


# ---- LangChain RetrievalQA and LlamaIndex --------------------------------------------------------

def langchain(labels: Labels) -> dict:
    entry = labels.file("langchain_retrievalqa.json", "langchain", [PDF, NOTE],
                        "RetrievalQA(return_source_documents=True) over PyPDFLoader pages (page is 0-based) and "
                        "a TextLoader split with add_start_index=True")
    q1 = "samples are taken at a depth of two metres below the surface\nusing a weighted sampler"
    q2 = "A sample taken closer to the surface is discarded"
    q3 = "Wind from the west made the surface choppy, so the shallow sample was skipped."
    q4 = "Water at the intake tower was clear."
    docs: list[tuple[dict[str, Any], str, str, tuple[str, ...]]] = [
        ({"page_content": q1, "metadata": {"source": "data/formats/reservoir-report.pdf",
                                           "page": page_of(PDF, q1.split("\n")[0]) - 1, "total_pages": 4}},
         "right", "verified", ()),
        ({"page_content": q2, "metadata": {"source": "data/formats/reservoir-report.pdf",
                                           "page": page_of(PDF, q2) - 2, "total_pages": 4}},
         "wrong page", "verified", ("page_mismatch",)),
        ({"page_content": q3, "metadata": {"source": "data/formats/field-note.txt",
                                           "start_index": at(NOTE, q3)[0] + 9}},
         "shifted offsets", "unsupported", ("offset_mismatch",)),
        ({"page_content": "Samples are taken at a depth of five metres with a peristaltic pump.",
          "metadata": {"source": "data/formats/reservoir-report.pdf", "page": 1, "total_pages": 4}},
         "fabricated", "fabricated", ()),
        ({"page_content": q4, "metadata": {"source": "data/formats/reservoir-report.pdf", "page": 1,
                                           "total_pages": 4}},
         "misattributed", "unsupported", ("source_mismatch",)),
        ({"page_content": "Shallow samples are rejected under the 2024 sampling SOP.",
          "metadata": {"source": "docs/sampling-sop.docx"}}, "unchecked (source not given)", "unchecked", ()),
    ]
    for n, (doc, case, expected, flags) in enumerate(docs):
        doc["type"] = "Document"
        doc["id"] = None
        cite(entry, f"source_documents[{n}]", case, expected, flags)
    entry["uncited"] = 0
    return {"query": "How deep are reservoir samples taken, and why?",
            "result": "Samples are taken two metres below the surface with a weighted sampler; a sample taken "
                      "closer to the surface is discarded.",
            "source_documents": [d for d, *_ in docs]}


def llamaindex(labels: Labels) -> dict:
    entry = labels.file("llamaindex_response.json", "langchain", [MD],
                        "a LlamaIndex query engine Response dumped to JSON: response text and source_nodes with "
                        "start_char_idx / end_char_idx into the file")
    q = ("Each chunk carries a SHA-256 digest of its\ncontent, and a responder MUST discard a chunk whose digest does "
         "not match.")
    start, end = at(MD, q)

    def node(node_id: str, lo: int, hi: int, score: float) -> dict:
        return {"node": {"id_": node_id, "text": q, "metadata": {"file_name": "lantern-sync.md",
                                                                 "file_path": "/srv/docs/lantern-sync.md"},
                         "start_char_idx": lo, "end_char_idx": hi, "class_name": "TextNode"},
                "score": score, "class_name": "NodeWithScore"}

    cite(entry, "source_nodes[0]", "right", "verified")
    cite(entry, "source_nodes[1]", "shifted offsets", "verified", ("offset_mismatch",))
    entry["uncited"] = 0
    return {"response": "Each chunk carries a SHA-256 digest of its content, and a responder must discard a chunk "
                        "whose digest does not match.",
            "source_nodes": [node("5b1c-node-a", start, end, 0.83), node("5b1c-node-b", start - 40, end - 40, 0.61)],
            "metadata": {}}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    labels = Labels()
    for make in (anthropic, openai_responses, openai_chat, gemini, cohere, langchain, llamaindex):
        data = make(labels)
        name = list(labels.files)[-1]
        (OUT / name).write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (OUT / "labels.json").write_text(json.dumps(labels.files, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(labels.files)} responses and labels.json to {OUT}")


if __name__ == "__main__":
    main()
