"""A synthetic RFC-shaped corpus and citations over it, for the step-1 benchmark.

The corpus is copies of RFC 7519 and RFC 6749 in turn, page furniture (headers, footers, form
feeds) kept, with the top-level section numbers of copy k renumbered to k*100 + n (so "4.1.3" of
the third copy is "204.1.3") until the text reaches the size asked for. The citations are sentences
of its sections:

  60% exact       the sentence with its line wraps, sometimes curly quotes, NBSP, en dashes
  10% elided      the first and last words of a long sentence around "..." or "…"
  15% one word    one word of the sentence changed (MUST -> SHOULD, or another word of the text)
  15% fabricated  words of the text in an order no sentence has

Each citation names the section it comes from (one in ten another section, as a misattributed
citation would). Usage: `write_corpus(path, megabytes)`, `make_citations(document, n)`.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from citeaudit.pipeline import resolve_source

SOURCES = ("rfc7519.txt", "rfc6749.txt")
_TOP_HEADER = re.compile(r"(?m)^(\d+)((?:\.\d+)*\.\s{1,2}\S)")
KINDS = (("exact", 0.60), ("elided", 0.10), ("one_word", 0.15), ("fabricated", 0.15))
SWAPS = {"MUST": "SHOULD", "SHOULD": "MAY", "MAY": "MUST", "REQUIRED": "OPTIONAL", "OPTIONAL": "REQUIRED",
         "not": "also", "NOT": "ALSO"}


def _renumber(offset: int):
    def top(match: re.Match) -> str:
        return f"{offset + int(match.group(1))}{match.group(2)}"
    return top


def corpus_text(size: int) -> str:
    """Copies of the two RFCs, renumbered, until the text is at least `size` characters."""
    originals = [resolve_source(name).read_text(encoding="utf-8") for name in SOURCES]
    parts, total, k = [], 0, 0
    while total < size:
        text = originals[k % len(originals)]
        if k:
            text = _TOP_HEADER.sub(_renumber(k * 100), text)
        parts.append(text)
        total += len(text)
        k += 1
    return "".join(parts)


def write_corpus(path: Path, megabytes: float) -> Path:
    path.write_text(corpus_text(int(megabytes * 1_000_000)), encoding="utf-8", newline="")
    return path


@dataclass(frozen=True)
class BenchCitation:
    id: str
    kind: str  # what the generator made: exact, elided, one_word, fabricated
    quote: str
    section: str


def _sentences(text: str) -> list[str]:
    """Sentences of a section's text, its line wraps kept (a sentence ends in '. ' or '.\\n')."""
    body = text.split("\n", 1)[1] if "\n" in text else ""
    found = []
    for paragraph in re.split(r"\n\s*\n", body):
        for sentence in re.split(r"(?<=[a-z0-9)]\.)\s+(?=[A-Z])", paragraph.strip()):
            # no run of spaces inside a line (tables, figures); the indentation of a wrap is not one
            inner = "  " in " ".join(line.strip() for line in sentence.splitlines())
            if 10 <= len(sentence.split()) <= 45 and sentence.endswith(".") and not inner:
                found.append(sentence.strip())
    return found


def _decorate(sentence: str, rng: random.Random) -> str:
    """Typography an LLM answer may bring: curly quotes, non-breaking spaces, en dashes."""
    if '"' in sentence and rng.random() < 0.6:
        parts = sentence.split('"')
        sentence = "".join(p + ("\u201c" if i % 2 == 0 else "\u201d") for i, p in enumerate(parts[:-1])) + parts[-1]
    if rng.random() < 0.3:
        sentence = "\u201c" + sentence + "\u201d"
    if rng.random() < 0.4:
        sentence = sentence.replace(" ", "\u00a0", rng.randint(1, 3))
    if "-" in sentence and rng.random() < 0.5:
        sentence = sentence.replace("-", "\u2013", 1)
    return sentence


def make_citations(document, n: int, seed: int = 7) -> list[BenchCitation]:
    """`n` citations of the four kinds (in the shares of `KINDS`) over a loaded corpus `Document`."""
    rng = random.Random(seed)
    by_section = {sid: _sentences(section.text) for sid, section in document.sections.items()}
    pool = [(sid, s) for sid, sentences in by_section.items() for s in sentences]
    vocabulary = sorted({w for _, s in pool[:5000] for w in s.split() if w.isalpha()})
    sids = list(document.sections)
    counts = [round(share * n) for _, share in KINDS]
    counts[0] += n - sum(counts)
    kinds = [kind for (kind, _), count in zip(KINDS, counts) for _ in range(count)]
    rng.shuffle(kinds)
    out = []
    for i, kind in enumerate(kinds):
        sid, sentence = rng.choice(pool)
        words = sentence.split()
        if kind == "exact":
            quote = _decorate(sentence, rng)
        elif kind == "elided":
            k = rng.randint(3, 5)
            quote = " ".join(words[:k]) + rng.choice([" ... ", " \u2026 ", "..."]) + " ".join(words[-k:])
        elif kind == "one_word":
            j = rng.randrange(2, len(words) - 2)
            words[j] = SWAPS.get(words[j], rng.choice([w for w in vocabulary if w != words[j]]))
            quote = " ".join(words)
        else:
            quote = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(10, 25))).capitalize() + "."
            sid = rng.choice(sids)
        cited = sid if rng.random() < 0.9 else rng.choice(sids)
        out.append(BenchCitation(f"c{i:05d}", kind, quote, cited))
    return out
