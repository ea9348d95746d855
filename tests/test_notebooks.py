"""The notebooks: built from their percent scripts, committed clean, and every one runs end to end in
replay mode with no key and no reachable endpoint; notebook 01 audits whatever file papermill gives it."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, ROOT, docs_text

# nbformat, papermill and nbclient are imported by the tests that run notebooks (marked `notebooks`),
# so that `make check` collects this module without them (about 2 s; nbformat's validator builds a
# grammar on import); the fast tests read a notebook as the JSON it is

NOTEBOOK_DIR = ROOT / "notebooks"
BUILD = ROOT / "tools" / "build_notebooks.py"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
SCRIPTS = sorted(NOTEBOOK_DIR.glob("*.py"))


def build(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BUILD), *args], check=False, capture_output=True, text=True)


def test_every_notebook_has_its_script():
    assert [p.name for p in NOTEBOOKS][:2] == ["00_audit_your_answer.ipynb", "01_rfc7519_audit.ipynb"]
    assert [p.stem for p in SCRIPTS] == [p.stem for p in NOTEBOOKS]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_is_valid_python(script):
    compile(script.read_text(encoding="utf-8"), str(script), "exec")


@pytest.mark.notebooks
def test_committed_notebooks_are_what_the_scripts_build():
    result = build("--check")
    assert result.returncode == 0, result.stderr


@pytest.mark.notebooks
def test_check_names_a_stale_notebook_and_build_fixes_it(tmp_path):
    for path in [*SCRIPTS, *NOTEBOOKS]:
        shutil.copy(path, tmp_path)
    script = tmp_path / "02_line_citations.py"
    script.write_text(script.read_text(encoding="utf-8") + "\n# %%\nprint('one more cell')\n", encoding="utf-8")
    stale = build("--check", "--notebooks", str(tmp_path))
    assert stale.returncode == 1
    assert "02_line_citations.ipynb" in stale.stderr and "01_rfc7519_audit" not in stale.stderr
    assert build("--notebooks", str(tmp_path)).returncode == 0
    assert build("--check", "--notebooks", str(tmp_path)).returncode == 0
    first = (tmp_path / "02_line_citations.ipynb").read_bytes()
    (tmp_path / "02_line_citations.ipynb").unlink()
    assert build("--notebooks", str(tmp_path)).returncode == 0
    assert (tmp_path / "02_line_citations.ipynb").read_bytes() == first, "a build must be byte-identical"


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.notebooks
def test_notebooks_are_valid_nbformat():
    import nbformat

    for path in NOTEBOOKS:
        nbformat.validate(nbformat.read(path, as_version=4))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_clean(path):
    nb = read_json(path)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    dirty = [i for i, c in enumerate(nb["cells"]) if c in code and (c["outputs"] or c["execution_count"])]
    assert dirty == [], f"{path.name}: cells {dirty} keep outputs; edit the .py and run `make notebooks`"
    assert "parameters" in code[0]["metadata"].get("tags", []), "the first code cell is the parameters cell"
    assert nb["metadata"]["kernelspec"]["name"] == "python3"


@pytest.fixture
def replay_env(tmp_path, monkeypatch, recorded_copy):
    """Replay from a private copy of the recordings; no key, nothing listening at the endpoint.

    The kernels are subprocesses: PYTHONPATH makes them import this checkout's package."""
    cache = recorded_copy(calibrations=False)  # the recordings alone, the store built once per run (conftest)
    monkeypatch.setenv("CITEAUDIT_CACHE_DIR", str(cache))
    monkeypatch.setenv("CITEAUDIT_CACHE_MODE", "replay")
    monkeypatch.setenv("CITEAUDIT_REVIEW_DIR", str(tmp_path / "reviews"))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])))
    return tmp_path


def outputs_text(nb) -> str:
    """Everything the code cells showed: streams, plain text and HTML of results and displays."""
    parts = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.outputs:
            parts.append(output.get("text", ""))
            data = output.get("data", {})
            parts += [data.get("text/plain", ""), data.get("text/html", "")]
    return "\n".join(parts)


def assert_ran_cleanly(nb) -> None:
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    text = outputs_text(nb)
    assert "No recorded answer" not in text
    assert "Consider using IPython.display.IFrame" not in text  # a pink warning box under the dashboard


