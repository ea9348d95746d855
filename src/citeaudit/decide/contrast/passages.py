"""Words and sentences of a claim and its evidence, with offsets, and which evidence sentences
best match a claim: what every contrast check compares.

Words are read with a plain regular expression over English text; `readable` says whether a text
is one the checks can read (mostly Latin letters), so a check stays silent on a Japanese claim
instead of guessing.

    >>> [s.text for s in sentences("Use of this claim is OPTIONAL.  Its value MUST be a number.")]
    ['Use of this claim is OPTIONAL.', 'Its value MUST be a number.']
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*[A-Za-z0-9]|[A-Za-z]")
# a sentence ends at . ! ? ; or a blank line, followed by space; "e.g." and section numbers do not end one,
# nor does a blank line between a word and a lower-case word: that is where a page break was taken out
# of an RFC's text ("sign the message and then\n\n   encrypt the result"), not a paragraph's end
# (each alternative starts with the character it ends a sentence at, and looks behind only then: fast)
_END = re.compile(r"[.!?;](?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bet al\.)(?<!\d.)(?=\s)|\n(?<![\w,]\n)\s*\n|"
                  r"\n(?<=[\w,]\n)\s*\n(?!\s*[a-z]{2})")
STOPWORDS = frozenset([
    "a", "an", "the", "and", "or", "but", "if", "then", "than", "that", "this", "these", "those", "there", "their",
    "them", "they", "it", "its", "it's", "is", "are", "was", "were", "be", "been", "being", "am", "to", "of", "in",
    "on", "at", "by", "for", "with", "from", "as", "into", "onto", "over", "under", "about", "after", "before",
    "between", "through", "during", "per", "so", "such", "any", "all", "each", "every", "some", "no", "not", "nor",
    "do", "does", "did", "done", "has", "have", "had", "having", "can", "could", "will", "would", "shall", "should",
    "may", "might", "must", "also", "only", "just", "very", "more", "most", "less", "least", "which", "who", "whom",
    "whose", "what", "when", "where", "while", "how", "why", "both", "either", "neither", "other", "another",
    "same", "own", "one", "ones", "itself", "himself", "herself", "themselves", "he", "she", "his", "her", "we",
    "our", "you", "your", "i", "me", "my", "mine", "us", "ours", "yours", "theirs", "whether", "via", "upon",
    "within", "without"
])
# the words that state how binding a sentence is (normative.py) or negate it (polarity.py): not content
FUNCTION_WORDS = STOPWORDS | frozenset([
    "required", "require", "requires", "requirement", "mandatory", "optional", "optionally", "recommended",
    "allowed", "permitted", "forbidden", "prohibited", "never", "cannot", "can't", "won't", "don't", "doesn't",
    "isn't", "aren't", "wasn't", "weren't", "needn't", "need", "needs", "needed", "ought"
])


@dataclass(frozen=True)
class Sentence:
    """One sentence of a text: its `[start, end)` offsets into the text, and its text."""

    start: int
    end: int
    text: str


@lru_cache(maxsize=1024)  # pure; a batch asks it of the same evidence for every claim that cites it
def readable(text: str) -> bool:
    """Whether the checks can read `text`: at least 80% of its letters are Latin (English, as far as
    a regular expression can tell; a Japanese or Chinese claim is not).

    >>> readable("Every JWT has to carry an exp claim."), readable("すべてのJWTはexpクレームを持つ必要がある。")
    (True, False)
    """
    if text.isascii():  # every ASCII letter is Latin: no name to look up (most evidence, and fast)
        return any(c.isalpha() for c in text)
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    latin = sum(1 for c in letters if c.isascii() or "LATIN" in unicodedata.name(c, ""))
    return latin >= 0.8 * len(letters)


def sentences(text: str) -> list[Sentence]:
    """The sentences of `text` with their offsets (leading and trailing space trimmed)."""
    return list(_sentences(text))


@lru_cache(maxsize=256)  # pure, and asked again of the same evidence by each check and claim clause
def _sentences(text: str) -> tuple[Sentence, ...]:
    found, start = [], 0
    for match in _END.finditer(text):
        found.append((start, match.end()))
        start = match.end()
    found.append((start, len(text)))
    out = []
    for lo, hi in found:
        piece = text[lo:hi]
        left = len(piece) - len(piece.lstrip())
        right = len(piece.rstrip())
        if right > left:
            out.append(Sentence(lo + left, lo + right, piece[left:right]))
    return tuple(out)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude English stem that lets "rejected", "rejects" and "rejecting" meet "reject".

    >>> stem("rejected"), stem("tokens"), stem("processing"), stem("carries"), stem("use"), stem("using")
    ('reject', 'token', 'process', 'carri', 'us', 'us')
    """
    w = word.lower().replace("'", "")
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 2:
            w = w[: -len(suffix)]
            break
    if w.endswith("y") and len(w) > 3:
        w = w[:-1] + "i"
    elif w.endswith("e") and len(w) > 2:
        w = w[:-1]
    return w


