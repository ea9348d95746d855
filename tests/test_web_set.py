"""The long web pages of `data/web/` (docs/measurements/focused-evidence.md): every quote is found word for word
in the section it cites, and every cited section is long enough that `--evidence focused` asks
about a passage of it."""

import json
from collections import Counter
from pathlib import Path

import pytest

from citeaudit import AuditOptions, audit_quotes, load_citations
from citeaudit.pipeline.focus import FOCUS_CHARS

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["harbor-ferry-guide", "allotment-water-policy"]


@pytest.mark.parametrize("page", PAGES)
def test_every_quote_is_exact_in_a_long_cited_section(page):
    citations = ROOT / "data" / "web" / f"{page}_citations.json"
    table = audit_quotes(str(ROOT / "data" / "web" / f"{page}.html"), load_citations(citations), locate_only=True,
                         options=AuditOptions(contrast=())).table
    quoted = table[table["quote"].notna()]
    assert len(quoted) >= 10 and set(quoted["quote_status"]) == {"exact"}
    assert table["section_match"].all()
    assert (table["evidence"].str.len() > FOCUS_CHARS).all()
    labels = Counter(r["expected"] for r in json.loads(citations.read_text(encoding="utf-8")))
    assert labels == {"verified": 5, "contradicted": 4, "unsupported": 3}
