"""The documentation's figures that come from commands, checked against those commands' output.

Each test runs the command a page of docs/ names (offline, from the committed recordings) and
compares the figures, so the documentation cannot drift from what the code does. (Figures a tool
saves with --save-docs are checked against the tool in tests/test_docs_figures.py.)
"""

import math
import re
from pathlib import Path

import pytest
from conftest import DATA, ROOT, docs_text, saved_measurement
from test_cli import run

pytestmark = pytest.mark.cli

DOCS = docs_text()  # every page of docs/, in path order


def block_after(marker: str) -> list[str]:
    """The lines of the first fenced block after `marker` in the documentation."""
    start = DOCS.index(marker)
    body = DOCS[start:].split("```", 2)[1]
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


def test_demo_decision_and_probabilities(recorded_cache):
    import json

    result = run("audit", "--source", "rfc7519.txt", "--citations", str(DATA / "rfc7519_citations.json"),
                 "--cache-mode", "replay")
    assert result.returncode == 1, result.stderr
    threshold = re.search(r"recommended threshold of (\d\.\d\d)", DOCS).group(1)
    assert f"\nREJECT (threshold {threshold}, recommended by the calibration of " in result.stdout
    assert "the answer is `REJECT`" in squash(DOCS)
    low, high = re.search(r"P\(supports\) for the seven citations it is asked about lies between (\d\.\d\d) and "
                          r"(\d\.\d\d)", squash(DOCS)).groups()
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"threshold {threshold}, recommended by the calibration of ")  # the table's header
    rows = [line.split() for line in lines[2:10]]
    supports = [row[2] for row in rows if row[1] != "missing"]
    assert len(supports) == 7 and (min(supports), max(supports)) == (low, high)
    gold = {c["id"]: c["expected"] for c in json.loads((DATA / "rfc7519_citations.json").read_text())}
    verdicts = {row[0]: next(w for w in row if w in ("verified", "contradicted", "unsupported", "fabricated"))
                for row in rows}
    matched = sum(verdicts[i] == gold[i] for i in verdicts if gold[i] != "fabricated")
    assert f"after calibration {matched} of 7 verdicts match" in squash(DOCS)
    standing = [row[0] for row in rows if row[1] != "missing" and "auto" in row]
    scores = {row[0]: float(row[6]) for row in rows if row[1] != "missing"}
    above = [i for i in scores if scores[i] >= float(threshold)]
    assert standing == [] and len(above) == 1, (standing, above)  # the one above the threshold is held back
    [alone] = above
    right = "right" if verdicts[alone] == gold[alone] else "wrong"
    assert (f"One scores above the calibration's recommended threshold of {threshold}, and it is {right}: "
            f"`{alone}` scores {scores[alone]:.2f} as `{verdicts[alone]}`") in squash(DOCS)
    held = next(row for row in rows if row[0] == alone)
    assert "review" in held and "contrast" in held  # its route and its flag
    why = re.search(r"under the table, `(.*?)`, and the flag `contrast`", squash(DOCS)).group(1)
    assert f"  {why}" in result.stdout.splitlines()  # the one line under the table, as the page quotes it
    assert f"flagged contrast ({why.split(': contrast: ')[1]})" in result.stdout  # and in the decision
    assert "So all seven judged citations go to review" in squash(DOCS)


def test_spot_check_example_is_what_review_and_agreement_print(recorded_cache, tmp_path):
    """The section "Spot checks and agreement": its two commands, run on the bundled example."""
    commands = block_after("## Spot checks and agreement")
    assert len(commands) == 2 and all(c.startswith("citeaudit ") for c in commands)
    store = str(tmp_path / "r.jsonl")
    review, agreement = ([store if word == "out/rfc7519_reviews.jsonl" else word for word in c.split()[1:]]
                         for c in commands)
    recorded = run(*review)
    assert recorded.returncode == 0, recorded.stderr
    shown = re.search(r"The first prints `(recorded .*?) in out/rfc7519_reviews.jsonl`", squash(DOCS)).group(1)
    assert recorded.stdout == f"{shown} in {store}\n"
    printed = run(*agreement)
    assert printed.returncode == 0, printed.stderr
    block = block_after("the second, under the routing line:")
    assert [squash(line) for line in printed.stdout.splitlines()[1:] if line.strip()] == [squash(b) for b in block]
    assert "default **0.1**" in DOCS and "DEFAULT_SPOT_CHECK = 0.1" in (ROOT / "src" / "citeaudit" / "settings" /
                                                                          "environment.py").read_text()


