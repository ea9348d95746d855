"""The command line as a user runs it: a subprocess, offline, from the committed recordings."""

import json
import subprocess
import sys

import pytest
from conftest import DATA

pytestmark = pytest.mark.cli

EXAMPLE = DATA / "rfc7519_citations.json"
STEP1 = {  # the seed's step-1 table: quote status, found section, evidence length
    "epoch_seconds": ("exact", "2", 3122), "aud_reject": ("exact", "4.1.3", 761),
    "sig_reporting": ("missing", None, None), "clock_skew": ("exact", "4.1.4", 529),
    "exp_required": ("exact", "4.1.4", 529), "pii_encryption": ("exact", "3", 1653),
    "iat_future": ("none", "4.1.6", 270), "duplicate_names": ("exact", "4", 918),
}
FIELDS = {"id", "claim", "cited_section", "quote_status", "found_section", "section_match", "match_score",
          "span", "relation", "probabilities", "confidence", "method", "verdict", "route", "flags",
          "model", "cached", "error"}


# a guard against a hang, not a speed target: `calibrate` over the 1,035 labelled citations with 20
# fold assignments took 60-90 s alone here and ran past 120 s beside other work
RUN_TIMEOUT = 600


def run(*args):
    return subprocess.run([sys.executable, "-m", "citeaudit.surfaces.cli", *args], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT)


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_locate_only_reproduces_the_seed_step1_table(tmp_path, recorded_cache, rfc7519):
    out = tmp_path / "step1.jsonl"
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--locate-only", "--output", str(out))
    assert result.returncode == 1, result.stderr
    rows = {r["id"]: r for r in read_jsonl(out)}
    for cid, (status, section, length) in STEP1.items():
        row = rows[cid]
        assert (row["quote_status"], row["found_section"]) == (status, section)
        assert row["relation"] is None and row["confidence"] is None
        assert row["probabilities"] == {"supports": None, "contradicts": None, "says_nothing": None}
        if length:
            assert len(rfc7519.sections[section].text) == length
    assert rows["sig_reporting"]["verdict"] == "fabricated"
    assert all(r["verdict"] is None for cid, r in rows.items() if cid != "sig_reporting")


def test_replay_runs_offline_with_recorded_probabilities(tmp_path, recorded_cache):
    out = tmp_path / "audit.jsonl"
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--cache-mode", "replay",
                 "--output", str(out))
    assert result.returncode == 1, result.stderr  # not every citation is verified
    rows = read_jsonl(out)
    assert len(rows) == 8 and all(set(r) >= FIELDS for r in rows)
    for row in rows:
        if row["verdict"] == "fabricated":
            assert row["quote_status"] == "missing" and row["model"] is None
            continue
        probs = row["probabilities"]
        assert set(probs) == {"supports", "contradicts", "says_nothing"}
        assert sum(probs.values()) == pytest.approx(1.0)
        assert row["confidence"] == pytest.approx(max(probs["supports"], 1 - probs["supports"]))  # pass or fail
        assert row["cached"] is True and row["error"] is None and row["method"] == "logprobs"
        assert row["review_state"] == "none" and row["review_verdict"] is None
        assert row["model"] == "qwen2.5-coder-1.5b-instruct-q4_k_m"
        assert row["span"] is None or row["span"]["start"] < row["span"]["end"]
    assert "REJECT" in result.stdout or "REVIEW" in result.stdout


def test_threshold_zero_lets_every_verdict_stand(tmp_path, recorded_cache):
    out = tmp_path / "audit.jsonl"
    run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--threshold", "0", "--output", str(out))
    rows = read_jsonl(out)
    # but for a verified verdict a contrast check holds back: no threshold lets that one stand
    assert {r["id"]: r["route"] for r in rows if r["route"] != "auto"} == {"exp_required": "review"}
    assert [f["check"] for f in rows[4]["contrast"]] == ["normative"] and "contrast" in rows[4]["flags"]
    run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--threshold", "0", "--output", str(out),
        "--contrast-checks", "none")
    assert {r["route"] for r in read_jsonl(out)} == {"auto"}
    assert {r["contrast"] is None for r in read_jsonl(out)} == {True}


def test_replay_miss_is_an_error_row_with_the_fix(tmp_path, recorded_cache):
    out = tmp_path / "audit.jsonl"
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--model", "never-recorded",
                 "--output", str(out))
    assert result.returncode == 1
    assert "--cache-mode record" in result.stderr and "never-recorded" in result.stderr
    rows = read_jsonl(out)
    assert len(rows) == 8
    assert all(r["route"] == "review" for r in rows if r["verdict"] != "fabricated")


def test_exit_code_0_when_every_citation_is_verified(tmp_path, recorded_cache):
    good = tmp_path / "good.json"
    cites = [c for c in json.loads(EXAMPLE.read_text()) if c["id"] in ("duplicate_names", "clock_skew")]
    good.write_text(json.dumps(cites))
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(good), "--threshold", "0.6")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ACCEPT" in result.stdout


@pytest.mark.parametrize("content, message", [
    ('[{"id": "x", "claim": "c", "quote": null}]', "record 0, field 'section'"),
    ('[{"id": "x", "claim": "c", "quote": 5, "section": "2"}]', "record 0, field 'quote'"),
    ('[{"id": "x", "claim": "", "quote": null, "section": "2"}]', "record 0, field 'claim'"),
    ('[{"id": "x", "claim": "c", "quote": null, "section": "2", "expected": "true"}]', "field 'expected'"),
    ('[{"id": "x", "claim": "c", "quote": null, "section": "2", "extra": 1}]', "field 'extra'"),
    ('{"id": "x"}', "top level"),
    ('[{"id": "x", "claim": "c", "quote": null, "section": "2"}, {"id": "x", "claim": "d", "quote": null, "section": "3"}]',
     "record 1, field 'id'"),
    ("[{", "not valid UTF-8 JSON"),
])
def test_malformed_citation_file_exits_2_with_file_record_field(tmp_path, recorded_cache, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(bad), "--locate-only")
    assert result.returncode == 2
    assert str(bad) in result.stderr and message in result.stderr
    assert "Traceback" not in result.stderr


