"""The DEV contrast set (issue 52): the held-out set's rules over supported claims it did not use,
for tuning the contrast checks without looking at the held-out set.

The held-out set (`tools/contrast_heldout.py`) perturbs every `verified` citation of the project's
labelled sets and of the public TRAIN sets that `make public-sets` samples (per domain, the first
`DEFAULT_PER_LABEL` supported pairs ordered by SHA-256 of domain and key). This set takes the NEXT
supported pairs in that same order (ranks `DEFAULT_PER_LABEL` to `DEFAULT_PER_LABEL + --per-domain`),
drops any whose claim text is also a held-out original's, renders them as a document of its own
(`build/contrast/dev/<domain>.txt`, one section per passage) and applies the held-out set's rules
(`contrast_heldout.perturb`) to them. No original is shared with the held-out set; a passage may be
(SciFact and Check-COVID cite one abstract from several claims). Nothing here is committed (public
data): every file goes to build/.

  python tools/contrast_dev.py            write build/contrast/dev/<domain>{.txt,_citations.json,.json}
  python tools/contrast_dev.py --measure  the held-out set's table over the dev set (same columns)
  python tools/contrast_dev.py --standing KIND [--checks default]
                                          print the dev claims of KIND that stand, with their
                                          original and evidence (to read why); KIND `originals`
                                          prints the supported originals flagged, with the findings
  python tools/contrast_dev.py --frontier what the loosest evidence-only reading of each kind would
                                          cost: each added to the default checks, the originals
                                          flagged and the perturbed claims of every kind that stand
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import contrast_heldout as heldout
import pandas as pd

from citeaudit import load_citations
from citeaudit.calibrate import public_sets as public
from citeaudit.decide.contrast import entities, identifiers, polarity
from citeaudit.decide.contrast import quantities as Q
from citeaudit.decide.contrast.passages import best_sentences
from citeaudit.settings import environment as config
from citeaudit.settings.environment import DEFAULT_CONTRAST_CHECKS
from citeaudit.table import ContrastCheck

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "contrast" / "dev"


def dev_pairs(domain: str, per_domain: int) -> list[public.Pair]:
    """Supported pairs of `domain` after the ones the public TRAIN sets (and so the held-out set) use."""
    pairs = [p for p in public.READERS[domain](config.public_dir()) if p.expected == "verified"]
    pairs.sort(key=lambda p: public.hashlib.sha256(f"{domain}:{p.key}".encode()).hexdigest())
    used, rest = pairs[:public.DEFAULT_PER_LABEL], pairs[public.DEFAULT_PER_LABEL:]
    used_claims = {p.claim.strip().lower() for p in used}
    return [p for p in rest if p.claim.strip().lower() not in used_claims][:per_domain]


def write(per_domain: int) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for domain in heldout.PUBLIC_DOMAINS:
        text, citations = public.render(domain, dev_pairs(domain, per_domain))
        document, cited = OUT / f"{domain}.txt", OUT / f"{domain}_citations.json"
        document.write_text(text, encoding="utf-8")
        public.check_sections(document, text.rstrip("\n").split("\n\n"))
        cited.write_text(json.dumps(citations, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        table, clean = heldout._locate(str(document), load_citations(cited))
        records = heldout.perturb(table, clean)
        (OUT / f"{domain}.json").write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
        print(f"{domain}: {len(citations)} supported originals, {len(records)} perturbed claims")


def located() -> tuple[pd.DataFrame, pd.DataFrame]:
    claims, originals = [], []
    for domain in heldout.PUBLIC_DOMAINS:
        document, cited, out = OUT / f"{domain}.txt", OUT / f"{domain}_citations.json", OUT / f"{domain}.json"
        if not out.is_file():
            raise SystemExit(f"{out} is missing: run python tools/contrast_dev.py first")
        table, _ = heldout._locate(str(document), load_citations(out))
        claims.append(table.assign(group="dev", change=table["id"].str.rsplit("~", n=1).str[1]))
        original, _ = heldout._locate(str(document), load_citations(cited))
        original = original[(original["expected"] == "verified") & original["evidence"].notna()]
        originals.append(original.assign(group="dev", change="original"))
    return pd.concat(claims, ignore_index=True), pd.concat(originals, ignore_index=True)


def _year(q: Q.Quantity) -> bool:
    return q.dimension == Q.COUNT and q.value.is_integer() and 1800 <= q.value <= 2100 and len(q.text) == 4


def loose_amount(claim: str, evidence: str, quote: str | None) -> bool:
    """A claim amount no evidence amount equals (nor a range holds), with one of its kind (a year apart)
    in the quote's sentences."""
    mine, theirs = Q.quantities(claim), Q.quantities(evidence)
    spans = Q.ranges(evidence, theirs)
    focus = [e for s, _ in best_sentences(claim, evidence, quote, top=2) for e in theirs
             if s.start <= e.start and e.end <= s.end]
    kind = lambda q: "year" if _year(q) else q.dimension  # noqa: E731
    return any(not any(q.same(e) for e in theirs) and not Q.within(q, spans) and any(kind(e) == kind(q) for e in focus)
               for q in mine)


