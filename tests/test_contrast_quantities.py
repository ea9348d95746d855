"""The number and unit reader of the contrast checks (`decide/contrast/quantities.py`): property
tests over the forms a number is written in, and the references that are not quantities."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citeaudit.decide.contrast.quantities import VAGUE, quantities, spelled_value

ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def in_words(n: int) -> str:
    """0..999,999 in English words, written here from the rules of English, not from the reader."""
    if n < 20:
        return ONES[n]
    if n < 100:
        return TENS[n // 10 - 2] + ("-" + ONES[n % 10] if n % 10 else "")
    if n < 1000:
        return ONES[n // 100] + " hundred" + (" and " + in_words(n % 100) if n % 100 else "")
    return in_words(n // 1000) + " thousand" + (" " + in_words(n % 1000) if n % 1000 else "")


# (unit words, seconds per unit): every way `quantities` is documented to read a time
TIME_UNITS = [("ms", 0.001), ("seconds", 1), ("s", 1), ("sec", 1), ("min", 60), ("minutes", 60),
              ("hours", 3600), ("h", 3600), ("days", 86400), ("weeks", 604800)]


@given(st.integers(min_value=2, max_value=999_999))
def test_a_number_in_words_digits_or_thousands_separators_is_one_value(n):
    forms = [str(n), f"{n:,}", in_words(n)]
    values = [[q.value for q in quantities(f"it holds {form} items")] for form in forms]
    assert values == [[float(n)]] * 3, forms


@given(st.integers(min_value=1, max_value=10_000), st.sampled_from(TIME_UNITS), st.sampled_from(TIME_UNITS))
def test_times_in_any_unit_compare_by_seconds(n, unit, other):
    (a,) = quantities(f"wait {n} {unit[0]} here")
    seconds = n * unit[1]
    written = f"{seconds / other[1]:.6f}".rstrip("0").rstrip(".")  # in the other unit, where it is exact
    (b,) = quantities(f"wait {written} {other[0]} here") if float(written) * other[1] == seconds else (a,)
    assert a.dimension == b.dimension == "time"
    assert a.value == pytest.approx(seconds) and a.same(b)


@given(st.integers(min_value=2, max_value=99), st.integers(min_value=2, max_value=99))
def test_a_range_gives_its_unit_to_both_ends(lo, hi):
    for text in (f"{lo}-{hi} minutes", f"{lo} to {hi} minutes", f"between {lo} and {hi} minutes"):
        assert [(q.value, q.dimension) for q in quantities(text)] == [(lo * 60.0, "time"), (hi * 60.0, "time")]


@given(st.text(max_size=200))
def test_any_text_reads_without_error_and_spans_point_at_what_was_read(text):
    for q in quantities(text):
        assert text[q.start:q.end] == q.text and q.value == q.value  # not NaN


@given(st.integers(min_value=0, max_value=100), st.sampled_from(["%", " %", " percent", " per cent"]))
def test_percentages(n, sign):
    (q,) = quantities(f"about {n}{sign} of them")
    assert (q.value, q.dimension) == (float(n), "percent")


@pytest.mark.parametrize("text", [
    "see Section 4.1.4 of RFC 7519", "[RFC7519] and [RFC 7159]", "the HS256 and ES256 algorithms", "SHA-256",
    "Sections 2 and 3", "version 2", "one of the parties", "no one",
])
def test_references_identifiers_and_pronouns_are_not_quantities(text):
    assert quantities(text) == []


def test_dates_units_and_words():
    found = [(q.text, q.dimension) for q in quantities(
        "since 1970-01-01T00:00:00Z, 5 min, 300 seconds, five minutes, 4 KB, 2.5 million and 12%")]
    assert found == [("1970-01-01T00:00:00Z", "date"), ("5 min", "time"), ("300 seconds", "time"),
                     ("five minutes", "time"), ("4 KB", "data"), ("2.5 million", "count"), ("12%", "percent")]
    assert spelled_value("forty-two") == 42 and spelled_value("banana") is None


def test_units_of_different_kinds_never_compare():
    (minutes,), (meters,), (bare,) = quantities("5 minutes"), quantities("5 m"), quantities("it is 300 long")
    assert not minutes.comparable(meters) and not minutes.same(quantities("5 m")[0])
    assert bare.same(quantities("300 seconds")[0])  # a bare number may be the same number said without unit
    assert not quantities("300 seconds")[0].same(bare)  # but a bare 300 elsewhere does not say 300 seconds


# issue 52: numbers as people write them
@given(st.integers(min_value=1, max_value=19))
def test_a_count_in_words_is_its_digits_one_included(n):
    word = ONES[n]
    (a,), (b,) = quantities(f"at least {word} period characters"), quantities(f"at least {n} period characters")
    assert a.same(b) and b.same(a) and a.value == n


@pytest.mark.parametrize("text", ["one of the parties", "no one", "the one that signs", "one or more values",
                                  "each one", "on the one hand"])
def test_one_as_a_pronoun_is_no_count(text):
    assert quantities(text) == []


@given(st.sampled_from(sorted(VAGUE)), st.sampled_from(TIME_UNITS[1:]), st.integers(min_value=1, max_value=3000))
def test_a_vague_amount_is_the_same_as_any_amount_in_its_range_and_no_other(vague, unit, n):
    lo, hi = VAGUE[vague]
    (v,) = quantities(f"wait {vague} {unit[0]}, then go") if len(unit[0]) > 1 else quantities(f"wait {vague} things")
    (q,) = quantities(f"wait {n} {unit[0]}, then go") if len(unit[0]) > 1 else quantities(f"wait {n} things")
    assert v.same(q) == q.same(v) == (lo <= n <= hi)


def test_ordinals_times_shares_and_clock_times():
    read = [(q.text, q.value, q.dimension) for q in quantities(
        "the second retry, a third time, twice a day, 3 times, more than once, half of them, at 07:40")]
    assert read == [("second", 2, "ordinal"), ("third", 3, "ordinal"), ("twice", 2, "times"), ("3 times", 3, "times"),
                    ("more than once", 2, "times"), ("half", 50, "share"), ("07:40", 460, "clock")]
    assert quantities("sign first and then encrypt") == [] and quantities("within a second") == []
    (half,), (fifty,) = quantities("half of them"), quantities("50% of them")
    assert half.same(fifty) and not half.comparable(fifty)  # equal, but a share is compared only with a share
    (twice,), (more,) = quantities("used twice"), quantities("used more than once")
    assert twice.same(more) and not quantities("used once a day")[0].same(more)


@pytest.mark.parametrize("text", ["1.   Verify that the JWT", "7.2.  Validating a JWT", "BRCA 1 carriers",
                                  "Type 2 diabetes", "a phase 3 trial"])
def test_list_numbers_and_named_kinds_are_not_quantities(text):
    assert quantities(text) == []


def kanji(n: int) -> str:
    """A counted kanji numeral, written here from the rules of the numerals, not from the reader."""
    digits = "〇一二三四五六七八九"
    out = ""
    for value, unit in ((1000, "千"), (100, "百"), (10, "十")):
        q, n = divmod(n, value)
        if q:
            out += ("" if q == 1 else digits[q]) + unit
    return out + (digits[n] if n else "")


@given(st.integers(min_value=1, max_value=9999), st.sampled_from(["年", "日", "時間", "円", "万円", "人", "回"]))
def test_japanese_amounts_in_kanji_arabic_or_full_width_are_one_value(n, counter):
    from citeaudit.decide.contrast.japanese import amounts

    full = str(n).translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    read = [amounts(f"は{form}{counter}以下とする") for form in (kanji(n), str(n), full)]
    assert all(len(r) == 1 for r in read), read
    (a,), (b,), (c,) = read
    assert a.same(b) and b.same(c) and a.value == b.value == c.value


def test_japanese_references_dates_and_words_are_not_amounts():
    from citeaudit.decide.contrast.japanese import amounts

    assert amounts("第三条の規定、第1項第2号、令和5年4月1日、十分に") == []


def test_journal_decimals_decades_days_of_a_month_and_a_spread():
    """Issue 52's DEV set: what the supported originals were flagged for by a misreading."""
    assert [(q.text, q.value) for q in quantities("1·7 billion people")] == [("1·7 billion", 1.7e9)]
    assert quantities("warming since the 1940s and the 1990's") == []  # a decade, not 1940 seconds
    assert quantities("a lockdown until March 16, by Sept. 1") == []  # a day of a month
    assert [q.text for q in quantities("it may 5 times")] == ["5 times"]  # "may" the verb is no month
    rise = quantities("3.0 ± 0.4 millimetres per year")  # the value takes the spread's unit
    assert [(q.dimension, round(q.value, 6)) for q in rise] == [("length", 0.003), ("length", 0.0004)]


