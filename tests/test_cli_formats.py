"""`lines`, `review` and `contract` as a user runs them."""

import json

import pytest
from conftest import DATA
from test_cli import read_jsonl, run

pytestmark = pytest.mark.cli

NOTE = DATA / "lines" / "field_note.txt"
CONTRACT = [str(DATA / "contract" / n) for n in ("answer.json", "sources.json", "reviews.json")]


def test_lines_flags_l8_and_accepts_l2_3(tmp_path, recorded_cache):
    out = tmp_path / "lines.jsonl"
    result = run("lines", "--document", str(NOTE), "--answer", str(DATA / "lines" / "broken_answer.txt"),
                 "--locate-only", "--output", str(out))
    assert result.returncode == 1
    assert "document_lines=7 citations_found=4 invalid_citations=2 unrecognized_citations=1" in result.stdout
    assert "unrecognized citation marker '[line 4]'" in result.stdout
    rows = {r["cited_section"]: r for r in read_jsonl(out)}
    assert rows["[L8]"]["verdict"] == "fabricated"
    good = run("lines", "--document", str(NOTE), "--answer", str(DATA / "lines" / "good_answer.txt"), "--locate-only",
               "--output", str(out))
    assert "invalid_citations=0" in good.stdout
    assert [r["found_section"] for r in read_jsonl(out)] == ["L2-L3", "L5-L6"]


def test_lines_replay_has_probabilities(tmp_path, recorded_cache):
    out = tmp_path / "lines.jsonl"
    result = run("lines", "--document", str(NOTE), "--answer", str(DATA / "lines" / "good_answer.txt"),
                 "--output", str(out))
    assert result.returncode in (0, 1), result.stderr
    for row in read_jsonl(out):
        assert row["error"] is None and abs(sum(row["probabilities"].values()) - 1) < 1e-9


def test_review_command_turns_the_decision(tmp_path, recorded_cache):
    store = tmp_path / "reviews.jsonl"
    doc = tmp_path / "note.txt"
    doc.write_text(NOTE.read_text())
    args = ["--document", str(doc), "--answer", str(DATA / "lines" / "good_answer.txt")]
    assert "REVIEW" in run("lines", *args, "--locate-only", "--reviews", str(store)).stdout
    for cid in ("c1", "c2"):
        result = run("review", "--reviews", str(store), *args, "--id", cid, "--verdict", "verified", "--reviewer", "t")
        assert result.returncode == 0, result.stderr
    accepted = run("lines", *args, "--locate-only", "--reviews", str(store), "--output", str(tmp_path / "o.jsonl"))
    assert accepted.returncode == 0 and "ACCEPT" in accepted.stdout
    assert [r["review_state"] for r in read_jsonl(tmp_path / "o.jsonl")] == ["current", "current"]
    doc.write_text(NOTE.read_text().replace("17 March", "18 March"))
    stale = run("lines", *args, "--locate-only", "--reviews", str(store), "--output", str(tmp_path / "o.jsonl"))
    assert stale.returncode == 1 and "REVIEW" in stale.stdout
    assert [r["review_state"] for r in read_jsonl(tmp_path / "o.jsonl")] == ["current", "stale"]


def test_review_needs_one_input_pair(tmp_path, recorded_cache):
    result = run("review", "--reviews", str(tmp_path / "r.jsonl"), "--id", "c1", "--verdict", "verified")
    assert result.returncode == 2 and "give one input" in result.stderr


def test_contract_seed_example_accepts():
    result = run("contract", *CONTRACT)
    assert result.returncode == 0
    assert json.loads(result.stdout)["status"] == "ACCEPT"


def test_contract_malformed_rejects_naming_the_record(tmp_path):
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"claims": [{"id": "C1", "text": "x", "citation_id": "S9"}]}))
    result = run("contract", str(answer), *CONTRACT[1:])
    assert result.returncode == 1
    body = json.loads(result.stdout)
    assert body["status"] == "REJECT" and any("claims[0]" in r for r in body["reasons"])
    assert "Traceback" not in result.stderr


def test_contract_unreadable_file_exits_2(tmp_path):
    result = run("contract", str(tmp_path / "missing.json"), *CONTRACT[1:])
    assert result.returncode == 2 and "missing.json" in result.stderr


def test_thresholds_command_prints_the_table_offline(recorded_cache):
    result = run("thresholds", "--source", "rfc7519.txt", "--citations", str(DATA / "eval_rfc7519.json"),
                 "--source", "rfc6749.txt", "--citations", str(DATA / "eval_rfc6749.json"), "--target", "0.95")
    assert result.returncode == 0, result.stderr
    assert "46 labelled citations" in result.stdout
    rows = [line.split() for line in result.stdout.splitlines() if line.strip()[:4] in {f"{t / 100:.2f}"[:4] for t in range(0, 101, 5)}]
    autos = [int(r[1]) for r in rows]
    assert len(autos) == 21 and autos == sorted(autos, reverse=True)
    assert "expected calibration error" in result.stdout and "95%" in result.stdout


def test_thresholds_needs_gold_labels(tmp_path, recorded_cache):
    unlabelled = tmp_path / "u.json"
    unlabelled.write_text(json.dumps([{"id": "a", "claim": "c", "quote": None, "section": "4.1.3"}]))
    result = run("thresholds", "--source", "rfc7519.txt", "--citations", str(unlabelled), "--cache-mode", "replay")
    assert result.returncode == 2 and "labelled" in result.stderr


def test_review_never_writes_into_a_file_that_is_not_a_review_store(tmp_path, recorded_cache):
    args = ["--document", str(NOTE), "--answer", str(DATA / "lines" / "good_answer.txt"), "--id", "c1",
            "--verdict", "verified"]
    settings = tmp_path / "settings.jsonl"
    settings.write_text(json.dumps({"theme": "dark", "sizes": list(range(50))}, indent=2))
    seed = tmp_path / "reviews.json"
    seed.write_bytes((DATA / "contract" / "reviews.json").read_bytes())
    for target in (settings, seed):
        before = target.read_bytes()
        result = run("review", "--reviews", str(target), *args)
        assert result.returncode == 2 and str(target) in result.stderr and "Traceback" not in result.stderr
        assert target.read_bytes() == before


def test_a_review_note_with_line_separators_keeps_the_store_readable(tmp_path, recorded_cache):
    store = tmp_path / "r.jsonl"
    args = ["--document", str(NOTE), "--answer", str(DATA / "lines" / "good_answer.txt")]
    note = "seen\u2028twice\u2029and\u0085more"
    assert run("review", "--reviews", str(store), *args, "--id", "c1", "--verdict", "verified",
               "--note", note).returncode == 0
    result = run("lines", *args, "--locate-only", "--reviews", str(store))
    assert result.returncode == 1 and "verified (current)" in result.stdout


def test_contract_judge_flag_asks_the_recorded_model(tmp_path, recorded_cache):
    plain = run("contract", *CONTRACT)
    judged = run("contract", *CONTRACT, "--judge", "--output", str(tmp_path / "o.jsonl"))
    assert plain.returncode == judged.returncode == 0  # the current review still decides
    (row,) = read_jsonl(tmp_path / "o.jsonl")
    assert row["kind"] == "source" and row["cited_section"] == "S1" and row["review_state"] == "current"
    assert row["relation"] in ("supports", "contradicts", "says_nothing") and row["cached"] is True
    assert abs(sum(row["probabilities"].values()) - 1) < 1e-9
