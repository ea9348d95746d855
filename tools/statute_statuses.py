"""Step 1 on the Japanese statutes (issue 35): the labelled citations of both Acts
(`data/ja/*_step1_citations.json`, 38 in all) located without a model, each one's quote status, the
part of the Act it was found in and whether the part it cites holds it, against its label
(`data/ja/step1_expected.json`; 同条 and 同項 name their part through the citation before them, in
file order). Prints one row per Act and the total; `--each` lists every citation.

The Acts are read by name from the data folders (`CITEAUDIT_DATA_DIR`, `../shared/data/ja`).

    python tools/statute_statuses.py [--each]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from citeaudit import AuditOptions, audit_quotes, load_citations

ROOT = Path(__file__).resolve().parents[1]
ACTS = {  # short name -> (the Act's e-Gov XML, its labelled citations)
    "appi": ("appi-act-57-2003.egov.xml", ROOT / "data" / "ja" / "appi_step1_citations.json"),
    "unauthorized-access": ("unauthorized-access-act-128-1999.egov.xml",
                            ROOT / "data" / "ja" / "unauthorized-access_step1_citations.json"),
}
EXPECTED = ROOT / "data" / "ja" / "step1_expected.json"
STATUSES = ("exact", "elided", "near", "missing")


def located() -> pd.DataFrame:
    """Every labelled citation's step-1 result beside its label, one row each, by Act."""
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    rows = []
    for act, (source, citations) in ACTS.items():
        table = audit_quotes(source, load_citations(citations), locate_only=True, options=AuditOptions(contrast=()))
        for row in table.table.to_dict("records"):
            label = expected[row["id"]]
            got = {"quote_status": row["quote_status"], "found_section": row["found_section"],
                   "section_match": row["section_match"]}
            rows.append({"act": act, "citation": row["id"], "cited": row["cited_section"], **got,
                         "as labelled": got == label})
    return pd.DataFrame(rows)


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per Act and in all: citations, quote statuses, where found, how many as labelled."""
    def counts(part: pd.DataFrame) -> dict[str, object]:
        found = part["quote_status"] != "missing"
        return {"citations": len(part), **{s: int((part["quote_status"] == s).sum()) for s in STATUSES},
                "in the part cited": int((found & part["section_match"].eq(True)).sum()),
                "in another part": int((found & part["section_match"].eq(False)).sum()),
                "as labelled": f"{int(part['as labelled'].sum())}/{len(part)}"}
    table = {act: counts(rows[rows["act"] == act]) for act in ACTS}
    table["both"] = counts(rows)
    return pd.DataFrame(table).T.rename_axis("act")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--each", action="store_true", help="also list every citation")
    args = parser.parse_args(argv)
    rows = located()
    if args.each:
        print(rows.to_string(index=False))
        print()
    print(summary(rows).to_string())
    return 0 if rows["as labelled"].all() else 1


if __name__ == "__main__":
    import docs_figures  # --save-docs: also save what it prints for the documentation

    sys.exit(docs_figures.run(main, __file__))
