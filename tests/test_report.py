"""The HTML report, rendered by a real headless Chromium."""

import contextlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import DATA

from citeaudit import Judge, Review, audit_quotes, load_rfc, write_report
from citeaudit.surfaces import render_html
from citeaudit.surfaces.report import card_state

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HOSTILE = ('<script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'">'
           ' & "quotes" <b>bold</b>')


NEAR = {"id": "sub_should", "claim": "The subject only needs to be unique if the issuer wants it to be.",
        "quote": "The subject value SHOULD either be scoped to be locally unique in the context of the issuer "
                 "or be globally unique.", "section": "4.1.2"}
MISS_ERROR = "No recorded answer for citation 'sub_should' (model 'qwen'): record it with `citeaudit record`"


@pytest.fixture(scope="module")
def report_table(replay_cache, tmp_path_factory):
    """The worked example with every state a card can be in: a hostile claim, a near quote whose
    judge call failed, a human review, verdicts that stand and verdicts that wait."""
    cites = json.loads((DATA / "rfc7519_citations.json").read_text())
    cites[1]["claim"] += " " + HOSTILE  # aud_reject: still located, its claim now hostile
    path = tmp_path_factory.mktemp("cites") / "hostile.json"
    path.write_text(json.dumps([*cites, NEAR]))
    doc = load_rfc("rfc7519.txt")
    judge = Judge(cache=replay_cache)
    audit = audit_quotes(doc, path, locate_only=True)  # the hostile claim was never recorded
    good = audit_quotes(doc, DATA / "rfc7519_citations.json", judge=judge).table
    table = audit.table.copy()
    for col in ("relation", "probabilities", "confidence", "method", "model", "cached", "error"):
        table[col] = [*good[col], None]
    table.loc[8, "error"] = MISS_ERROR
    audit = replace(audit, table=table).reroute(0.55)
    clock = audit.table[audit.table["id"] == "clock_skew"].iloc[0]
    reviewed = Review(citation_id="clock_skew", fingerprint=clock["fingerprint"], verdict="verified")
    return doc, audit.with_reviews([reviewed])


@contextlib.contextmanager
def playwright_chromium():
    """Debian's Chromium driven by Playwright (which downloads no browser of its own), headless."""
    from playwright.sync_api import sync_playwright

    assert CHROMIUM, "Chromium is not installed (Debian package `chromium`; .ci/run installs it)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def chromium(*args, tmp_path):
    assert CHROMIUM, "Chromium is not installed (Debian package `chromium`; .ci/run installs it)"
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120)


def test_text_is_escaped_in_the_markup(report_table):
    doc, audit = report_table
    page = render_html(audit)
    assert "<script" not in page and "onerror=\"document" not in page
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in page
    assert "http://" not in page and "https://" not in page  # nothing to fetch


def test_every_state_has_its_own_look(report_table):
    doc, audit = report_table
    states = {row["id"]: card_state(row).key for _, row in audit.table.iterrows()}
    assert states["sig_reporting"] == "fabricated"
    assert states["sub_should"] == "error"
    assert states["clock_skew"] == "reviewed"
    assert "waiting" in states.values() and {"auto-pass", "auto-fail"} & set(states.values())
    page = render_html(audit)
    assert MISS_ERROR.replace("'", "&#x27;").replace("`", "`") in page  # the judge's error, in words


@pytest.mark.browser
def test_report_renders_in_headless_chromium(report_table, tmp_path):
    doc, audit = report_table
    html_path = write_report(audit, tmp_path / "report.html", title="RFC 7519 audit")
    dom = chromium("--dump-dom", html_path.as_uri(), tmp_path=tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    body = dom.stdout
    cards = re.findall(r'<section class="card ([a-z-]+)" id="citation-([a-z_]+)">(.*?)</section>', body, flags=re.S)
    assert len(cards) == 9
    assert "<title>RFC 7519 audit</title>" in body  # no script from the data changed it
    assert "pwned</title>" not in body and "<script" not in body
    assert "&lt;script&gt;" in body  # the hostile claim shows as text
    # the summary table links to every card
    index = body.split('<table class="index">', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'href="#citation-([a-z_]+)"', index) == [cid for _, cid, _ in cards]
    by_id = {cid: (state, html) for state, cid, html in cards}
    # the LLM's own quote is on the page, fabricated or not, with the closest passage and its score
    sig_state, sig = by_id["sig_reporting"]
    assert sig_state == "fabricated"
    assert "the recipient MUST report the validation failure to the issuer" in sig
    assert "Not in the source" in sig and "52.9/100" in sig
    # a near quote: the changed word is marked on both sides
    near_state, near = by_id["sub_should"]
    assert near_state == "error" and "judge error" in near and "No recorded answer" in near
    assert re.search(r"<del [^>]*>MUST</del> <ins [^>]*>SHOULD</ins>", near)
    # whole-word highlights; a long section is a window, the whole of it behind <details>
    aud = re.search(r"<mark>(.*?)</mark>", by_id["aud_reject"][1], flags=re.S).group(1)
    assert " ".join(aud.split()).startswith("If the principal processing the claim")
    assert " ".join(aud.split()).endswith("the JWT MUST be rejected.")
    epoch = by_id["epoch_seconds"][1]
    assert "<details>" in epoch and epoch.index("<mark>") < epoch.index("<details>")
    assert by_id["clock_skew"][0] == "reviewed" and "reviewed by a human: verified" in by_id["clock_skew"][1]
    assert any(state == "waiting" and "waits for review" in html for state, html in by_id.values())
    shot = tmp_path / "report.png"
    result = chromium(f"--screenshot={shot}", "--window-size=1200,2400", html_path.as_uri(), tmp_path=tmp_path)
    assert result.returncode == 0 and shot.stat().st_size > 10_000
    keep = os.environ.get("CITEAUDIT_KEEP_SCREENSHOT")
    if keep:  # to look at it: CITEAUDIT_KEEP_SCREENSHOT=out/report.png pytest tests/test_report.py
        Path(keep).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, keep)


