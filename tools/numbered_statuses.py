"""Step 1 on the project's own numbered documents (issue 49): the labelled citations of the
contract, privacy policy, regulation and standard (`data/numbered/<name>_citations.json`, written
as LLMs cite clauses: "Section 4(b)", "§ 4.2(b)", "s. 4.2(a)", "Sec. 1b", "Art. 3(2)(c)",
"Sections 5.1 and 5.2", "4.2(a)-(c)") located without a model in every format the document is
written in (text, Markdown, HTML, PDF; `tools/make_numbered_docs.py`), each one's quote status,
the clause it was found in and whether the clause it cites holds it, against its label
(`data/numbered/step1_expected.json`). Prints one row per document and format, and the total per
format (`--totals`: the totals alone); `--each` lists every citation that is not as labelled.

    python tools/numbered_statuses.py [--each] [--totals]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from citeaudit import AuditOptions, audit_quotes, load_citations

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "data" / "numbered"
DOCUMENTS = ("contract", "privacy-policy", "regulation", "standard")
FORMATS = {"text": "txt", "markdown": "md", "html": "html", "pdf": "pdf"}
EXPECTED = FOLDER / "step1_expected.json"
CHECKED = ("quote_status", "found_section", "section_match")


def located() -> pd.DataFrame:
    """Every labelled citation's step-1 result in every format beside its label, one row each."""
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    rows = []
    for name in DOCUMENTS:
        citations = load_citations(FOLDER / f"{name}_citations.json")
        for fmt, ext in FORMATS.items():
            audit = audit_quotes(FOLDER / f"{name}.{ext}", citations, locate_only=True,
                                 options=AuditOptions(contrast=()))
            reading = audit.document.reading if audit.document else ""
            for row in audit.table.to_dict("records"):
                label = expected[row["id"]]
                got = {k: (row[k] if not isinstance(row[k], float) or row[k] == row[k] else None) for k in CHECKED}
                rows.append({"document": name, "format": fmt, "reading": reading,
                             "citation": row["id"], "cited": row["cited_section"], **got,
                             **{f"right {k}": got[k] == label[k] for k in CHECKED},
                             "judged": row["evidence"] is not None and row["evidence"] == row["evidence"]})
    return pd.DataFrame(rows)


def summary(rows: pd.DataFrame, totals: bool = False) -> pd.DataFrame:
    """Per document and format, and per format in all (only those with `totals`): citations and
    how many are right."""
    def counts(part: pd.DataFrame) -> dict[str, object]:
        right = part[[f"right {k}" for k in CHECKED]].all(axis=1)
        return {"citations": len(part), **{f"right {k}": int(part[f"right {k}"].sum()) for k in CHECKED},
                "as labelled": f"{int(right.sum())}/{len(part)}", "share": f"{right.mean():.0%}"}
    table = {} if totals else {f"{d} ({f})": counts(rows[(rows["document"] == d) & (rows["format"] == f)])
                               for d in DOCUMENTS for f in FORMATS}
    table.update({f"all ({f})": counts(rows[rows["format"] == f]) for f in FORMATS})
    return pd.DataFrame(table).T.rename_axis("document (format)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--each", action="store_true", help="also list every citation not as labelled")
    parser.add_argument("--totals", action="store_true", help="only the totals per format")
    args = parser.parse_args(argv)
    rows = located()
    wrong = rows[~rows[[f"right {k}" for k in CHECKED]].all(axis=1)]
    if args.each and len(wrong):
        print(wrong[["document", "format", "citation", "cited", *CHECKED]].to_string(index=False))
        print()
    print(summary(rows, args.totals).to_string())
    return 0 if wrong.empty else 1


if __name__ == "__main__":
    import docs_figures  # --save-docs: also save what it prints for the documentation

    sys.exit(docs_figures.run(main, __file__))