def test_unreadable_inputs_and_bad_arguments_exit_2(tmp_path, recorded_cache):
    assert run("audit", "--source", "rfc7519.txt", "--citations", str(tmp_path / "none.json")).returncode == 2
    assert run("audit", "--source", str(tmp_path / "none.txt"), "--citations", str(EXAMPLE)).returncode == 2
    assert run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--threshold", "2").returncode == 2
    assert run("audit", "--citations", str(EXAMPLE)).returncode == 2


def test_output_is_never_half_written(tmp_path, recorded_cache):
    out = tmp_path / "audit.jsonl"
    run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--locate-only", "--output", str(out))
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("audit")] == ["audit.jsonl"]


def test_record_mode_with_no_endpoint_says_which_setting_and_exits_3(tmp_path, recorded_cache, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("CITEAUDIT_RETRIES", "0")
    citations = tmp_path / "new.json"
    citations.write_text(json.dumps([{"id": "n1", "claim": "JWTs are compact.", "quote": None, "section": "1"}]))
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(citations), "--cache-mode", "record")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "OPENAI_BASE_URL" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("args", [
    ["audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--locate-only", "--output", "/etc/hostname/x.jsonl"],
    ["audit", "--source", "no-such-rfc.txt", "--citations", str(EXAMPLE), "--locate-only"],
    ["lines", "--document", str(DATA / "lines" / "field_note.txt"), "--answer", "/nonexistent/answer.txt"],
    ["contract", str(EXAMPLE), str(EXAMPLE), str(EXAMPLE)],
])
def test_bad_paths_and_inputs_exit_2_without_a_traceback(recorded_cache, args):
    result = run(*args)
    assert result.returncode in (1, 2), result.stderr
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout


def test_an_empty_citation_list_is_review_never_accept(tmp_path, recorded_cache):
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(empty))
    assert result.returncode == 1 and "REVIEW" in result.stdout and "nothing was checked" in result.stdout


def test_an_internal_error_is_a_message_and_exit_4_not_a_traceback(tmp_path, recorded_cache):
    script = ("import citeaudit.pipeline.audit as pipeline, sys\n"  # the command imports it when it runs
              "from citeaudit.surfaces.cli import main\n"
              "def boom(*a, **k):\n    raise ZeroDivisionError('planted')\n"
              "pipeline.audit_quotes = boom\n"
              "sys.argv = ['citeaudit', 'audit', '--source', 'rfc7519.txt', '--citations', sys.argv[1]]\n"
              "main()\n")
    result = subprocess.run([sys.executable, "-c", script, str(EXAMPLE)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 4 and "internal error: ZeroDivisionError: planted" in result.stderr
    assert "issue tracker" in result.stderr and "Traceback" not in result.stderr


MODEL_OPTIONS = ("strategy", "cache_mode", "model", "concurrency")


def test_every_command_that_judges_or_records_declares_the_model_options_once():
    """Every command that judges (`audit`, `batch`, `thresholds`, `calibrate`, `review` and `agreement`,
    which judge the inputs they were given, `judge-setup` and `record`...) takes model, strategy,
    cache mode and concurrency from the one decorator (`params.settings_options`): the same options
    with the same help, handed to the command as one `AuditOptions`."""
    from citeaudit.surfaces.cli import main

    commands = {name: {p.name: p for p in command.params} for name, command in main.commands.items()}
    judging = sorted(name for name, params in commands.items() if "strategy" in params)
    assert judging == ["agreement", "audit", "batch", "calibrate", "contract", "judge-setup", "lines", "record",
                       "report", "review", "thresholds"]
    first = commands["audit"]
    for name in judging:
        for option in MODEL_OPTIONS:
            assert commands[name][option].opts == first[option].opts, (name, option)
            if option != "cache_mode":  # its help names the command's default mode: replay, or record
                assert commands[name][option].help == first[option].help, (name, option)
    assert "threshold" not in commands["judge-setup"] and "threshold" not in commands["record"]


def test_record_runs_a_local_model_and_records(recorded_cache, monkeypatch):
    """`record` checks its settings before it starts a server: a model no local server runs, or replay."""
    inputs = ("--source", "rfc7519.txt", "--citations", str(EXAMPLE))
    other = run("record", "--model", "gpt-4o-mini", *inputs)
    assert other.returncode == 2 and "record runs a local model: give --model smollm2 or qwen" in other.stderr
    replay = run("record", "--model", "qwen", "--cache-mode", "replay", *inputs)
    assert replay.returncode == 2 and "use --cache-mode record (the default) or refresh" in replay.stderr
    monkeypatch.setenv("CITEAUDIT_MODEL", "gpt-4o-mini")  # the environment, as every command reads it
    assert "not 'gpt-4o-mini'" in run("record", *inputs).stderr


def test_contrast_checks_option_names_the_choices(recorded_cache):
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--contrast-checks", "numbrs")
    assert result.returncode == 2 and "unknown contrast check 'numbrs'" in result.stderr
    assert "--contrast-checks KINDS|none|all" in run("audit", "--help").stdout
