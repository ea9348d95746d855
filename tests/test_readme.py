"""The README's figures that come from commands, checked against those commands' output.

Each test runs the command the README names (offline, from the committed recordings) and
compares the figures, so the README cannot drift from what the code does.
"""

import re

import pytest
from conftest import DATA, ROOT
from test_cli import run

README = (ROOT / "README.md").read_text(encoding="utf-8")


def block_after(marker: str) -> list[str]:
    """The lines of the first fenced block after `marker` in the README."""
    start = README.index(marker)
    body = README[start:].split("```", 2)[1]
    return [line for line in body.splitlines()[1:] if line.strip()]


def squash(line: str) -> str:
    return " ".join(line.split())


def test_step1_table_is_what_locate_only_prints(recorded_cache):
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(DATA / "rfc7519_citations.json"),
                 "--locate-only")
    printed = {squash(line) for line in result.stdout.splitlines()}
    shown = block_after("Step 1 (`citeaudit audit --locate-only`")
    assert len(shown) == 9
    assert [squash(line) for line in shown if squash(line) not in printed] == []


def test_demo_decision_and_confidences(recorded_cache):
    result = run("audit", "--source", "rfc7519.txt", "--citations", str(DATA / "rfc7519_citations.json"),
                 "--cache-mode", "replay")
    assert result.returncode == 1, result.stderr
    assert "\nREJECT (threshold 0.8)" in result.stdout
    assert "the answer is `REJECT`" in README
    low, high = re.search(r"with confidence (\d\.\d\d) to (\d\.\d\d)", README).groups()
    confidences = re.findall(r"supports\s+(\d\.\d\d)\s+verified review", result.stdout)
    assert len(confidences) == 7 and (min(confidences), max(confidences)) == (low, high)


def test_threshold_table_and_ece(recorded_cache):
    result = run("thresholds", "--source", "rfc7519.txt", "--citations", str(DATA / "eval_rfc7519.json"),
                 "--source", "rfc6749.txt", "--citations", str(DATA / "eval_rfc6749.json"))
    assert result.returncode == 0, result.stderr
    printed = [squash(line) for line in result.stdout.splitlines()]
    shown = block_after("`citeaudit thresholds` on the 46 labelled citations")
    assert shown[0].split() == printed[printed.index(squash(shown[0]))].split()  # the header
    for line in shown[1:]:
        assert squash(line) in printed, f"README row {line!r} is not in the command's output"
    assert "46 labelled citations" in result.stdout


@pytest.mark.parametrize("args, figure", [
    (["lines", "--document", str(DATA / "lines" / "field_note.txt"), "--answer",
      str(DATA / "lines" / "broken_answer.txt"), "--locate-only"],
     "document_lines=7 citations_found=4\n  invalid_citations=2 unrecognized_citations=1"),
])
def test_line_citation_counts(recorded_cache, args, figure):
    result = run(*args)
    assert squash(figure) in squash(result.stdout)
    assert squash(figure) in squash(README)


def test_contract_example(recorded_cache):
    result = run("contract", *(str(DATA / "contract" / f"{n}.json") for n in ("answer", "sources", "reviews")))
    assert result.returncode == 0 and '"ACCEPT"' in result.stdout
    assert "gives `ACCEPT` with fingerprint `6709ca2e…4d19e2`" in README
    assert '"fingerprint": "6709ca2e' in (DATA / "contract" / "reviews.json").read_text()
