"""Amounts in Japanese text for the numbers check: a numeral (Arabic, full-width or kanji, read as
the statute reader reads them: `sources.japanese.kanji_number`, 三 = 3, 二十七 = 27, 一五 = 15) with
万 or 億 and a counter: a term (年, か月, 週間, 日, 時間, 分, 秒: seconds, as `quantities` counts
time), yen (円), a percentage (％, パーセント), times (回), a multiple (倍), people (人) or cases (件).

Not amounts: a reference's numeral (第三条, 第1項: no counter of these), a date (令和5年4月1日: a
year after an era name or before a month, a month, a day after a month), 十分 (sufficient).

    >>> [(q.value, q.dimension) for q in amounts("三年以下の拘禁刑又は百万円以下の罰金、２４時間")]
    [(94670856.0, 'time'), (1000000.0, 'yen'), (86400.0, 'time')]
"""

from __future__ import annotations

import re
import unicodedata

from citeaudit.decide.contrast.quantities import TIMES, Quantity

_COUNTERS: dict[str, tuple[str, float]] = {
    "年": ("time", 31556952.0), "か月": ("time", 2629746.0), "ヶ月": ("time", 2629746.0),
    "箇月": ("time", 2629746.0), "カ月": ("time", 2629746.0), "週間": ("time", 604800.0), "日": ("time", 86400.0),
    "時間": ("time", 3600.0), "分": ("time", 60.0), "秒": ("time", 1.0), "円": ("yen", 1.0),
    "％": ("percent", 1.0), "%": ("percent", 1.0), "パーセント": ("percent", 1.0), "回": (TIMES, 1.0),
    "倍": ("multiple", 1.0), "人": ("people", 1.0), "件": ("cases", 1.0),
}
_NUMERAL = r"[0-9０-９]+(?:[.．][0-9０-９]+)?|[〇一二三四五六七八九十百千]+"
AMOUNT = re.compile(rf"(?<![第0-9０-９〇一二三四五六七八九十百千.．])(?P<number>{_NUMERAL})(?P<big>万|億)?"
                    rf"(?P<counter>{'|'.join(sorted(map(re.escape, _COUNTERS), key=len, reverse=True))})")
ERA = re.compile(r"(?:令和|平成|昭和|大正|明治|西暦)$")


def _value(numeral: str) -> float | None:
    text = unicodedata.normalize("NFKC", numeral).replace("．", ".")
    if re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", text):
        return float(text)
    # imported here: `citeaudit.sources` registers every format (numpy, the XML parser), and the
    # command line's --help imports the contrast checks' names (tests/test_startup.py)
    from citeaudit.sources.japanese import kanji_number

    value = kanji_number(numeral)
    return None if value is None else float(value)


def amounts(text: str) -> list[Quantity]:
    """The amounts of a Japanese `text`, in order, each in the base unit of its dimension."""
    found = []
    for match in AMOUNT.finditer(text):
        number, counter = match.group("number"), match.group("counter")
        before, after = text[max(0, match.start() - 2):match.start()], text[match.end():match.end() + 4]
        if counter == "年" and (ERA.search(before) or re.match(r"[0-9０-９〇一二三四五六七八九十]+月", after)):
            continue  # a date's year
        if counter == "日" and before.endswith("月"):
            continue  # a date's day
        if counter == "分" and number == "十":
            continue  # 十分: sufficient
        value = _value(number)
        if value is None:
            continue
        value *= {"万": 1e4, "億": 1e8}.get(match.group("big") or "", 1.0)
        dimension, factor = _COUNTERS[counter]
        found.append(Quantity(value * factor, dimension, match.group(), match.start(), match.end()))
    return found


def sentences(text: str) -> list[tuple[int, int]]:
    """The `[start, end)` offsets of the sentences of a Japanese text (up to 。 or a line break)."""
    spans, start = [], 0
    for match in re.finditer(r"[。\n]", text):
        spans.append((start, match.end()))
        start = match.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def japanese(text: str) -> bool:
    """Whether `text` is Japanese: it holds kana or kanji.

    >>> japanese("三年以下の拘禁刑"), japanese("three years")
    (True, False)
    """
    return re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text) is not None
