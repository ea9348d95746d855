"""A contrast set: supported claims of the labelled sets, each changed in one way a small judge
misses, to measure the contrast checks (`citeaudit.decide.contrast`, issue 34).

From every citation labelled `verified` of a labelled set, one perturbed claim per kind where the
claim offers a place for it (same quote, same section, so the evidence is the original's):

  normative  its obligation level changed: must <-> may, should -> must, required <-> optional, ...
  numbers    its first number changed (doubled; a year moved by one), unit and wording kept
  polarity   negated after its first auxiliary ("is" -> "is not", "must" -> "must not"), or an
             existing negation removed
  entities   a quoted term, identifier or name swapped for another of the same shape from the same
             labelled set's claims, one the evidence does not contain

The perturbations are written here from the claims' own words with plain substitutions (they do
not call the checks), and deterministic: the choice of a replacement is ordered by SHA-256.

  python tools/contrast_set.py            write data/contrast/<set>.json from the project's sets
                                          (and build/contrast/<domain>.json from build/public/, when
                                          `make public-sets` made it; git-ignored, never committed)
  python tools/contrast_set.py --measure  print, per kind, the share of perturbed claims the checks
                                          flag and the share of unperturbed originals they flag, then
                                          the standing share of the labelled sets with and without the
                                          checks, and the perturbed claims that stand as verified, from
                                          the recorded answers (replay; no model is called)

Each written file is a quote-citation file (`citeaudit audit --source S --citations F` reads it):
ids `<original id>~<kind>`, expected `contradicted` (the claim now says the opposite or another
amount) or `unsupported` (an entity swap: the evidence says nothing of the new one).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from citeaudit import AuditOptions, audit_quotes, load_citations
from citeaudit.decide import check_contrast
from citeaudit.settings.environment import DEFAULT_CONTRAST_CHECKS, find_input
from citeaudit.table import ContrastCheck
from citeaudit.workflows import LABELLED_SETS

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "contrast"
PUBLIC_IN = ROOT / "build" / "public"
PUBLIC_OUT = ROOT / "build" / "contrast"
PUBLIC_DOMAINS = ("scifact", "climate-fever", "check-covid")
# the kinds this set perturbs (the identifiers check of issue 52 is measured on them too: on entities)
KINDS = (ContrastCheck.NORMATIVE, ContrastCheck.NUMBERS, ContrastCheck.POLARITY, ContrastCheck.ENTITIES)
ALL = tuple(ContrastCheck)
EXPECTED = {ContrastCheck.NORMATIVE: "contradicted", ContrastCheck.NUMBERS: "contradicted",
            ContrastCheck.POLARITY: "contradicted", ContrastCheck.ENTITIES: "unsupported"}

# normative: (pattern, replacement), the first that matches is applied once
LEVEL_SWAPS = (
    (r"\bMUST NOT\b", "MAY"), (r"\bmust not\b", "may"), (r"\bshall not\b", "may"), (r"\bSHOULD NOT\b", "MUST NOT"),
    (r"\bshould not\b", "must not"), (r"\bMUST\b", "MAY"), (r"\bmust\b", "may"), (r"\bshall\b", "may"),
    (r"\bhas to\b", "may"), (r"\bhave to\b", "may"), (r"\bneeds to\b", "may"), (r"\bneed to\b", "may"),
    (r"\bSHOULD\b", "MUST"), (r"\bshould\b", "must"), (r"\bMAY\b", "MUST"), (r"\bmay\b", "must"),
    (r"\bis required\b", "is optional"), (r"\bare required\b", "are optional"), (r"\bREQUIRED\b", "OPTIONAL"),
    (r"\brequired\b", "optional"), (r"\bOPTIONAL\b", "REQUIRED"), (r"\boptional\b", "required"),
    (r"\bis allowed to\b", "must"), (r"\bare allowed to\b", "must"), (r"\bcan\b", "must"),
    (r"\bmandatory\b", "optional"), (r"\brecommended\b", "required"),
)
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
NUMBER = re.compile(r"(?<![\w.\-])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w]*\d)(?!\.\d)|\b(" + "|".join(WORDS[2:]) +
                    r")\b", re.IGNORECASE)
REFERENCE = re.compile(r"(?:section|sections|rfc|step|page|version|§|\[)\s*$", re.IGNORECASE)
AUXILIARY = re.compile(r"\b(is|are|was|were|can|could|should|must|may|will|would|does|do|did|has|have|had|"
                       r"shall|might)\b(?! not\b)", re.IGNORECASE)
NEGATED = re.compile(r"\b(?:(is|are|was|were|can|could|should|must|may|will|would|does|do|did|has|have|had|shall)"
                     r" not|(ca)n't|(is|are|was|were|does|do|did|has|have|had|should|would|could|must)n't)\b",
                     re.IGNORECASE)
TERM = re.compile(r"\"([^\"\n]{1,30})\"|\b([A-Z]{2,}[A-Za-z0-9]*|[A-Za-z]+\d[\w-]*)\b|(?<=[a-z,;] )([A-Z][a-z]{2,})\b")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def change_level(claim: str) -> str | None:
    """The claim with its first obligation word at another level, or None (it states none)."""
    for pattern, replacement in LEVEL_SWAPS:
        changed, n = re.subn(pattern, replacement, claim, count=1)
        if n:
            return changed
    return None


def change_number(claim: str) -> str | None:
    """The claim with its first number changed (a year moved by one, a word number doubled in words
    up to twenty, any other doubled), or None. Numbers in references (Section 4.1) are left alone."""
    for match in NUMBER.finditer(claim):
        if REFERENCE.search(claim[max(0, match.start() - 12):match.start()]):
            continue
        if match.group(2):
            n = WORDS.index(match.group(2).lower())
            new = WORDS[n * 2] if n * 2 < len(WORDS) else str(n * 2)
            new = new.capitalize() if match.group(2)[0].isupper() else new
        else:
            text = match.group(1).replace(",", "")
            value = float(text)
            if "." not in text and 1900 <= value <= 2100:
                new = str(int(value) + 1)
            elif "." in text:
                new = f"{value * 2:g}"
            else:
                new = f"{int(value) * 2:,}" if "," in match.group(1) else str(max(int(value) * 2, 2))
        return claim[:match.start()] + new + claim[match.end():]
    return None


def flip_polarity(claim: str) -> str | None:
    """The claim negated after its first auxiliary, or with its first negation removed; None when it
    has neither."""
    negated = NEGATED.search(claim)
    if negated:
        if negated.group(2):  # can't -> can
            return claim[:negated.start()] + negated.group(2) + "n" + claim[negated.end():]
        word = negated.group(1) or negated.group(3)
        return claim[:negated.start()] + word + claim[negated.end():]
    never = re.search(r"\bnever\b", claim)
    if never:
        return claim[:never.start()] + "always" + claim[never.end():]
    auxiliary = AUXILIARY.search(claim)
    if auxiliary:
        word = auxiliary.group(1)
        return claim[:auxiliary.end()] + (" NOT" if word.isupper() else " not") + claim[auxiliary.end():]
    return None


def terms(text: str) -> list[tuple[int, int, str]]:
    """Quoted terms, identifiers and names of `text` as (start, end, term)."""
    found = []
    for match in TERM.finditer(text):
        group = next(g for g in (1, 2, 3) if match.group(g))
        found.append((match.start(group), match.end(group), match.group(group)))
    return found


def swap_entity(claim: str, evidence: str, pool: Iterable[str], key: str) -> str | None:
    """The claim with its first term replaced by one of `pool` of the same shape that neither the
    claim nor the evidence holds (chosen by SHA-256 of `key`), or None."""
    lowered = evidence.lower()
    for start, end, term in terms(claim):
        shape = _shape(term)
        choices = sorted({t for t in pool if _shape(t) == shape and t.lower() not in lowered
                          and t.lower() not in claim.lower()}, key=lambda t: _digest(key, t))
        if choices:
            return claim[:start] + choices[0] + claim[end:]
    return None


def _shape(term: str) -> str:
    if re.fullmatch(r"[A-Z]{2,}[A-Za-z0-9]*|[A-Za-z]+\d[\w-]*", term):
        return "identifier"
    return "name" if re.fullmatch(r"[A-Z][a-z]{2,}", term) else "quoted"


def perturb(table: pd.DataFrame) -> list[dict]:
    """Perturbed citation records of every `verified` row with evidence of a located labelled table."""
    pool = [t for claim in table["claim"] for _, _, t in terms(claim)]
    out = []
    for _, row in table.iterrows():
        if row["expected"] != "verified" or not isinstance(row["evidence"], str):
            continue
        claim = row["claim"]
        changed = {
            ContrastCheck.NORMATIVE: change_level(claim),
            ContrastCheck.NUMBERS: change_number(claim),
            ContrastCheck.POLARITY: flip_polarity(claim),
            ContrastCheck.ENTITIES: swap_entity(claim, row["evidence"], pool, str(row["id"])),
        }
        for kind, new in changed.items():
            if new is not None and new != claim:
                out.append({"id": f"{row['id']}~{kind}", "claim": new, "quote": row["quote"],
                            "section": row["cited_section"], "expected": EXPECTED[kind]})
    return out


def sets(public: bool = True) -> list[tuple[str, str, Path]]:
    """(source, labelled citations, contrast file) of every set: the project's, then the public ones built."""
    found = [(source, citations, OUT / f"{Path(citations).stem}.json") for source, citations in LABELLED_SETS]
    if public:
        for domain in PUBLIC_DOMAINS:
            if (PUBLIC_IN / f"{domain}_citations.json").is_file():
                found.append((str(PUBLIC_IN / f"{domain}.txt"), str(PUBLIC_IN / f"{domain}_citations.json"),
                              PUBLIC_OUT / f"{domain}.json"))
    return found