@pytest.mark.cli
def test_report_command_writes_one_self_contained_file(tmp_path, replay_cache, monkeypatch):
    from test_cli import run

    monkeypatch.setenv("CITEAUDIT_CACHE_DIR", str(replay_cache.directory))
    out = tmp_path / "out.html"
    result = run("report", "--source", "rfc7519.txt", "--citations", str(DATA / "rfc7519_citations.json"),
                 "--html", str(out))
    assert result.returncode == 1, result.stderr
    page = out.read_text()
    assert page.count("<section class='card ") == 8 and "qwen2.5-coder-1.5b-instruct-q4_k_m" in page
    # the replayed recordings alone (no calibration): the page says so and names the command that fits one
    assert "threshold 0.80 (default): no calibration for qwen2.5-coder-1.5b-instruct-q4_k_m / panel" in page
    assert "make calibrate-qwen" in page


def test_a_waiting_card_says_why_and_shows_its_review_command(report_table):
    """Each card that waits for a human (judge error, or the model not sure enough) names why and the
    exact `citeaudit review` command, as does an open spot check (a standing verdict drawn for review),
    and a verdict that stood offers the same command to override it; a fabricated or reviewed card has
    none (no evidence a review could be bound to, or a human already decided)."""
    from citeaudit.decide import ReviewCommand

    _, audit = report_table
    review = ReviewCommand((("--source", "rfc7519.txt"), ("--citations", "my cites.json")), "reviews/r.jsonl")
    page = render_html(audit, review=review)
    cards = dict(re.findall(r"<section class='card [a-z-]+' id='citation-([a-z_]+)'>(.*?)</section>", page, re.S))
    commands = {cid for cid, card in cards.items() if "<pre class='command'>" in card}
    waiting = set(audit.table.loc[audit.table["state"].isin(["waiting", "judge_error"]), "id"])
    stood = set(audit.table.loc[audit.table["state"].eq("stands") & audit.table["evidence"].notna(), "id"])
    assert stood and commands == waiting | stood and "sub_should" in commands
    assert not commands & set(audit.table.loc[audit.table["state"].isin(["fabricated", "reviewed"]), "id"])
    spot = set(audit.table.loc[audit.table["spot_check"].eq(True) & audit.table["state"].eq("stands"), "id"])
    for cid in stood:
        offered = "to record a human review" if cid in spot else "to override this verdict that stood"
        assert offered in cards[cid], cid
    assert ("<pre class='command'>citeaudit review --reviews reviews/r.jsonl --source rfc7519.txt --citations "
            "&#x27;my cites.json&#x27; --id sub_should --verdict VERDICT</pre>") in cards["sub_should"]
    flagged = set(audit.table.loc[audit.table["flags"].map(lambda f: "contrast" in f), "id"])
    one = next(cid for cid in sorted(waiting - flagged) if cid != "sub_should")
    row = audit.table[audit.table["id"] == one].iloc[0]
    assert f"Waits for a human: model says {row['verdict']}" in cards[one].replace(" or contradicted", "") \
        .replace(" or unsupported", "")
    assert f"score {row['score']:.2f} &lt; threshold 0.55" in cards[one]
    assert "<pre class='command'>" not in render_html(audit)  # the library's report without the inputs
    # a verified verdict a contrast check holds back says why in one line, and marks the fired words
    # (and aud_reject's hostile text quotes "pwned", which section 4.1.3 does not name: identifiers)
    assert flagged == {"exp_required", "aud_reject"} and "exp_required" in waiting
    assert ("score 0.72 ≥ threshold 0.55, but flagged contrast (normative: the claim says required (&quot;has "
            "to&quot;); section 4.1.4 says optional") in cards["exp_required"]
    assert '<mark class="contrast">has to</mark>' in cards["exp_required"]
    assert '<mark class="contrast">OPTIONAL</mark>' in cards["exp_required"]


