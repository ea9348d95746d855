"""Source documents of every format: Markdown, HTML, PDF pages and plain text, and the locators
LLMs write for them. The PDF is the project's own, rebuilt here by tools/make_sample_pdf.py."""

import importlib.util
import json
import re

import numpy as np
import pytest
from conftest import DATA, ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cli import run

from citeaudit import Judge, audit_quotes, load_citations, load_document
from citeaudit.errors import SourceError
from citeaudit.locate.locators import parse_locator, resolve
from citeaudit.pipeline import resolve_source
from citeaudit.sources.html import load_html
from citeaudit.sources.markdown import load_markdown
from citeaudit.sources.registry import detect_format

FORMATS = DATA / "formats"
SETS = {
    "lantern-sync.md": "lantern-sync_citations.json",
    "token-service.html": "token-service_citations.json",
    "reservoir-report.pdf": "reservoir-report_citations.json",
    "field-note.txt": "field-note_citations.json",
}
# step 1 on each labelled set: quote status, found section (None: nowhere), section match
STEP1 = {
    "md_length_limit": ("exact", "3", True),
    "md_chunk_digest": ("elided", "3.2", True),
    "md_offer_timeout_near": ("near", "3.1", True),
    "md_encryption_fabricated": ("missing", None, None),
    "md_conflict_misattributed": ("exact", "conflict-resolution", False),
    "md_no_authentication": ("none", "security-considerations", True),
    "md_discovery_unsupported": ("none", "2.1", True),
    "md_offer_example": ("exact", "3", True),
    "md_unknown_section": ("none", None, False),
    "html_access_lifetime": ("exact", "2", True),
    "html_refresh_rotation": ("elided", "2", True),
    "html_revocation_near": ("near", "3", True),
    "html_script_fabricated": ("missing", None, None),
    "html_clock_skew_misattributed": ("exact", "2", False),
    "html_refresh_cascade": ("none", "3", True),
    "html_audit_log_unsupported": ("none", "audit-log", True),
    "html_clock_skew_anchor": ("none", "#clock-skew", True),
    "html_unknown_anchor": ("none", None, False),
    "pdf_sample_depth": ("exact", "page 2", True),
    "pdf_rinse_page_break": ("exact", "2.2", True),
    "pdf_turbidity_elided": ("elided", "page 3", True),
    "pdf_delivery_near": ("near", "2.2", True),
    "pdf_retention_fabricated": ("missing", None, None),
    "pdf_oxygen_misattributed": ("exact", "page 4", False),
    "pdf_flagged_visits": ("none", "pages 3-4", True),
    "pdf_weather_unsupported": ("none", "1", True),
    "pdf_page_99": ("none", None, False),
    "txt_departure": ("exact", "2", True),
    "txt_turbidity_near": ("near", "3", True),
    "txt_cold_store_lines": ("none", "L9", True),
    "txt_fabricated": ("missing", None, None),
    "txt_wind_unsupported": ("none", "L3-L4", True),
}
has_fpdf = importlib.util.find_spec("fpdf") is not None


