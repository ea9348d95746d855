"""Auditing the citations of saved vendor responses (`vendor_audit.py`, `citeaudit audit --response`):
every fixture of data/responses/ gives its labelled statuses in replay mode, offset, page and
source mismatches are findings that keep a verdict from standing, a source not given leaves the
citation unchecked and the answer out of ACCEPT, uncited text is listed (REVIEW with coverage)."""

import json

import pytest
from conftest import DATA
from test_cli import read_jsonl, run

from citeaudit import AuditOptions, Review, Status, load_document
from citeaudit.citations.responses import CitedSource, parse_response
from citeaudit.decide import row_fingerprint
from citeaudit.pipeline.vendor_audit import audit_response, match_source
from citeaudit.surfaces import render_html
from citeaudit.table import ContrastCheck, Flag, State, Verdict

RESPONSES = DATA / "responses"
LABELS = json.loads((RESPONSES / "labels.json").read_text(encoding="utf-8"))
LOCATION_FLAGS = {Flag.OFFSET_MISMATCH, Flag.PAGE_MISMATCH, Flag.SOURCE_MISMATCH}


def sources(name):
    return LABELS[name]["sources"]


@pytest.mark.parametrize("name", sorted(LABELS))
def test_every_fixture_gives_its_labelled_statuses_in_replay(name, recorded_cache):
    entry = LABELS[name]
    audit = audit_response(RESPONSES / name, entry["sources"])
    table = audit.table.set_index("id")
    assert list(table.index) == list(entry["citations"])
    for cid, label in entry["citations"].items():
        row = table.loc[cid]
        assert row["error"] is None, f"{cid}: {row['error']}"
        assert sorted(f for f in row["flags"] if f in LOCATION_FLAGS) == sorted(label["flags"]), cid
        if label["expected"] == "fabricated":
            assert row["state"] == State.FABRICATED and row["final_verdict"] == Verdict.FABRICATED, cid
        elif label["expected"] == "unchecked":
            assert row["state"] == State.UNCHECKED and row["evidence"] is None and row["verdict"] is None, cid
        else:
            assert row["model"] is not None, cid  # judged, from the recorded answers
            assert row["state"] in (State.STANDS, State.WAITING), cid
            if label["flags"]:  # a wrong location always waits for a human
                assert row["state"] == State.WAITING, cid
            if row["state"] == State.STANDS:  # a verdict that stands is the labelled pass or fail
                assert (row["final_verdict"] == Verdict.VERIFIED) == (label["expected"] == "verified"), cid
    assert len(audit.uncited) == entry["uncited"]
    assert audit.decision.status != Status.ACCEPT
    if any(label["expected"] == "fabricated" for label in entry["citations"].values()):
        assert audit.decision.status == Status.REJECT


def test_findings_say_both_positions(recorded_cache):
    audit = audit_response(RESPONSES / "anthropic_messages.json", sources("anthropic_messages.json"),
                           locate_only=True)
    says = {f["flag"]: f["says"] for findings in audit.table["findings"] for f in findings}
    assert says[Flag.OFFSET_MISMATCH] == ("the quote is at characters 19,449-19,579 of rfc7519.txt, not at "
                                          "19,661-19,791 as the response says")
    assert says[Flag.PAGE_MISMATCH] == "page 3 cited, the quote is on page 4 of reservoir-report.pdf"
    assert says[Flag.SOURCE_MISMATCH] == ("the quote is in section 3 of lantern-sync.md, not in rfc7519.txt as the "
                                          "response says")
    reasons = " ".join(audit.decision.reasons)
    assert "the response's offsets do not point at the quote" not in reasons  # locate-only: no model verdict
    assert "unchecked: the response cites 'https://datatracker.ietf.org/doc/html/rfc7515'" in reasons


def test_uncited_text_keeps_the_answer_in_review_unless_allowed():
    name = "openai_responses.json"
    allowed = audit_response(RESPONSES / name, sources(name), locate_only=True, require_coverage=False)
    covered = audit_response(RESPONSES / name, sources(name), locate_only=True)  # fail closed by default
    assert allowed.uncited == covered.uncited == ("Here is a short summary.",)
    assert not any("uncited" in r for r in allowed.decision.reasons)
    assert "uncited answer text: 'Here is a short summary.'" in covered.decision.reasons


