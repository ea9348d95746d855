"""A RAG result from LangChain or LlamaIndex: an answer with the documents it was given.

The answer is one of `result`, `answer`, `output`, `response`, `output_text`; the documents are
`source_documents` / `context` / `input_documents` (LangChain `Document`s, as saved or in
`dumpd()` form) or `source_nodes` (LlamaIndex, whose node text may sit in `text_resource`). Each
document is a citation of the whole answer, its text the quote. Pages: a LangChain `page` is
0-based (PyPDFLoader), a LlamaIndex `page_label` 1-based; a `start_index` or node character range
gives the quote's place in its source.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from citeaudit.citations.responses.checks import Reader
from citeaudit.citations.responses.parsed import VendorCitation, VendorFormat, cited_source
from citeaudit.table import ResponseFormat


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


def parse(data: dict[str, Any], r: Reader) -> tuple[str, list[VendorCitation]]:
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
                                  (0, len(answer)), text if text.strip() else None, cited_source(None, *names), chars,
                                  pages))
    return answer, out


def detect(data: dict[str, Any]) -> bool:
    """A RAG result: a list of documents under a known key and a text answer under another."""
    return any(isinstance(data.get(k), list) for k in _DOCS_KEYS) and any(isinstance(data.get(k), str)
                                                                           for k in _ANSWER_KEYS)


FORMAT = VendorFormat(ResponseFormat.LANGCHAIN, parse, detect, sdk="langchain_core", extra="langchain",
                      distribution="langchain-core")
