"""Bring your own judge (`citeaudit judge-setup`, judgesetup.py): against the scripted endpoint
here, against the real local llama.cpp server under another model name in the `integration` test."""

import hashlib
import re
import subprocess
import sys

import pytest
from conftest import ROOT
from test_cli import run

from citeaudit import AuditOptions, AuditRun
from citeaudit.decide.calibration import Routing, load_calibration
from citeaudit.judge.cache import read_recording, recording_name
from citeaudit.workflows.judge_setup import LABELLED_SETS, labelled_sets, setup_judge, setup_plan

MODEL = "scripted-judge"
SETS = ("--set", "rfc7519.txt:data/rfc7519_citations.json", "--set", "rfc6749.txt:data/eval_rfc6749.json")
QUICK = ("--folds", "2", "--repeats", "0")
NOTE, NOTE_CITATIONS = "data/formats/field-note.txt", "data/formats/field-note_citations.json"  # 4 judged, 1 fabricated


def digest(folder):
    """SHA-256 of every file under `folder`, but the user cache and the working store (what git sees)."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not {"local", "store"} & set(p.relative_to(folder).parts)}


def test_the_bundled_sets_are_the_makefiles():
    makefile = (ROOT / "Makefile").read_text()
    block = re.search(r"^QUOTE_SETS := (.*?)(?<!\\)\n", makefile, flags=re.S | re.M).group(1)
    assert tuple(tuple(pair.split(":")) for pair in block.replace("\\\n", " ").split()) == LABELLED_SETS


def test_every_surface_names_judge_setup_for_a_model_without_calibration():
    note = Routing.resolve(None, None, "gpt-x", "panel").note()
    assert "no calibration for gpt-x / panel" in note and "citeaudit judge-setup --model gpt-x --strategy panel" in note


@pytest.fixture
def endpoint(scripted, recorded_cache, monkeypatch):  # after recorded_cache, which unsets the endpoint
    served = scripted(0.0)
    monkeypatch.setenv("OPENAI_BASE_URL", served.url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    return served


@pytest.mark.cli
def test_setup_records_calibrates_and_the_next_audit_uses_it(endpoint, recorded_cache):
    shipped = digest(recorded_cache)
    dry = run("judge-setup", "--model", MODEL, *SETS, "--limit", "4", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert endpoint.requests == 0 and not (recorded_cache / "local" / recording_name(MODEL)).exists()
    estimate = re.search(r"(\d+) calls \(3 per judged citation\), 0 already recorded, (\d+) to ask, about ([\d,]+) "
                         r"prompt tokens", dry.stdout)
    assert estimate and estimate.group(1) == estimate.group(2) and int(estimate.group(3).replace(",", "")) > 1000

    first = run("judge-setup", "--model", MODEL, *SETS, "--limit", "4", *QUICK)  # part of the sets: "interrupted"
    assert first.returncode == 0, first.stderr
    assert first.stdout.index(f"{estimate.group(1)} to ask") < first.stdout.index("calls asked")  # said first
    done_first = int(estimate.group(1))
    assert endpoint.requests == done_first
    assert re.search(rf"recording {MODEL}: 100%.*\b{done_first}/{done_first} \[\d\d:\d\d<", first.stderr)  # the bar

    done = endpoint.requests
    again = run("judge-setup", "--model", MODEL, *SETS, *QUICK)  # resumes: asks only what is missing
    assert again.returncode == 0, again.stderr
    asked = int(re.search(r"(\d+) already recorded, (\d+) to ask", again.stdout).group(1))
    assert asked == done and endpoint.requests - done == int(re.search(r"(\d+) to ask", again.stdout).group(1))
    recording = read_recording(recorded_cache / "local" / recording_name(MODEL))
    assert len(recording) == endpoint.requests == len({r["key"] for r in recording})

    saved = recorded_cache / "local" / "calibration" / f"{MODEL}.panel.json"
    assert f"calibration saved to {saved}" in again.stdout
    judged = int(re.search(r"(\d+) for the judge", again.stdout).group(1))
    assert load_calibration(MODEL, "panel", saved.parent.parent).fitted_on["judged"] == judged == len(recording) // 3
    table = again.stdout[again.stdout.index("| judge |"):]
    assert f"| {MODEL} | panel | 3 | {judged} |" in table and "| qwen2.5-coder-1.5b-instruct-q4_k_m (shipped) | panel |" in table
    assert digest(recorded_cache) == shipped  # the shipped recordings and calibrations are untouched

    audited = run("audit", "--model", MODEL, "--source", "rfc7519.txt", "--citations", "data/rfc7519_citations.json")
    assert audited.returncode in (0, 1), audited.stderr
    assert f"the calibration of {MODEL} / panel" in audited.stdout and "no calibration" not in audited.stdout
    assert endpoint.requests == len(recording)  # replayed: nothing asked


@pytest.mark.cli
def test_setup_in_replay_mode_with_answers_missing_fails_before_asking(endpoint, recorded_cache):
    result = run("judge-setup", "--model", MODEL, *SETS, "--limit", "2", "--cache-mode", "replay")
    assert result.returncode == 2 and "are not recorded, and replay never calls a model" in result.stderr
    assert endpoint.requests == 0 and not (recorded_cache / "local" / "calibration").exists()


def test_the_plan_counts_what_the_judge_would_ask(endpoint, recorded_cache):
    """The estimate is the requests `judge` sends: the shipped Qwen judge has every one recorded."""
    sets = labelled_sets([LABELLED_SETS[0]])
    qwen = setup_plan(AuditOptions.from_env(model="qwen", strategy="yesno", cache_mode="replay"), sets)
    assert (qwen.citations, qwen.judged, qwen.calls, qwen.cached, qwen.prompt_tokens) == (8, 7, 14, 14, 0)
    other = setup_plan(AuditOptions.from_env(model=MODEL, strategy="yesno", cache_mode="replay"), sets)
    assert (other.calls, other.to_do, other.tokens_counted) == (14, 14, 14) and other.prompt_tokens > 14 * 200
    result = setup_judge(AuditOptions.from_env(model=MODEL, strategy="choice", cache_mode="record"),
                         [LABELLED_SETS[0]], folds=2, repeats=0, progress=False, say=lambda _: None)
    assert result.plan.to_do == endpoint.requests == 7 and result.saved.is_file()
    assert list(result.comparison.figures().index) == [f"{MODEL} / choice",
                                                       "qwen2.5-coder-1.5b-instruct-q4_k_m / choice (shipped)"]
    options = AuditOptions.from_env(model=MODEL, strategy="choice")
    assert AuditRun(options).routing.calibration.to_json() == result.calibration.to_json()  # what the next audit uses
    assert result.saved_note().startswith(f"calibration saved to {result.saved}")


def test_a_fit_of_the_shipped_judge_is_not_saved_and_says_why(recorded_cache):
    """Notebook 09 and `judge-setup` on the shipped Qwen judge: the fresh fit on the bundled sets
    can read better than the shipped one, and the line that says it is not saved says why."""
    result = setup_judge(AuditOptions.from_env(model="qwen", strategy="choice", cache_mode="replay"),
                         [LABELLED_SETS[0]], folds=2, repeats=0, progress=False, say=lambda _: None)
    note = result.saved_note()
    assert result.saved is None and note.startswith("not saved: the shipped calibration of")
    assert "held out" in note and "the labelled sets above (1)" in note and "citeaudit calibrate" in note


@pytest.mark.integration
def test_setup_of_the_real_local_server_under_its_own_model_name(recorded_cache, monkeypatch, smollm2_server):
    """llama.cpp's server with SmolLM2 (not the shipped Qwen judge): one labelled set recorded, the
    calibration fitted and saved in the user cache, and the next audit, offline, routes with it.
    The set is the field note's (short sections: the worked example's took about a minute on 2 cores)."""
    server = smollm2_server  # the run's shared server (conftest.py)
    shipped = digest(recorded_cache)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    setup = subprocess.run([sys.executable, "-m", "citeaudit.surfaces.cli", "judge-setup", "--model", server.model,
                            "--strategy", "choice", "--concurrency", "1", "--set",
                            f"{NOTE}:{NOTE_CITATIONS}", "--folds", "2", "--repeats", "0"],
                           capture_output=True, text=True, timeout=600)  # a loaded 2-core machine is slow
    assert setup.returncode == 0, setup.stderr
    calls = int(re.search(r"(\d+) calls \(1 per judged citation\), 0 already recorded, \1 to ask", setup.stdout).group(1))
    recording = read_recording(recorded_cache / "local" / recording_name(server.model))
    assert calls == 4 and len(recording) == calls and all(r["response"]["top_logprobs"] for r in recording)
    assert f"| {server.model} | choice | 1 | {calls} |" in setup.stdout and "(shipped) | choice |" in setup.stdout
    fitted = load_calibration(server.model, "choice", recorded_cache / "local")
    assert fitted is not None and fitted.fitted_on["judged"] == calls
    assert digest(recorded_cache) == shipped

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens: replay only
    audited = run("audit", "--model", server.model, "--strategy", "choice", "--source", NOTE,
                  "--citations", NOTE_CITATIONS)
    assert audited.returncode in (0, 1), audited.stderr
    assert f"the calibration of {server.model} / choice" in audited.stdout and "No recorded answer" not in audited.stderr


def test_labelled_tables_audit_each_strategy_over_its_sets(recorded_cache):
    """Notebook 04's setup, one call: each strategy's sets audited one table each (choice on the
    project's sets only), their concatenation, a summary line each; one domain holds nothing out."""
    from citeaudit.workflows import labelled_tables

    options = AuditOptions.from_env(cache_mode="replay", use_calibration=False)
    labelled = labelled_tables(["choice", "panel"], options, [LABELLED_SETS[0], LABELLED_SETS[1]], public=False)
    assert labelled.sets == {"choice": list(LABELLED_SETS[:2]), "panel": list(LABELLED_SETS[:2])}
    sizes = [len(t) for t in labelled.by_set["panel"]]
    assert len(labelled.tables["panel"]) == sum(sizes) and sizes[0] == 8
    assert labelled.summary().splitlines()[1].startswith(f"panel: {sum(sizes)} labelled citations, ")
    assert labelled.held_out("panel") is None  # the project's sets are one domain
