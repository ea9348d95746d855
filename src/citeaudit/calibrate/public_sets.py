"""Turn the public TRAIN sets into citeaudit labelled sets (a document and a citation file each).

Reads SciFact, Climate-FEVER (half A), Check-COVID and JSICK (Japanese) from `--public-dir` (default: the environment's
`CITEAUDIT_PUBLIC_DIR`, else `../shared/data/public` beside the repository), refuses any input file
whose SHA-256 differs from the pin below (the public folder's README lists the same digests), and
writes, per domain, into `--out` (default `build/public/`, git-ignored: the data is never committed):

  <domain>.txt              one numbered section (a paragraph) per evidence passage
  <domain>_citations.json   [{id, claim, quote, section, expected}], expected verified /
                            contradicted / unsupported

The passages, per the public README's mapping:

- scifact: a cited abstract, its title on the first line; SUPPORT -> verified, CONTRADICT ->
  contradicted, a cited abstract without evidence -> unsupported (claim-abstract pairs).
- climate-fever: one evidence sentence, its Wikipedia article title on the first line; the
  evidence-level label SUPPORTS / REFUTES / NOT_ENOUGH_INFO. Only pairs whose annotators agreed
  (`entropy` 0) are sampled: the README notes that most NOT_ENOUGH_INFO labels are split votes.
- check-covid: the claim's listed evidence sentences of its abstract, in `sent_index` order (never
  the whole abstract: a NOTENOUGHINFO label holds only for the sentences it lists); no title.
- jsick: Japanese sentence pairs; sentence A is the passage and the quote, sentence B the claim;
  entailment -> verified, contradiction -> contradicted, neutral -> unsupported. It is built
  with the others but is not one of the calibration's `DOMAINS`: `JAPANESE` sets are measured
  held out (`tools/bench_japanese.py`), never fitted on.

The quote of a supporting or contradicting pair is the dataset's rationale: SciFact's first
rationale set (non-adjacent sentences joined by " ... ", which the locator reads as an elision),
Climate-FEVER's sentence, Check-COVID's listed sentences. A says-nothing pair has no rationale, so
its quote is the passage sentence sharing the most content words with the claim (the first on a
tie): the sentence an answer citing the nearest-looking text would quote.

Sampling is deterministic and balanced: per domain and label, the candidate pairs are ordered by
the SHA-256 of their key and the first `--per-label` are taken; the citation file interleaves the
labels (verified, contradicted, unsupported, verified, ...) so that any prefix of it (a recording
stopped early) stays balanced. Sections are numbered in order of first use and a passage cited by
several claims is one section. All text is whitespace-normalized (runs of spaces and newlines to
one space) so that the quote is verbatim in its section.

The default of 96 per label gives 3 x 3 x 96 = 864 public citations; with the 171 judged citations
of the project's own labelled sets (the Makefile's QUOTE_SETS) that is 1,035. A larger
`--per-label` keeps the smaller one's citations first, in the same order and sections (the
documents grow at the end), so recordings of the smaller sets are reused as they are.

Run: python tools/public_sets.py [--public-dir DIR] [--out build/public] [--per-label 96] (what
`make public-sets` runs), or `public_labelled_sets()` from the library (what notebook 04 calls).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from citeaudit.judge.localmodel import file_sha256
from citeaudit.stores import atomic_write_text

DOMAINS = ("scifact", "climate-fever", "check-covid")  # the English domains the shipped calibration is fitted on
JAPANESE = ("jsick",)  # built beside them, measured apart (tools/bench_japanese.py), never fitted on
DEFAULT_PER_LABEL = 96
LABELS = ("verified", "contradicted", "unsupported")  # also the interleaving order of a citation file

# the public folder's README: sha256 of every file used here
PINS = {
    "scifact/claims_train.jsonl": "f4c8fa82d8bd0653a9cc8d61a6ea48c25eacea64e90af5dbf390ebb1b74372f0",
    "scifact/corpus.jsonl": "b8d6c89624cb2ed74dee8938effc4f5d8bd2086887880af8110d64be4ceade62",
    "climate-fever/climate-fever-halfA.jsonl": "d66d5b7d48e6ca2a666bf2d20d82393426d33a408818b31d38d0aa29860d98ad",
    "check-covid/covidCheck_train_composed+extracted.json":
        "1af4b5e364129631b49a9132cadcd4f1b4937c90bef22ba0c08242be1630858b",
    "check-covid/corpus.json": "2a56084b933f28ec02781a9e501082683ca4b9c4c1c6c8530190d6fb0002ce42",
    "jsick/train.tsv": "5aee77c7cb5e598c35cadc99f54eb53f980cf554219f497871fbdcc5a25b71be",
}
FILES = {
    "scifact": ("scifact/claims_train.jsonl", "scifact/corpus.jsonl"),
    "climate-fever": ("climate-fever/climate-fever-halfA.jsonl",),
    "check-covid": ("check-covid/covidCheck_train_composed+extracted.json", "check-covid/corpus.json"),
    "jsick": ("jsick/train.tsv",),
}

_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her here
hers him his how i if in into is it its itself just may might more most much must no nor not now of off on once
only or other our out over own same she should so some such than that the their them then there these they this
those through to too under until up very was we were what when where which while who whom why will with would
you your
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WORD = re.compile(r"[a-z0-9]+")


class PublicDataError(Exception):
    """An input file is missing, altered or malformed; the message names the file and the fix."""


@dataclass(frozen=True)
class Pair:
    """One labelled claim/passage pair before sampling."""

    key: str  # unique within its domain; the citation id is "<domain>_<key>"
    claim: str
    passage: str  # the section's text (title line included)
    quote: str
    expected: str


def norm(text: str) -> str:
    """Runs of whitespace to one space, ends stripped."""
    return " ".join(text.split())


def content_words(text: str) -> set[str]:
    """Lower-case words of `text` that are not stop words."""
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS}


def nearest_sentence(claim: str, sentences: list[str]) -> str:
    """The sentence sharing the most content words with `claim` (the first one on a tie)."""
    words = content_words(claim)
    best = max(range(len(sentences)), key=lambda i: (len(words & content_words(sentences[i])), -i))
    return sentences[best]


def join_sentences(sentences: list[str], indices: list[int]) -> str:
    """Sentences `indices` (ascending) joined by a space when adjacent, by " ... " when not."""
    out = sentences[indices[0]]
    for prev, i in itertools.pairwise(indices):
        out += (" " if i == prev + 1 else " ... ") + sentences[i]
    return out


def checked(public_dir: Path, relative: str) -> Path:
    """The path of a pinned input file, after its SHA-256 matched the pin."""
    path = public_dir / relative
    if not path.is_file():
        raise PublicDataError(f"{path}: not found. Fix: pass --public-dir (or set CITEAUDIT_PUBLIC_DIR) to the "
                              "folder holding scifact/, climate-fever/ and check-covid/.")
    actual = file_sha256(path)
    if actual != PINS[relative]:
        raise PublicDataError(f"{path}: SHA-256 {actual} differs from the pinned {PINS[relative]}. The file is not "
                              "the public release this tool was written for; restore the original file.")
    return path


def read_jsonl(path: Path) -> Iterator[dict]:
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise PublicDataError(f"{path}: line {number} is not JSON ({exc}).") from None


def scifact_pairs(public_dir: Path) -> list[Pair]:
    claims_path, corpus_path = (checked(public_dir, f) for f in FILES["scifact"])
    corpus = {int(d["doc_id"]): d for d in read_jsonl(corpus_path)}
    mapping = {"SUPPORT": "verified", "CONTRADICT": "contradicted"}
    pairs = []
    for claim in read_jsonl(claims_path):
        text = norm(claim["claim"])
        evidence = {int(k): v for k, v in claim["evidence"].items()}
        for doc_id in sorted({*evidence, *(int(d) for d in claim["cited_doc_ids"])}):
            doc = corpus[doc_id]
            sentences = [norm(s) for s in doc["abstract"]]
            passage = norm(doc["title"]) + "\n" + " ".join(sentences)
            if doc_id in evidence:
                rationale = evidence[doc_id][0]
                quote = join_sentences(sentences, sorted(rationale["sentences"]))
                expected = mapping[rationale["label"]]
            else:
                quote, expected = nearest_sentence(text, sentences), "unsupported"
            pairs.append(Pair(f"{claim['id']}_{doc_id}", text, passage, quote, expected))
    return pairs


def climate_fever_pairs(public_dir: Path) -> list[Pair]:
    (path,) = (checked(public_dir, f) for f in FILES["climate-fever"])
    mapping = {"SUPPORTS": "verified", "REFUTES": "contradicted", "NOT_ENOUGH_INFO": "unsupported"}
    pairs = []
    for claim in read_jsonl(path):
        text = norm(claim["claim"])
        for n, evidence in enumerate(claim["evidences"]):
            if evidence["entropy"] != 0:  # split votes: the label is a coin toss between annotators
                continue
            sentence = norm(evidence["evidence"])
            passage = norm(evidence["article"]) + "\n" + sentence
            pairs.append(Pair(f"{claim['claim_id']}_{n}", text, passage, sentence, mapping[evidence["evidence_label"]]))
    return pairs


def check_covid_pairs(public_dir: Path) -> list[Pair]:
    claims_path, corpus_path = (checked(public_dir, f) for f in FILES["check-covid"])
    corpus = {d["cord_id"]: d for d in read_jsonl(corpus_path)}
    mapping = {"SUPPORT": "verified", "REFUTE": "contradicted", "NOTENOUGHINFO": "unsupported"}
    pairs = []
    for claim in read_jsonl(claims_path):
        text = norm(claim["claim"])
        abstract = [norm(s) for s in corpus[claim["cord_id"]]["abstract"]]
        listed = [abstract[i] for i in sorted({e["sent_index"] for e in claim["evidence_set"]})]
        passage = " ".join(listed)
        expected = mapping[claim["label"]]
        quote = passage if expected != "unsupported" else nearest_sentence(text, listed)
        pairs.append(Pair(str(claim["id"]), text, passage, quote, expected))
    return pairs


def jsick_pairs(public_dir: Path) -> list[Pair]:
    """JSICK's Japanese sentence pairs: sentence A is the passage (and the quote: a one-sentence
    section is quoted whole), sentence B the claim."""
    import csv

    (path,) = (checked(public_dir, f) for f in FILES["jsick"])
    mapping = {"entailment": "verified", "contradiction": "contradicted", "neutral": "unsupported"}
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    pairs = []
    for number, row in enumerate(rows, start=2):
        label = mapping.get((row.get("entailment_label_Ja") or "").strip())
        passage, claim = norm(row.get("sentence_A_Ja") or ""), norm(row.get("sentence_B_Ja") or "")
        if label is None or not passage or not claim:
            raise PublicDataError(f"{path}: line {number} has no Japanese sentence pair with a label.")
        pairs.append(Pair(row["pair_ID"], claim, passage, passage, label))
    return pairs


READERS = {"scifact": scifact_pairs, "climate-fever": climate_fever_pairs, "check-covid": check_covid_pairs,
           "jsick": jsick_pairs}


def sample(domain: str, pairs: Iterable[Pair], per_label: int) -> list[Pair]:
    """`per_label` pairs of each label (by SHA-256 of domain and key), labels interleaved."""
    by_label: dict[str, list[Pair]] = {label: [] for label in LABELS}
    for pair in pairs:
        by_label[pair.expected].append(pair)
    chosen = {}
    for label, group in by_label.items():
        group.sort(key=lambda p: hashlib.sha256(f"{domain}:{p.key}".encode()).hexdigest())
        if len(group) < per_label:
            raise PublicDataError(f"{domain}: only {len(group)} {label} pairs, fewer than --per-label {per_label}.")
        chosen[label] = group[:per_label]
    return [chosen[label][i] for i in range(per_label) for label in LABELS]


def render(domain: str, pairs: list[Pair]) -> tuple[str, list[dict]]:
    """The document text and the citation records of sampled `pairs`."""
    sections: dict[str, str] = {}
    citations = []
    for pair in pairs:
        section = sections.setdefault(pair.passage, str(len(sections) + 1))
        citations.append({"id": f"{domain}_{pair.key}", "claim": pair.claim, "quote": pair.quote,
                          "section": section, "expected": pair.expected})
    return "\n\n".join(sections) + "\n", citations


def check_sections(document_path: Path, passages: list[str]) -> None:
    """Every written section is found by the project's loader, number and text as written."""
    from citeaudit.sources.registry import load_document

    document = load_document(document_path)
    if len(document.sections) != len(passages):
        raise PublicDataError(f"{document_path}: the loader finds {len(document.sections)} sections, "
                              f"{len(passages)} were written.")
    for n, passage in enumerate(passages, start=1):
        found = document.section(str(n))
        if found is None or found.text != passage:
            raise PublicDataError(f"{document_path}: section {n} is not read back as written.")