def test_profile_refusal_example_is_what_calibrate_prints(recorded_cache, tmp_path):
    """The section "Profiles": the worked example's seven reviews are refused, with what is needed."""
    [review, _] = block_after("## Spot checks and agreement")
    store = str(tmp_path / "r.jsonl")
    assert run(*[store if w == "out/rfc7519_reviews.jsonl" else w for w in review.split()[1:]]).returncode == 0
    marker = "too few, and the command says how many more"
    [command] = block_after(marker)
    printed = run(*[store if w == "out/rfc7519_reviews.jsonl" else w for w in command.split()[1:]])
    assert printed.returncode == 2
    [error] = [line for line in DOCS[DOCS.index(marker):].split("```")[3].splitlines() if line.strip()]
    assert squash(printed.stderr) == squash(error)


def labelled_sets() -> list[str]:
    """`--source S --citations C` for every pair in the Makefile's QUOTE_SETS (what `make calibrate-qwen` uses)."""
    makefile = (ROOT / "Makefile").read_text()
    found = re.search(r"^QUOTE_SETS := (.*?)(?<!\\)\n", makefile, flags=re.S | re.M)
    assert found, "the Makefile lists no QUOTE_SETS"
    block = found.group(1)
    args = []
    for pair in block.replace("\\\n", " ").split():
        source, citations = pair.split(":")
        args += ["--source", source, "--citations", str(ROOT / citations) if "/" in citations else citations]
    return args


LABELLED = labelled_sets()
PUBLIC = ROOT.parent / "shared" / "data" / "public"  # the public TRAIN splits, beside the checkout as in CI


@pytest.fixture(scope="module")
def public_labelled(tmp_path_factory) -> list[str]:
    """`--source S --citations C` for the public sets `make public-sets` builds (into a scratch folder)."""
    from citeaudit.calibrate import public_sets

    if not PUBLIC.is_dir():
        pytest.skip(f"no public data at {PUBLIC}")
    built = public_sets.build(PUBLIC, tmp_path_factory.mktemp("public"))
    return [arg for source, citations in built.values() for arg in ("--source", str(source), "--citations",
                                                                    str(citations))]


def fitted_sets(strategy: str, public: list[str]) -> list[str]:
    """The labelled sets `make calibrate-qwen` fits a strategy on: choice the project's, the others
    those and the public ones (recorded in examples and panel; panel's first two questions are yesno's)."""
    return LABELLED if strategy == "choice" else [*LABELLED, *public]


STRATEGIES = ["choice", "examples", "yesno", "panel", "panel+examples"]


def calibration_file(folder: Path, strategy: str) -> Path:
    """The shipped Qwen judge's calibration of `strategy` in a cache folder."""
    return folder / "calibration" / f"qwen2.5-coder-1.5b-instruct-q4_k_m.{strategy}.json"