@pytest.mark.notebooks
@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if not p.name.startswith("04_")], ids=lambda p: p.name)
def test_notebook_executes_in_replay_mode(path, replay_env):
    """Every notebook runs end to end as committed; 04, the slowest, in its own test below (with its
    defaults, the public sets included, as committed), not twice."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    assert_ran_cleanly(nb)


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if not p.name.startswith("04_")], ids=lambda p: p.name)
def test_notebook_ends_with_a_next_cell(path):
    last = read_json(path)["cells"][-1]
    assert last["cell_type"] == "markdown" and "".join(last["source"]).startswith("## Next"), \
        f"{path.name}: the last cell is not '## Next'"


@pytest.mark.notebooks
def test_notebook_00_explains_a_new_citation_file(replay_env):
    """The example file has a replayed verdict, a near quote and a fabricated quote, every judged one
    recorded: a newcomer's first audit has no judge error (issue 32), and section 5 says so."""
    import nbformat
    from nbclient import NotebookClient

    path = NOTEBOOK_DIR / "00_audit_your_answer.ipynb"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    assert_ran_cleanly(nb)
    text = outputs_text(nb)
    assert "model says verified, waits for review" in text  # audience: recorded, not confident
    assert "judge error" not in text and "Every citation with evidence has a recorded answer" in text
    assert re.search(r"<del [^>]*>MUST</del> <ins [^>]*>SHOULD</ins>", text)  # the near quote's diff
    assert "Not in the source" in text  # signature_report, with its closest passage
    assert "\nREJECT\n" in text


@pytest.mark.notebooks
def test_papermill_audits_another_citation_file(replay_env):
    import nbformat
    import papermill

    citations = json.loads((DATA / "rfc7519_citations.json").read_text(encoding="utf-8"))
    chosen = ("sig_reporting", "clock_skew", "iat_future")  # fabricated, quoted, claim-only
    subset = replay_env / "three_citations.json"
    subset.write_text(json.dumps([c for c in citations if c["id"] in chosen]), encoding="utf-8")
    others = [c["id"] for c in citations if c["id"] not in chosen]
    assert "aud_reject" in others  # notebook 01's default HIGHLIGHT is not in the file

    out = replay_env / "out.ipynb"
    papermill.execute_notebook(str(NOTEBOOK_DIR / "01_rfc7519_audit.ipynb"), str(out),
                               parameters={"CITATIONS": str(subset)}, kernel_name="python3",
                               cwd=str(NOTEBOOK_DIR), progress_bar=False)
    nb = nbformat.read(out, as_version=4)
    assert_ran_cleanly(nb)
    assert any("injected-parameters" in c.metadata.get("tags", []) for c in nb.cells)
    text = outputs_text(nb)
    assert "3 citations" in text
    for cid in chosen:
        assert cid in text, f"{cid} of the given file is not shown"
    for cid in others:
        assert cid not in text, f"{cid} is not in the given file but is shown"
    assert "clock_skew: " + next(c["claim"] for c in citations if c["id"] == "clock_skew") in text  # highlighted


def _papermill(name: str, out, **parameters):
    import nbformat
    import papermill

    papermill.execute_notebook(str(NOTEBOOK_DIR / name), str(out), parameters=parameters, kernel_name="python3",
                               cwd=str(NOTEBOOK_DIR), progress_bar=False)
    nb = nbformat.read(out, as_version=4)
    assert any("injected-parameters" in c.metadata.get("tags", []) for c in nb.cells)
    return nb


@pytest.mark.notebooks
def test_papermill_runs_notebook_00_on_another_file(replay_env):
    citations = json.loads((DATA / "rfc7519_citations.json").read_text(encoding="utf-8"))
    mine = replay_env / "mine.json"
    mine.write_text(json.dumps([c for c in citations if c["id"] in ("clock_skew", "sig_reporting")]), encoding="utf-8")
    nb = _papermill("00_audit_your_answer.ipynb", replay_env / "out.ipynb", CITATIONS=str(mine))
    assert_ran_cleanly(nb)  # both are recorded (or need no model): no miss
    text = outputs_text(nb)
    assert "clock_skew" in text and "sig_reporting" in text and "subject_scope" not in text
    assert "nothing to record" in text


@pytest.mark.notebooks
def test_papermill_runs_notebook_02_on_another_answer(replay_env):
    answer = replay_env / "answer.txt"
    answer.write_text("The run moved to a date nobody wrote down [L9].\n", encoding="utf-8")
    nb = _papermill("02_line_citations.ipynb", replay_env / "out.ipynb", BROKEN_ANSWER=str(answer))
    assert_ran_cleanly(nb)
    assert "The run moved to a date nobody wrote down" in outputs_text(nb)


@pytest.mark.notebooks
def test_papermill_runs_notebook_03_on_another_contract(replay_env):
    folder = replay_env / "contract"
    shutil.copytree(DATA / "contract", folder)
    answer = json.loads((folder / "answer.json").read_text(encoding="utf-8"))
    answer["claims"][0]["text"] += " (edited)"
    (folder / "answer.json").write_text(json.dumps(answer), encoding="utf-8")
    nb = _papermill("03_acceptance_contract.ipynb", replay_env / "out.ipynb", CONTRACT_DIR=str(folder))
    assert_ran_cleanly(nb)
    assert "as recorded: REVIEW" in outputs_text(nb)  # the edited claim makes the stored review stale


