"""A source format is one module registered by name: a format written here, in the test, and
registered with `register_format` is detected, loaded and audited like the built-in ones, its own
locators included, without any other module knowing of it (notes/extending_format.md)."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from citeaudit import audit_quotes, load_document
from citeaudit.errors import SourceError
from citeaudit.sources import FORMATS, Document, Section, SourceFormat, detect_format, register_format
from citeaudit.sources.document import lines_of
from citeaudit.sources.reading import read_text

TOY_TEXT = """\
alpha: The toy gateway rejects a token whose signature does not verify.
beta: Tokens expire after ten minutes.

gamma: A revoked token is refused at once.
"""


def load_toy(path: Path) -> Document:
    """A `.toy` file: each line `name: text` is the section `name`; the raw text is the clean text."""
    raw = read_text(path)
    sections = {m[1]: Section(m[1], m[1], m[2], m.start(2), m.end(2), m.start(2), m.end(2))
                for m in re.finditer(r"(?m)^(\w+): (.*)$", raw)}
    return Document(path.name, raw, raw, np.arange(len(raw), dtype=np.int64), sections, lines_of(raw))


def toy_locator(document: Document, locator: str) -> str | None:
    """The toy format's own locator: `entry <name>`."""
    found = re.fullmatch(r"entry\s+(\w+)", locator.strip(), re.IGNORECASE)
    return found[1] if found and found[1] in document.sections else None


TOY = SourceFormat("toy", load_toy, extensions=(".toy",), resolve_locator=toy_locator)


@pytest.fixture
def toy_format():
    register_format(TOY)
    yield TOY
    FORMATS.unregister("toy")


def test_a_format_registered_in_a_test_is_audited_like_the_built_in_ones(toy_format, tmp_path):
    source = tmp_path / "gateway.toy"
    source.write_text(TOY_TEXT, encoding="utf-8")
    citations = tmp_path / "citations.json"
    citations.write_text(json.dumps([
        {"id": "c1", "claim": "Bad signatures are rejected.", "section": "entry alpha",
         "quote": "rejects a token whose signature does not verify"},
        {"id": "c2", "claim": "Tokens last ten minutes.", "section": "alpha",
         "quote": "Tokens expire after ten minutes."},
        {"id": "c3", "claim": "Revocation is instant.", "section": "entry delta",
         "quote": "A revoked token is refused within the hour."},
    ]), encoding="utf-8")

    assert detect_format(source) == "toy"
    document = load_document(source)
    assert document.format == "toy" and list(document.sections) == ["alpha", "beta", "gamma"]

    table = audit_quotes(source, citations, locate_only=True).table.set_index("id")
    got = {cid: (row["quote_status"], row["found_section"], row["section_match"], row["verdict"])
           for cid, row in table.iterrows()}
    assert got == {"c1": ("exact", "alpha", True, None),  # its own locator, `entry alpha`, resolved
                   "c2": ("exact", "beta", False, None),  # cited under alpha, found in beta: misattributed
                   "c3": ("missing", None, None, "fabricated")}
    start, end = table.loc["c1", "span"]
    assert document.raw[start:end] == "rejects a token whose signature does not verify"


def test_a_registered_format_is_chosen_by_name_over_the_extension(toy_format, tmp_path):
    source = tmp_path / "gateway.txt"
    source.write_text(TOY_TEXT, encoding="utf-8")
    assert load_document(source).format == "text"
    assert list(load_document(source, format="TOY").sections) == ["alpha", "beta", "gamma"]
    with pytest.raises(SourceError, match="unknown document format 'toys': use one of rfc, text, markdown, html, pdf, egov, toy"):
        load_document(source, format="toys")


def test_a_name_alias_or_extension_is_registered_once(toy_format):
    with pytest.raises(ValueError, match="format name 'toy' is taken by the 'toy' format"):
        register_format(SourceFormat("toy", load_toy))
    with pytest.raises(ValueError, match="format name 'md' is taken by the 'markdown' format"):
        register_format(SourceFormat("toy2", load_toy, aliases=("md",)))
    with pytest.raises(ValueError, match="extension '.toy' is claimed by the 'toy' format"):
        register_format(SourceFormat("toy2", load_toy, extensions=(".toy",)))
    with pytest.raises(ValueError, match="extension 'TOY': write it in lower case with its dot"):
        register_format(SourceFormat("toy2", load_toy, extensions=("TOY",)))
    assert "toy2" not in FORMATS


def test_the_built_in_formats_are_registered_in_order():
    assert list(FORMATS) == ["rfc", "text", "markdown", "html", "pdf", "egov"]
    assert all(fmt.name == name for name, fmt in FORMATS.items())