def build(public_dir: Path, out: Path, per_label: int = DEFAULT_PER_LABEL,
          domains: Iterable[str] = DOMAINS) -> dict[str, tuple[Path, Path]]:
    """Write each domain's document and citation file into `out` (default: the calibration's
    `DOMAINS`; `make public-sets` adds `JAPANESE`); returns their paths by domain."""
    written = {}
    out.mkdir(parents=True, exist_ok=True)
    for domain in domains:
        pairs = sample(domain, READERS[domain](public_dir), per_label)
        text, citations = render(domain, pairs)
        document, cited = out / f"{domain}.txt", out / f"{domain}_citations.json"
        atomic_write_text(document, text)
        check_sections(document, text.rstrip("\n").split("\n\n"))
        atomic_write_text(cited, json.dumps(citations, indent=1, ensure_ascii=False) + "\n")
        written[domain] = (document, cited)
    return written


def public_labelled_sets(out: Path, public_dir: Path) -> list[tuple[str, str]]:
    """The public TRAIN sets as (document, citation file) pairs, built into `out` (the settings'
    `build_dir() / "public"`) when they are not there yet and the public data is at `public_dir`
    (the settings' `public_dir()`: `CITEAUDIT_PUBLIC_DIR`, else `../shared/data/public` beside the
    project); an empty list when neither is there."""
    if not list(out.glob("*_citations.json")) and public_dir.is_dir():
        build(public_dir, out)
    return [(str(out / f"{domain}.txt"), str(out / f"{domain}_citations.json")) for domain in DOMAINS
            if (out / f"{domain}_citations.json").is_file()]


def main(argv: list[str] | None = None, *, public_dir: Path, out: Path) -> int:
    """`tools/public_sets.py`: `public_dir` and `out` are the folders used when the options do not
    name them (the settings': `public_dir()`, `build_dir() / "public"`)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--public-dir", type=Path, default=None,
                        help="folder with scifact/, climate-fever/, check-covid/ (default: $CITEAUDIT_PUBLIC_DIR, "
                             "else ../shared/data/public beside the repository)")
    parser.add_argument("--out", type=Path, default=out, help=f"output folder (default: {out})")
    parser.add_argument("--per-label", type=int, default=DEFAULT_PER_LABEL, help="pairs per label and domain")
    parser.add_argument("--domain", action="append", choices=DOMAINS + JAPANESE, help="only this domain (repeatable)")
    args = parser.parse_args(argv)
    if args.per_label < 1:
        parser.error("--per-label must be at least 1")
    try:
        written = build(args.public_dir or public_dir, args.out, args.per_label,
                        args.domain or DOMAINS + JAPANESE)
    except PublicDataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for domain, (document, cited) in written.items():
        print(f"{domain}: {document} and {cited} ({3 * args.per_label} citations)")
    return 0