@pytest.mark.notebooks
def test_papermill_runs_notebook_04_on_another_labelled_set(replay_env):
    labelled = [["rfc7519.txt", str(DATA / "eval_rfc7519.json")]]
    count = len(json.loads((DATA / "eval_rfc7519.json").read_text(encoding="utf-8")))
    nb = _papermill("04_threshold_tuning.ipynb", replay_env / "out.ipynb", LABELLED=labelled, WITH_PUBLIC=False)
    assert_ran_cleanly(nb)
    text = outputs_text(nb)
    assert f"{count} labelled citations" in text and "46 labelled" not in text


@pytest.mark.notebooks
def test_notebook_04_holds_out_each_domain_as_calibrate_does(replay_env):
    """It runs as committed (its defaults, the public sets included) and its side-by-side table shows,
    strategy by strategy, the shares of the table of docs/measurements/judge-quality.md (what `make
    calibrate-qwen` prints): one procedure, one set of numbers on both surfaces. Without the public data
    it runs on the project's sets alone, and the documented figures are not compared."""
    if not (ROOT.parent / "shared" / "data" / "public").is_dir():
        assert_ran_cleanly(_papermill("04_threshold_tuning.ipynb", replay_env / "out.ipynb", WITH_PUBLIC=False))
        pytest.skip("no public data beside the checkout: ran without it, the documented figures not compared")
    readme = docs_text("measurements/judge-quality.md")
    rows = re.findall(r"^\| (examples|yesno|panel|panel\+examples) \| (\S+%) \| (\S+%) \| \S+ \((\S+%)\) "
                      r"\| \S+ \((\S+%)\) \| \S+ \((\S+%)\) \| (?:\S+ \((\S+%)\) at \S+|none reaches the target) \|$",
                      readme, flags=re.M)
    assert [r[0] for r in rows] == ["examples", "yesno", "panel", "panel+examples"]
    rows = [(*r[:-1], r[-1] or "-") for r in rows]  # no threshold reaches the target: no share ("-")
    # with the shipped calibrations (replay_env copies the recordings alone)
    shutil.copytree(ROOT / "cache" / "calibration", Path(os.environ["CITEAUDIT_CACHE_DIR"]) / "calibration")
    nb = _papermill("04_threshold_tuning.ipynb", replay_env / "out.ipynb", TARGET=0.95)  # the default, stated
    assert_ran_cleanly(nb)
    text = outputs_text(nb)
    # the shipped calibrations were fitted on these very recordings: used as they are, not refitted
    # (a fit gives them back: tests/test_calibrate.py), and the numbers are those documented
    assert "fitted here: none" in text
    for strategy, *shares in rows:
        cells = r"\s*".join(rf"<td [^>]*>{re.escape(share)}</td>" for share in shares)
        assert re.search(rf">{re.escape(strategy)}</th>\s*{cells}", text), f"{strategy}: {shares} not shown"


@pytest.mark.notebooks
def test_papermill_runs_notebook_05_on_another_file(replay_env):
    citations = json.loads((DATA / "rfc7519_citations.json").read_text(encoding="utf-8"))
    mine = replay_env / "queue.json"
    mine.write_text(json.dumps([c for c in citations if c["id"] in ("aud_reject", "iat_future")]), encoding="utf-8")
    nb = _papermill("05_review_queue.ipynb", replay_env / "out.ipynb", CITATIONS=str(mine))
    assert_ran_cleanly(nb)
    text = outputs_text(nb)
    assert "2 citations wait for review" in text and "epoch_seconds" not in text


@pytest.mark.notebooks
def test_papermill_runs_notebook_09_for_the_shipped_judge(replay_env):
    """Offline: every call of the shipped Qwen judge is recorded; its calibration (none is copied
    here) is fitted, saved in the user cache and used by the next audit; nothing else is written."""
    nb = _papermill("09_bring_your_own_judge.ipynb", replay_env / "out.ipynb", LIMIT=3, REPEATS=0)
    assert_ran_cleanly(nb)
    text = outputs_text(nb)
    assert re.search(r"(\d+) calls \(3 per judged citation\), \1 already recorded, 0 to ask", text)
    assert "qwen2.5-coder-1.5b-instruct-q4_k_m / panel (shipped)" in text  # the side-by-side table
    assert any("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    cache = Path(os.environ["CITEAUDIT_CACHE_DIR"])  # replay_env's copy of the recordings
    saved = cache / "local" / "calibration" / "qwen2.5-coder-1.5b-instruct-q4_k_m.panel.json"
    assert f"saved to {saved}" in text and saved.is_file()
    assert "the calibration of qwen2.5-coder-1.5b-instruct-q4_k_m / panel" in text and "no calibration" not in text
    for shipped in (ROOT / "cache").glob("*.jsonl"):  # the recordings it read are as they were
        assert (cache / shipped.name).read_bytes() == shipped.read_bytes()
