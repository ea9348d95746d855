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
                                          original and evidence (to read why)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import contrast_heldout as heldout
import pandas as pd

from citeaudit import ContrastCheck, load_citations
from citeaudit.calibrate import public_sets as public
from citeaudit.settings.environment import DEFAULT_CONTRAST_CHECKS

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "contrast" / "dev"


def dev_pairs(domain: str, per_domain: int) -> list[public.Pair]:
    """Supported pairs of `domain` after the ones the public TRAIN sets (and so the held-out set) use."""
    pairs = [p for p in public.READERS[domain](public.default_public_dir()) if p.expected == "verified"]
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
        claims.append(table.assign(group="dev", kind=table["id"].str.rsplit("~", n=1).str[1]))
        original, _ = heldout._locate(str(document), load_citations(cited))
        original = original[(original["expected"] == "verified") & original["evidence"].notna()]
        originals.append(original.assign(group="dev", kind="original"))
    return pd.concat(claims, ignore_index=True), pd.concat(originals, ignore_index=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-domain", type=int, default=192, help="supported originals per public domain")
    parser.add_argument("--measure", action="store_true")
    parser.add_argument("--standing", metavar="KIND", help="list the standing claims of KIND (or 'originals')")
    parser.add_argument("--checks", default="default", choices=("default", "all"))
    args = parser.parse_args(argv)
    if not args.measure and not args.standing:
        write(args.per_domain)
        return 0
    claims, originals = located()
    if args.measure:
        print(f"dev set: {int((claims['kind'] != heldout.CONTROL).sum())} perturbed claims, "
              f"{int((claims['kind'] == heldout.CONTROL).sum())} restated, {len(originals)} supported originals")
        print(heldout.measure(claims, originals).to_string(index=False))
        return 0
    checks = tuple(DEFAULT_CONTRAST_CHECKS) if args.checks == "default" else tuple(ContrastCheck)
    if args.standing in ("originals", heldout.CONTROL):
        part = (originals if args.standing == "originals" else claims[claims["kind"] == heldout.CONTROL])
        part = part.reset_index(drop=True)
        checked = heldout.check_contrast(part, checks)
        shown = checked[checked["contrast"].map(bool)]
        for row in shown.to_dict("records"):
            print(f"--- {row['id']}\nCLAIM: {row['claim']}\nQUOTE: {row['quote']}")
            for f in row["contrast"]:
                print(f"  FLAG {f.get('check')}: {f.get('says')}")
        print(f"{len(shown)} of {len(part)} flagged")
        return 0
    mine = claims[claims["kind"] == args.standing].reset_index(drop=True)
    stand = heldout.stands_verified(mine, checks)
    by_id = {r["id"]: r["claim"] for r in originals.to_dict("records")}
    for row in mine[stand].to_dict("records"):
        print(f"--- {row['id']}\nORIG:  {by_id.get(row['id'].rsplit('~', 1)[0])}\nCLAIM: {row['claim']}\n"
              f"QUOTE: {row['quote']}")
    print(f"{int(stand.sum())} of {len(mine)} stand")
    return 0


if __name__ == "__main__":
    sys.exit(main())
