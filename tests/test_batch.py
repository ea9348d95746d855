"""Batches of answers (`citeaudit batch`, batch.py): the dataset format line by line, rows equal to
auditing each answer alone, the same results on a real LocalCluster, exit codes."""

import json
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from citeaudit import AuditOptions, AuditRun, load_line_answer, read_dataset
from citeaudit.citations.dataset import ANSWER_ID, LINE
from citeaudit.judge.judge import Judge
from citeaudit.pipeline.audit import audit_lines, audit_quotes, audit_source_files
from citeaudit.pipeline.batch import audit_dataset, run_batch
from citeaudit.pipeline.jsonl import records
from citeaudit.surfaces import cli

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
EXAMPLE = DATA / "batch" / "example.jsonl"
QUOTES = json.loads((DATA / "rfc7519_citations.json").read_text(encoding="utf-8"))
CONTRACT = {name: json.loads((DATA / "contract" / f"{name}.json").read_text(encoding="utf-8"))
            for name in ("answer", "sources", "reviews")}
FIELD_NOTE = str(DATA / "lines" / "field_note.txt")
LINE_ANSWERS = {name: (DATA / "lines" / f"{name}.txt").read_text(encoding="utf-8")
                for name in ("good_answer", "broken_answer")}

MALFORMED = [
    '{"answer_id": "bad-json", "source": "rfc7519.txt", "citations": [',  # cut short
    json.dumps({"answer_id": "no-source", "citations": QUOTES[:1], "document": None, "sources": None}),
    json.dumps({"answer_id": "missing-key", "source": "rfc7519.txt"}),  # no citations: no format
    json.dumps({"answer_id": "no-answer", "document": FIELD_NOTE}),
    json.dumps({"answer_id": "unknown-source", "source": "rfc99999-not-here.txt", "citations": QUOTES[:2]}),
    json.dumps({"answer_id": "bad-record", "source": "rfc7519.txt", "citations": [{"id": "x", "claim": "c"}]}),
    json.dumps(["not", "an", "object"]),
    json.dumps({"answer_id": "jwt-times", "source": "rfc7519.txt", "citations": QUOTES[:1]}),  # repeats line 1
]


def _generated(n: int, seed: int = 7) -> list[dict]:
    """n answers of the three formats over recorded inputs (RFC 7519 quotes, the field note, the contract)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            picked = rng.sample(QUOTES, rng.randint(1, 4))
            out.append({"answer_id": f"q{i}", "source": "rfc7519.txt", "citations": picked})
        elif kind == 1:
            out.append({"answer_id": f"l{i}", "document": FIELD_NOTE, "answer": rng.choice(list(LINE_ANSWERS.values()))})
        else:
            out.append({"answer_id": f"s{i}", **CONTRACT})
    return out


def _write(path: Path, lines: list) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in lines),
                    encoding="utf-8")
    return path


@pytest.fixture
def mixed(tmp_path) -> Path:
    """The example's five answers, then malformed lines, then a valid line after them."""
    good = EXAMPLE.read_text(encoding="utf-8").splitlines()
    return _write(tmp_path / "mixed.jsonl", [*good, *MALFORMED, "", json.dumps(_generated(1)[0] | {"answer_id": "last"})])


def _judge() -> Judge:
    return AuditRun(AuditOptions.from_env(cache_mode="replay")).judge