def _reviewed_verified(audit):
    return [Review(citation_id=row["id"], fingerprint=row_fingerprint(row), verdict="verified")
            for _, row in audit.table.iterrows() if row["evidence"] is not None]


def test_an_unchecked_citation_keeps_the_answer_out_of_accept():
    name = "openai_chat.json"
    data = json.loads((RESPONSES / name).read_text(encoding="utf-8"))
    first = audit_response(data, sources(name), locate_only=True)
    reviewed = first.with_reviews(_reviewed_verified(first))
    assert reviewed.decision.status == Status.REVIEW
    assert [s for s in reviewed.table["state"]] == [State.REVIEWED, State.REVIEWED, State.UNCHECKED]
    del data["choices"][0]["message"]["annotations"][2]  # the citation of a source not given
    without = audit_response(data, sources(name), locate_only=True, require_coverage=False)
    assert without.with_reviews(_reviewed_verified(without)).decision.status == Status.ACCEPT
    with_coverage = audit_response(data, sources(name), locate_only=True)
    assert with_coverage.uncited and \
        with_coverage.with_reviews(_reviewed_verified(with_coverage)).decision.status == Status.REVIEW


def test_sources_are_matched_by_name_url_title_index():
    docs = [load_document("rfc7519.txt"), load_document(DATA / "formats" / "token-service.html")]
    assert match_source(CitedSource(None, ("https://www.rfc-editor.org/rfc/rfc7519.html",)), docs)[0] == 0
    assert match_source(CitedSource(None, ("RFC 7519",)), docs)[0] == 0
    assert match_source(CitedSource(None, ("gs://bucket/docs/token-service.html",)), docs)[0] == 1
    assert match_source(CitedSource(1, ("Token handbook",)), docs) == (1, "document 1")
    assert match_source(CitedSource(5, ("Token handbook",)), docs) is None
    assert match_source(CitedSource(None, ()), docs[:1]) == (0, "the only source")
    assert match_source(CitedSource(None, ()), docs) is None


def test_offsets_into_the_clean_text_of_an_html_page_hold():
    page = load_document(DATA / "formats" / "token-service.html")
    quote = "Access tokens expire fifteen minutes after they are issued."
    start = page.clean.find(quote)
    response = {"role": "assistant", "type": "message", "content": [
        {"type": "text", "text": "Access tokens last fifteen minutes.", "citations": [
            {"type": "char_location", "cited_text": quote, "document_index": 0, "document_title": "Token handbook",
             "start_char_index": start, "end_char_index": start + len(quote)}]}]}
    audit = audit_response(response, [page], locate_only=True)
    assert audit.table["findings"].iloc[0] == [] and audit.table["source_file"].iloc[0] == "token-service.html"
    response["content"][0]["citations"][0]["start_char_index"] += 30
    response["content"][0]["citations"][0]["end_char_index"] += 30
    again = audit_response(response, [page], locate_only=True)
    assert [f["flag"] for f in again.table["findings"].iloc[0]] == [Flag.OFFSET_MISMATCH]


def test_a_claim_only_citation_of_a_long_source_reads_the_best_matching_section():
    parsed = parse_response(json.loads((RESPONSES / "openai_chat.json").read_text(encoding="utf-8")))
    audit = audit_response(parsed, ["rfc7519.txt"], locate_only=True)
    assert list(audit.table["found_section"][:2]) == ["1", "4.1.5"]
    assert audit.table["quote_status"].iloc[0] == "none"



@pytest.mark.cli
def test_cli_audits_a_response_and_writes_the_findings(tmp_path, recorded_cache):
    out = tmp_path / "rows.jsonl"
    name = "anthropic_messages.json"
    args = [a for s in sources(name) for a in ("--source", s)]
    result = run("audit", "--response", str(RESPONSES / name), *args, "--output", str(out))
    assert result.returncode == 1, result.stderr
    assert ("content[3].citations[0]: offset_mismatch: the quote is at characters 19,449-19,579 of rfc7519.txt, "
            "not at 19,661-19,791 as the response says") in result.stdout
    assert "uncited answer text (2; it keeps the answer in REVIEW, unless --allow-uncited)" in result.stdout
    assert "\nREJECT" in result.stdout
    rows = read_jsonl(out)
    assert [r["id"] for r in rows] == list(LABELS[name]["citations"])
    assert rows[1]["findings"][0]["flag"] == "offset_mismatch" and rows[1]["source_file"] == "rfc7519.txt"
    assert rows[-1]["state"] == "unchecked" and rows[-1]["vendor"] == "anthropic"


