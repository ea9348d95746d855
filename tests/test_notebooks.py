"""Every notebook runs end to end in replay mode, with no key and no reachable endpoint."""

import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert [p.name for p in NOTEBOOKS][:1] == ["01_rfc7519_audit.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_clean(path):
    nb = nbformat.read(path, as_version=4)
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert dirty == [], f"{path.name}: cells {dirty} keep outputs; run tools/make_notebooks.py or strip them"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_in_replay_mode(path, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    for recording in (ROOT / "cache").glob("*.jsonl"):
        shutil.copy(recording, cache)
    monkeypatch.setenv("CITEAUDIT_CACHE_DIR", str(cache))
    monkeypatch.setenv("CITEAUDIT_CACHE_MODE", "replay")
    monkeypatch.setenv("CITEAUDIT_REVIEW_DIR", str(tmp_path / "reviews"))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "No recorded answer" not in text


def test_notebooks_are_what_the_generator_writes(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "NOTEBOOK_DIR": str(tmp_path)}
    subprocess.run([sys.executable, str(ROOT / "tools" / "make_notebooks.py")], check=True, env=env)
    generated = sorted(p.name for p in tmp_path.glob("*.ipynb"))
    assert generated == [p.name for p in NOTEBOOKS]
    for name in generated:
        assert (tmp_path / name).read_text() == (ROOT / "notebooks" / name).read_text(), \
            f"{name} differs from tools/make_notebooks.py: edit the generator, then rerun it"