def test_mixed_formats_and_malformed_lines_give_error_rows_and_the_others_go_on(mixed, recorded_cache):
    items = read_dataset(mixed)
    assert len(items) == 5 + len(MALFORMED) + 1  # the blank line is skipped
    result = run_batch(items, locate_only=True, partition_size=3)
    decisions = result.decisions.set_index(LINE)  # a repeated answer_id is an error row of its own
    assert list(result.decisions[ANSWER_ID][:5]) == ["jwt-times", "jwt-claims", "field-note-good",
                                                     "field-note-broken", "contract"]
    assert decisions.loc[5, "status"] == "ACCEPT"  # the contract
    assert decisions.loc[1, "status"] == "REJECT"  # a fabricated quote
    assert decisions.loc[15, ANSWER_ID] == "last"  # the answer after the bad lines (and a blank one) was audited
    assert decisions.loc[15, "status"] in ("REVIEW", "REJECT") and (result.rows[ANSWER_ID] == "last").sum() >= 1
    bad = result.decisions.iloc[5:5 + len(MALFORMED)]
    assert (bad["status"] == "REJECT").all()
    for (_, row), number in zip(bad.iterrows(), range(6, 6 + len(MALFORMED))):
        assert row[LINE] == number and len(row["reasons"]) == 1
        assert row["reasons"][0].startswith(f"line {number}: "), row["reasons"]
    reasons = {row[ANSWER_ID]: row["reasons"][0] for _, row in bad.iterrows()}
    assert "not valid JSON" in reasons["line 6"]
    assert "cannot tell the citation format" in reasons["no-source"]
    assert "cannot tell the citation format" in reasons["missing-key"]
    assert "field 'answer'" in reasons["no-answer"] and "Field required" in reasons["no-answer"]
    assert "rfc99999-not-here.txt" in reasons["unknown-source"]
    assert "citations.0.quote" in reasons["bad-record"]
    assert "a JSON object is expected" in reasons["line 12"]
    assert "answer_id 'jwt-times' repeats line 1" in reasons["jwt-times"]
    # one error row per bad line in the citation table, with the same reason
    rows = result.rows
    errors = rows[rows["id"].isna()]
    assert list(errors[LINE]) == list(range(6, 6 + len(MALFORMED)))
    assert errors["error"].str.startswith("line ").all()
    assert list(rows.columns[:3]) == [ANSWER_ID, LINE, "id"]
    assert result.exit_code == 1


def _alone(entry: dict, judge: Judge | None, locate_only: bool):
    options: dict[str, Any] = dict(judge=judge, locate_only=locate_only)
    if "citations" in entry:
        return audit_quotes(entry["source"], entry["citations"] and _citations(entry["citations"]), **options)
    if "document" in entry:
        return audit_lines(_line_answer(entry), **options)
    return audit_source_files(*_contract_files(), **options)


def _citations(raw: list[dict]):
    from citeaudit.citations.records import QuoteCitation

    return [QuoteCitation.model_validate(r).to_citation() for r in raw]


def _line_answer(entry: dict):
    name = next(k for k, v in LINE_ANSWERS.items() if v == entry["answer"])
    return load_line_answer(entry["document"], DATA / "lines" / f"{name}.txt")


def _contract_files():
    return [DATA / "contract" / f"{name}.json" for name in ("answer", "sources", "reviews")]


@pytest.mark.parametrize("locate_only", [True, False], ids=["locate-only", "replay"])
def test_rows_equal_auditing_each_answer_alone(tmp_path, recorded_cache, locate_only):
    entries = _generated(60)
    result = audit_dataset(_write(tmp_path / "gen.jsonl", entries), locate_only=locate_only)
    assert len(result.outcomes) == 60 and result.rows[LINE].is_monotonic_increasing
    judge = None if locate_only else _judge()
    for entry in [*random.Random(3).sample(entries, 12), entries[0], entries[1], entries[2]]:
        alone = _alone(entry, judge, locate_only)
        batch = result.rows[result.rows[ANSWER_ID] == entry["answer_id"]].drop(columns=[ANSWER_ID, LINE])
        expected = alone.table.reset_index(drop=True).reindex(columns=batch.columns)
        pd.testing.assert_frame_equal(batch.reset_index(drop=True), expected)
        outcome = next(o for o in result.outcomes if o.answer_id == entry["answer_id"])
        assert [{k: v for k, v in r.items() if k not in (ANSWER_ID, LINE)} for r in outcome.records] == \
            records(alone.table, alone.document)
        assert (outcome.status, outcome.reasons) == (alone.decision.status, alone.decision.reasons)
    if not locate_only:
        assert result.rows["model"].notna().any()  # the judge's recorded answers were replayed


