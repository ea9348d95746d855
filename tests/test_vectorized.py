"""The whole-array cleaning and normalization equal the per-character code they replaced
(tests/reference_impl.py), on the real RFCs and on generated texts full of edge cases."""

import numpy as np
import pytest
import reference_impl as ref
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit import load_rfc
from citeaudit.locate.textindex import SPACE_CODES, normalize_chars
from citeaudit.locate.textindex import tokens_of as _tokens
from citeaudit.sources import rfc
from citeaudit.sources.build import clean_lines
from citeaudit.sources.document import codes_of, line_bounds

# characters that exercise every rule: line terminators, form feeds, spaces of several kinds,
# hyphens and dashes, quotes, zero-width and soft hyphen, NFKC expansions, a backtick, furniture
ALPHABET = st.sampled_from([*"ab -.\n\r\f\t\"'`", "\u00a0", "\u2013", "\u2014", "\u201c", "\u201d", "\u2019",
                            "\u200b", "\u00ad", "\ufb01", "\u2026", "\u3000", "\u2028",
                            "\u0301", "\u00e9", "\x85", "\x1c"])
LINES = st.sampled_from(["RFC 7519                  JSON Web Token (JWT)                  May 2015",
                         "Jones, et al.                Standards Track                   [Page 3]",
                         "\fRFC 6749                        OAuth 2.0                   October 2012",
                         "", "   ", "\f", "1.  Intro", "   case-", "   sensitive", "[Page 2]"])
TEXTS = st.lists(st.one_of(st.text(ALPHABET, max_size=12), LINES), max_size=30).map("".join)
NEWLINES = st.sampled_from(["\n", "\r\n", "\r"])


def _vectorized_clean(raw, furniture=True):
    codes = codes_of(raw)
    starts, ends = line_bounds(codes)
    dropped = rfc.furniture_lines(raw, starts, ends) if furniture else np.zeros(0, dtype=np.int64)
    return (starts, ends), clean_lines(raw, codes, starts, ends, dropped)


@pytest.mark.slow  # 400 examples, about 2.5 s
@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(TEXTS, NEWLINES), max_size=12), st.booleans())
def test_clean_equals_the_per_character_version(parts, furniture):
    raw = "".join(text + newline for text, newline in parts)
    (starts, ends), (clean, offsets) = _vectorized_clean(raw, furniture)
    spans = ref.split_raw_lines(raw)
    assert list(zip(starts.tolist(), ends.tolist())) == spans
    expected, expected_offsets = ref.clean(raw, spans, rfc.is_furniture if furniture else lambda line: False)
    assert clean == expected
    assert offsets.tolist() == expected_offsets.tolist()


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_normalize_equals_the_per_character_version(text):
    out, origin = normalize_chars(text, range(len(text)))
    expected, expected_origin = ref.normalize_chars(text, range(len(text)))
    assert out == expected
    assert origin.tolist() == expected_origin.tolist()


@pytest.mark.parametrize("name", ["rfc7519.txt", "rfc6749.txt"])
def test_real_rfcs_clean_and_normalize_as_before(name):
    doc = load_rfc(name)
    for raw in (doc.raw, doc.raw.replace("\n", "\r\n")):
        spans = ref.split_raw_lines(raw)
        _, (clean, offsets) = _vectorized_clean(raw)
        expected, expected_offsets = ref.clean(raw, spans, rfc.is_furniture)
        assert clean == expected and np.array_equal(offsets, expected_offsets)
    out, origin = normalize_chars(doc.clean, range(len(doc.clean)))
    expected, expected_origin = ref.normalize_chars(doc.clean, range(len(doc.clean)))
    assert out == expected and np.array_equal(origin, expected_origin)
    assert [(line.start, line.end) for line in doc.lines] == ref.split_raw_lines(doc.raw)


def test_no_unicode_space_lies_beyond_the_table():
    assert not [c for c in range(0x3001, 0x110000) if chr(c).isspace()]
    assert all(chr(c).isspace() for c in SPACE_CODES.tolist())


def test_tokens_are_runs_of_ascii_letters_and_digits():
    text = "The \"aud\" (Audience) claim-x2 é9 caf"
    starts, ends, hashes = _tokens(codes_of(text))
    assert [text[s:e] for s, e in zip(starts, ends)] == ["The", "aud", "Audience", "claim", "x2", "9", "caf"]
    assert len(set(hashes.tolist())) == 7
    assert _tokens(codes_of("aud"))[2][0] == hashes[1]


def test_lines_are_made_on_access(rfc7519):
    lines = rfc7519.lines
    assert len(lines) == 1683
    assert lines[-1].number == 1683 and lines[0] == next(iter(lines))
    assert [line.number for line in lines[488:491]] == [489, 490, 491]
    with pytest.raises(IndexError):
        lines[len(lines)]
