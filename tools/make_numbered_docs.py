"""Write the project's own numbered documents (issue 49) in plain text, Markdown, HTML and PDF.

Four documents of the project's own writing, numbered as such documents are: a contract (clauses
1. / 2.1 with sub-items (a)), a privacy policy (an ordered list of clauses with bold captions in
Markdown and HTML, sub-items a) and (i)), a regulation (Article N, paragraphs 1., items (a)) and
a standard (1 / 1.2 / 1.2.3). Each is written once as lines of text below and rendered in every
format into `data/numbered/`; the labelled citations beside them (`<name>_citations.json`) and
their expected step-1 results (`step1_expected.json`) hold for every format. The PDFs are
reproducible (fixed creation date and file id).

    python tools/make_numbered_docs.py [OUT_DIR]
"""

from __future__ import annotations

import html
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "numbered"

DOCUMENTS: dict[str, list[str]] = {
    "contract": [
        "SERVICES AGREEMENT",
        "",
        "This Agreement is made on 2 February 2026 between Northwind Freight Ltd (the Customer)",
        "and Keel Analytics Ltd (the Supplier).",
        "",
        "1. Definitions.",
        "In this Agreement:",
        "(a) \"Services\" means the route planning services described in Schedule 1;",
        "(b) \"Business Day\" means a day other than a Saturday, Sunday or public holiday;",
        "(c) \"Confidential Information\" means information marked as confidential.",
        "",
        "2. Services.",
        "2.1 The Supplier shall provide the Services from the Start Date.",
        "2.2 The Supplier shall meet the service levels set out in clause",
        "4.1 of Schedule 1 in every calendar month.",
        "2.3 The Customer shall give the Supplier access to its shipping data.",
        "",
        "3. Fees and Payment.",
        "3.1 The Customer shall pay the fees within 30 days of the date of each invoice.",
        "3.2 Late payments bear interest at 4% a year above the base rate.",
        "2026 prices are fixed; later prices follow the index in clause 3.3.",
        "3.3 The fees rise each year by the consumer price index.",
        "",
        "4. Termination.",
        "4.1 Either party may terminate this Agreement on 90 days' written notice.",
        "4.2 Either party may terminate at once by notice if the other party:",
        "(a) commits a material breach and does not remedy it within 30 days;",
        "(b) becomes insolvent; or",
        "(c) ceases to carry on business.",
        "4.3 On termination the Supplier shall return all Confidential Information.",
        "",
        "5. Liability.",
        "5.1 Neither party limits its liability for death or personal injury caused by negligence.",
        "5.2 The Supplier's total liability in each year is limited to the fees paid in that year.",
    ],
    "privacy-policy": [
        "Harbourlight Library Privacy Policy",
        "",
        "This policy explains how Harbourlight Library uses the personal data of its members.",
        "",
        "1. Data we collect. We collect the following data:",
        "a) your name and postal address;",
        "b) your email address, if you give it; and",
        "c) the items you borrow and when you return them.",
        "",
        "2. How we use your data. We use your data only to run the library service.",
        "We do not sell your data and we do not use it for advertising.",
        "",
        "3. How long we keep it. We keep your loan history for 12 months after each loan.",
        "15 months after your membership ends we delete your account.",
        "",
        "4. Your rights. You have the right:",
        "a) to ask for a copy of your data;",
        "b) to ask us to correct your data, in particular:",
        "(i) a wrong postal address; or",
        "(ii) a misspelt name;",
        "c) to object to the use of your data for newsletters.",
        "",
        "5. Contact. Write to the Data Protection Officer at the central library.",
    ],
    "regulation": [
        "REGULATION ON COMMUNITY ALLOTMENTS",
        "",
        "Article 1",
        "Subject matter",
        "1. This Regulation lays down rules for the letting of community allotments.",
        "2. It applies to every allotment site owned by the council.",
        "",
        "Article 2",
        "Definitions",
        "1. For the purposes of this Regulation:",
        "(a) 'plot holder' means a person who holds a tenancy of a plot;",
        "(b) 'plot' means an area of land let for growing fruit and vegetables.",
        "",
        "Article 3",
        "Tenancies",
        "1. A tenancy runs for one year from 1 April.",
        "2. The council shall renew a tenancy unless the plot holder has:",
        "(a) failed to cultivate the plot for three months;",
        "(b) failed to pay the rent; or",
        "(c) kept livestock on the plot.",
        "3. A plot holder may end the tenancy at any time by giving one month's notice.",
        "",
        "Article 4",
        "Water",
        "1. Hosepipes shall not be used between 1 June and 31 August.",
        "2. Each plot holder shall collect rainwater where a water butt is provided.",
    ],
    "standard": [
        "STANDARD FOR FIELD SENSOR CALIBRATION",
        "",
        "1 Scope",
        "This standard sets out how field sensors are calibrated before use.",
        "",
        "2 Terms",
        "2.1 Reference sensor. A sensor calibrated by an accredited laboratory.",
        "2.2 Drift. The change in a sensor's reading over time under constant conditions.",
        "",
        "3 Procedure",
        "3.1 Preparation",
        "3.1.1 The sensor shall rest at room temperature for two hours before calibration.",
        "3.1.2 The operator shall clean the sensing surface with distilled water.",
        "3.2 Comparison",
        "3.2.1 The sensor shall be compared with a reference sensor at three points.",
        "3.2.2 A sensor whose error exceeds 2 percent at any point shall be rejected.",
        "",
        "4 Records",
        "4.1 Each calibration shall be recorded with the date and the operator's name.",
        "4.2 Records shall be kept for five years.",
    ],
}