@pytest.mark.cluster
def test_processes_scheduler_equals_threads(mixed, recorded_cache):
    """A real LocalCluster of 2 worker processes: locate-only and a replay of the recordings."""
    items = read_dataset(mixed)
    for run in (dict(locate_only=True), dict(options=AuditOptions.from_env(cache_mode="replay"))):
        threads = run_batch(items, scheduler="threads", partition_size=2, **run)
        seen: list[int] = []
        processes = run_batch(items, scheduler="processes", partition_size=2, progress=seen.append, **run)
        assert sum(seen) == len(items)
        pd.testing.assert_frame_equal(processes.rows, threads.rows)
        pd.testing.assert_frame_equal(processes.decisions, threads.decisions)
        assert [o.records for o in processes.outcomes] == [o.records for o in threads.outcomes]
    assert threads.rows["model"].notna().any()


@pytest.fixture
def started(monkeypatch) -> SimpleNamespace:
    """Every LocalCluster started (real clusters): its number of worker processes (`workers`), and for
    each worker whether Dask's profiler samples it (`profiling`)."""
    import distributed

    seen = SimpleNamespace(workers=[], profiling=[])

    class Counted(distributed.LocalCluster):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen.workers.append(len(self.scheduler_info["workers"]))
            with distributed.Client(self) as client:
                found = client.run(lambda dask_worker: "profile" in dask_worker.periodic_callbacks)
            seen.profiling.extend(found.values())

    monkeypatch.setattr(distributed, "LocalCluster", Counted)
    return seen


@pytest.mark.cluster
def test_workers_sets_the_local_clusters_worker_processes(mixed, recorded_cache, started):
    """`workers=1` starts a LocalCluster of one worker process (not the default 2), with the same results,
    and without Dask's worker profiler (on Python 3.11 its sys._current_frames() can deadlock a worker)."""
    items = read_dataset(mixed)
    one = run_batch(items, scheduler="processes", locate_only=True, partition_size=4, workers=1)
    assert started.workers == [1] and started.profiling == [False]
    pd.testing.assert_frame_equal(one.rows, run_batch(items, locate_only=True).rows)
    pd.testing.assert_frame_equal(one.decisions, run_batch(items, locate_only=True).decisions)


@pytest.mark.parametrize("workers, scheduler, message", [
    (0, "processes", "1 or more worker processes, not 0"),
    (-2, "processes", "1 or more worker processes, not -2"),
    (10000, "processes", "workers 10000 is more worker processes than this machine can run usefully"),
    (2, "threads", "workers sets the worker processes of --scheduler processes"),
    (2, "tcp://127.0.0.1:9", "workers sets the worker processes of --scheduler processes"),
])
def test_workers_out_of_range_or_without_processes_is_an_input_error(workers, scheduler, message):
    from citeaudit.errors import InputError

    items = read_dataset(EXAMPLE)
    with pytest.raises(InputError, match=message):
        run_batch(items, scheduler=scheduler, locate_only=True, workers=workers)


@pytest.mark.cluster
def test_an_existing_scheduler_by_address_equals_threads(mixed, recorded_cache):
    from distributed import LocalCluster

    items = read_dataset(mixed)
    settings = AuditOptions.from_env(cache_mode="replay")
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=":0") as cluster:
        remote = run_batch(items, settings, cluster.scheduler_address)
    assert cluster.scheduler_address.startswith("tcp://")
    pd.testing.assert_frame_equal(remote.rows, run_batch(items, settings, "threads").rows)


def _run(args: list[str]):
    return CliRunner().invoke(cli.main, ["batch", *args])


