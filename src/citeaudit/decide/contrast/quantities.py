"""Numbers and quantities in English text, normalized so that they compare: "five minutes",
"300 seconds" and "5 min" are each 300 seconds; "10%" and "ten percent" are 10 percent; a range
"5-10 minutes" is two quantities in minutes; an ISO date is a day.

Only what is safe is normalized: units convert within one dimension (time, data, length, mass,
percent, times), never across; a bare number is a count; a number inside an identifier (HS256), a
section number (4.1.4) or a reference ([RFC7519], Section 15.12) is not a quantity.

Numbers as people write them (issue 52): "one" before the thing it counts ("at least one period",
not "one of", "no one"), "twice" and "three times" (2 and 3 times), "a dozen", "half" and "a
quarter" (shares: the same as 50% and 25%, compared only with another share), ordinals after "the"
or "a" ("the second retry": an ordinal 2), a
clock time (07:40), and vague amounts as the range they allow ("a few minutes" is 2 to 9 minutes,
"several" 3 to 12, "hundreds of" 100 to 1,999): a vague amount is the same as any amount inside
its range, and different from one outside it.

    >>> [(q.value, q.dimension) for q in quantities("leeway of five minutes, or 300 seconds, or 5 min")]
    [(300.0, 'time'), (300.0, 'time'), (300.0, 'time')]
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from datetime import date

COUNT = "count"
DATE = "date"
ORDINAL = "ordinal"
CLOCK = "clock"
TIMES = "times"
SHARE = "share"  # a share said in words ("half", "a third"): equal to its percentage, compared only with another

_SMALL = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
NUMBER_WORDS = {word: n for n, word in enumerate(_SMALL)} | {word: 20 + 10 * n for n, word in enumerate(_TENS)}
SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}

# unit (lowercase, or exact case where case matters) -> (dimension, factor to the dimension's base unit)
_UNITS: dict[str, tuple[str, float]] = {}
for _names, _dimension, _factor in (
    ("ms msec msecs millisecond milliseconds", "time", 0.001),
    ("s sec secs second seconds", "time", 1.0),
    ("min mins minute minutes", "time", 60.0),
    ("h hr hrs hour hours", "time", 3600.0),
    ("day days", "time", 86400.0),
    ("week weeks", "time", 604800.0),
    ("month months", "time", 2629746.0),  # a twelfth of the Gregorian year below
    ("year years yr yrs", "time", 31556952.0),
    ("% percent per-cent pct", "percent", 1.0),
    ("times", TIMES, 1.0),
    ("bit bits", "data", 0.125),
    ("byte bytes octet octets", "data", 1.0),
    ("kb kilobyte kilobytes", "data", 1e3),
    ("kib kibibyte kibibytes", "data", 1024.0),
    ("mb megabyte megabytes", "data", 1e6),
    ("mib mebibyte mebibytes", "data", 1024.0 ** 2),
    ("gb gigabyte gigabytes", "data", 1e9),
    ("gib gibibyte gibibytes", "data", 1024.0 ** 3),
    ("tb terabyte terabytes", "data", 1e12),
    ("mm millimeter millimeters millimetre millimetres", "length", 0.001),
    ("cm centimeter centimeters centimetre centimetres", "length", 0.01),
    ("m meter meters metre metres", "length", 1.0),
    ("km kilometer kilometers kilometre kilometres", "length", 1000.0),
    ("mi mile miles", "length", 1609.344),
    ("mg milligram milligrams", "mass", 1e-6),
    ("g gram grams", "mass", 1e-3),
    ("kg kilogram kilograms", "mass", 1.0),
    ("t tonne tonnes", "mass", 1000.0),
):
    for _name in _names.split():
        _UNITS[_name] = (_dimension, _factor)
# "per cent" is two words; the single letters are units only right after a number
_UNIT_PATTERN = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True)) + r"|per cent"
_NUMBER_WORD = "|".join(sorted([*NUMBER_WORDS, *SCALES], key=len, reverse=True))

_DIGITS = r"\d{1,3}(?:,\d{3})+(?:[.·]\d+)?|\d+(?:[.·]\d+)?|\.\d+"  # "1·7": a decimal point as journals set it
_FIRST_WORD = "|".join(sorted(NUMBER_WORDS, key=len, reverse=True))  # "million" alone is no number
_SPELLED = rf"(?:{_FIRST_WORD})(?:[\s-]+(?:and[\s-]+)?(?:{_NUMBER_WORD}))*"
QUANTITY = re.compile(
    rf"(?<![\w.·\[/#§])(?<![A-Za-z]-)(?:(?P<digits>{_DIGITS})|(?P<words>\b{_SPELLED}\b(?!-[A-Za-z])))"
    rf"(?![\w]*\d)(?![.·]\d)(?:\s*(?P<scale>hundred|thousand|million|billion)\b)?"
    rf"(?:(?P<gap>\s?|-)(?P<unit>{_UNIT_PATTERN})(?![A-Za-z0-9]))?", re.IGNORECASE)
ORDINALS = {w: n + 1 for n, w in enumerate(
    ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"])}
# an ordinal where it orders things ("the second retry", "a third attempt"), not an adverb ("sign first")
# nor a unit ("a second" of time: "second" after "a" only when "time" follows)
ORDINAL_WORD = re.compile(r"(?<=\bthe )(?:(" + "|".join(ORDINALS) + r")|(\d{1,3})(?:st|nd|rd|th))\b(?= [a-z])"
                          r"|(?<=\ba )(" + "|".join(w for w in ORDINALS if w != "first") + r")(?= time\b)",
                          re.IGNORECASE)
# an amount of times or a share said in a word
WORD_AMOUNTS = {"twice": (2.0, TIMES), "thrice": (3.0, TIMES), "a dozen": (12.0, COUNT), "half": (50.0, SHARE),
                "a quarter": (25.0, SHARE), "a third": (100 / 3, SHARE), "more than once": (2.0, TIMES)}
WORD_AMOUNT = re.compile(r"\b(?:twice|thrice|a dozen|half|a quarter|a third(?! time))\b(?![-'])"
                         r"|\bmore than once\b"
                         r"|(?:(?<=\bthan )|(?<=\bexactly )|(?<=\bonly )|(?<=\bleast )|(?<=\bmost )|(?<=\bjust ))once\b"
                         r"|\bonce(?= (?:per|every|each|a day|a week|a month|a year)\b)", re.IGNORECASE)
# a vague amount: the range of counts it allows, times the unit right after it ("a few minutes")
VAGUE = {"a couple of": (2, 3), "a couple": (2, 3), "a few": (2, 9), "several": (3, 12), "a handful of": (2, 9),
         "a small number of": (2, 12), "dozens of": (13, 199), "hundreds of": (100, 1999),
         "thousands of": (1000, 999_999), "millions of": (1e6, 999_999_999)}
VAGUE_AMOUNT = re.compile(r"\b(?P<vague>" + "|".join(sorted(VAGUE, key=len, reverse=True)) + r")\b"
                          r"(?:\s+(?P<unit>[A-Za-z%]{2,}))?", re.IGNORECASE)
CLOCK_TIME = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?::[0-5]\d)?(?![\d:])")
# "one" is a count before the thing it counts, not a pronoun ("one of", "no one", "the one that")
ONE_PRONOUN = re.compile(r"\b(?:no|any|the|this|that|each|every|which|some)\s+$", re.IGNORECASE)
ONE_NOT_COUNTING = re.compile(r"^(?:\s*$|\s*[^\sA-Za-z(]|\s+(?:of|or|another|that|which|who|whose|and|is|are|was|"
                              r"were|can|could|may|might|must|should|shall|will|would|to|in|on|at|by|for|with|"
                              r"from|as|if|but|such|way|hand|day|side)\b)", re.IGNORECASE)
# a number right after an acronym or these words names a kind ("BRCA 1", "Type 2", "phase 3"), it counts nothing
NAMED = re.compile(r"\b[A-Z]{2,}[A-Za-z]*[ -]$|\b(?:[Tt]ype|[Pp]hase|[Gg]rade|[Ss]tage|[Cc]lass|[Ll]evel|[Tt]ier|"
                   r"[Cc]ategory|[Ww]ave|[Aa]rm)[ -]$")
LIST_NUMBER = re.compile(r"[.)][ \t]|[ \t]{2,}")  # after a number that starts its line
ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?:T[\d:.]+Z?)?(?!\d)")
RANGE_LINK = re.compile(r"^\s*(?:-|–|—|to)\s*$", re.IGNORECASE)
PLUS_MINUS = re.compile(r"^\s*(?:±|\+/-)\s*$")  # "3.0 ± 0.4 mm": the value takes the spread's unit
# a decade ("the 1940s", "1990's") names a time, it is no amount (nor 1940 seconds)
DECADE = re.compile(r"(?:1[5-9]|20)\d0'?s\b")
MONTH = re.compile(r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+$")  # "March 16"; not "may 5"
BETWEEN = re.compile(r"\bbetween\s+$", re.IGNORECASE)  # "between 5 and 10 minutes"
# a number right after these is a locator or a name, not a quantity
REFERENCE = re.compile(r"(?:section|sections|rfc|std|version|appendix|figure|table|step|page|pages|chapter|"
                       r"article|paragraph|item|edition|bcp|no\.|number|§|\[)\s*$"
                       r"|(?:sections?|rfcs?|steps?|pages?)\s+[\d.]+(?:\s*(?:,|and|or|to|-)\s*[\d.]+)*"
                       r"\s*(?:,|and|or|to|-)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Quantity:
    """A number found in a text: its value in the base unit of its `dimension` (seconds, bytes,
    meters, kilograms, percent; a day's ordinal for a date; the number itself for a count), the
    words that said it and their `[start, end)` offsets."""

    value: float
    dimension: str
    text: str
    start: int
    end: int
    upper: float | None = None  # a vague amount's largest value ("a few minutes": 120 to 540 seconds)

    @property
    def top(self) -> float:
        """The largest value this quantity allows (its value, unless it is vague)."""
        return self.value if self.upper is None else self.upper

    def same(self, other: Quantity) -> bool:
        """Whether `other` says this amount: equal values in one dimension (this one a bare count
        meets any dimension, as "5" may be "5 minutes" said without its unit; "5 minutes" is not
        said by a bare "5" elsewhere); a vague amount says any value inside its range."""
        if {self.dimension, other.dimension} == {SHARE, "percent"}:
            return math.isclose(self.value, other.value, rel_tol=0.02)  # "a third" is 33%
        if self.dimension != other.dimension and self.dimension != COUNT:
            return False
        if self.upper is not None or other.upper is not None:
            slack = 1e-9 * max(abs(self.value), abs(other.value), 1.0)
            return self.value <= other.top + slack and other.value <= self.top + slack
        return math.isclose(self.value, other.value, rel_tol=1e-9, abs_tol=1e-12)

    def comparable(self, other: Quantity) -> bool:
        """Whether the two measure the same kind of thing (one dimension), so that different values
        contradict each other."""
        return self.dimension == other.dimension


def spelled_value(text: str) -> float | None:
    """The value of a number in words ("twenty-one", "three hundred and five"), or None.

    >>> spelled_value("twenty-one"), spelled_value("three hundred and five"), spelled_value("two thousand")
    (21.0, 305.0, 2000.0)
    """
    total, current, seen = 0, 0, False
    for token in re.split(r"[\s-]+", text.lower()):
        if token in ("", "and"):
            continue
        if token in NUMBER_WORDS:
            current += NUMBER_WORDS[token]
        elif token in SCALES:
            scale = SCALES[token]
            if scale == 100:
                current = (current or 1) * 100
            else:
                total += (current or 1) * scale
                current = 0
        else:
            return None
        seen = True
    return float(total + current) if seen else None


def _value(match: re.Match[str]) -> float | None:
    if match.group("digits"):
        value = float(match.group("digits").replace(",", "").replace("·", "."))
    else:
        spelled = spelled_value(match.group("words"))
        if spelled is None:
            return None
        value = spelled
    if match.group("scale"):
        value *= SCALES[match.group("scale").lower()]
    return value


def _unit(match: re.Match[str]) -> tuple[str, float] | None:
    unit = match.group("unit")
    if not unit:
        return None
    key = "per-cent" if unit.lower() == "per cent" else unit.lower()
    if len(unit) == 1 and unit.lower() != "%" and match.group("gap") == "" and match.group("words"):
        return None  # "fives", "tens": a letter glued to a word is no unit
    if len(unit) == 1 and match.group("gap") == "-":
        return None  # "4-s", "3-m": a code more often than a quantity ("5-minute", "256-bit" are read)
    if unit in ("T", "t") and match.group("gap"):
        return None  # "5 t" is too rare a tonne to trust
    return _UNITS.get(key)


def dates(text: str) -> list[Quantity]:
    """ISO dates (1970-01-01, with or without a time) as days."""
    found = []
    for match in ISO_DATE.finditer(text):
        try:
            day = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            continue
        found.append(Quantity(float(day.toordinal()), DATE, match.group(), match.start(), match.end()))
    return found


def clock_times(text: str) -> list[Quantity]:
    """Clock times (07:40, 23:59:30) as minutes after midnight."""
    return [Quantity(float(int(m.group(1)) * 60 + int(m.group(2))), CLOCK, m.group(), m.start(), m.end())
            for m in CLOCK_TIME.finditer(text)]


def worded(text: str) -> list[Quantity]:
    """The amounts said without a numeral: ordinals, "twice", "a dozen", "half", and vague amounts
    ("a few minutes", "several", "hundreds of") as the range they allow."""
    found = []
    for m in ORDINAL_WORD.finditer(text):
        word = m.group(1) or m.group(3)
        place = ORDINALS[word.lower()] if word else int(m.group(2))
        found.append(Quantity(float(place), ORDINAL, m.group(), m.start(), m.end()))
    for m in WORD_AMOUNT.finditer(text):
        amount, dimension = WORD_AMOUNTS.get(" ".join(m.group().lower().split()), (1.0, TIMES))
        upper = math.inf if m.group().lower().startswith("more") else None  # "more than once": 2 or more
        found.append(Quantity(amount, dimension, m.group(), m.start(), m.end(), upper))
    for m in VAGUE_AMOUNT.finditer(text):
        lo, hi = VAGUE[" ".join(m.group("vague").lower().split())]
        unit = _UNITS.get(m.group("unit").lower()) if m.group("unit") else None
        dimension, factor = unit if unit is not None else (COUNT, 1.0)
        end = m.end() if unit is not None else m.end("vague")
        found.append(Quantity(lo * factor, dimension, text[m.start():end], m.start(), end, hi * factor))
    return found


def _one_counts(text: str, match: re.Match[str]) -> bool:
    """Whether a bare "one" counts something: a word it counts follows, and no pronoun's word is beside it."""
    return not ONE_PRONOUN.search(text[max(0, match.start() - 12):match.start()]) and \
        not ONE_NOT_COUNTING.match(text[match.end():match.end() + 12])


def quantities(text: str) -> list[Quantity]:
    """Every quantity in `text`, in order: dates, clock times, amounts said in words (`worded`), then
    numbers with their units (a number before a range's second number takes that number's unit:
    "5-10 minutes" is 5 and 10 minutes)."""
    found = dates(text)
    found += [q for q in clock_times(text) if not any(d.start <= q.start < d.end for d in found)]
    found += [q for q in worded(text) if not any(d.start <= q.start < d.end for d in found)]
    taken = [(q.start, q.end) for q in found]
    numbers: list[tuple[re.Match[str], float, tuple[str, float] | None]] = []
    for match in QUANTITY.finditer(text):
        if any(lo <= match.start() < hi for lo, hi in taken):
            continue
        if REFERENCE.search(text[max(0, match.start() - 40):match.start()]) or \
                NAMED.search(text[max(0, match.start() - 12):match.start()]):
            continue
        if (match.group("digits") and DECADE.match(text, match.start())) or (
                (match.group("words") or len(match.group("digits")) <= 2)
                and MONTH.search(text[max(0, match.start() - 10):match.start()])):
            continue  # "the 1940s", "March 16": a decade or a day of a month, not an amount
        if match.group("digits") and LIST_NUMBER.match(text, match.end()) and \
                not text[text.rfind("\n", 0, match.start()) + 1:match.start()].strip():
            continue  # "1.   Verify that ...", "7.2.  Validating a JWT": a list item's or a heading's number
        if match.group("words") and match.group("words").lower() == "one" and not match.group("unit") \
                and not _one_counts(text, match):
            continue  # "one of", "no one": a pronoun, not a count
        value = _value(match)
        if value is None or not math.isfinite(value):
            continue
        numbers.append((match, value, _unit(match)))
    for i, (match, value, unit) in enumerate(numbers):
        if unit is None and i + 1 < len(numbers):
            following, _, next_unit = numbers[i + 1]
            link = text[match.end():following.start()]
            if next_unit is not None and (RANGE_LINK.match(link) or PLUS_MINUS.match(link) or (
                    link.strip().lower() == "and" and BETWEEN.search(text[max(0, match.start() - 10):match.start()]))):
                unit = next_unit
        dimension, factor = unit if unit is not None else (COUNT, 1.0)
        found.append(Quantity(value * factor, dimension, match.group(), match.start(), match.end()))
    return sorted(found, key=lambda q: q.start)


def describe(quantity: Quantity) -> str:
    """The words that said a quantity, whitespace collapsed."""
    return " ".join(quantity.text.split())


def ranges(text: str, found: list[Quantity]) -> list[tuple[Quantity, Quantity]]:
    """The pairs of `found` (the quantities of `text`, in order) that make a range: "5-10 minutes",
    "5 to 10", "between 5 and 10", in one dimension."""
    pairs = []
    for a, b in itertools.pairwise(found):
        link = text[a.end:b.start]
        if a.dimension == b.dimension and (RANGE_LINK.match(link) or (
                link.strip().lower() == "and" and BETWEEN.search(text[max(0, a.start - 10):a.start]))):
            pairs.append((a, b))
    return pairs


def within(value: Quantity, pairs: list[tuple[Quantity, Quantity]]) -> bool:
    """Whether `value` lies inside one of the ranges `pairs` of its dimension."""
    return any(value.dimension == lo.dimension and min(lo.value, hi.value) <= value.value <= max(lo.value, hi.value)
               for lo, hi in pairs)