def calibrated(strategy: str, cache, public: list[str]) -> tuple[object, dict]:
    """`make calibrate-qwen`'s command for one strategy (`calibrate --shipped` into this test's copy
    of the recordings, `cache`): its output, which the tables of docs/measurements/judge-quality.md show, and the calibration
    file it wrote (up to a minute: one run per strategy, which one test reads)."""
    import json

    written = calibration_file(cache, strategy)
    written.unlink()  # rewritten below, as the Makefile's --shipped does
    result = run("calibrate", "--shipped", "--model", "qwen", "--strategy", strategy, *fitted_sets(strategy, public))
    assert result.returncode == 0, result.stderr
    return result, json.loads(written.read_text())


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_calibrate_prints_the_documented_rows_and_writes_the_saved_calibration(recorded_cache, public_labelled, strategy):
    """The documented rows of this strategy are what `make calibrate-qwen`'s command prints, and the
    committed cache/calibration file is what it writes. One test for both: two tests ran the same
    command twice whenever the test processes split them."""
    import json

    result, fitted = calibrated(strategy, recorded_cache, public_labelled)
    printed = [squash(line) for line in result.stdout.splitlines()]
    # its row of the strategy table, and (fitted with the public sets) of the side-by-side table
    shown = [squash(line) for line in DOCS.splitlines() if line.startswith(f"| {strategy} |")]
    assert len(shown) == (1 if strategy == "choice" else 2), shown
    for row in shown:
        assert row in printed, f"documented row {row} is not in the output:\n{result.stdout}"
        assert squash(printed[printed.index(row) - 2]) in {squash(line) for line in DOCS.splitlines()}  # header
    if strategy != "choice":  # its in-sample ceiling, as printed
        inside = re.findall(rf"^{re.escape(strategy)}: (in sample, best threshold in hindsight .*)$", DOCS, flags=re.M)
        assert len(inside) == 1 and squash(inside[0]) in printed, result.stdout
    if strategy not in ("choice", "yesno"):  # and its leave-one-domain-out table, row for row
        held_out = [squash(line) for line in DOCS.split(f"`{strategy}`'s, from `make calibrate-qwen`:")[1].split(
            "\n\n")[1].splitlines()]
        assert len(held_out) == 7 and all(line in printed for line in held_out), result.stdout
    if strategy == "panel":
        share, count, least = re.search(r"Climate-FEVER is the one domain the check sends to review: the model said no "
                                        r"to every question for (\S+) of its (\d+) citations \(at least (\S+) at 95% "
                                        r"confidence\)", squash(DOCS)).groups()
        gap = next(line for line in printed if line.startswith("climate-fever held out, not covered:"))
        assert f"{share} of this document's {count} judged citations (at least {least} at 95% confidence)" in gap
    saved = json.loads(calibration_file(ROOT / "cache", strategy).read_text())
    for key in ("a", "b", "weights", "l2", "name_a", "name_weights", "threshold", "cross_validated", "target",
                "model", "strategy"):
        assert_close(fitted[key], saved[key], key)


@pytest.mark.parametrize("strategy", ["panel", "panel+examples"])
def test_within_one_domain_rows_are_what_calibrate_prints(recorded_cache, public_labelled, strategy):
    """The table of calibrations fitted within one domain: each row from `calibrate` on that
    domain's sets alone (the project's ten pairs, or one public set)."""
    rows = re.findall(rf"^\| (project|scifact|climate-fever|check-covid) \| {re.escape(strategy)} \| (.*) \|$",
                      DOCS, flags=re.M)
    assert [domain for domain, _ in rows] == ["project", "scifact", "climate-fever", "check-covid"]
    public = {public_labelled[k + 3].rsplit("/", 1)[-1].removesuffix("_citations.json"): public_labelled[k:k + 4]
              for k in range(0, len(public_labelled), 4)}
    for domain, cells in rows:
        result = run("calibrate", "--model", "qwen", "--strategy", strategy,
                     *(LABELLED if domain == "project" else public[domain]), "--no-save")
        assert result.returncode == 0, result.stderr
        mean = re.search(r"verdicts that stand (\S+) of the judged .*?, of them right (\S+) \(sd", result.stdout)
        inside = re.search(r"in sample, best threshold in hindsight \(the map scored on the rows it was fitted on\): "
                           r"(.*) stand at least 95% right", result.stdout)
        assert mean and inside, result.stdout
        assert squash(cells) == f"{mean[1]} | {mean[2]} | {inside[1]}", domain