def _pdf_tool():
    spec = importlib.util.spec_from_file_location("make_sample_pdf", ROOT / "tools" / "make_sample_pdf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not has_fpdf, reason="fpdf2 (requirements-test.txt) writes the test PDFs")
def test_the_committed_pdf_is_what_the_generator_writes(tmp_path):
    built = _pdf_tool().build_pdf(tmp_path / "report.pdf")
    assert built.read_bytes() == (FORMATS / "reservoir-report.pdf").read_bytes()


@pytest.mark.parametrize("source", SETS)
def test_statuses_on_each_labelled_set(source):
    audit = audit_quotes(FORMATS / source, FORMATS / SETS[source], locate_only=True)
    table = audit.table.set_index("id")
    assert len(table) >= 5
    for cid, row in table.iterrows():
        status, found, match = STEP1[cid]
        assert (row["quote_status"], row["found_section"], row["section_match"]) == (status, found, match), cid
        assert (row["verdict"] == "fabricated") == (row["expected"] == "fabricated"), cid
        if row["span"] is not None:  # every span points into the raw text and reads as the evidence
            start, end = row["span"]
            assert 0 <= start < end <= len(audit.document.raw)


@pytest.mark.parametrize("source", SETS)
def test_recorded_qwen_verdicts_replay_for_each_format(source, replay_cache):
    audit = audit_quotes(FORMATS / source, FORMATS / SETS[source], judge=Judge(cache=replay_cache))
    table = audit.table
    assert table["error"].isna().all(), table["error"].tolist()
    judged = table[table["verdict"] != "fabricated"]
    assert judged["model"].eq("qwen2.5-coder-1.5b-instruct-q4_k_m").all() and judged["cached"].all()
    assert audit.decision.status == "REJECT"  # each set holds fabricated citations


def test_pages_are_locators():
    doc = load_document(FORMATS / "reservoir-report.pdf")
    assert [s for s in doc.sections if s.startswith("page")] == ["page 1", "page 2", "page 3", "page 4"]
    for written in ("p. 3", "p3", "page 3", "Page 3", "pg. 3", "pp. 3"):
        assert resolve(doc, written) == "page 3", written
    assert resolve(doc, "p. 99") is None and resolve(doc, "pages 3-9") is None
    assert resolve(doc, "page 2, section 2.2") == "2.2"  # 2.2 starts on page 2
    assert resolve(doc, "page 4, section 2.2") == "page 4"  # not on that page: the page decides
    assert resolve(doc, "page 99, section 2.2") is None  # every part must exist
    assert resolve(doc, "Section 3.1") == resolve(doc, "§3.1") == resolve(doc, "Turbidity") == "3.1"


def test_p3_found_and_p99_fabricated(tmp_path):
    cites = tmp_path / "pages.json"
    cites.write_text(json.dumps([
        {"id": "p3", "claim": "Turbidity is measured in NTU.", "quote": "Turbidity is measured in nephelometric "
         "turbidity units (NTU)", "section": "p. 3"},
        {"id": "p99", "claim": "The survey was funded by the water board.", "quote": None, "section": "p. 99"},
        {"id": "p99_quoted", "claim": "The board paid.", "quote": "funded by the regional water board",
         "section": "p. 99"},
    ]))
    table = audit_quotes(FORMATS / "reservoir-report.pdf", cites, locate_only=True).table.set_index("id")
    assert table.loc["p3", ["quote_status", "found_section", "section_match"]].tolist() == ["exact", "page 3", True]
    assert table.loc["p3", "evidence"].startswith("sed three times")  # the page's text, furniture removed
    assert table.loc["p99", "verdict"] == table.loc["p99_quoted", "verdict"] == "fabricated"
    assert "'p. 99' does not exist" in table.loc["p99", "fabricated_reason"]


def test_pdf_page_furniture_and_hyphenation_across_pages():
    doc = load_document(FORMATS / "reservoir-report.pdf")
    assert "Methods Report" not in doc.clean and "Page 2 of 4" not in doc.clean
    assert "Page 2 of 4" in doc.raw and "\f" in doc.raw  # the raw text keeps them, pages split by form feeds
    assert "bottle is rinsed three times" in doc.clean  # "rin-" at the foot of page 2 + "sed" on page 3
    assert "When the two\nreadings differ" in doc.clean  # a sentence runs on to the next page
    lo, hi = doc.raw_span(doc.clean.index("rinsed"), doc.clean.index("rinsed") + 6)
    assert doc.raw[lo:hi].startswith("rin-") and doc.raw[lo:hi].endswith("sed")


def test_markdown_offsets_point_into_the_raw_file():
    doc = load_document(FORMATS / "lantern-sync.md")
    assert list(doc.sections) == ["lantern-sync-protocol", "1", "2", "2.1", "2.2", "3", "3.1", "3.2",
                                  "conflict-resolution", "security-considerations"]
    assert doc.sections["3.1"].title == "Offers"  # a setext heading
    assert np.all(np.diff(doc.clean_to_raw) >= 0) and doc.clean_to_raw[-1] < len(doc.raw)
    for section in doc.sections.values():  # the raw slice holds the heading as written
        assert section.title in doc.raw[section.start : section.end]
    assert "**MUST**" in doc.raw and "MUST, SHOULD" in doc.clean  # emphasis markers dropped
    assert '{"type": "offer", "notebook": "field-log", "revision": 42}' in doc.sections["3"].text  # code verbatim
    start = doc.clean.index("16777216")
    assert doc.raw[slice(*doc.raw_span(start, start + 8))] == "16777216"
    assert resolve(doc, "#security-considerations") == resolve(doc, "Security Considerations") == "security-considerations"


def test_html_text_sections_and_anchors():
    doc = load_document(FORMATS / "token-service.html")
    assert "analytics" not in doc.clean and "injected text" not in doc.clean and "font-family" not in doc.clean
    assert "client secret & receives" in doc.clean  # entities decoded, whitespace folded
    assert doc.clean.startswith("Token Service Handbook")  # the <nav> before it is chrome, not text
    assert doc.raw == doc.clean  # the raw text of a page is its extracted text
    assert resolve(doc, "#token-lifetime") == resolve(doc, "Token lifetime") == resolve(doc, "2") == "2"
    assert resolve(doc, "#issuing") == "1"  # a <section id> that opens with a heading
    assert resolve(doc, "token-service.html#clock-skew") == "#clock-skew"
    assert resolve(doc, "#nowhere") is None


def test_malformed_html_is_read_as_a_browser_reads_it(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text("<h2 id=a>1. First<p>one <b>bold <i>nested</b> text<h2>2. Second</h3><p>two & <unknown>three")
    doc = load_html(page)
    assert list(doc.sections) == ["1", "2"]
    assert "one bold nested text" in doc.sections["1"].text and "two & three" in doc.sections["2"].text


def test_permalink_signs_of_documentation_generators_are_not_text(tmp_path):
    """Sphinx and MkDocs put a "¶" link in every heading (`a.headerlink`): not a word of the title or text."""
    page = tmp_path / "sphinx.html"
    page.write_text('<div role="main"><section id="tokens"><h1>Tokens<a class="headerlink" href="#tokens" '
                    'title="Link to this heading">¶</a></h1><p>A token expires.</p><section id="lifetime">'
                    '<h2>Lifetime<a class="headerlink" href="#lifetime">#</a></h2><p>Five minutes.</p>'
                    '</section></section></div>')
    doc = load_html(page)
    assert "¶" not in doc.clean and "#" not in doc.clean
    assert [s.title for s in doc.sections.values()] == ["Tokens", "Lifetime"]
    assert resolve(doc, "#lifetime") == resolve(doc, "Lifetime")


@pytest.mark.parametrize(("text", "pages", "number", "name"), [
    ("Section 4.1.3", None, "4.1.3", None), ("§2", None, "2", None), ("4.1.3.", None, "4.1.3", None),
    ("p. 7", (7, 7), None, None), ("pages 3-4", (3, 4), None, None), ("pp. 3–4", (3, 4), None, None),
    ("page 3, section 2.1", (3, 3), "2.1", None), ("§2.1 (p. 3)", (3, 3), "2.1", None),
    ("#token-lifetime", None, None, "token-lifetime"), ("the 'Token lifetime' section", None, None, "Token lifetime"),
])
def test_locators_as_llms_write_them(text, pages, number, name):
    parsed = parse_locator(text)
    assert (parsed.pages, parsed.number, parsed.name) == (pages, number, name)


def test_rfc_and_plain_text_keep_their_loaders(rfc7519):
    assert detect_format(resolve_source("rfc7519.txt")) == "rfc"
    assert detect_format(FORMATS / "field-note.txt") == "text"
    assert resolve(rfc7519, "Section 4.1.3") == "4.1.3" and resolve(rfc7519, "99.1") is None


# --- bad documents: a clear error naming the file and what to do, exit 2, never a traceback ------

def _bad_documents(tmp_path):
    from fpdf import FPDF

    encrypted = FPDF()
    encrypted.add_page()
    encrypted.set_font("Helvetica", size=12)
    encrypted.text(20, 20, "A locked page.")
    encrypted.set_encryption(owner_password="owner", user_password="secret")
    encrypted.output(str(tmp_path / "locked.pdf"))
    scanned = FPDF()
    for _ in range(2):
        scanned.add_page()
        scanned.rect(20, 20, 100, 60, style="F")  # drawn, like a scanned image: no text layer
    scanned.output(str(tmp_path / "scanned.pdf"))
    (tmp_path / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (tmp_path / "empty.md").write_text("   \n\n")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "scripts.html").write_text("<html><head><script>x()</script></head><body><style>p{}</style></body>")
    (tmp_path / "truncated.pdf").write_bytes(b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog")
    (tmp_path / "paper.md").write_bytes((FORMATS / "reservoir-report.pdf").read_bytes())
    return {
        "locked.pdf": "encrypted with a password: decrypt it first",
        "scanned.pdf": "this PDF has no text layer",
        "binary.md": "holds binary data (NUL bytes), not markdown text",
        "empty.md": "has no text to check citations against",
        "empty.txt": "has no text to check citations against",
        "scripts.html": "has no text to check citations against",
        "truncated.pdf": "is not a readable PDF",
        "paper.md": "is a PDF file, not markdown text: rename it to .pdf or pass --format pdf",
    }


@pytest.mark.skipif(not has_fpdf, reason="fpdf2 (requirements-test.txt) writes the test PDFs")
def test_bad_documents_fail_clearly(tmp_path):
    for name, message in _bad_documents(tmp_path).items():
        with pytest.raises(SourceError, match=re.escape(message)):
            load_document(tmp_path / name)
    with pytest.raises(SourceError, match="run OCR first"):
        load_document(tmp_path / "scanned.pdf")


@pytest.mark.cli
@pytest.mark.skipif(not has_fpdf, reason="fpdf2 (requirements-test.txt) writes the test PDFs")
def test_bad_documents_exit_2_on_the_command_line(tmp_path):
    cites = FORMATS / "reservoir-report_citations.json"
    for name, message in _bad_documents(tmp_path).items():
        result = run("audit", "--source", str(tmp_path / name), "--citations", str(cites), "--locate-only")
        assert result.returncode == 2, (name, result.stderr)
        assert "Traceback" not in result.stderr and str(tmp_path / name) in result.stderr, result.stderr
        assert message in result.stderr, result.stderr
    forced = run("audit", "--source", str(tmp_path / "paper.md"), "--format", "pdf", "--citations", str(cites),
                 "--locate-only")
    assert forced.returncode == 1 and "pdf_page_99" in forced.stdout, forced.stderr


@pytest.mark.skipif(not has_fpdf, reason="fpdf2 (requirements-test.txt) writes the test PDFs")
def test_a_pdf_locked_only_against_editing_is_read(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.text(20, 20, "Readable without a password.")
    pdf.set_encryption(owner_password="owner")  # no user password: anyone may open it
    pdf.output(str(tmp_path / "owner-only.pdf"))
    assert load_document(tmp_path / "owner-only.pdf").sections["page 1"].text == "Readable without a password."


# --- documents nobody wrote for the tests: loading never fails unexpectedly, offsets stay valid ---

_MARKUP = st.lists(st.sampled_from(["# ", "## 2.1 ", "\n", "\n\n", "*", "**", "`", "```\n", "- ", "> ", "[a](b)",
                                    "<b>", "</p>", "&amp;", "\\*", "text ", "Word", "é", "1. ", "---\n", "|x|y|\n"]),
                   max_size=60).map("".join)


@settings(max_examples=150, deadline=None)
@given(_MARKUP)
def test_any_markdown_or_html_loads_with_valid_offsets(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("docs")
    for name, loader in (("doc.md", load_markdown), ("doc.html", load_html)):
        path = folder / name
        path.write_text(text, encoding="utf-8")
        doc = loader(path)
        assert len(doc.clean_to_raw) == len(doc.clean)
        if len(doc.clean):
            assert np.all(np.diff(doc.clean_to_raw) >= 0) and 0 <= doc.clean_to_raw[-1] < max(len(doc.raw), 1)
        for section in doc.sections.values():
            assert 0 <= section.start < section.end <= len(doc.raw)
            assert doc.clean[section.clean_start : section.clean_end] == section.text


def test_citation_files_are_valid():
    for citations in SETS.values():
        records = load_citations(FORMATS / citations)
        kinds = {r.expected for r in records}
        assert {"verified", "fabricated"} <= kinds and any(r.quote is None for r in records)


def test_markdown_nested_past_the_parsers_limit_keeps_its_text(tmp_path):
    """markdown-it stops at 20 levels of nesting and drops the rest of the block: the lines it
    dropped are kept as written, so a true quote after them is found, not `fabricated` (issue 21)."""
    raw = ("# Setup\n\nIntro text.\n\n" + "".join("  " * i + f"- level {i}\n" for i in range(60))
           + "\nThe tail paragraph states the retention period of ninety days.\n")
    path = tmp_path / "deep.md"
    path.write_text(raw, encoding="utf-8")
    quotes = [{"id": "tail", "claim": "Retention is ninety days.", "section": "setup",
               "quote": "The tail paragraph states the retention period of ninety days."},
              {"id": "deep", "claim": "There is a level 59.", "section": "setup", "quote": "level 59"}]
    citations = tmp_path / "c.json"
    citations.write_text(json.dumps(quotes), encoding="utf-8")
    table = audit_quotes(path, citations, locate_only=True).table
    assert list(table["quote_status"]) == ["exact", "exact"]
    start, end = table["span"][0]
    assert raw[start:end] == quotes[0]["quote"]
    plain = load_document(FORMATS / "lantern-sync.md")  # a document within the limit is read as before
    assert "- level" not in plain.clean


def test_html_nested_thousands_of_levels_deep_is_read(tmp_path):
    """The page's text is walked with an explicit stack: 5,000 nested elements are no RecursionError
    (it was exit 4), and the text after them is found (issue 21)."""
    page = tmp_path / "deep.html"
    page.write_text("<html><body><h2 id='top'>Top</h2>" + "<div>" * 5000 + "deep text" + "</div>" * 5000
                    + "<p>The tail sentence is here.</p></body></html>", encoding="utf-8")
    doc = load_document(page)
    assert "deep text" in doc.clean and "The tail sentence is here." in doc.clean


@pytest.mark.cli
def test_html_nested_thousands_of_levels_deep_is_audited_by_the_command_line(tmp_path):
    """The same page through the command line: exit 1 with the quote found, not exit 4."""
    page = tmp_path / "deep.html"
    page.write_text("<html><body><h2 id='top'>Top</h2>" + "<div>" * 5000 + "deep text" + "</div>" * 5000
                    + "<p>The tail sentence is here.</p></body></html>", encoding="utf-8")
    result = run("audit", "--source", str(page), "--citations", str(_one_quote(tmp_path, "The tail sentence is here.")),
                 "--locate-only")
    assert result.returncode == 1 and "exact" in result.stdout, result.stderr


def _one_quote(tmp_path, quote):
    path = tmp_path / "one.json"
    path.write_text(json.dumps([{"id": "q", "claim": "c", "quote": quote, "section": "top"}]), encoding="utf-8")
    return path