def loose_term(claim: str, evidence: str, quote: str | None) -> bool:
    """A quoted, defined or all-caps term of the claim the evidence does not hold."""
    return any(not identifiers.holds(evidence, t) for _, _, _, t in identifiers.terms(claim))


def loose_name(claim: str, evidence: str, quote: str | None) -> bool:
    """A capitalized name of the claim the evidence does not hold."""
    return any(shape == "name" and t.lower() not in evidence.lower() for shape, _, _, t in entities.terms(claim))


def _negated(text: str) -> bool:
    skipped = [(m.start(), m.end()) for m in polarity.NOT_A_NEGATION.finditer(text)]
    return any(not any(a <= m.start() < b for a, b in skipped) for m in polarity.NEGATION.finditer(text))


def loose_negation(claim: str, evidence: str, quote: str | None) -> bool:
    """The claim negated and its best-matching evidence sentence not, or the reverse."""
    best = best_sentences(claim, evidence, quote, top=1)
    return bool(best) and _negated(claim) != _negated(best[0][0].text)


LOOSE: dict[str, tuple[str, Callable[[str, str, str | None], bool]]] = {
    "amounts": ("a claim amount no evidence amount equals, one of its kind in the quote's sentences", loose_amount),
    "terms": ("a claim term (quoted, defined, all-caps) the evidence does not hold", loose_term),
    "names": ("a capitalized name the evidence does not hold", loose_name),
    "negation": ("the claim negated and its best evidence sentence not, or the reverse", loose_negation),
}


def frontier(claims: pd.DataFrame, originals: pd.DataFrame) -> pd.DataFrame:
    """Each `LOOSE` reading added to the default checks: originals flagged, and per kind the share of
    perturbed claims that stand (a "supports"-to-everything judge)."""
    checks = tuple(DEFAULT_CONTRAST_CHECKS)
    claims = claims[claims["change"] != heldout.CONTROL].reset_index(drop=True)
    originals = originals.reset_index(drop=True)
    stand = heldout.stands_verified(claims, checks)
    flagged = heldout.flagged(originals, checks)

    def fires(table: pd.DataFrame, reading: Callable[[str, str, str | None], bool]) -> pd.Series:
        return pd.Series([reading(r["claim"], r["evidence"], r["quote"] if isinstance(r["quote"], str) else None)
                          for r in table.to_dict("records")], index=table.index, dtype=bool)

    rows = [("(none: the default checks)", flagged, stand)]
    for what, reading in LOOSE.values():
        rows.append((what, flagged | fires(originals, reading), stand & ~fires(claims, reading)))
    out = []
    for what, flags, stands in rows:
        row = {"added to the default checks": what, "originals flagged": f"{int(flags.sum())} ({flags.mean():.1%})"}
        for kind in heldout.KINDS:
            row[kind] = f"{stands[claims['change'] == kind].mean():.0%}"
        out.append(row)
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-domain", type=int, default=192, help="supported originals per public domain")
    parser.add_argument("--measure", action="store_true")
    parser.add_argument("--standing", metavar="KIND", help="list the standing claims of KIND (or 'originals')")
    parser.add_argument("--checks", default="default", choices=("default", "all"))
    parser.add_argument("--frontier", action="store_true", help="the cost of the loosest reading of each kind")
    args = parser.parse_args(argv)
    if not args.measure and not args.standing and not args.frontier:
        write(args.per_domain)
        return 0
    claims, originals = located()
    if args.frontier:
        print(f"dev set, each reading added to the default checks: {len(originals)} supported originals; "
              "per kind, the perturbed claims that stand")
        print(frontier(claims, originals).to_string(index=False))
        return 0
    if args.measure:
        print(f"dev set: {int((claims['change'] != heldout.CONTROL).sum())} perturbed claims, "
              f"{int((claims['change'] == heldout.CONTROL).sum())} restated, {len(originals)} supported originals")
        print(heldout.measure(claims, originals).to_string(index=False))
        return 0
    checks = tuple(DEFAULT_CONTRAST_CHECKS) if args.checks == "default" else tuple(ContrastCheck)
    if args.standing in ("originals", heldout.CONTROL):
        part = (originals if args.standing == "originals" else claims[claims["change"] == heldout.CONTROL])
        part = part.reset_index(drop=True)
        checked = heldout.check_contrast(part, checks)
        shown = checked[checked["contrast"].map(bool)]
        for row in shown.to_dict("records"):
            print(f"--- {row['id']}\nCLAIM: {row['claim']}\nQUOTE: {row['quote']}")
            for f in row["contrast"]:
                print(f"  FLAG {f.get('check')}: {f.get('says')}")
        print(f"{len(shown)} of {len(part)} flagged")
        return 0
    mine = claims[claims["change"] == args.standing].reset_index(drop=True)
    stand = heldout.stands_verified(mine, checks)
    by_id = {r["id"]: r["claim"] for r in originals.to_dict("records")}
    for row in mine[stand].to_dict("records"):
        print(f"--- {row['id']}\nORIG:  {by_id.get(row['id'].rsplit('~', 1)[0])}\nCLAIM: {row['claim']}\n"
              f"QUOTE: {row['quote']}")
    print(f"{int(stand.sum())} of {len(mine)} stand")
    return 0


if __name__ == "__main__":
    sys.exit(main())