@pytest.mark.cli
def test_cli_bad_responses_exit_2_naming_the_field(tmp_path):
    bad = tmp_path / "bad.json"
    data = json.loads((RESPONSES / "openai_responses.json").read_text(encoding="utf-8"))
    data["output"][1]["content"][0]["annotations"][0]["index"] = -3
    bad.write_text(json.dumps(data), encoding="utf-8")
    result = run("audit", "--response", str(bad), "--source", "rfc7519.txt", "--locate-only")
    assert result.returncode == 2
    assert "output[1].content[0].annotations[0].index: [-3, -3) is out of range" in result.stderr
    assert "Traceback" not in result.stderr
    bad.write_text("[1, 2", encoding="utf-8")
    result = run("audit", "--response", str(bad), "--source", "rfc7519.txt")
    assert result.returncode == 2 and "bad.json: not JSON" in result.stderr
    result = run("audit", "--response", str(RESPONSES / "openai_chat.json"), "--response-format", "gemini",
                 "--source", "rfc7519.txt")
    assert result.returncode == 2 and "candidates: expected a list, found null" in result.stderr
    both = run("audit", "--response", str(bad), "--citations", str(bad), "--source", "rfc7519.txt")
    assert both.returncode == 2 and "not both" in both.stderr


def test_a_dataset_line_carries_a_response(tmp_path):
    from citeaudit import audit_dataset

    name = "anthropic_messages.json"
    lines = [{"answer_id": "claude-1", "response": json.loads((RESPONSES / name).read_text(encoding="utf-8")),
              "documents": sources(name)},
             {"answer_id": "chat-1", "response": json.loads((RESPONSES / "openai_chat.json").read_text("utf-8")),
              "documents": ["rfc7519.txt"], "require_coverage": True},
             {"answer_id": "bad", "response": {"hello": 1}, "documents": ["rfc7519.txt"]}]
    dataset = tmp_path / "answers.jsonl"
    dataset.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = audit_dataset(dataset, locate_only=True)
    outcomes = {o.answer_id: o for o in result.outcomes}
    assert outcomes["claude-1"].status == "REJECT" and outcomes["chat-1"].status == "REVIEW"
    assert outcomes["bad"].invalid and "not a response of a known shape" in outcomes["bad"].reasons[0]
    shifted = next(r for r in outcomes["claude-1"].records if r["id"] == "content[3].citations[0]")
    assert shifted["findings"][0]["flag"] == "offset_mismatch" and shifted["answer_id"] == "claude-1"


def test_the_html_report_shows_each_finding_and_the_unchecked_state(tmp_path):
    name = "anthropic_messages.json"
    audit = audit_response(RESPONSES / name, sources(name), locate_only=True)
    html = render_html(audit)
    assert ("<li><b>page_mismatch</b>: page 3 cited, the quote is on page 4 of reservoir-report.pdf</li>" in html)
    assert "unchecked: source not given" in html


@pytest.mark.cli
def test_review_and_report_take_a_response(tmp_path, recorded_cache):
    store = tmp_path / "reviews.jsonl"
    response = ["--response", str(RESPONSES / "openai_chat.json"), "--source", "rfc7519.txt"]
    cid = "choices[0].message.annotations[1].url_citation"
    reviewed = run("review", "--reviews", str(store), *response, "--id", cid, "--verdict", "contradicted")
    assert reviewed.returncode == 0, reviewed.stderr
    audited = run("audit", *response, "--reviews", str(store), "--locate-only")
    assert f"{cid}: review found that section 4.1.5 of rfc7519.txt contradicts it" in audited.stdout
    assert "\nREJECT" in audited.stdout
    page = tmp_path / "report.html"
    reported = run("report", "--html", str(page), *response, "--locate-only")
    assert reported.returncode == 1 and "3 citations" in reported.stdout and page.is_file()
    several = run("report", "--html", str(page), "--source", "rfc7519.txt", "--source", "rfc6749.txt",
                  "--citations", str(DATA / "rfc7519_citations.json"))
    assert several.returncode == 2 and "several go with a --response" in several.stderr