# the privacy policy's clauses are an ordered list with bold captions in Markdown and HTML
LISTED = {"privacy-policy"}
_TOP = re.compile(r"^(\d+)\.\s+([^.]+\.)\s*(.*)$")


def _top_level(name: str, line: str) -> bool:
    if name == "regulation":
        return line.startswith("Article ")
    return bool(re.match(r"^\d+\.?\s+[A-Z]", line)) and not re.match(r"^\d+\.\d", line) and \
        not line.startswith(("2026 ", "15 "))


def as_markdown(name: str, lines: list[str]) -> str:
    out: list[str] = []
    for i, line in enumerate(lines):
        if not line:
            continue
        if i == 0:
            out.append(f"# {line}")
        elif name in LISTED and (top := _TOP.match(line)):
            out.append(f"{top.group(1)}. **{top.group(2)}** {top.group(3)}".rstrip())
        elif name not in LISTED and _top_level(name, line):
            out.append(f"## {line}")
        else:
            indent = "   " if name in LISTED and i > 4 else ""
            out.append(indent + line.replace("*", r"\*"))
    return "\n\n".join(out) + "\n"


def as_html(name: str, lines: list[str]) -> str:
    body: list[str] = []
    open_item = False
    for i, line in enumerate(lines):
        if not line:
            continue
        text = html.escape(line, quote=False)
        if i == 0:
            body.append(f"<h1>{text}</h1>")
        elif name in LISTED and (top := _TOP.match(line)):
            if not open_item:
                body.append("<ol>")
            else:
                body.append("</li>")
            open_item = True
            rest = html.escape(top.group(3), quote=False)
            body.append(f"<li><p><strong>{html.escape(top.group(2))}</strong> {rest}</p>")
        elif name not in LISTED and _top_level(name, line):
            body.append(f"<h2>{text}</h2>")
        else:
            body.append(f"<p>{text}</p>")
    if open_item:
        body.append("</li></ol>")
    inner = "\n".join(body)
    head = f"<!doctype html>\n<html><head><title>{html.escape(lines[0])}</title></head>\n"
    return f"{head}<body><main>\n{inner}\n</main></body></html>\n"


def as_pdf(lines: list[str], path: Path) -> None:
    pdf = FPDF(format="A4")
    pdf.set_creation_date(datetime(2026, 1, 1, tzinfo=UTC))
    pdf.file_id = lambda: "<00000000000000000000000000000049><00000000000000000000000000000049>"  # type: ignore[method-assign]
    pdf.set_auto_page_break(auto=True, margin=20)
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    for line in lines:
        pdf.cell(0, 5, line, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    out.mkdir(parents=True, exist_ok=True)
    for name, lines in DOCUMENTS.items():
        (out / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (out / f"{name}.md").write_text(as_markdown(name, lines), encoding="utf-8")
        (out / f"{name}.html").write_text(as_html(name, lines), encoding="utf-8")
        as_pdf(lines, out / f"{name}.pdf")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
