"""Source documents: every format loaded into the one `Document` the pipeline reads.

- `document`: the `Document` (raw text, clean text with its offset map, sections, lines);
- `reading`: finding a source file, the bounded reader, the pinned RFC download;
- `registry`: `SourceFormat`, `register_format`, `FORMATS`, `detect_format`, `load_document`;
- `build`: what a loader builds its `Document` with (clean text and offsets, heading sections);
- one module per format, each declaring its `FORMAT`: `rfc`, `text`, `markdown`, `html`, `pdf`,
  `egov` (Japanese statutes; `japanese`: their numerals and locators).

The built-in formats are registered below, in the order `--format` lists them (the formats are
imported when the package is: each module imports only the standard library and numpy at the
top; its parser, such as pypdf or selectolax, is imported when a document is loaded).
"""

from citeaudit.sources import egov, html, markdown, pdf, rfc, text
from citeaudit.sources.document import Document, Section, canonical_section_id
from citeaudit.sources.registry import FORMATS, SourceFormat, detect_format, load_document, register_format

for _format in (rfc.FORMAT, text.FORMAT, markdown.FORMAT, html.FORMAT, pdf.FORMAT, egov.FORMAT):  # the registry line
    register_format(_format)

__all__ = ["FORMATS", "Document", "Section", "SourceFormat", "canonical_section_id", "detect_format", "load_document",
           "register_format"]
