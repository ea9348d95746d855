"""Japanese numerals, and the places of a Japanese statute as answers name them.

A Japanese answer cites an Act by article, paragraph and item: 第27条第1項第1号, 第二十七条第一項,
27条1項, 法27条1項1号, 第21条の2, 附則第3条, or in English Article 27(1)(i), Art. 27 para. 1 item 1.
`statute_place` reads any of those into a `StatutePlace` (and `same_place` writes out 同条第2項 and
同項第1号, which name their place through the citation before); `place_id` writes the section id the
e-Gov reader gives that place (`egov.py`), always in Arabic numerals: 第27条, 第27条第1項,
第27条第1項第1号, 第21条の2, 附則第3条.

`kanji_number` reads a kanji numeral, counted (二十七, 百八十五) or written digit by digit as e-Gov
writes years and law numbers (一五, 二〇二四). `arabic_references` rewrites the numerals of article,
paragraph and item references, years and law numbers (第十八条 -> 第18条) in Arabic, with an offset
per character, so that a quote written with the other numerals still matches (`locate.textindex`).

    >>> kanji_number("二十七"), kanji_number("百八十五"), kanji_number("一五"), kanji_number("十")
    (27, 185, 15, 10)
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import numpy as np

_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"零": 0, "壱": 1, "弐": 2, "参": 3}
_UNITS = {"十": 10, "百": 100, "千": 1000}
KANJI_NUMERAL = "[〇一二三四五六七八九十百千零壱弐参]+"
_NUMBER = rf"(?:\d+|{KANJI_NUMERAL})"


def kanji_number(text: str) -> int | None:
    """The value of a kanji numeral (see the module's docstring); None when `text` is not one."""
    if not text or any(c not in _DIGITS and c not in _UNITS for c in text):
        return None
    if not any(c in _UNITS for c in text):  # digit by digit: 一五 = 15
        return int("".join(str(_DIGITS[c]) for c in text))
    total, digit = 0, None
    for c in text:
        if c in _UNITS:
            total += (1 if digit is None else digit) * _UNITS[c]
            digit = None
        elif digit is not None:  # two digits in a row in a counted numeral: not one
            return None
        else:
            digit = _DIGITS[c]
    return total + (digit or 0)


def number(text: str) -> int | None:
    """Arabic (ASCII or full-width) or kanji digits as an int; None when `text` is neither."""
    text = unicodedata.normalize("NFKC", text).strip()
    return int(text) if text.isdigit() and text.isascii() else kanji_number(text)


@dataclass(frozen=True)
class StatutePlace:
    """An article (`"27"`, or `"21_2"` for 第21条の2, as e-Gov numbers them), in the main provisions
    or the supplementary ones (`supplementary`), and optionally a paragraph and an item of it."""

    article: str
    supplementary: bool = False
    paragraph: int | None = None
    item: int | None = None


def place_id(place: StatutePlace) -> str:
    """The section id of a place (see the module's docstring).

    >>> [place_id(p) for p in (StatutePlace("27", paragraph=1, item=1), StatutePlace("21_2"), StatutePlace("3", True))]
    ['第27条第1項第1号', '第21条の2', '附則第3条']
    """
    main, *branches = place.article.split("_")
    text = f"{'附則' if place.supplementary else ''}第{main}条" + "".join(f"の{b}" for b in branches)
    if place.paragraph is not None:
        text += f"第{place.paragraph}項"
        if place.item is not None:
            text += f"第{place.item}号"
    return text


_JAPANESE = re.compile(
    rf"^(?:法|同法|本法)?\s*(?P<suppl>附則)?\s*第?\s*(?P<article>{_NUMBER})\s*条"
    rf"(?:\s*の\s*(?P<branch>{_NUMBER}))?"
    rf"(?:\s*第?\s*(?P<paragraph>{_NUMBER})\s*項)?"
    rf"(?:\s*第?\s*(?P<item>{_NUMBER})\s*号)?$"
)
_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9, "x": 10,
          "xi": 11, "xii": 12, "xiii": 13, "xiv": 14, "xv": 15, "xvi": 16, "xvii": 17, "xviii": 18, "xix": 19, "xx": 20}
_ENGLISH = re.compile(
    r"^(?P<suppl>supplementary\s+provisions?,?\s+)?(?:article|art\.?)\s*(?P<article>\d+)(?:-(?P<branch>\d+))?"
    r"(?:\s*\((?P<paragraph>\d+)\)(?:\s*\((?P<item>[ivx]+|\d+)\))?"
    r"|(?:,?\s*(?:paragraph|para\.?)\s*(?P<paragraph2>\d+))?(?:,?\s*item\s*(?P<item2>[ivx]+|\d+))?)$",
    re.IGNORECASE,
)


