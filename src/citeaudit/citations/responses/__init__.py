"""Saved LLM API responses with the vendor's own citations, read into vendor-neutral records.

- `parsed`: the records (`ParsedResponse`, `VendorCitation`, `CitedSource`), `VendorFormat` and
  its registry (`register_vendor_format`, `VENDOR_FORMATS`), detection by shape, loading;
- `checks`: shape checks and SDK validation that name the file, the JSON path and the fix;
- one module per vendor, each declaring its format(s):

  anthropic         Messages API: `content` text blocks with `citations`
  openai            Responses API (`openai-responses`: `output_text` parts with `annotations`) and
                    Chat Completions (`openai-chat`: `choices[].message.annotations`)
  gemini            `candidates[].groundingMetadata`: `groundingSupports` over `groundingChunks`
  cohere            chat v2 (`message.citations[].sources`) or v1 (`citations` and `documents`)
  langchain         a RAG result with its source documents (LangChain) or source nodes (LlamaIndex)

The built-in formats are registered below, in the order shapes are detected.
"""

from citeaudit.citations.responses import anthropic, cohere, gemini, langchain, openai
from citeaudit.citations.responses.parsed import (
    VENDOR_FORMATS,
    CitedSource,
    ParsedResponse,
    VendorCitation,
    VendorFormat,
    detect_response_format,
    load_response,
    parse_response,
    read_response,
    register_vendor_format,
    sentence_before,
)

for _vendor in (gemini.FORMAT, openai.RESPONSES_FORMAT, openai.CHAT_FORMAT, anthropic.FORMAT, cohere.FORMAT,
                langchain.FORMAT):  # the registry line
    register_vendor_format(_vendor)

__all__ = ["VENDOR_FORMATS", "CitedSource", "ParsedResponse", "VendorCitation", "VendorFormat",
           "detect_response_format", "load_response", "parse_response", "read_response", "register_vendor_format",
           "sentence_before"]
