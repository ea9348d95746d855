"""An interrupted batch resumes (`parts.py`, `run_batch(parts=, resume=)`, `citeaudit batch --resume`):
finished partitions are kept whole or discarded, never half-kept; the rest is audited again; the
outputs are those of an uninterrupted run; no recorded answer is asked for again."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from citeaudit import AuditOptions, InputError, read_dataset
from citeaudit.judge.cache import canonical_json, read_recording, sha256_hex
from citeaudit.pipeline import batch
from citeaudit.pipeline.parts import parts_folder

ROOT = Path(__file__).resolve().parents[1]
QUOTES = json.loads((ROOT / "data" / "rfc7519_citations.json").read_text(encoding="utf-8"))
EXAMPLE = ROOT / "data" / "batch" / "example.jsonl"


def _outputs(result: batch.BatchResult) -> tuple[str, str]:
    rows = "".join(json.dumps(r, ensure_ascii=False) + "\n" for o in result.outcomes for r in o.records)
    return rows, "".join(json.dumps(o.decision, ensure_ascii=False) + "\n" for o in result.outcomes)


def test_a_resumed_batch_keeps_the_whole_partitions_and_audits_the_others(tmp_path, recorded_cache, monkeypatch):
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    dataset = tmp_path / "answers.jsonl"
    dataset.write_text("\n".join([*lines, "{not json", *lines]) + "\n", encoding="utf-8")  # an invalid line too
    items, settings, folder = read_dataset(dataset), AuditOptions.from_env(), tmp_path / "rows.jsonl.parts"
    whole = batch.run_batch(items, settings, parts=folder, partition_size=2)
    parts = sorted(folder.glob("part-*.jsonl"))
    assert len(parts) == 6 and (folder / "manifest.json").is_file()

    parts[1].unlink()  # never finished
    parts[2].write_text(parts[2].read_text(encoding="utf-8")[:-40], encoding="utf-8")  # cut short
    header, body = parts[3].read_text(encoding="utf-8").split("\n", 1)
    parts[3].write_text(header + "\n" + body.replace('"status": "REJECT"', '"status": "ACCEPT"'), encoding="utf-8")
    (folder / ".part-000004.jsonl.x.tmp").write_text("{", encoding="utf-8")  # a killed write's temporary file
    audited: list[list[int]] = []
    run = batch.audit_partition
    monkeypatch.setattr(batch, "audit_partition", lambda chunk, job: (audited.append([i.line for i in chunk]),
                                                                    run(chunk, job))[1])
    resumed = batch.run_batch(items, settings, parts=folder, partition_size=2, resume=True)

    assert resumed.resumed == 3 and sorted(audited) == [[3, 4], [5, 6], [7, 8]]
    pd.testing.assert_frame_equal(resumed.rows, whole.rows)
    assert _outputs(resumed) == _outputs(whole)
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", *(p.name for p in parts), "started"]

    for other in (dict(options=AuditOptions.from_env(threshold=0.5)), dict(partition_size=3)):
        arguments = {"options": settings, "partition_size": 2} | other
        with pytest.raises(InputError, match="holds the partitions of another batch"):
            batch.run_batch(items, parts=folder, resume=True, **arguments)
    batch.run_batch(items, settings, parts=folder, partition_size=3)  # without resume: starts again
    assert len(list(folder.glob("part-*.jsonl"))) == 4


def test_a_batch_whose_partitions_were_all_kept_starts_no_cluster(tmp_path, recorded_cache, monkeypatch):
    """Resumed on `processes` after every partition finished: nothing left to audit, so no
    LocalCluster is started (and nothing shipped to one); the outputs are the kept ones."""
    from citeaudit.pipeline import scheduling

    items, settings, folder = read_dataset(EXAMPLE), AuditOptions.from_env(), tmp_path / "parts"
    whole = batch.run_batch(items, settings, parts=folder, partition_size=2)
    monkeypatch.setattr(scheduling, "local_cluster", lambda workers=None: pytest.fail("a cluster was started"))
    resumed = batch.run_batch(items, settings, "processes", parts=folder, partition_size=2, resume=True)
    assert resumed.resumed == 3 and _outputs(resumed) == _outputs(whole)


def _dataset(path: Path, answers: int) -> Path:
    """Answers of two quote citations each, every claim its own (no request repeats); the scripted
    endpoint answers by the claim."""
    lines = []
    for i in range(answers):
        citations = [{**QUOTES[(2 * i + k) % len(QUOTES)], "id": f"c{k}",
                      "claim": f"{QUOTES[(2 * i + k) % len(QUOTES)]['claim']} (answer {i}) answer={'ABC'[(i + k) % 3]}"}
                     for k in range(2)]
        lines.append(json.dumps({"answer_id": f"a{i}", "source": "rfc7519.txt", "citations": citations}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.cli
def test_a_killed_batch_resumes_to_the_outputs_of_an_uninterrupted_one(scripted, tmp_path):
    endpoint = scripted(0.1)
    dataset = _dataset(tmp_path / "answers.jsonl", 32)  # 16 partitions of 2 answers, 4 requests each

    def command(name: str) -> tuple[list[str], dict[str, str], Path]:
        out = tmp_path / name
        out.mkdir()
        env = {**os.environ, "OPENAI_BASE_URL": endpoint.url, "OPENAI_API_KEY": "x", "CITEAUDIT_GRAMMAR": "0",
               "CITEAUDIT_CACHE_DIR": str(out / "cache")}
        return [sys.executable, "-m", "citeaudit.surfaces.cli", "batch", str(dataset), "--model", "scripted",
                "--strategy", "choice", "--cache-mode", "record", "--concurrency", "1",
                "--output", str(out / "rows.jsonl"), "--decisions", str(out / "decisions.jsonl")], env, out

    killed, env, out = command("killed")
    parts = parts_folder(out / "rows.jsonl")
    running = subprocess.Popen(killed, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while len(list(parts.glob("part-*.jsonl"))) < 5 and running.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    running.send_signal(signal.SIGKILL)
    running.wait()
    finished = len(list(parts.glob("part-*.jsonl")))
    assert 5 <= finished < 16 and not (out / "rows.jsonl").exists(), "the batch was not killed halfway"

    recorded = {r["messages_sha256"] for r in read_recording(out / "cache" / "local" / "scripted.jsonl")}
    asked_before = endpoint.requests
    resumed = subprocess.run([*killed, "--resume"], env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 1, resumed.stderr  # some answers are not ACCEPT
    assert f"resumed: {finished} finished partitions kept" in resumed.stderr
    asked_again = {sha256_hex(canonical_json(body["messages"])) for body in endpoint.bodies[asked_before:]}
    assert asked_again and not asked_again & recorded  # nothing recorded was asked for again
    assert not parts.exists()

    whole, env, fresh = command("uninterrupted")
    done = subprocess.run(whole, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stderr
    for name in ("rows.jsonl", "decisions.jsonl"):
        assert (out / name).read_bytes() == (fresh / name).read_bytes()
