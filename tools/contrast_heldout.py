"""The held-out contrast set (issue 52): supported claims changed in one way each by rules written
before the checks were measured on them, frozen, and measured once per change of the checks.

The tuning set (`tools/contrast_set.py`, `data/contrast/*.json`) was built by the hands that tuned
the checks. This one is built by other rules, from the same labelled sets (every citation labelled
`verified`, same quote and section, so the evidence is the original's), and the checks are never
tuned on it. Per kind, the rule (applied where the claim offers a place for it, deterministic: a
choice among several is ordered by SHA-256 of the citation id):

  number-words   the claim's last number in digits becomes another written in words ("5" -> "six",
                 "64" -> "sixty-five", 500 -> "one thousand"); with none, its last number word
                 becomes another in digits ("one" -> "2", "twice" -> "3 times", "a dozen" -> "20",
                 "half" -> "a third"), or "the first/second ..." the next ordinal
  vague-amounts  a vague amount of the claim ("a few", "several", "a couple of", "a handful of", "a
                 small number of") becomes a specific larger one ("30", "40", ...); with none, its last
                 specific number (digits or words) becomes a vague larger one ("dozens of" below 10,
                 "hundreds of" below 100, "thousands of" below 1,000)
  identifiers    the claim's first quoted or code-formatted term, or all-caps keyword (not a BCP 14
                 word), becomes another of its kind that the source document names and the evidence
                 does not (a quoted term is written in quotes or backticks by the digest's parity)
  normative      the claim's last obligation word one level down or across (must -> should, should
                 -> may, may -> must not, required -> recommended, optional -> forbidden, ...)
  numbers        the claim's last number in digits (not a year, not in a reference) changed: its
                 time or data unit one step up ("5 minutes" -> "5 hours"), else the value plus one (a
                 decimal times 1.5, a year minus one)
  polarity       the claim's last negation removed ("not", "n't", "never" -> "always", "no longer"
                 -> "still", "cannot" -> "can"), else "not" after its last auxiliary
  entities       the claim's first capitalized name (not a sentence's first word, not an all-caps
                 keyword) becomes another capitalized name the source document uses and the
                 evidence does not

And one control kind, expected to stay `verified`: `restated`, the claim's first amount written
another way with the same value ("5" -> "five", "two" -> "2", "1000" -> "1,000", "twice" -> "two
times"): the checks must not flag it.

  python tools/contrast_heldout.py            write data/contrast/heldout/<set>.json (the project's
                                              sets, committed) and build/contrast/heldout/<domain>.json
                                              (the public TRAIN sets, when `make public-sets` made
                                              them; never committed)
  python tools/contrast_heldout.py --measure  print per kind, for each set, how many perturbed claims
                                              stand as `verified` with a judge that says "supports" to
                                              everything (so only a flag keeps one back: a contrast
                                              finding, a near quote, a misattributed section), with no
                                              check, the default checks and all, and the share of
                                              supported originals and restated claims flagged
  python tools/contrast_heldout.py --judged   the whole tool instead: per kind, how many perturbed
                                              claims stand as `verified` from the recorded answers of
                                              the shipped judge (replay; `make record-contrast-heldout`
                                              records them) with its calibrated threshold, under no
                                              check, the default checks and all; the restated controls
                                              are the cost (they should stand as their originals do)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

import pandas as pd

from citeaudit import AuditOptions, audit_quotes, load_citations, load_document
from citeaudit.decide import blocked_by, check_contrast, flags_of
from citeaudit.settings.environment import DEFAULT_CONTRAST_CHECKS, find_input
from citeaudit.table import ContrastCheck
from citeaudit.workflows import LABELLED_SETS

sys.path.insert(0, str(Path(__file__).resolve().parent))
import contrast_set  # the recorded answers' standing, counted as for the tuning set

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "contrast" / "heldout"
PUBLIC_IN = ROOT / "build" / "public"
PUBLIC_OUT = ROOT / "build" / "contrast" / "heldout"
PUBLIC_DOMAINS = ("scifact", "climate-fever", "check-covid")
KINDS = ("number-words", "vague-amounts", "identifiers", "normative", "numbers", "polarity", "entities")
CONTROL = "restated"
EXPECTED = {"identifiers": "unsupported", "entities": "unsupported", CONTROL: "verified"}

_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORD_VALUE = {w: n for n, w in enumerate(_ONES)} | {w: 10 * n for n, w in enumerate(_TENS) if w}
ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]

# a number in digits (thousands grouped or not, decimals), not glued to a word, a dot or a hyphen
DIGITS = re.compile(r"(?<![\w.\-^(/:])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w]*\d)(?!\.\d)(?![A-Za-z^]|:\d)")
# a number in words: tens and ones ("sixty-five", "twenty one") or one word
SPELLED = re.compile(r"\b((?:" + "|".join(_TENS[2:]) + r")(?:[\s-](?:" + "|".join(_ONES[1:10]) + r"))?|"
                     + "|".join(sorted(_ONES, key=len, reverse=True)) + r")\b", re.IGNORECASE)
SPECIAL_WORDS = {"twice": "3 times", "once": "twice", "a dozen": "20", "half": "a third", "thrice": "4 times"}
# "once" as an amount ("more than once", "once per hour"), not as a conjunction ("once sealed")
SPECIAL = re.compile(r"\b(twice|thrice|a dozen|half|once(?=\s+(?:per|a|an|every|each|in|and|or)\b|\s*[.,;]))\b",
                     re.IGNORECASE)
ORDINAL = re.compile(r"\b(the|a) (" + "|".join(ORDINALS[:-1]) + r")\b(?= [a-z])", re.IGNORECASE)
REFERENCE = re.compile(r"(?:section|sections|rfc|step|page|pages|version|appendix|article|figure|table|§|\[|#)\s*$",
                       re.IGNORECASE)
VAGUE = {"a few": "30", "several": "40", "a couple of": "12", "a handful of": "25", "a small number of": "50"}
VAGUE_PATTERN = re.compile(r"\b(" + "|".join(VAGUE) + r")\b", re.IGNORECASE)
UNIT_UP = {"ms": "seconds", "millisecond": "second", "milliseconds": "seconds", "second": "minute",
           "seconds": "minutes", "minute": "hour", "minutes": "hours", "hour": "day", "hours": "days",
           "day": "week", "days": "weeks", "week": "month", "weeks": "months", "month": "year", "months": "years",
           "byte": "kilobyte", "bytes": "kilobytes", "octets": "kilobytes", "KiB": "MiB", "KB": "MB", "MiB": "GiB",
           "MB": "GB", "bits": "bytes", "kb": "MB", "mb": "GB"}
UNIT_AFTER = re.compile(r"^[\s-](" + "|".join(sorted(map(re.escape, UNIT_UP), key=len, reverse=True)) + r")\b")
LEVEL_DOWN = (  # the LAST match in the claim of any of these is changed (longest first where they overlap)
    (r"MUST NOT", "SHOULD NOT"), (r"must not", "should not"), (r"must never", "should not"),
    (r"SHALL NOT", "SHOULD NOT"), (r"shall not", "should not"), (r"SHOULD NOT", "MAY"), (r"should not", "may"),
    (r"MUST", "SHOULD"), (r"must", "should"), (r"SHALL", "SHOULD"), (r"shall", "should"),
    (r"has to", "should"), (r"have to", "should"), (r"needs to", "should"), (r"need to", "should"),
    (r"SHOULD", "MAY"), (r"should", "may"), (r"MAY", "MUST NOT"), (r"may", "must not"),
    (r"is required to", "is recommended to"), (r"are required to", "are recommended to"),
    (r"REQUIRED", "RECOMMENDED"), (r"required", "recommended"), (r"OPTIONAL", "PROHIBITED"),
    (r"optional", "forbidden"), (r"is allowed to", "is required to"), (r"are allowed to", "are required to"),
    (r"mandatory", "recommended"), (r"RECOMMENDED", "OPTIONAL"), (r"recommended", "optional"),
)
LEVEL = re.compile("|".join(rf"\b{p}\b" for p, _ in LEVEL_DOWN))
AUXILIARY = re.compile(r"\b(is|are|was|were|can|could|should|must|may|will|would|does|do|did|has|have|had|shall|"
                       r"might)\b(?! not\b)(?!n't)", re.IGNORECASE)
NEGATION = re.compile(r"\b(?:(cannot)|(no longer)|(never)|(\w+)n't|(\w+) not)\b", re.IGNORECASE)
BCP14 = frozenset(["MUST", "NOT", "SHALL", "SHOULD", "MAY", "REQUIRED", "RECOMMENDED", "OPTIONAL"])
QUOTED = re.compile(r"\"([^\"\n]{1,30})\"|`([^`\n]{1,30})`")
CAPS = re.compile(r"(?<![\w\"`-])([A-Z]{2,}[A-Z0-9]*)(?![\w\"`-])")
NAME = re.compile(r"(?<=[a-z,;] )([A-Z][a-z]{2,})\b")


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def spell(n: int) -> str:
    """`n` (0 to 999,999) in English words, hyphenated tens: spell(65) == "sixty-five"."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " and " + spell(rest))
    rest = n % 1000
    return spell(n // 1000) + " thousand" + ("" if rest == 0 else (" and " if rest < 100 else " ") + spell(rest))


def _word_value(text: str) -> int:
    return sum(_WORD_VALUE[w] for w in re.split(r"[\s-]+", text.lower()))


def _numbers(claim: str) -> list[re.Match[str]]:
    """The claim's numbers in digits, not in a reference and not years."""
    found = []
    for match in DIGITS.finditer(claim):
        if REFERENCE.search(claim[max(0, match.start() - 12):match.start()]):
            continue
        text = match.group(1).replace(",", "")
        if "." not in text and 1900 <= float(text) <= 2100:
            continue
        found.append(match)
    return found


def _spelled(claim: str) -> list[re.Match[str]]:
    """The claim's numbers in words ("one" only before a noun-like word, not "one of", "no one")."""
    return [m for m in SPELLED.finditer(claim)
            if not (m.group(1).lower() == "one" and re.match(r"\s+(?:of|another|or|and|[,.;])", claim[m.end():]))
            and not re.search(r"\b(?:no|any|every|some)\s+$", claim[max(0, m.start() - 7):m.start()], re.I)]


def _keep_case(old: str, new: str) -> str:
    return new[0].upper() + new[1:] if old[:1].isupper() else new


def change_number_words(claim: str) -> str | None:
    """The number-words rule (module docstring), or None."""
    digits = [m for m in _numbers(claim) if "." not in m.group(1)]
    if digits:
        m = digits[-1]
        value = int(m.group(1).replace(",", ""))
        new = value + 1 if value < 100 else value * 2
        if new > 999_999:
            return None
        return claim[:m.start()] + spell(new) + claim[m.end():]
    special = list(SPECIAL.finditer(claim))
    spelled = _spelled(claim)
    last = max([*special, *spelled], key=lambda m: m.start(), default=None)
    if last is not None:
        word = last.group(1)
        written = SPECIAL_WORDS[word.lower()] if word.lower() in SPECIAL_WORDS else str(_word_value(word) + 1)
        return claim[:last.start()] + _keep_case(word, written) + claim[last.end():]
    ordinal = list(ORDINAL.finditer(claim))
    if ordinal:
        m = ordinal[-1]
        ordinal_word = ORDINALS[ORDINALS.index(m.group(2).lower()) + 1]
        return claim[:m.start(2)] + ordinal_word + claim[m.end(2):]
    return None


def change_vague(claim: str) -> str | None:
    """The vague-amounts rule (module docstring), or None."""
    vague = VAGUE_PATTERN.search(claim)
    if vague:
        return claim[:vague.start()] + VAGUE[vague.group(1).lower()] + claim[vague.end():]
    found = [(m, int(m.group(1).replace(",", ""))) for m in _numbers(claim) if "." not in m.group(1)]
    found += [(m, _word_value(m.group(1))) for m in _spelled(claim)]
    # a number that a noun follows ("500 envelopes", "two metres"), not "256-bit" or "the two is"
    found = [(m, v) for m, v in found if 1 < v < 1000 and re.match(r"\s+[a-zA-Z]", claim[m.end():])
             and not re.match(r"\s+(?:is|are|was|were|of|and|or|to|in|on|by|for)\b", claim[m.end():])]
    if not found:
        return None
    m, value = max(found, key=lambda pair: pair[0].start())
    new = "dozens of" if value < 10 else "hundreds of" if value < 100 else "thousands of"
    return claim[:m.start()] + new + claim[m.end():]


def change_level(claim: str) -> str | None:
    """The normative rule: the claim's last obligation word one level down or across, or None."""
    found = list(LEVEL.finditer(claim))
    if not found:
        return None
    m = found[-1]
    new = next(replacement for pattern, replacement in LEVEL_DOWN if re.fullmatch(pattern, m.group()))
    return claim[:m.start()] + new + claim[m.end():]


def change_number(claim: str) -> str | None:
    """The numbers rule (module docstring), or None."""
    found = _numbers(claim)
    if not found:
        return None
    m = found[-1]
    unit = UNIT_AFTER.match(claim[m.end():])
    if unit:
        at = m.end() + unit.start(1)
        return claim[:at] + UNIT_UP[unit.group(1)] + claim[m.end() + unit.end(1):]
    text = m.group(1).replace(",", "")
    if "." in text:
        new = f"{float(text) * 1.5:g}"
    else:
        value = int(text) + 1
        new = f"{value:,}" if "," in m.group(1) else str(value)
    return claim[:m.start()] + new + claim[m.end():]


def flip_polarity(claim: str) -> str | None:
    """The polarity rule (module docstring), or None."""
    negations = list(NEGATION.finditer(claim))
    if negations:
        m = negations[-1]
        if m.group(1):
            new = _keep_case(m.group(1), "can")
        elif m.group(2):
            new = _keep_case(m.group(2), "still")
        elif m.group(3):
            new = _keep_case(m.group(3), "always")
        elif m.group(4):
            word = m.group(4)
            new = {"wo": "will", "ca": "can", "sha": "shall"}.get(word.lower(), word)
        else:
            new = m.group(5)
        return claim[:m.start()] + new + claim[m.end():]
    auxiliaries = list(AUXILIARY.finditer(claim))
    if not auxiliaries:
        return None
    m = auxiliaries[-1]
    return claim[:m.end()] + (" NOT" if m.group(1).isupper() else " not") + claim[m.end():]


def document_terms(text: str) -> dict[str, list[str]]:
    """The source document's terms by kind: `quoted` (in double quotes or backticks), `caps` (all-caps
    keywords, not BCP 14 words), `name` (capitalized words inside a sentence)."""
    quoted = {m.group(1) or m.group(2) for m in QUOTED.finditer(text)}
    caps = {m.group(1) for m in CAPS.finditer(text) if m.group(1) not in BCP14 and not m.group(1).startswith("RFC")}
    names = {m.group(1) for m in NAME.finditer(text)}
    return {"quoted": sorted(t for t in quoted if re.fullmatch(r"\w[\w-]{1,29}", t) and t.upper() not in BCP14),
            "caps": sorted(caps), "name": sorted(names)}


def _other(term: str, pool: list[str], claim: str, evidence: str, key: str) -> str | None:
    lowered, mine = evidence.lower(), claim.lower()
    choices = sorted((t for t in pool if t.lower() not in lowered and t.lower() not in mine and t != term),
                     key=lambda t: _digest(key, t))
    return choices[0] if choices else None


def swap_identifier(claim: str, evidence: str, pool: dict[str, list[str]], key: str) -> str | None:
    """The identifiers rule (module docstring), or None."""
    quoted = QUOTED.search(claim)
    if quoted:
        other = _other(quoted.group(1) or quoted.group(2), pool["quoted"], claim, evidence, key)
        if other is not None:
            written = f"`{other}`" if int(_digest(key)[-1], 16) % 2 else f'"{other}"'
            return claim[:quoted.start()] + written + claim[quoted.end():]
    for caps in CAPS.finditer(claim):
        if caps.group(1) in BCP14:
            continue
        other = _other(caps.group(1), pool["caps"], claim, evidence, key)
        if other is not None:
            return claim[:caps.start(1)] + other + claim[caps.end(1):]
        break
    return None


def swap_name(claim: str, evidence: str, pool: dict[str, list[str]], key: str) -> str | None:
    """The entities rule (module docstring), or None."""
    name = NAME.search(claim)
    if not name:
        return None
    other = _other(name.group(1), pool["name"], claim, evidence, key)
    return None if other is None else claim[:name.start(1)] + other + claim[name.end(1):]


def restate(claim: str) -> str | None:
    """The control: the claim's first amount written another way with the same value, or None."""
    candidates: list[tuple[int, int, str]] = []
    for m in _numbers(claim):
        text = m.group(1)
        if "." in text:
            continue
        value = int(text.replace(",", ""))
        if "," in text:
            candidates.append((m.start(), m.end(), text.replace(",", "")))
        elif value >= 1000:
            candidates.append((m.start(), m.end(), f"{value:,}"))
        elif value <= 20:
            candidates.append((m.start(), m.end(), spell(value)))
    for m in _spelled(claim):
        candidates.append((m.start(), m.end(), str(_word_value(m.group(1)))))
    for m in re.finditer(r"\btwice\b", claim, re.IGNORECASE):
        candidates.append((m.start(), m.end(), _keep_case(m.group(), "two times")))
    if not candidates:
        return None
    start, end, new = min(candidates)
    return claim[:start] + new + claim[end:]


def perturb(table: pd.DataFrame, document_text: str) -> list[dict]:
    """Held-out citation records of every `verified` row with evidence of a located labelled table."""
    pool = document_terms(document_text)
    out = []
    for _, row in table.iterrows():
        if row["expected"] != "verified" or not isinstance(row["evidence"], str):
            continue
        claim, evidence, key = row["claim"], row["evidence"], str(row["id"])
        changed = {
            "number-words": change_number_words(claim),
            "vague-amounts": change_vague(claim),
            "identifiers": swap_identifier(claim, evidence, pool, key),
            "normative": change_level(claim),
            "numbers": change_number(claim),
            "polarity": flip_polarity(claim),
            "entities": swap_name(claim, evidence, pool, key),
            CONTROL: restate(claim),
        }
        for kind, new in changed.items():
            if new is not None and new != claim:
                out.append({"id": f"{row['id']}~{kind}", "claim": new, "quote": row["quote"],
                            "section": row["cited_section"], "expected": EXPECTED.get(kind, "contradicted")})
    return out


def sets(public: bool = True) -> list[tuple[str, str, Path, str]]:
    """(source, labelled citations, held-out file, group) of every set: the project's, then the public ones built."""
    found = [(source, citations, OUT / f"{Path(citations).stem}.json", "project")
             for source, citations in LABELLED_SETS]
    if public:
        for domain in PUBLIC_DOMAINS:
            if (PUBLIC_IN / f"{domain}_citations.json").is_file():
                found.append((str(PUBLIC_IN / f"{domain}.txt"), str(PUBLIC_IN / f"{domain}_citations.json"),
                              PUBLIC_OUT / f"{domain}.json", "public"))
    return found


def _locate(source: str, records: list) -> tuple[pd.DataFrame, str]:
    audit = audit_quotes(source, records, locate_only=True, options=AuditOptions(contrast=()))
    document = audit.document if audit.document is not None else load_document(source)
    return audit.table, document.clean


def write_sets(public: bool = True) -> None:
    for source, citations, out, _ in sets(public):
        table, text = _locate(source, load_citations(find_input(citations)))
        records = perturb(table, text)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        counts = {k: sum(r["id"].endswith(f"~{k}") for r in records) for k in (*KINDS, CONTROL)}
        print(f"{out.relative_to(ROOT)}: {len(records)} claims ({', '.join(f'{k} {n}' for k, n in counts.items())})")


def stands_verified(table: pd.DataFrame, kinds: tuple[ContrastCheck, ...]) -> pd.Series:
    """Whether each located row would stand as `verified` under a judge that says "supports" with full
    confidence: not fabricated and no flag that keeps a verified verdict back (routing.py's `flags_of`
    and `blocked_by`, with the contrast findings of `kinds`)."""
    checked = check_contrast(table, kinds)
    return pd.Series([not isinstance(row.get("fabricated_reason"), str) and not blocked_by(flags_of(row), "verified")
                      for row in checked.to_dict("records")], index=table.index)


def flagged(table: pd.DataFrame, kinds: tuple[ContrastCheck, ...]) -> pd.Series:
    """Whether the contrast checks `kinds` find anything on each row."""
    return check_contrast(table, kinds)["contrast"].map(bool)


SETTINGS = (("none", ()), ("default", tuple(DEFAULT_CONTRAST_CHECKS)), ("all", tuple(ContrastCheck)))


def located(public: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Step 1 (no model) over the held-out claims and over the supported originals of every set, each row
    with its `group` and `change` (the perturbation's kind, `original` for an original; not `kind`: that
    column names the citation kind)."""
    claims, originals = [], []
    for source, citations, out, group in sets(public):
        if not out.is_file():
            raise SystemExit(f"{out} is missing: run python tools/contrast_heldout.py first")
        table, _ = _locate(source, load_citations(out))
        claims.append(table.assign(group=group, change=table["id"].str.rsplit("~", n=1).str[1]))
        original, _ = _locate(source, load_citations(find_input(citations)))
        original = original[(original["expected"] == "verified") & original["evidence"].notna()]
        originals.append(original.assign(group=group, change="original"))
    return pd.concat(claims, ignore_index=True), pd.concat(originals, ignore_index=True)


def measure(claims: pd.DataFrame, originals: pd.DataFrame) -> pd.DataFrame:
    """Per kind: how many perturbed claims, how many stand as verified (a "supports"-to-everything judge)
    under each setting; for the originals and the restated controls, how many are flagged."""
    rows = []
    for kind in (*KINDS, "all kinds"):
        mine = claims[claims["change"] != CONTROL] if kind == "all kinds" else claims[claims["change"] == kind]
        mine = mine.reset_index(drop=True)
        row: dict[str, object] = {"kind": kind, "claims": len(mine)}
        for name, checks in SETTINGS:
            n = int(stands_verified(mine, checks).sum()) if len(mine) else 0
            row[f"stand, checks {name}"] = f"{n} ({n / len(mine):.1%})" if len(mine) else "-"
        rows.append(row)
    restated = claims[claims["change"] == CONTROL].reset_index(drop=True)
    originals = originals.reset_index(drop=True)
    for kind, part in ((f"{CONTROL} (flagged)", restated), ("originals (flagged)", originals),
                       (f"{CONTROL} (flagged, its original not)", restated)):
        row = {"kind": kind, "claims": len(part)}
        for name, checks in SETTINGS:
            if not checks or not len(part):
                n = 0
            elif kind.endswith("its original not)"):  # a flag the restating brought, not one it inherited
                before = dict(zip(originals["id"], flagged(originals, checks)))
                n = int(sum(f and not before.get(i.rsplit("~", 1)[0], False)
                            for i, f in zip(part["id"], flagged(part, checks))))
            else:
                n = int(flagged(part, checks).sum())
            row[f"stand, checks {name}"] = f"{n} ({n / len(part):.1%})" if len(part) else "-"
        rows.append(row)
    return pd.DataFrame(rows)


def judged(public: bool = True) -> pd.DataFrame:
    """Per group, kind (the restated controls included) and setting of the checks: the held-out claims
    judged and how many stand as `verified` from the shipped judge's recorded answers, as the tuning
    set's perturbed claims are counted (`contrast_set.standing`)."""
    files = []
    for source, _, out, group in sets(public):
        if not out.is_file():
            raise SystemExit(f"{out} is missing: run python tools/contrast_heldout.py first")
        files.append((source, out, group))
    return contrast_set.standing(files, (*KINDS, CONTROL), SETTINGS)


def judged_table(part: pd.DataFrame) -> pd.DataFrame:
    """The printed table of `judged` for one group: a row per kind, one for all perturbed kinds, and the
    restated controls last."""
    return contrast_set.standing_table(part, KINDS, SETTINGS, after=(CONTROL,), column="stand, checks {}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measure", action="store_true", help="measure the checks on the written held-out set")
    parser.add_argument("--judged", action="store_true",
                        help="measure the whole tool: the shipped judge's recorded answers and the checks")
    parser.add_argument("--project-only", action="store_true", help="only the project's own labelled sets")
    args = parser.parse_args(argv)
    public = not args.project_only
    if args.judged:
        found = judged(public)
        for group, title in (("project", "the project's own sets"), ("public", "the public TRAIN sets")):
            part = found[found["group"] == group]
            if len(part):
                print(f"\nheld-out set, {title}, judged by the shipped judge (recorded answers, its calibrated "
                      "threshold): how many stand as verified")
                print(judged_table(part).to_string(index=False))
        return 0
    if not args.measure:
        write_sets(public)
        return 0
    claims, originals = located(public)
    groups = [("the project's own sets", "project")] + ([("the public TRAIN sets", "public")] if public else [])
    for title, group in groups:
        c, o = claims[claims["group"] == group], originals[originals["group"] == group]
        print(f"\nheld-out set, {title}: {int((c['change'] != CONTROL).sum())} perturbed claims, "
              f"{int((c['change'] == CONTROL).sum())} restated, {len(o)} supported originals")
        print("(perturbed: how many stand as verified with a judge that says supports to everything; "
              "restated and originals: how many the checks flag)")
        print(measure(c, o).to_string(index=False))
    return 0


if __name__ == "__main__":
    import docs_figures  # --save-docs: also save what it prints for the documentation

    sys.exit(docs_figures.run(main, __file__))
