"""The step-1 cases pinned by test_locate_pinned.py: every labelled citation, plus variants of
each labelled quote (re-wrapped, curly-quoted, elided, one word changed, cited elsewhere)."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETS = {
    "rfc7519.txt": ["rfc7519_citations.json", "eval_rfc7519.json"],
    "rfc6749.txt": ["eval_rfc6749.json"],
}
PINNED = Path(__file__).with_name("locate_pinned.json")


def _variants(quote: str, section: str) -> list[tuple[str, str, str]]:
    """(variant name, quote, cited section) derived from one labelled quote."""
    words = quote.split()
    out = [
        ("wrapped", "\n   ".join(" ".join(words[i:i + 7]) for i in range(0, len(words), 7)), section),
        ("curly", "\u201c" + quote.replace('"', "\u201d").replace("-", "\u2013") + "\u201d", section),
        ("nbsp", quote.replace(" ", "\u00a0", 3), section),
        ("elsewhere", quote, "1"),
        ("nosection", quote, "99.99"),
    ]
    if len(words) >= 8:
        out.append(("elided", " ".join(words[:3]) + " ... " + " ".join(words[-3:]), section))
        out.append(("elided_reversed", " ".join(words[-3:]) + " \u2026 " + " ".join(words[:3]), section))
        changed = list(words)
        changed[len(words) // 2] = "SHOULD" if changed[len(words) // 2] != "SHOULD" else "MAY"
        out.append(("one_word", " ".join(changed), section))
        out.append(("half", " ".join(words[: len(words) // 2]), section))
        out.append(("shuffled", " ".join(words[1::2] + words[::2]), section))
    return out


def cases() -> list[dict]:
    """Every case: source, citation id, variant, quote, cited section."""
    found = []
    for source, files in SETS.items():
        for name in files:
            for record in json.loads((ROOT / "data" / name).read_text(encoding="utf-8")):
                found.append({"source": source, "id": record["id"], "variant": "labelled",
                              "quote": record["quote"], "section": record["section"]})
                if record["quote"]:
                    for variant, quote, section in _variants(record["quote"], record["section"]):
                        found.append({"source": source, "id": record["id"], "variant": variant,
                                      "quote": quote, "section": section})
    return found


def outcome(location) -> dict:
    """The pinned fields of one `Location`."""
    import hashlib

    evidence = location.evidence
    return {
        "quote_status": str(location.quote_status),
        "found_section": location.found_section,
        "section_match": location.section_match,
        "match_score": location.match_score,
        "span": list(location.span) if location.span else None,
        "evidence_sha256": hashlib.sha256(evidence.encode()).hexdigest()[:16] if evidence is not None else None,
        "closest": location.closest,
    }


def compute() -> list[dict]:
    from citeaudit import load_rfc
    from citeaudit.locate import index_document
    from citeaudit.locate import locate_quote as locate
    from citeaudit.sources import canonical_section_id

    indexes = {source: index_document(load_rfc(source)) for source in SETS}
    results = []
    for case in cases():
        index = indexes[case["source"]]
        found = locate(index, case["quote"], canonical_section_id(case["section"]))
        results.append({**case, **outcome(found)})
    return results


def _key(case: dict) -> str:
    return f"{case['source']}:{case['id']}:{case['variant']}"


if __name__ == "__main__":  # regenerate: only when a change of behaviour is intended
    rows = compute()
    PINNED.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(rows)} cases; statuses:",
          {s: sum(r["quote_status"] == s for r in rows) for s in sorted({r["quote_status"] for r in rows})})