def test_an_answer_without_citations_is_review_and_all_uncited():
    response = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "JWTs are compact. They "
                                                     "carry claims.", "annotations": []}}]}
    audit = audit_response(response, ["rfc7519.txt"], locate_only=True)
    assert audit.table.empty and audit.uncited == ("JWTs are compact.", "They carry claims.")
    assert audit.decision.status == Status.REVIEW


def test_unchecked_rows_are_counted_on_the_dashboard_and_kept_out_of_the_review_queue(tmp_path):
    from citeaudit import ReviewQueue
    from citeaudit.surfaces.dashboard import verdict_counts

    name = "openai_chat.json"
    audit = audit_response(RESPONSES / name, sources(name), locate_only=True)
    counts = verdict_counts(audit.table).set_index("verdict")
    assert counts.loc["unchecked", "waits for review"] == counts.loc["unchecked", "total"] == 1
    queue = ReviewQueue(audit, store=tmp_path / "reviews.jsonl")
    assert [audit.table.loc[i, "id"] for i in queue.pending] == list(LABELS[name]["citations"])[:2]


@pytest.mark.cli
def test_record_refuses_a_bad_response_before_starting_a_server(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"content": "not a list", "role": "assistant"}', encoding="utf-8")
    result = run("record", "--response", str(bad), "--response-format", "anthropic", "--source", "rfc7519.txt")
    assert result.returncode == 2 and "content: expected a list, found a string" in result.stderr
    assert "starting llama.cpp" not in result.stderr


@pytest.mark.cli
def test_cli_allow_uncited_lists_the_text_and_lets_the_citations_decide():
    name = "openai_responses.json"
    args = [a for s in sources(name) for a in ("--source", s)]
    strict = run("audit", "--response", str(RESPONSES / name), *args, "--locate-only")
    allowed = run("audit", "--response", str(RESPONSES / name), *args, "--locate-only", "--allow-uncited")
    assert "uncited answer text: 'Here is a short summary.'" in strict.stdout
    assert "(1; --allow-uncited: listed only)" in allowed.stdout and "Here is a short summary." in allowed.stdout
    assert "uncited answer text: 'Here is a short summary.'" not in allowed.stdout
    misplaced = run("audit", "--source", "rfc7519.txt", "--citations", str(DATA / "rfc7519_citations.json"),
                    "--allow-uncited")
    assert misplaced.returncode == 2 and "go with --response" in misplaced.stderr


def test_locate_only_runs_the_contrast_checks_of_the_options_given(monkeypatch):
    """`audit --response --locate-only --contrast-checks none` ran the environment's checks: the
    options given were dropped on the locate-only path. A finding the environment's checks make
    (`all`) is gone when the options say none, and is there when they say all."""
    monkeypatch.setenv("CITEAUDIT_CONTRAST_CHECKS", "all")
    name = "anthropic_messages.json"
    found = {checks: int(audit_response(RESPONSES / name, sources(name), locate_only=True,
                                        options=AuditOptions(contrast=checks)).table["contrast"].map(bool).sum())
             for checks in ((), tuple(ContrastCheck))}
    assert found == {(): 0, tuple(ContrastCheck): 1}


def test_a_responses_sources_are_divided_as_sections_says(tmp_path):
    """`--sections` reaches a response's sources (before, `audit --response` read them with auto
    whatever it said, and `report --response` refused it); the review command it prints keeps it."""
    from click.testing import CliRunner

    from citeaudit.surfaces import cli

    name = "llamaindex_response.json"
    readings = {mode: audit_response(RESPONSES / name, sources(name), sections=mode, locate_only=True).document.reading
                for mode in ("auto", "numbered")}
    assert readings == {"auto": "headings: every numbered clause is a heading",
                        "numbered": "numbered clauses: 3, with 4 sub-clauses"}
    args = ["audit", "--response", str(RESPONSES / name), *(a for s in sources(name) for a in ("--source", s)),
            "--sections", "numbered", "--locate-only", "--reviews", str(tmp_path / "reviews.jsonl")]
    shown = CliRunner().invoke(cli.main, args).output
    assert "sections of lantern-sync.md: numbered clauses: 3, with 4 sub-clauses" in shown
    assert "--sections numbered" in shown  # in the review commands it prints