def words(text: str) -> list[tuple[int, int, str]]:
    """Every word of `text` as (start, end, word)."""
    return [(m.start(), m.end(), m.group()) for m in WORD.finditer(text)]


@lru_cache(maxsize=8192)  # pure, and asked again of each evidence sentence by every check and claim
def content(text: str) -> frozenset[str]:
    """The stems of the words that carry content (no stopwords, no normative or negating words)."""
    return frozenset(stem(w) for _, _, w in words(text) if w.lower() not in FUNCTION_WORDS and len(w) > 1)


def overlap(claim: frozenset[str], sentence: frozenset[str]) -> float:
    """The share of the claim's content stems that `sentence` holds (0 when the claim has none)."""
    return len(claim & sentence) / len(claim) if claim else 0.0


def quoted_by(sentence: str, quote_words: frozenset[str]) -> bool:
    """Whether a quote with these content stems stands in `sentence` (most of its words, and more than
    a heading's few)."""
    words_of = content(sentence)
    return len(words_of) >= 4 and overlap(words_of, quote_words) >= 0.6


def best_sentences(claim: str, evidence: str, quote: str | None = None, top: int = 2,
                   within: float = 0.85) -> list[tuple[Sentence, float]]:
    """The evidence sentences that best match the claim, best first, each with its `overlap`:
    the sentences the quote stands in when a quote is given (those that share most of their words
    with it), else the `top` sentences by overlap with the claim, keeping only those within
    `within` of the best. Sentences with no overlap, and the evidence's heading, are left out."""
    claim_words = content(claim)
    title = heading(evidence)
    scored = [(s, overlap(claim_words, content(s.text))) for s in sentences(evidence)
              if not (title and s.text.startswith(title))]  # a heading names the topic, it states nothing
    if quote:
        quote_words = content(quote)
        quoted = [(s, o) for s, o in scored if quoted_by(s.text, quote_words)]
        if quoted:
            return sorted(quoted, key=lambda pair: -pair[1])
    scored = sorted((pair for pair in scored if pair[1] > 0), key=lambda pair: -pair[1])[:top]
    return [pair for pair in scored if pair[1] >= within * scored[0][1]] if scored else []


@dataclass(frozen=True)
class Finding:
    """What one contrast check found: its `check` (a `ContrastCheck` name), the one line that says
    why (`says`), and the fired words as `[start, end)` offsets into the claim and into the
    evidence text."""

    check: str
    says: str
    claim: tuple[tuple[int, int], ...] = ()
    evidence: tuple[tuple[int, int], ...] = ()

    def to_dict(self) -> dict[str, object]:
        """The finding as the table and the JSON Lines records hold it."""
        return {"check": self.check, "says": self.says, "claim": [list(s) for s in self.claim],
                "evidence": [list(s) for s in self.evidence]}


def quoted_terms(text: str) -> list[tuple[int, int, str]]:
    """Terms in quotation marks ("exp", 'aud', “iat”) as (start, end, term), the marks left out."""
    return [(m.start(1), m.end(1), m.group(1)) for m in re.finditer(r"[\"“'‘]([^\"“”'‘’\n]{1,40})[\"”'’]", text)
            if not m.group(1).startswith(" ")]


def heading(evidence: str) -> str:
    """The evidence's heading line when it starts with one (a short line, not a sentence, with a blank
    line after it: `4.1.4.  "exp" (Expiration Time) Claim`), else ""."""
    match = re.match(r"\s*([^\n]{1,119}?)[ \t]*\n[ \t]*\n", evidence)
    return match.group(1).strip() if match and not match.group(1).rstrip().endswith((".", ":", ";")) else ""


def clip(text: str, limit: int = 100) -> str:
    """`text` on one line, cut at `limit` characters with "…"."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1].rstrip() + "…"
