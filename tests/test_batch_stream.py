"""A batch in flat memory (`stream.py`, `scheduling.py`, `iter_dataset`): the streamed batch gives
the rows, decisions, counts and exit code of the batch that keeps every outcome; the dataset is
read line by line and only a window of partitions is in flight."""

import json
import os
from pathlib import Path

import pytest

from citeaudit import AuditOptions, read_dataset
from citeaudit.citations import dataset
from citeaudit.pipeline import scheduling
from citeaudit.pipeline.batch import run_batch
from citeaudit.pipeline.stream import restore_result, stream_batch, write_outputs

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "data" / "batch" / "example.jsonl"


@pytest.fixture
def answers(tmp_path) -> Path:
    """The example's answers three times over (ids made unique), with an invalid line and a repeat."""
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    out = []
    for copy in range(3):
        for line in lines:
            record = json.loads(line)
            record["answer_id"] = f"{record['answer_id']}-{copy}"
            out.append(json.dumps(record))
    out[4:4] = ["{not json", out[0]]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("locate_only", [True, False])
def test_the_streamed_batch_writes_what_the_kept_batch_holds(answers, tmp_path, recorded_cache, locate_only):
    settings = AuditOptions.from_env(cache_mode="replay")
    kept = run_batch(read_dataset(answers), settings, locate_only=locate_only, partition_size=3)
    summary = stream_batch(answers, settings, parts=tmp_path / "parts", locate_only=locate_only, partition_size=3)
    write_outputs(summary, tmp_path / "rows.jsonl", tmp_path / "decisions.jsonl")
    kept.write_rows(tmp_path / "kept_rows.jsonl")
    kept.write_decisions(tmp_path / "kept_decisions.jsonl")
    for name in ("rows.jsonl", "decisions.jsonl"):
        assert (tmp_path / name).read_bytes() == (tmp_path / f"kept_{name}").read_bytes(), name
    assert dict(summary.counts) == kept.counts() and summary.exit_code == kept.exit_code == 1
    assert (summary.answers, summary.rows, summary.invalid) == (len(kept.outcomes), len(kept.rows), 2)
    assert summary.partitions == -(-summary.answers // 3)
    assert restore_result(summary).rows.equals(kept.rows)


def test_the_dataset_is_read_line_by_line(answers, monkeypatch):
    read: list[int] = []
    lines = dataset.raw_lines
    monkeypatch.setattr(dataset, "raw_lines", lambda path: (read.append(len(read)) or raw for raw in lines(path)))
    items = dataset.iter_dataset(answers)
    first = next(items)
    assert first.line == 1 and len(read) == 1  # one line read for the first answer, not the file
    assert [item.line for item in [first, *items]] == [item.line for item in read_dataset(answers)]


def test_only_a_window_of_partitions_is_in_flight():
    pulled, done, most = [0], [0], [0]

    def chunks():
        for index in range(200):
            pulled[0] += 1
            most[0] = max(most[0], pulled[0] - done[0])
            yield index, [index]

    def finished(index, outcomes):
        done[0] += 1

    scheduling.run_threads(chunks(), lambda chunk, job: (chunk, []), None, finished)
    assert done[0] == 200 and most[0] <= scheduling.IN_FLIGHT * (os.cpu_count() or 1)


@pytest.mark.parametrize("problem", ["missing dataset", "empty dataset", "bad reviews"])
def test_a_batch_without_output_leaves_no_scratch_folder(tmp_path, monkeypatch, recorded_cache, problem, answers):
    import tempfile

    from click.testing import CliRunner

    from citeaudit.surfaces import cli

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    (tmp_path / "reviews.jsonl").write_text('{"citation_id": "x"}\n', encoding="utf-8")  # a review without its fields
    args = {"missing dataset": [str(tmp_path / "nowhere.jsonl")], "empty dataset": [str(tmp_path / "empty.jsonl")],
            "bad reviews": [str(answers), "--reviews", str(tmp_path / "reviews.jsonl")]}[problem]
    result = CliRunner().invoke(cli.main, ["batch", *args, "--locate-only"])
    assert result.exit_code == 2, result.output
    assert list(scratch.iterdir()) == []
    ok = CliRunner().invoke(cli.main, ["batch", str(answers), "--locate-only"])
    assert ok.exit_code == 1 and list(scratch.iterdir()) == [], ok.output  # removed after a batch that ran too