def assert_close(got: object, want: object, where: str) -> None:
    """Equal, floats within a relative 1e-9: another CPU may change a fitted float's last digit."""
    if isinstance(want, float) or isinstance(got, float):
        assert isinstance(got, (int, float)) and isinstance(want, (int, float)), where
        both_nan = math.isnan(got) and math.isnan(want)
        assert both_nan or math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {got} != {want}"
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), where
        for key in want:
            assert_close(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for k, (g, w) in enumerate(zip(got, want)):
            assert_close(g, w, f"{where}[{k}]")
    else:
        assert got == want, where


@pytest.mark.parametrize("args, figure", [
    (["lines", "--document", str(DATA / "lines" / "field_note.txt"), "--answer",
      str(DATA / "lines" / "broken_answer.txt"), "--locate-only"],
     "document_lines=7 citations_found=4\n  invalid_citations=2 unrecognized_citations=1"),
])
def test_line_citation_counts(recorded_cache, args, figure):
    result = run(*args)
    assert squash(figure) in squash(result.stdout)
    assert squash(figure) in squash(DOCS)


def test_contract_example(recorded_cache):
    result = run("contract", *(str(DATA / "contract" / f"{n}.json") for n in ("answer", "sources", "reviews")))
    assert result.returncode == 0 and '"ACCEPT"' in result.stdout
    assert "gives `ACCEPT` with fingerprint `6709ca2e…4d19e2`" in DOCS
    assert '"fingerprint": "6709ca2e' in (DATA / "contract" / "reviews.json").read_text()


def test_jsick_as_a_domain_of_its_own_is_what_calibrate_prints(recorded_cache, public_labelled, tmp_path,
                                                               monkeypatch):
    """docs/how-to/japanese-statutes.md "Japanese claims and the judge": `calibrate` given JSICK with the labelled sets reports it
    as a domain of its own; the page's leave-one-domain-out table is what it prints (into a user
    cache of this test's, never the shipped calibration)."""
    from citeaudit.calibrate import public_sets

    monkeypatch.setenv("CITEAUDIT_USER_CACHE", str(tmp_path / "user"))
    built = public_sets.build(PUBLIC, tmp_path / "ja", domains=public_sets.JAPANESE)
    document, citations = built["jsick"]
    result = run("calibrate", "--model", "qwen", "--strategy", "panel", *LABELLED, *public_labelled,
                 "--source", str(document), "--citations", str(citations))
    assert result.returncode == 0, result.stderr
    block = DOCS.split("build/public/jsick_citations.json\n```")[1].split("leave-one-domain-out table:\n\n")[1]
    rows = [squash(line) for line in block.split("\n\n")[0].splitlines()]
    printed = {squash(line) for line in result.stdout.splitlines()}
    assert len(rows) == 8 and any(row.startswith("| jsick |") for row in rows)
    assert all(row in printed for row in rows), result.stdout
    assert not (recorded_cache / "calibration" / "qwen2.5-coder-1.5b-instruct-q4_k_m.panel.json").read_text() \
        .count("jsick")  # the shipped calibration is untouched


def test_focused_evidence_table_is_what_bench_focus_prints(recorded_cache, public_labelled, capsys):
    """docs/measurements/focused-evidence.md: tools/bench_focus.py's table, from the recordings (the focused
    answers of every long section are recorded: none is missing)."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import bench_focus

    pairs = [(public_labelled[k + 1], public_labelled[k + 3]) for k in range(0, len(public_labelled), 4)]
    assert bench_focus.main([], public=pairs) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines() if line.strip()]
    saved = saved_measurement("bench_focus")  # what docs/measurements/focused-evidence.md shows
    assert saved["command"] == "python tools/bench_focus.py"
    assert printed == [line.rstrip() for line in saved["output"].splitlines() if line.strip()]
    assert "unrecorded focused answers: 0" in printed[0]