def test_cli_writes_rows_and_decisions_and_exits_by_the_answers(tmp_path, recorded_cache, mixed):
    rows, decisions = tmp_path / "rows.jsonl", tmp_path / "decisions.jsonl"
    result = _run([str(EXAMPLE), "--output", str(rows), "--decisions", str(decisions)])
    assert result.exit_code == 1, result.output
    assert "5 answers, 15 rows: 1 ACCEPT, 2 REVIEW, 2 REJECT" in result.output
    written = [json.loads(line) for line in rows.read_text(encoding="utf-8").splitlines()]
    assert len(written) == 15 and written[0][ANSWER_ID] == "jwt-times" and written[0]["id"] == "epoch_seconds"
    assert [json.loads(line)["status"] for line in decisions.read_text(encoding="utf-8").splitlines()] == \
        ["REJECT", "REVIEW", "REVIEW", "REJECT", "ACCEPT"]
    accepted = _write(tmp_path / "ok.jsonl", [{"answer_id": "a", **CONTRACT}, {"answer_id": "b", **CONTRACT}])
    ok = _run([str(accepted), "--locate-only"])
    assert ok.exit_code == 0, ok.output
    bad = _run([str(mixed), "--locate-only"])
    assert bad.exit_code == 1, bad.output
    assert "(8 invalid lines)" in bad.output and "line 6: not valid JSON" in bad.output