def write_sets() -> None:
    for source, citations, out in sets():
        located = audit_quotes(source, load_citations(find_input(citations)), locate_only=True,
                               options=AuditOptions(contrast=())).table
        records = perturb(located)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        counts = {k: sum(r["id"].endswith(f"~{k}") for r in records) for k in KINDS}
        print(f"{out.relative_to(ROOT)}: {len(records)} perturbed claims "
              f"({', '.join(f'{k} {n}' for k, n in counts.items())})")


def _flagged(table: pd.DataFrame, kinds: tuple[ContrastCheck, ...]) -> pd.Series:
    checked = check_contrast(table, kinds)["contrast"]
    return checked.map(lambda found: bool(found))


def located(public: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Step 1 (no model) over the perturbed claims and over the supported originals of every set,
    each row with its `group`: `project` (the project's sets) or `public`."""
    perturbed_tables, original_tables = [], []
    options = AuditOptions(contrast=())
    for source, citations, out in sets(public):
        if not out.is_file():
            raise SystemExit(f"{out} is missing: run python tools/contrast_set.py first")
        group = "public" if out.parent == PUBLIC_OUT else "project"
        perturbed = audit_quotes(source, load_citations(out), locate_only=True, options=options).table
        original = audit_quotes(source, load_citations(find_input(citations)), locate_only=True, options=options).table
        original = original[(original["expected"] == "verified") & original["evidence"].notna()]
        perturbed_tables.append(perturbed.assign(group=group))
        original_tables.append(original.assign(group=group))
    return pd.concat(perturbed_tables, ignore_index=True), pd.concat(original_tables, ignore_index=True)


def measure(perturbed: pd.DataFrame, originals: pd.DataFrame) -> pd.DataFrame:
    """Per kind: its perturbed claims, the share its own check flags and the share the default checks
    flag; the share of the unperturbed originals (supported claims) its check flags. Then the
    identifiers check on the entity swaps, every check together and the default ones."""
    default = tuple(DEFAULT_CONTRAST_CHECKS)
    entities = perturbed["id"].str.endswith(f"~{ContrastCheck.ENTITIES}")
    rows = []
    for kind in KINDS:
        mine = perturbed[perturbed["id"].str.endswith(f"~{kind}")].reset_index(drop=True)
        rows.append({"checks": str(kind), "perturbed": len(mine),
                     "flagged by these checks": _flagged(mine, (kind,)).mean(),
                     "flagged by the default checks": _flagged(mine, default).mean(),
                     "originals flagged": _flagged(originals, (kind,)).mean()})
    rows.append({"checks": "identifiers (on entities)", "perturbed": int(entities.sum()),
                 "flagged by these checks": _flagged(perturbed[entities].reset_index(drop=True),
                                                     (ContrastCheck.IDENTIFIERS,)).mean(),
                 "flagged by the default checks": _flagged(perturbed[entities].reset_index(drop=True), default).mean(),
                 "originals flagged": _flagged(originals, (ContrastCheck.IDENTIFIERS,)).mean()})
    for name, kinds in (("all", ALL), (f"default ({','.join(default)})", default)):
        rows.append({"checks": name, "perturbed": len(perturbed),
                     "flagged by these checks": _flagged(perturbed, kinds).mean(),
                     "flagged by the default checks": _flagged(perturbed, default).mean(),
                     "originals flagged": _flagged(originals, kinds).mean()})
    return pd.DataFrame(rows)


COST_SETTINGS = (("none", "none"), ("default", ",".join(DEFAULT_CONTRAST_CHECKS)), ("all", "all"))


def standing_cost(public: bool = True) -> pd.DataFrame:
    """How many of each labelled set's judged citations stand, and how many stand as verified (right
    or wrong by the gold label), with no check, the default checks and all, from the recorded
    answers of the shipped judge (replay: a citation nobody recorded is a judge error, which waits
    either way)."""
    rows = []
    for source, citations, out in sets(public):
        records = load_citations(find_input(citations))
        group = "public" if out.parent == PUBLIC_OUT else "project"
        for name, kinds in COST_SETTINGS:
            table = audit_quotes(source, records, options=AuditOptions.from_env(contrast=kinds)).table
            judged = table[table["fabricated_reason"].isna()]
            stands = judged["route"] == "auto"
            verified = stands & (judged["verdict"] == "verified")
            rows.append({"set": Path(citations).stem, "group": group, "checks": name, "judged": len(judged),
                         "stand": int(stands.sum()),
                         "verified stand": int((verified & (judged["expected"] == "verified")).sum()),
                         "wrong verified stand": int((verified & (judged["expected"] != "verified")).sum()),
                         "judge errors": int(judged["error"].notna().sum())})
    return pd.DataFrame(rows)


def standing(files: Iterable[tuple[str, Path, str]], kinds: Iterable[str],
             settings: Iterable[tuple[str, str | tuple[str, ...]]] = COST_SETTINGS) -> pd.DataFrame:
    """Per group, kind and setting of the checks (a name and what `AuditOptions.contrast` takes):
    the perturbed claims of each (source, claims file, group) judged (their ids end in `~<kind>`),
    how many stand as `verified` (routed `auto`) from the recorded answers of the shipped judge
    (replay), and how many have no recorded answer (a judge error, which waits: counted apart, never
    as caught). The held-out set's measure (`contrast_heldout.py --judged`) reads the same."""
    rows = []
    kinds, settings = list(kinds), list(settings)
    for source, out, group in files:
        records = load_citations(out)
        for name, checks in settings:
            table = audit_quotes(source, records, options=AuditOptions.from_env(contrast=checks)).table
            judged = table[table["fabricated_reason"].isna()]
            kind = judged["id"].str.rsplit("~", n=1).str[1]
            stands = (judged["route"] == "auto") & (judged["verdict"] == "verified")
            for k in kinds:
                mine = kind == k
                rows.append({"group": group, "kind": k, "checks": name, "judged": int(mine.sum()),
                             "stand as verified": int((stands & mine).sum()),
                             "judge errors": int((judged["error"].notna() & mine).sum())})
    return pd.DataFrame(rows)


def perturbed_standing(public: bool = True) -> pd.DataFrame:
    """`standing` of this set's perturbed claims, per kind and group, with no check, the default
    checks and all."""
    files = []
    for source, _citations, out in sets(public):
        if not out.is_file():
            raise SystemExit(f"{out} is missing: run python tools/contrast_set.py first")
        files.append((source, out, "public" if out.parent == PUBLIC_OUT else "project"))
    return standing(files, map(str, KINDS))


def standing_table(part: pd.DataFrame, kinds: Iterable[str] = tuple(map(str, KINDS)),
                   settings: Iterable[tuple[str, str | tuple[str, ...]]] = COST_SETTINGS, after: Iterable[str] = (),
                   column: str = "checks {}") -> pd.DataFrame:
    """The printed table of `standing` for one group: a row per kind of `kinds` and one for all of
    them, then a row per kind of `after` (controls, not summed), with how many of its claims stand
    as verified under each setting of the checks (the column `column` names), and how many have no
    recorded answer (`unrecorded`: they wait, and are not counted as caught)."""
    totals = part.groupby(["kind", "checks"], sort=False)[["judged", "stand as verified", "judge errors"]].sum()
    kinds = list(kinds)
    rows = []
    for kind in [*kinds, "all kinds", *after]:
        mine = totals.loc[kinds] if kind == "all kinds" else totals.loc[[kind]]
        by_checks = mine.groupby(level="checks", sort=False).sum()
        row: dict[str, object] = {"kind": kind, "judged": int(by_checks.loc["none", "judged"]),
                                  "unrecorded": int(by_checks.loc["none", "judge errors"])}
        for name, _ in settings:
            n, stand = by_checks.loc[name, "judged"], by_checks.loc[name, "stand as verified"]
            row[column.format(name)] = f"{stand} ({stand / n:.1%})" if n else "-"
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measure", action="store_true", help="measure the checks on the written sets")
    parser.add_argument("--project-only", action="store_true", help="only the project's own labelled sets")
    args = parser.parse_args(argv)
    public = not args.project_only
    if not args.measure:
        write_sets()
        return 0
    perturbed, originals = located(public)
    groups = [("every set", slice(None)), ("the project's own sets", "project")] if public else \
        [("the project's own sets", slice(None))]
    for title, group in groups:
        p = perturbed if group == slice(None) else perturbed[perturbed["group"] == group]
        o = originals if group == slice(None) else originals[originals["group"] == group]
        figures = measure(p.reset_index(drop=True), o.reset_index(drop=True))
        print(f"\n{title}: {len(p)} perturbed claims from {len(o)} supported originals")
        for column in ("flagged by these checks", "flagged by the default checks", "originals flagged"):
            figures[column] = [f"{v:.1%}" for v in figures[column]]
        print(figures.to_string(index=False))
    cost = standing_cost(public)
    for title, group in groups:
        part = cost if group == slice(None) else cost[cost["group"] == group]
        totals = part.groupby("checks")[["judged", "stand", "verified stand", "wrong verified stand",
                                         "judge errors"]].sum()
        print(f"\nstanding, from the recorded answers (replay), over the judged citations of {title}:")
        for name, _ in COST_SETTINGS:
            t = totals.loc[name]
            drop = (totals.loc["none", "stand"] - t["stand"]) / t["judged"]
            print(f"  checks {name:>8}: {t['stand']} of {t['judged']} stand ({t['stand'] / t['judged']:.1%}, "
                  f"{drop * 100:.1f} points fewer than with none); verified that stand: {t['verified stand']} "
                  f"right, {t['wrong verified stand']} wrong; judge errors {t['judge errors']}")
    standing = perturbed_standing(public)
    for title, group in groups:
        part = standing if group == slice(None) else standing[standing["group"] == group]
        print(f"\nperturbed claims that stand as verified, from the recorded answers (replay), {title}:")
        print(standing_table(part).to_string(index=False))
    return 0


if __name__ == "__main__":
    import docs_figures  # --save-docs: also save what it prints for the documentation

    sys.exit(docs_figures.run(main, __file__))