@pytest.mark.cli
def test_the_report_command_gives_each_waiting_card_its_review_command(tmp_path, replay_cache, monkeypatch):
    from test_cli import run

    monkeypatch.setenv("CITEAUDIT_CACHE_DIR", str(replay_cache.directory))
    out = tmp_path / "out.html"
    citations = str(DATA / "eval_rfc7519.json")
    result = run("report", "--source", "rfc7519.txt", "--citations", citations, "--html", str(out),
                 "--reviews", str(tmp_path / "mine.jsonl"))
    assert result.returncode == 1, result.stderr
    page = out.read_text()
    near = page.split("id='citation-jwt_sub_uniqueness_should'>", 1)[1].split("</section>", 1)[0]
    assert "flagged near_quote (the quote is not verbatim)" in near
    assert (f"<pre class='command'>citeaudit review --reviews {tmp_path / 'mine.jsonl'} --source rfc7519.txt "
            f"--citations {citations} --id jwt_sub_uniqueness_should --verdict VERDICT</pre>") in near
    cards = re.findall(r"<section class='card ([a-z-]+)' id='citation-[^']+'>(.*?)</section>", page, re.S)
    assert all("<pre class='command'>" in card for key, card in cards if key in ("waiting", "error"))
    assert page.count("<pre class='command'>") == page.count("to record a human review") + \
        page.count("to override this verdict that stood")


@pytest.mark.cli
def test_report_of_line_citations_marks_the_cited_lines(tmp_path, replay_cache, monkeypatch):
    from test_cli import run

    monkeypatch.setenv("CITEAUDIT_CACHE_DIR", str(replay_cache.directory))
    out = tmp_path / "lines.html"
    result = run("report", "--document", str(DATA / "lines" / "field_note.txt"),
                 "--answer", str(DATA / "lines" / "broken_answer.txt"), "--html", str(out))
    assert result.returncode == 1, result.stderr
    page = out.read_text()
    assert page.count("<section class='card ") == 4
    assert "<mark>The water sampling run planned for 10 March moved to 14 March.</mark>" in page
    assert "line 8 is past the end of the document (7 lines)" in page


@pytest.mark.cli
def test_report_decision_counts_unrecognized_markers(tmp_path, replay_cache, monkeypatch):
    from test_cli import run

    monkeypatch.setenv("CITEAUDIT_CACHE_DIR", str(replay_cache.directory))
    answer = tmp_path / "answer.txt"
    answer.write_text((DATA / "lines" / "good_answer.txt").read_text().rstrip() + " Samples stay cold [line 4].\n")
    args = ["--document", str(DATA / "lines" / "field_note.txt"), "--threshold", "0"]
    clean = run("report", *args, "--answer", str(DATA / "lines" / "good_answer.txt"), "--html", str(tmp_path / "a.html"))
    assert clean.returncode == 0 and "ACCEPT" in clean.stdout
    marked = run("report", *args, "--answer", str(answer), "--html", str(tmp_path / "b.html"))
    assert marked.returncode == 1 and "REVIEW" in marked.stdout
    assert "unrecognized citation marker &#x27;[line 4]&#x27;" in (tmp_path / "b.html").read_text()


FORMAT_DOCS = {  # document: (citation file, a located quote's id, the start and end of its mark)
    "lantern-sync.md": ("lantern-sync_citations.json", "md_offer_example", '{"type": "offer"', '"revision": 42}'),
    "token-service.html": ("token-service_citations.json", "html_access_lifetime", "Access tokens expire",
                           "after they are issued."),
    "reservoir-report.pdf": ("reservoir-report_citations.json", "pdf_rinse_page_break", "each sample bottle is",
                             "before it is filled"),
    "field-note.txt": ("field-note_citations.json", "txt_departure", "The boat left", "at 07:40"),
}