def test_cli_usage_errors_exit_2(tmp_path, recorded_cache):
    missing = _run([str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and "cannot read the dataset" in missing.output
    (tmp_path / "empty.jsonl").write_text("\n\n", encoding="utf-8")
    empty = _run([str(tmp_path / "empty.jsonl")])
    assert empty.exit_code == 2 and "has no answers" in empty.output
    (tmp_path / "latin1.jsonl").write_bytes(b'{"answer_id": "\xe9"}\n')
    latin1 = _run([str(tmp_path / "latin1.jsonl")])  # one line that is not UTF-8 is that line's error row
    assert latin1.exit_code == 1 and "line 1: not UTF-8" in latin1.output
    unknown = _run([str(EXAMPLE), "--scheduler", "mpi"])
    assert unknown.exit_code == 2 and "not threads, processes" in unknown.output
    for workers in ("0", "-1"):
        none = _run([str(EXAMPLE), "--locate-only", "--scheduler", "processes", "--workers", workers])
        assert none.exit_code == 2 and f"1 or more worker processes, not {workers}" in none.output, none.output
    threads = _run([str(EXAMPLE), "--locate-only", "--workers", "3"])
    assert threads.exit_code == 2 and "workers sets the worker processes of --scheduler processes" in threads.output


@pytest.mark.cluster
def test_cli_workers_runs_that_many_processes(recorded_cache, tmp_path, started):
    decisions = tmp_path / "decisions.jsonl"
    result = _run([str(EXAMPLE), "--locate-only", "--scheduler", "processes", "--workers", "1",
                   "--decisions", str(decisions)])
    assert result.exit_code == 1, result.output
    assert started.workers == [1]
    assert "5 answers, 15 rows" in result.output
    threads = _run([str(EXAMPLE), "--locate-only", "--decisions", str(tmp_path / "threads.jsonl")])
    assert threads.exit_code == 1, threads.output
    assert decisions.read_text(encoding="utf-8") == (tmp_path / "threads.jsonl").read_text(encoding="utf-8")


def test_cli_judge_unreachable_exits_3(recorded_cache, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("CITEAUDIT_RETRIES", "0")
    monkeypatch.setenv("CITEAUDIT_TIMEOUT", "3")
    result = _run([str(EXAMPLE), "--cache-mode", "refresh", "--model", "no-such-model"])
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output


def test_cli_replay_misses_are_row_errors_with_how_to_record(recorded_cache):
    result = _run([str(EXAMPLE), "--model", "no-such-model"])
    assert result.exit_code == 1, result.output
    assert "error: No recorded answer" in result.output and "Record the missing answers with --cache-mode record" in result.output


def test_integer_answer_ids_are_text_and_other_types_are_errors():
    from citeaudit.citations.dataset import parse_line

    line = {"document": FIELD_NOTE, "answer": LINE_ANSWERS["good_answer"]}
    assert parse_line(json.dumps({"answer_id": 17, **line}), 1).answer_id == "17"
    for bad in (True, 1.5, None, ["x"]):
        item = parse_line(json.dumps({"answer_id": bad, **line}), 3)
        assert item.entry is None and item.error and item.error.startswith("line 3: field 'answer_id'")


def test_dataset_lines_are_what_an_editor_counts(tmp_path):
    """A BOM, a U+2028 or U+0085 inside a JSON string, CRLF endings and one line that is not UTF-8:
    every valid line is read, line numbers match the file's, the bad line is its own error (issue 21)."""
    good = {"answer_id": "a", "document": "data/lines/field_note.txt", "answer": "Odd\u2028text\u0085here [L2]."}
    other = {"answer_id": "b", "document": "data/lines/field_note.txt", "answer": "Another [L3]."}
    data = (b"\xef\xbb\xbf" + json.dumps(good, ensure_ascii=False).encode() + b"\r\n"
            + b'{"answer_id": "c\xff"}\n' + json.dumps(other).encode() + b"\n")
    path = tmp_path / "odd.jsonl"
    path.write_bytes(data)
    items = read_dataset(path)
    assert [(i.line, i.answer_id, i.error is None) for i in items] == [(1, "a", True), (2, "line 2", False),
                                                                         (3, "b", True)]
    assert "not UTF-8" in items[1].error and "\u2028" in items[0].entry.answer


def test_a_lone_surrogate_is_that_lines_error_and_the_batch_writes_its_outputs(tmp_path, recorded_cache):
    """JSON's "\\ud800" with no pair is not text: in an answer id or in any string of a line it is that
    line's error row, and every output is still written (it crashed the whole batch, exit 4)."""
    lines = ['{"answer_id": "a\\ud800b", "document": "data/lines/field_note.txt", "answer": "A fact [L2]."}',
             '{"answer_id": "b", "document": "data/lines/field_note.txt", "answer": "Odd \\udc00 [L2]."}',
             json.dumps({"answer_id": "c", **CONTRACT})]
    dataset = tmp_path / "surrogates.jsonl"
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, decisions, page = tmp_path / "rows.jsonl", tmp_path / "decisions.jsonl", tmp_path / "page.html"
    result = _run([str(dataset), "--locate-only", "--output", str(out), "--decisions", str(decisions),
                   "--html", str(page)])
    assert result.exit_code == 1, result.output
    statuses = [json.loads(line)["status"] for line in decisions.read_text(encoding="utf-8").splitlines()]
    assert statuses == ["REJECT", "REJECT", "ACCEPT"] and page.is_file() and out.is_file()
    assert "lone surrogate" in result.output


def test_an_answer_over_the_text_limit_is_its_lines_error(tmp_path, monkeypatch):
    """`lines --answer` refuses a text over the limit; inside a dataset the same text is that line's
    error, not audited (issue 21). The limit is lowered here to keep the test small."""
    from citeaudit.citations import dataset

    monkeypatch.setattr(dataset, "MAX_TEXT_BYTES", 1_000)
    long = {"answer_id": "long", "document": "data/lines/field_note.txt", "answer": "x" * 2_000 + " [L2]."}
    short = {"answer_id": "short", "document": "data/lines/field_note.txt", "answer": "A fact [L2]."}
    path = _write(tmp_path / "sizes.jsonl", [long, short])
    items = read_dataset(path)
    assert [i.error is None for i in items] == [False, True] and "over the 1,000-byte limit" in items[0].error


def test_a_datasets_sources_stay_in_its_folder_and_the_data_folders(tmp_path, recorded_cache):
    """A dataset is often written by the system under audit: a line naming /etc/passwd or a path up
    and out of its folder is that line's error, unless allowed explicitly; names in the data folders
    and files beside the dataset are read as before (issue 21)."""
    secret = tmp_path / "private" / "notes.txt"
    secret.parent.mkdir()
    secret.write_text("A private line.\nAnother one.\n", encoding="utf-8")
    folder = tmp_path / "datasets"
    folder.mkdir()
    (folder / "note.txt").write_text("Beside the dataset.\nSecond line.\n", encoding="utf-8")
    lines = [{"answer_id": "abs", "document": str(secret), "answer": "A fact [L1]."},
             {"answer_id": "up", "document": "../private/notes.txt", "answer": "A fact [L1]."},
             {"answer_id": "beside", "document": "note.txt", "answer": "A fact [L1]."},
             {"answer_id": "data", "source": "rfc7519.txt", "citations": []}]
    path = _write(folder / "d.jsonl", lines)
    confined = read_dataset(path)
    assert [i.error is None for i in confined] == [False, False, True, True]
    assert "outside the dataset's folder" in confined[0].error and "--allow-outside-sources" in confined[1].error
    assert all(i.error is None for i in read_dataset(path, allow_outside_sources=True))
    result = _run([str(path), "--locate-only"])
    assert "A private line" not in result.output and "outside the dataset's folder" in result.output


def test_the_dataset_stage_confines_sources_to_the_folders_it_is_given(tmp_path, monkeypatch):
    """`citations.dataset` reads no setting: a line's source is looked for in the folders passed
    (`dirs`) and confined to the dataset's folder and the data folders passed (`data_dirs`), never to
    CITEAUDIT_DATA_DIR; `citeaudit.read_dataset` passes the folders in force, as before (issue 51)."""
    from citeaudit.citations import dataset

    folder, data = tmp_path / "datasets", tmp_path / "data"
    folder.mkdir()
    data.mkdir()
    (data / "note51.txt").write_text("A line.\nAnother.\n", encoding="utf-8")
    path = _write(folder / "d.jsonl", [{"answer_id": "a", "source": "note51.txt", "citations": []}])
    monkeypatch.chdir(tmp_path)
    outside = dataset.read_dataset(path, dirs=[data])
    assert outside[0].error is not None and "outside the dataset's folder" in outside[0].error
    assert dataset.read_dataset(path, dirs=[data], data_dirs=[data])[0].error is None
    monkeypatch.setenv("CITEAUDIT_DATA_DIR", str(data))
    assert dataset.read_dataset(path, dirs=[data])[0].error is not None  # the setting is not the stage's
    assert read_dataset(path)[0].error is None  # the data folder in force, passed by the public loader
    monkeypatch.delenv("CITEAUDIT_DATA_DIR")
    monkeypatch.chdir(data)  # found in the working directory, which is not a data folder
    assert "outside the dataset's folder" in (read_dataset(path)[0].error or "")


def test_progress_shows_answers_and_partitions_of_the_total_with_rate_and_time_left(capsys):
    items = read_dataset(EXAMPLE)
    run_batch(items, locate_only=True, partition_size=2, progress=True)
    err = capsys.readouterr().err
    partitions = -(-len(items) // 2)
    final = err.replace("\r", "\n").strip().splitlines()[-1]
    assert f"{len(items)}/{len(items)}" in final and f"partitions={partitions}/{partitions}" in final, final
    assert "answer/s" in final and "<00:00" in final, final  # the rate and the time left
    told: list[int] = []
    run_batch(items, locate_only=True, partition_size=2, progress=told.append)
    assert sorted(told, reverse=True) == [2] * (len(items) // 2) + [1] * (len(items) % 2)  # once per partition
