"""Write the project's own multi-page PDF test document, `data/formats/reservoir-report.pdf`.

The text below is the project's (no third-party content). Lines and page breaks are laid out by
hand so that the document has what real reports have: a running header and a page footer on every
page, numbered headings, a word hyphenated across a page break and a sentence that runs on to the
next page. The output is byte-for-byte reproducible (fixed creation date and file id), so the
committed PDF, the recordings made from it and the tests that rebuild it agree.

    python tools/make_sample_pdf.py [OUT.pdf]
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "data" / "formats" / "reservoir-report.pdf"
HEADER = "Reservoir Survey 2026 - Methods Report"

# one list of lines per page; "# " starts a heading line, "" is a blank line
PAGES: list[list[str]] = [
    [
        "# Reservoir Survey 2026: Sampling Methods",
        "",
        "This report describes how the survey team sampled the four reservoirs of the upper",
        "valley between March and June 2026, and how the samples were stored and tested.",
        "",
        "# 1. Introduction",
        "",
        "The survey measures turbidity, dissolved oxygen and nitrate at fixed intake points.",
        "Each reservoir was visited every second week; a visit that could not take place",
        "because of weather was moved to the next dry day rather than skipped.",
        "",
        "# 2. Sampling sites",
        "",
        "Sampling sites were chosen at the intake towers, where the water utility draws raw",
        "water, and at one shoreline point per reservoir chosen for easy access by boat.",
    ],
    [
        "# 2.1 Intake points",
        "",
        "At every intake point, samples are taken at a depth of two metres below the surface",
        "using a weighted sampler. A sample taken closer to the surface is discarded, because",
        "wind-driven mixing makes shallow readings unrepresentative of the water drawn by the",
        "intake.",
        "",
        "# 2.2 Sample handling",
        "",
        "Samples are kept in the dark at four degrees Celsius and must reach the laboratory",
        "within 24 hours of collection. Before use, each sample bottle is rin-",
    ],
    [
        "sed three times with water from the site before it is filled and sealed.",
        "",
        "# 3. Water quality measures",
        "",
        "# 3.1 Turbidity",
        "",
        "Turbidity is measured in nephelometric turbidity units (NTU) with a bench",
        "turbidimeter calibrated every morning against formazin standards. Readings above",
        "40 NTU are repeated on a second portion of the same sample, and the survey records",
        "the mean of the two readings as the result for that visit. When the two",
    ],
    [
        "readings differ by more than ten percent, both are reported and the visit is flagged.",
        "",
        "# 3.2 Dissolved oxygen",
        "",
        "Dissolved oxygen is measured in the field with an optical probe, because the value",
        "changes within minutes once a sample is sealed in a bottle.",
        "",
        "# 4. Data retention",
        "",
        "Raw instrument files are kept for ten years. Field notebooks are scanned within a week",
        "of each visit, and the paper originals are archived with the water utility.",
    ],
]


class _ReproduciblePDF(FPDF):
    def file_id(self) -> None:
        return None  # no /ID: the file is the same on every run


def build_pdf(out: str | Path = DEFAULT_OUT) -> Path:
    """Lay out `PAGES` on A4 with a running header and a "Page N of M" footer; write `out`."""
    pdf = _ReproduciblePDF(format="A4", unit="mm")
    pdf.set_creation_date(datetime(2026, 1, 1, tzinfo=UTC))
    pdf.set_auto_page_break(False)
    pdf.set_title("Reservoir Survey 2026: Sampling Methods")
    for number, lines in enumerate(PAGES, start=1):
        pdf.add_page()
        pdf.set_font("Helvetica", size=9)
        pdf.text(20, 14, HEADER)
        y = 30.0
        for line in lines:
            heading = line.startswith("# ")
            pdf.set_font("Helvetica", style="B" if heading else "", size=12 if heading else 10.5)
            if line:
                pdf.text(20, y, line[2:] if heading else line)
            y += 7.0 if heading else 5.5
        pdf.set_font("Helvetica", size=9)
        pdf.text(95, 285, f"Page {number} of {len(PAGES)}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(out))
    return out


if __name__ == "__main__":
    print(build_pdf(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT))
