"""The number and unit reader of the contrast checks (`decide/contrast/quantities.py`): property
tests over the forms a number is written in, and the references that are not quantities."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citeaudit.decide.contrast.quantities import quantities, spelled_value

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