@pytest.mark.browser
@pytest.mark.parametrize("source", FORMAT_DOCS)
def test_report_highlights_quotes_in_every_format(source, tmp_path):
    citations, cid, first, last = FORMAT_DOCS[source]
    formats = DATA / "formats"
    audit = audit_quotes(formats / source, formats / citations, locate_only=True)
    located = audit.table[audit.table["quote_status"].isin(["exact", "elided", "near"])]
    html_path = write_report(audit, tmp_path / "report.html", title=f"Audit of {source}")
    dom = chromium("--dump-dom", html_path.as_uri(), tmp_path=tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    body = dom.stdout
    assert len(re.findall(r"<section class=\"card [^\"]*\" id=\"citation-", body)) == len(audit.table)
    assert len(re.findall(r"<mark>", body)) == len(located) > 0  # every located quote is marked
    assert not re.search(r"\s</mark>", body)  # and no more: a mark ends on the quote's last character
    mark = re.search(rf'id="citation-{cid}".*?<mark>(.*?)</mark>', body, flags=re.S).group(1)
    mark = " ".join(mark.replace("&quot;", '"').split())
    assert mark.startswith(first) and mark.endswith(last), mark
    if source.endswith(".pdf"):  # the page the quote starts on, with its number; the mark ends at its foot
        assert re.search(rf'id="citation-{cid}".*?found in: 2\.2', body, flags=re.S)
        page = re.search(r'id="citation-pdf_sample_depth".*?found in: (page \d)', body, flags=re.S).group(1)
        assert page == "page 2"
    shot = tmp_path / "report.png"
    result = chromium(f"--screenshot={shot}", "--window-size=1200,2400", html_path.as_uri(), tmp_path=tmp_path)
    assert result.returncode == 0 and shot.stat().st_size > 10_000
    keep = os.environ.get("CITEAUDIT_KEEP_SCREENSHOT")
    if keep:  # to look at them: beside the worked example's screenshot (see above), named by format
        kept = Path(keep).with_name(f"report_{source.replace('.', '_')}.png")
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(shot.read_bytes())


@pytest.mark.cli
def test_a_source_id_report_gives_the_review_command_and_applies_its_store(tmp_path, recorded_cache):
    """`report --answer-json --sources-json` ended in an internal error (exit 4: the review store and
    the seed's reviews.json were both passed as `reviews`); it reports, its waiting card's command
    records the review, and the report with that store applied accepts the answer."""
    import shlex

    from test_cli import run

    inputs = ["--answer-json", str(DATA / "contract" / "answer.json"), "--sources-json",
              str(DATA / "contract" / "sources.json")]
    inputs += ["--threshold", "0.99"]  # above C1's score: its verdict waits for a human
    first = run("report", *inputs, "--html", str(tmp_path / "a.html"))
    assert first.returncode == 1 and "REVIEW" in first.stdout, first.stderr
    command = re.search(r"<pre class='command'>([^<]*)</pre>", (tmp_path / "a.html").read_text()).group(1)
    args = shlex.split(command.replace("&#x27;", "'").replace("VERDICT", "verified"))
    assert args[:2] == ["citeaudit", "review"] and args[-4:] == ["--id", "C1", "--verdict", "verified"]
    assert run(*args[1:]).returncode == 0
    store = args[args.index("--reviews") + 1]
    second = run("report", *inputs, "--html", str(tmp_path / "b.html"), "--reviews", store)
    assert second.returncode == 0 and "ACCEPT" in second.stdout, second.stdout + second.stderr


@pytest.mark.browser
def test_the_japanese_example_report_shows_japanese_in_a_japanese_font(tmp_path, recorded_cache):
    """The APPI worked example's report, laid out by Chromium: every glyph of a Japanese claim, quote
    and section locator is drawn from a font that covers Japanese (one `fc-list :lang=ja` lists;
    `make .venv/.test` installs IPAGothic where there is none), not as the empty boxes of a Latin font.
    The dashboard's page uses the same stylesheet (`PAGE_CSS`)."""
    from citeaudit import AuditOptions
    from citeaudit.pipeline import resolve_source

    listed = subprocess.run(["fc-list", ":lang=ja", "family"], capture_output=True, text=True, check=True).stdout
    japanese = {name.strip() for line in listed.splitlines() for name in line.split(",")}
    assert japanese - {""}, "no font covers Japanese: install fonts-ipafont-gothic (make .venv/.test does)"
    audit = audit_quotes(resolve_source("appi-act-57-2003.egov.xml"), DATA / "ja" / "appi_answer_citations.json",
                         options=AuditOptions.from_env(cache_mode="replay"))
    page_path = write_report(audit, tmp_path / "report.html", title="APPI の回答の監査")
    with playwright_chromium() as browser:
        page = browser.new_page()
        page.goto(page_path.as_uri())
        cdp = page.context.new_cdp_session(page)
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
        drawn: dict[str, int] = {}
        checked = 0
        nodes = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "td, blockquote, pre, h1, li"})
        for node in nodes["nodeIds"]:
            text = cdp.send("DOM.getOuterHTML", {"nodeId": node})["outerHTML"]
            if not re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text):
                continue
            fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
            if not fonts:
                continue  # not laid out (inside a closed <details>)
            checked += 1
            assert {f["familyName"] for f in fonts} & japanese, (fonts, text[:200])
            for font in fonts:
                drawn[font["familyName"]] = drawn.get(font["familyName"], 0) + font["glyphCount"]
    assert checked >= 20 and sum(n for family, n in drawn.items() if family in japanese) > 500, (checked, drawn)
