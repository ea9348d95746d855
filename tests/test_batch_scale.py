"""A generated dataset of 1,000 answers (`tools/bench_batch.py`: quote, line and source-id answers
over the real RFCs, and malformed lines) through `citeaudit batch`, locate-only: one decision per
line, rows equal to auditing a sample of answers alone, a real 2-worker LocalCluster equal to the
threads row for row, and the command line."""

import json
import random
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from citeaudit import load_line_answer, read_dataset
from citeaudit.citations.dataset import ANSWER_ID, LINE
from citeaudit.citations.records import QuoteCitation
from citeaudit.pipeline.audit import audit_lines, audit_quotes, audit_sources
from citeaudit.pipeline.batch import BatchResult, run_batch
from citeaudit.pipeline.jsonl import records
from citeaudit.surfaces import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from bench_batch import MALFORMED, Dataset, generate_dataset

pytestmark = pytest.mark.slow  # 1,000 generated answers: about 10 s to write, 40 s in all

N = 1000
WHY = {"bad_json": "not valid JSON", "missing_key": "field 'source': Field required",
       "unknown_source": "rfc99999-not-here.txt"}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Dataset:
    return generate_dataset(tmp_path_factory.mktemp("scale") / "answers.jsonl", N, seed=13)


@pytest.fixture(scope="module")
def lines(dataset) -> list[dict | None]:
    """Each line of the file as parsed JSON (None when it is not JSON), read independently of batch.py."""
    out: list[dict | None] = []
    for text in dataset.path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(text))
        except ValueError:
            out.append(None)
    return out


@pytest.fixture(scope="module")
def threads(dataset) -> BatchResult:
    return run_batch(read_dataset(dataset.path), locate_only=True)


def test_the_generated_dataset_mixes_formats_and_malformed_lines(dataset, lines, tmp_path):
    counts = dataset.count()
    assert len(dataset.kinds) == len(lines) == N
    assert counts["quote"] >= 400 and counts["lines"] >= 200 and counts["sources"] >= 200
    assert all(counts[kind] >= 5 for kind in MALFORMED)
    quotes = {c["quote"] for line in lines if line and "citations" in line for c in line["citations"]}
    assert len(quotes) > 500  # many different sentences, not a handful repeated
    again = generate_dataset(tmp_path / dataset.path.name, N, seed=13)  # reproducible
    assert again.path.read_bytes() == dataset.path.read_bytes()
    assert [p.read_bytes() for p in again.notes] == [p.read_bytes() for p in dataset.notes]


def test_every_line_gets_one_decision_and_malformed_lines_reject_naming_the_line(dataset, lines, threads):
    decisions, table = threads.decisions, threads.rows  # each access concatenates every answer's rows
    assert list(decisions[LINE]) == list(range(1, N + 1))
    assert [o.invalid for o in threads.outcomes] == [kind in MALFORMED for kind in dataset.kinds]
    for number, (kind, parsed, (_, decision)) in enumerate(zip(dataset.kinds, lines, decisions.iterrows()), start=1):
        if kind in MALFORMED:
            assert decision["status"] == "REJECT" and len(decision["reasons"]) == 1
            assert decision["reasons"][0].startswith(f"line {number}: "), decision["reasons"]
            assert WHY[kind] in decision["reasons"][0], decision["reasons"]
            rows = table[table[LINE] == number]
            assert len(rows) == 1 and rows["error"].iloc[0] == decision["reasons"][0]
        else:
            assert parsed is not None and decision[ANSWER_ID] == parsed["answer_id"]
    valid = decisions[[kind not in MALFORMED for kind in dataset.kinds]]
    assert set(valid["status"]) == {"ACCEPT", "REVIEW", "REJECT"}
    statuses = set(table["quote_status"].dropna())
    assert {"exact", "elided", "near", "missing"} <= statuses
    assert threads.exit_code == 1


def _alone(entry: dict, folder: Path, tmp_path: Path):
    """One answer through the library entry point of its format, as `citeaudit audit` would."""
    if "citations" in entry:
        citations = [QuoteCitation.model_validate(c).to_citation() for c in entry["citations"]]
        return audit_quotes(entry["source"], citations, locate_only=True)
    if "document" in entry:
        answer = tmp_path / f"{entry['answer_id']}.txt"
        answer.write_text(entry["answer"], encoding="utf-8")
        return audit_lines(load_line_answer(folder / entry["document"], answer), locate_only=True)
    return audit_sources(entry["answer"], entry["sources"], entry.get("reviews"), locate_only=True)


def test_rows_of_a_sample_equal_auditing_each_answer_alone(dataset, lines, threads, tmp_path):
    rng = random.Random(21)
    sample = []
    for kind, share in (("quote", 8), ("lines", 6), ("sources", 6)):
        sample += rng.sample([n for n, k in enumerate(dataset.kinds, start=1) if k == kind], share)
    table = threads.rows
    for number in sample:
        entry = lines[number - 1]
        assert entry is not None
        alone = _alone(entry, dataset.path.parent, tmp_path)
        expected = alone.table.reset_index(drop=True)
        outcome = threads.outcomes[number - 1]
        assert outcome.answer_id == entry["answer_id"] and len(outcome.rows) == len(expected)
        # the answer's own rows, dtypes included
        pd.testing.assert_frame_equal(outcome.rows.drop(columns=[ANSWER_ID, LINE]),
                                      expected.reindex(columns=outcome.rows.columns[2:]))
        # and the same values in the whole table (whose columns are all object: it has error rows)
        batch = table[table[LINE] == number]
        assert (batch[ANSWER_ID] == entry["answer_id"]).all()
        batch = batch.drop(columns=[ANSWER_ID, LINE]).reset_index(drop=True)
        pd.testing.assert_frame_equal(batch, expected.reindex(columns=batch.columns), check_dtype=False)
        assert [{k: v for k, v in r.items() if k not in (ANSWER_ID, LINE)} for r in outcome.records] == \
            records(alone.table, alone.document)
        assert (outcome.status, outcome.reasons) == (alone.decision.status, alone.decision.reasons)


@pytest.mark.cluster
def test_a_local_cluster_of_2_workers_equals_threads_row_for_row(dataset, threads):
    processes = run_batch(read_dataset(dataset.path), scheduler="processes", locate_only=True, workers=2)
    pd.testing.assert_frame_equal(processes.rows, threads.rows)
    pd.testing.assert_frame_equal(processes.decisions, threads.decisions)
    assert [o.records for o in processes.outcomes] == [o.records for o in threads.outcomes]


def test_cli_batch_writes_every_row_and_decision(dataset, threads, recorded_cache, tmp_path):
    rows, decisions = tmp_path / "rows.jsonl", tmp_path / "decisions.jsonl"
    result = CliRunner().invoke(cli.main, ["batch", str(dataset.path), "--locate-only", "--output", str(rows),
                                           "--decisions", str(decisions)])
    assert result.exit_code == 1, result.output
    counts = threads.counts()
    invalid = sum(kind in MALFORMED for kind in dataset.kinds)
    assert (f"{N} answers, {len(threads.rows)} rows: {counts['ACCEPT']} ACCEPT, {counts['REVIEW']} REVIEW, "
            f"{counts['REJECT']} REJECT ({invalid} invalid lines)") in result.output
    written = [json.loads(line) for line in decisions.read_text(encoding="utf-8").splitlines()]
    assert written == [o.decision for o in threads.outcomes]
    records_written = [json.loads(line) for line in rows.read_text(encoding="utf-8").splitlines()]
    assert len(records_written) == len(threads.rows)
    assert records_written == json.loads(json.dumps([r for o in threads.outcomes for r in o.records]))