def statute_place(locator: str) -> StatutePlace | None:
    """The place a locator names, in any of the forms of the module's docstring; None when it is
    not a statute locator.

    >>> statute_place("第二十七条第一項")
    StatutePlace(article='27', supplementary=False, paragraph=1, item=None)
    >>> statute_place("法27条1項1号") == statute_place("Article 27(1)(i)") == statute_place("Art. 27 para. 1 item 1")
    True
    >>> statute_place("第21条の2").article, statute_place("附則第3条").supplementary, statute_place("Section 4.1")
    ('21_2', True, None)
    """
    text = unicodedata.normalize("NFKC", locator).strip().rstrip("。.")
    found = _JAPANESE.match(text)
    if found:
        parts = {name: number(value) if value else None for name, value in found.groupdict().items() if name != "suppl"}
        if parts["article"] is None or any(v is None for k, v in parts.items() if found.group(k)):
            return None
        article = str(parts["article"]) + (f"_{parts['branch']}" if parts["branch"] else "")
        return StatutePlace(article, bool(found.group("suppl")), parts["paragraph"], parts["item"])
    found = _ENGLISH.match(text)
    if not found:
        return None
    paragraph = found.group("paragraph") or found.group("paragraph2")
    item = found.group("item") or found.group("item2")
    article = found.group("article") + (f"_{found.group('branch')}" if found.group("branch") else "")
    item_number = None if item is None else int(item) if item.isdigit() else _ROMAN.get(item.lower())
    if item is not None and item_number is None:
        return None
    return StatutePlace(article, bool(found.group("suppl")), int(paragraph) if paragraph else None, item_number)


_SAME = re.compile(r"^同\s*(?P<level>条|項|号)(?P<rest>.*)$")


def same_place(locator: str, previous: str | None) -> str | None:
    """A locator that names its place through the citation before (同条, 同項, 同号: the same
    article, paragraph or item as `previous`, a section id such as 第27条第1項), written out; None
    when `locator` is not one, or `previous` names no place at that level.

    >>> same_place("同条第2項", "第27条第1項"), same_place("同項第1号", "第27条第1項"), same_place("同条", "第3条")
    ('第27条第2項', '第27条第1項第1号', '第3条')
    >>> same_place("同項", "第3条"), same_place("第5条", "第3条"), same_place("同条", None)
    (None, None, None)
    """
    found = _SAME.match(unicodedata.normalize("NFKC", locator).strip())
    place = statute_place(previous) if found and previous else None
    if found is None or place is None:
        return None
    level, rest = found.group("level"), found.group("rest").strip()
    if level == "条":
        base = StatutePlace(place.article, place.supplementary)
    elif level == "項" and place.paragraph is not None:
        base = StatutePlace(place.article, place.supplementary, place.paragraph)
    elif level == "号" and place.item is not None:
        base = place
    else:
        return None
    return place_id(base) + rest


# a kanji numeral that is part of a reference: after 第 or 法律第, before a counter (条 項 号 章 節 款
# 目 編 年 月 日 条の...) or in 条のN; other kanji numerals (一部, 同一, 十分) are words and stay
_ANY_NUMERAL = re.compile(KANJI_NUMERAL)
_REFERENCE = re.compile(rf"(?<=第){KANJI_NUMERAL}|{KANJI_NUMERAL}(?=[条項号章節款目編年月日])|(?<=条の){KANJI_NUMERAL}")


def arabic_references(text: str, offsets: np.ndarray) -> tuple[str, np.ndarray]:
    """`text` with the kanji numerals of references in Arabic digits (第十八条 -> 第18条), and each
    output character's entry of `offsets` (a digit maps to its numeral's characters, the last digit
    to the last one, so a span over the digits covers the numeral).

    >>> arabic_references("第十八条若しくは第十九条、同一", np.arange(15))[0]
    '第18条若しくは第19条、同一'
    """
    if text.isascii() or not _ANY_NUMERAL.search(text):
        return text, offsets
    parts: list[str] = []
    origin: list[np.ndarray] = []
    done = 0
    for match in _REFERENCE.finditer(text):
        value = kanji_number(match.group())
        if value is None:
            continue
        digits = str(value)
        start, end = match.span()
        parts.append(text[done:start])
        origin.append(offsets[done:start])
        picks = np.minimum(np.arange(len(digits)), end - start - 1) + start
        picks[-1] = end - 1
        parts.append(digits)
        origin.append(offsets[picks])
        done = end
    if not parts:
        return text, offsets
    parts.append(text[done:])
    origin.append(offsets[done:])
    return "".join(parts), np.concatenate(origin).astype(offsets.dtype, copy=False)
