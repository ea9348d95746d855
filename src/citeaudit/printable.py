"""Untrusted text made safe to print: control and format characters shown as escapes.

Ids, claims, quotes and answer ids come from the answer under audit. Printed raw, a carriage
return, an ANSI escape or a newline inside an id could erase its own REJECT line and print a
forged ACCEPT; a bidi override could reorder what a reader sees. `printable` writes every such
character as a visible escape (`\\r`, `\\x1b`, `\\u202e`), and leaves all other text alone.
"""

from __future__ import annotations

import json
import re
import unicodedata

# C0 and C1 controls, DEL, line and paragraph separators, and the format characters that change
# how text is displayed (bidi embeddings, overrides and isolates, zero-width joiners)
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """`text` as one printable line: every control or format character written as an escape.

    >>> printable("ok\\r\\x1b[2KACCEPT\\nid")
    'ok\\\\r\\\\x1b[2KACCEPT\\\\nid'
    >>> printable("Café §4.1.3 “quoted”")
    'Café §4.1.3 “quoted”'
    """
    value = text if isinstance(text, str) else str(text)
    if _UNSAFE.search(value) is None and value.isprintable():
        return value
    value = _UNSAFE.sub(_escape, value)
    return "".join(ch if ch.isprintable() or ch == " " or unicodedata.category(ch)[0] != "C"
                   else f"\\u{ord(ch):04x}" for ch in value)


def printable_lines(text: object) -> str:
    """`printable` line by line: a message's own line breaks kept, every other control character
    escaped (a carriage return or an ANSI escape inside a line cannot rewrite what is shown).

    >>> printable_lines("error: x\\n  record 0\\r\\x1b[2K")
    'error: x\\n  record 0\\\\r\\\\x1b[2K'
    """
    return "\n".join(printable(line) for line in str(text).split("\n"))


def quoted(value: object, limit: int = 60) -> str:
    """Quote a value for a message: JSON for strings (escaped if not UTF-8 encodable), else repr.

    The result encodes as UTF-8 and has at most ``limit`` characters (``…`` marks a cut).

    >>> quoted("C1"), quoted("C\\ud800"), quoted(None), quoted("x" * 80, limit=5)
    ('"C1"', '"C\\\\ud800"', 'None', '"xxx…')
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            text = json.dumps(value, ensure_ascii=False)
        except UnicodeEncodeError:
            text = json.dumps(value)
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
