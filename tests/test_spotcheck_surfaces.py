"""Spot checks and agreement on every surface: the command line (audit, review --batch, agreement),
the HTML report and the batch dashboard, with the same numbers as the library."""

import json

import pytest
from conftest import DATA
from test_cli import run
from test_notebooks import replay_env  # noqa: F401  (the fixture notebook 05 runs in)

from citeaudit import AuditOptions, audit_quotes
from citeaudit.decide import agreement
from citeaudit.pipeline.batch import audit_dataset
from citeaudit.surfaces import render_html
from citeaudit.surfaces.dashboard import render_dashboard

EXAMPLE = ["--source", "rfc7519.txt", "--citations", str(DATA / "rfc7519_citations.json")]


@pytest.fixture(autouse=True)
def without_contrast_checks(monkeypatch):
    """These tests draw `exp_required`, the one verdict the model's score alone lets stand on the worked
    example; with the contrast checks on (the default) it waits instead (test_contrast.py), so they are
    off here, for the library, the command line and the notebook alike."""
    monkeypatch.setenv("CITEAUDIT_CONTRAST_CHECKS", "none")


@pytest.mark.cli
def test_audit_lists_the_spot_checks_after_the_table_and_they_hold_nothing(recorded_cache):
    drawn = run("audit", *EXAMPLE)  # the default rate draws exp_required, the one verdict that stands
    none = run("audit", *EXAMPLE, "--spot-check", "0")
    assert drawn.returncode == none.returncode == 1, drawn.stderr
    assert "Spot checks (1): standing verdicts drawn at random (10% of those that stand)" in drawn.stdout
    assert "  exp_required: citeaudit review --reviews " in drawn.stdout
    assert "--id exp_required --verdict VERDICT" in drawn.stdout
    header, row = (next(line for line in drawn.stdout.splitlines() if line.strip().startswith(word))
                   for word in ("citation", "exp_required"))
    assert header.endswith("spot check") and row.split()[-1] == "yes"
    assert "Spot checks" not in none.stdout and "spot check" not in none.stdout
    decision = [line for line in drawn.stdout.splitlines() if line.startswith(("REJECT", "  - "))]
    assert decision == [line for line in none.stdout.splitlines() if line.startswith(("REJECT", "  - "))]


@pytest.mark.cli
def test_agreement_prints_and_writes_the_librarys_numbers(recorded_cache, tmp_path):
    store, out = tmp_path / "r.jsonl", tmp_path / "agreement.json"
    reviewed = run("review", "--reviews", str(store), *EXAMPLE, "--batch", str(DATA / "rfc7519_reviews.csv"))
    assert reviewed.returncode == 0, reviewed.stderr
    assert reviewed.stdout.startswith("recorded 7 review(s) (6 waiting, 1 spot check) in ")
    result = run("agreement", "--reviews", str(store), *EXAMPLE, "--json", str(out))
    assert result.returncode == 0, result.stderr
    audit = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", options=AuditOptions.from_env(),
                         reviews=store)
    library = agreement({audit.name: audit.table}, audit.routing)
    assert json.loads(out.read_text()) == json.loads(json.dumps(library.to_dict()))
    assert library.spot.line() in result.stdout and f"warning: {library.warning}" in result.stdout
    assert (library.spot.reviewed, library.spot.right, library.spot.promise) == (1, 0, 0.95)
    # the audit says the same in one line, under its decision
    audited = run("audit", *EXAMPLE, "--reviews", str(store))
    assert f"\nwarning: {library.warning}\n" in audited.stdout


@pytest.mark.cli
def test_review_batch_reports_a_bad_row_and_records_the_others(recorded_cache, tmp_path):
    batch, store = tmp_path / "b.csv", tmp_path / "r.jsonl"
    batch.write_text("id,verdict,note\naud_reject,verified,\nclock_skew,maybe,\nexp_required,contradicted,\n")
    result = run("review", "--reviews", str(store), *EXAMPLE, "--batch", str(batch), "--reviewer", "ana")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"error: {batch}, line 3: verdict 'maybe' is not one of verified, contradicted, unsupported" in result.stderr
    assert "recorded 2 review(s) (1 waiting, 1 spot check)" in result.stdout
    records = [json.loads(line) for line in store.read_text().splitlines()]
    assert [(r["citation_id"], r["selection"], r["reviewer"]) for r in records] == \
        [("aud_reject", "waiting", "ana"), ("exp_required", "spot_check", "ana")]


@pytest.mark.cli
@pytest.mark.parametrize("args, message", [
    (["--spot-check", "2"], "--spot-check 2.0 is not a number from 0 to 1"),
    (["--id", "aud_reject"], "give --id and --verdict (one review), or --batch FILE"),
    (["--batch", "b.csv", "--id", "aud_reject"], "--batch takes the ids, verdicts and notes from its file"),
])
def test_review_usage_errors_exit_2(recorded_cache, tmp_path, args, message):
    result = run("review", "--reviews", str(tmp_path / "r.jsonl"), *EXAMPLE, *args)
    assert result.returncode == 2 and message in result.stderr and not (tmp_path / "r.jsonl").exists()


def test_the_report_marks_a_spot_check_and_shows_its_review_command(recorded_cache):
    from citeaudit.decide import ReviewCommand

    audit = audit_quotes("rfc7519.txt", DATA / "rfc7519_citations.json", options=AuditOptions.from_env())
    page = render_html(audit, review=ReviewCommand((("--source", "rfc7519.txt"),), "r.jsonl"))
    card = page.split("id='citation-exp_required'>")[1].split("</section>")[0]
    assert "verified (stands, spot check)" in card and "Drawn at random as a spot check" in card
    assert "--id exp_required --verdict VERDICT" in card


def test_the_dashboard_lists_the_open_spot_checks(recorded_cache):
    options = AuditOptions.from_env(spot_check=1.0)
    result = audit_dataset(DATA / "batch" / "example.jsonl", options)
    drawn = result.rows[result.rows["spot_check"].eq(True)]
    assert len(drawn) and set(drawn["state"]) == {"stands"}
    page = render_dashboard(result)
    assert f"<h2>Spot checks to review ({len(drawn)})</h2>" in page
    assert all(f"<td>{cid}</td>" in page for cid in drawn["id"])
    quiet = audit_dataset(DATA / "batch" / "example.jsonl", options.with_(spot_check=0.0))
    assert "Spot checks to review" not in render_dashboard(quiet) and result.decisions.equals(quiet.decisions)


@pytest.mark.notebooks
def test_notebook_05_records_a_batch_and_shows_the_numbers_the_cli_prints(replay_env):  # noqa: F811
    from test_notebooks import _papermill, assert_ran_cleanly, outputs_text

    nb = _papermill("05_review_queue.ipynb", replay_env / "out.ipynb", BATCH="data/rfc7519_reviews.csv",
                    SPOT_CHECK=1.0, THRESHOLD=0.7)  # exp_required stands at 0.70 and is drawn
    assert_ran_cleanly(nb)
    text = outputs_text(nb)
    assert "spot checks (100% of the verdicts that stand, after the waiting ones): exp_required" in text
    assert "recorded 7 review(s) (6 waiting, 1 spot check) in " in text
    store = replay_env / "reviews" / "rfc7519_citations.jsonl"
    cli = run("agreement", "--reviews", str(store), *EXAMPLE, "--spot-check", "1", "--threshold", "0.7")
    assert cli.returncode == 0, cli.stderr
    spot = next(line for line in cli.stdout.splitlines() if line.startswith("spot checks:"))
    assert spot.startswith("spot checks: 0 of 1 standing verdicts right") and spot in text