@pytest.mark.parametrize("claim, fired", [
    ("6 percent were staff.", False),  # 5.9% rounded
    ("7 percent were staff.", True),
    ("An estimated 40 percent were mild.", False),  # a hedge: a whole unit of 40.7%
    ("40 percent were mild.", True),  # not hedged: 40.7% rounds to 41
    ("42 percent were mild.", True),
])
def test_a_claim_number_rounded_from_the_evidence_is_the_evidence_number(claim, fired):
    from citeaudit.decide.contrast import numbers

    evidence = "Among them, 5.9% were staff and 40.7% were mild."
    assert bool(numbers.check(claim, evidence, None, "the evidence")) == fired


@pytest.mark.parametrize("claim, fired", [
    ("The quarantine delayed it by three to 6 days.", True),  # a range's end outside the evidence's range
    ("The quarantine delayed it by three to 5 days.", False),
    ("The quarantine delayed it by 2 to 8 days.", False),  # a claim range around the evidence's, no range there
])
def test_a_claim_range_is_read_against_the_evidence_range(claim, fired):
    from citeaudit.decide.contrast import numbers

    evidence = "The quarantine delayed the epidemic by only 3 to 5 days." if "2 to 8" not in claim else \
        "The quarantine delayed the epidemic by 4 days."
    assert bool(numbers.check(claim, evidence, None, "the evidence")) == fired


def test_rounding_and_days_of_a_month_read_numbers_in_words_as_in_digits():
    """The restated control: an amount written in words is read as its digits would be."""
    from citeaudit.decide.contrast import numbers

    evidence = "Among them, 5.9% were staff."
    assert numbers.check("About six percent were staff.", evidence, None, "the evidence") == []
    assert numbers.check("About seven percent were staff.", evidence, None, "the evidence")
    assert quantities("a lockdown until March sixteen") == []
