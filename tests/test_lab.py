"""`make lab`: a headless JupyterLab server over notebooks/, its python3 kernel registered the way
the Makefile does it, and a notebook executed through a kernel that server started.

The server is real (the same `jupyter lab` command `make lab` runs, with no browser) and so is the
kernel; only the code cells are sent by a test client over the kernel's channels instead of by a
browser tab. About 10 s."""

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import ROOT

NOTEBOOK = ROOT / "notebooks" / "00_audit_your_answer.ipynb"
TOKEN = "citeaudit-test"
SERVER_CONFIG = ROOT / "notebooks" / "jupyter_server_config.json"  # what `make lab` passes as --config
SCRIPTS = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _api(base: str, path: str, method: str = "GET", body: dict | None = None, timeout: float = 10):
    request = urllib.request.Request(f"{base}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        text = response.read().decode()
        return json.loads(text) if text else None


def test_makefile_lab_target_installs_pins_and_registers_the_kernel():
    makefile = (ROOT / "Makefile").read_text()
    assert "$(PIP) -r requirements-lab.txt" in makefile
    assert "-m ipykernel install --sys-prefix --name python3" in makefile
    assert "jupyter lab --ServerApp.root_dir=notebooks" in makefile
    pins = (ROOT / "requirements-lab.txt").read_text()
    assert "jupyterlab==" in pins and "ipykernel==" in pins
    assert "papermill==" in pins  # the documented papermill command works after make lab
    assert "jupytext==" in pins  # opens the percent scripts as notebooks
    assert "--config=notebooks/jupyter_server_config.json" in makefile
    assert "install -D -m 644 lab/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json" in makefile


def test_the_lab_installs_what_every_notebook_imports():
    """Notebook 08 reads vendor responses through the vendors' SDK types: `make lab` installs the
    `[vendors]` extra's pins, so it runs in a lab environment, not only in the test one."""
    import tomllib

    vendors = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["vendors"]
    pins = {line.strip() for line in (ROOT / "requirements-lab.txt").read_text().splitlines()}
    assert vendors and set(vendors) <= pins


def _requirement_names(path: Path) -> set[str]:
    """The distributions a requirements file pins, following its `-r` includes."""
    names: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r "):
            names |= _requirement_names(path.parent / line[3:].strip())
        elif line and not line.startswith("-"):
            names.add(re.split(r"[\[=<>!~ ;]", line, maxsplit=1)[0])
    return names


def _closure(names: set[str]) -> set[str]:
    """Those distributions and everything they require (as installed here), normalized names."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: set[str] = set()
    todo = [canonicalize_name(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            needs = requires(name) or []
        except PackageNotFoundError:
            continue
        for text in needs:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(requirement.name))
    return seen


def test_a_make_lab_environment_has_every_distribution_the_notebooks_import():
    """Every module a notebook imports (outside the standard library and citeaudit itself) comes
    from a distribution that `make lab` installs: requirements-lab.txt, its `-r requirements.txt`
    and what those require. The notebooks are executed in CI with the test requirements, a superset;
    this is what says they would run in the lab's environment alone."""
    import ast
    from importlib.metadata import packages_distributions

    from packaging.utils import canonicalize_name

    installed = _closure(_requirement_names(ROOT / "requirements-lab.txt"))
    providers = packages_distributions()
    missing = {}
    for script in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")):
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for module in modules:
                top = module.split(".")[0]
                if top in sys.stdlib_module_names or top == "citeaudit":
                    continue
                if not {canonicalize_name(d) for d in providers.get(top, [])} & installed:
                    missing.setdefault(script.name, set()).add(top)
    assert not missing, f"imported by notebooks, not installed by make lab: {missing}"
    assert {"matplotlib", "pandas", "ipython", "ipywidgets"} <= installed  # what they do import is counted


def _contents_manager(root):
    """The contents manager `make lab`'s server builds from its config file (citeaudit's
    `NotebookContents`: jupytext's, which its server extension then leaves as it is), with the
    config's hidden globs; its calls are coroutines, run here one at a time."""
    from traitlets.config.loader import JSONFileConfigLoader

    from citeaudit.surfaces.lab import NotebookContents

    config = JSONFileConfigLoader(SERVER_CONFIG.name, str(SERVER_CONFIG.parent)).load_config()
    assert config.ServerApp.jpserver_extensions == {"jupyterlab_jupytext": True}
    assert config.ServerApp.contents_manager_class == "citeaudit.surfaces.lab.NotebookContents"
    return _Synchronous(NotebookContents(config=config, root_dir=str(root)))


class _Synchronous:
    """An async contents manager's `get` and `save`, called as plain functions."""

    def __init__(self, manager):
        self.manager = manager

    def get(self, *args, **kwargs):
        return asyncio.run(self.manager.get(*args, **kwargs))

    def save(self, *args, **kwargs):
        return asyncio.run(self.manager.save(*args, **kwargs))


@pytest.mark.notebooks  # jupytext's contents manager (it runs `pandoc --version`)
def test_the_lab_lists_each_notebook_once_as_a_notebook_and_saves_a_script_unchanged(tmp_path):
    """Listed once (the .py, as a notebook; the .ipynb built from it hidden), opened as a notebook,
    and saved after running (outputs, execution counts) as the very same script: running a
    notebook in JupyterLab does not change the checkout. No server, no browser."""
    pytest.importorskip("jupytext")
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    manager = _contents_manager(tmp_path / "notebooks")
    listed = manager.get("", content=True)["content"]
    assert sorted((m["name"], m["type"]) for m in listed) == [(name, "notebook") for name in SCRIPTS]
    for name in SCRIPTS:
        path = tmp_path / "notebooks" / name
        before = path.read_bytes()
        model = manager.get(name, content=True, type="notebook")
        # what the kernel will report, so that JupyterLab changes nothing when it connects
        assert model["content"].metadata["language_info"]["name"] == "python"
        cells = model["content"].cells
        assert cells[0].cell_type == "markdown" and any("parameters" in c.metadata.get("tags", []) for c in cells)
        for number, cell in enumerate(c for c in cells if c.cell_type == "code"):
            cell.execution_count = number + 1
            cell.outputs = [{"output_type": "stream", "name": "stdout", "text": "ran\n"}]
        manager.save(model, name)
        assert path.read_bytes() == before, name
    assert sorted(p.name for p in (tmp_path / "notebooks").iterdir() if p.suffix == ".ipynb") == \
        sorted(name.replace(".py", ".ipynb") for name in SCRIPTS)  # no new pairing file written


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """`jupyter lab` headless on a free port, with the kernelspec registered as `make lab` does."""
    pytest.importorskip("jupyterlab")
    prefix = tmp_path / "prefix"
    subprocess.run([sys.executable, "-m", "ipykernel", "install", "--prefix", str(prefix), "--name", "python3",
                    "--display-name", "Python 3 (citeaudit .venv)"], check=True, capture_output=True)
    cache = tmp_path / "cache"  # the checkout's recordings and calibrations, so that nothing writes into it
    cache.mkdir()
    for recording in (ROOT / "cache").glob("*.jsonl"):
        shutil.copy(recording, cache)
    shutil.copytree(ROOT / "cache" / "calibration", cache / "calibration")
    notebooks = tmp_path / "notebooks"  # the lab saves (and autosaves) here, never into the checkout
    shutil.copytree(ROOT / "notebooks", notebooks, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    env = dict(os.environ, JUPYTER_PATH=str(prefix / "share" / "jupyter"), JUPYTER_RUNTIME_DIR=str(tmp_path / "run"),
               JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_DATA_DIR=str(tmp_path / "data"),
               CITEAUDIT_CACHE_DIR=str(cache), CITEAUDIT_CACHE_MODE="replay",
               CITEAUDIT_REVIEW_DIR=str(tmp_path / "reviews"), OPENAI_BASE_URL="http://127.0.0.1:9/v1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])))
    env.pop("OPENAI_API_KEY", None)
    env.pop("CITEAUDIT_DATA_DIR", None)  # the kernel must find ../shared/data/rfc by itself
    port = _free_port()
    settings = tmp_path / "lab-settings"  # where `make lab` installs lab/overrides.json: the venv's settings
    settings.mkdir()
    shutil.copy(ROOT / "lab" / "overrides.json", settings / "overrides.json")
    with open(tmp_path / "lab.log", "wb") as log:  # the server keeps its own copy of the descriptor
        server = subprocess.Popen([sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
                                   f"--LabApp.app_settings_dir={settings}", f"--LabApp.workspaces_dir={tmp_path / 'ws'}",
                                   "--ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}", "--allow-root",
                                   f"--ServerApp.root_dir={notebooks}",
                                   f"--config={notebooks / SERVER_CONFIG.name}"],
                                  env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _api(base, "/api/status")
                break
            except OSError:
                assert server.poll() is None, (tmp_path / "lab.log").read_text()[-3000:]
                assert time.monotonic() < deadline, "JupyterLab did not answer within 60 s"
                time.sleep(0.3)
        yield base, tmp_path / "run"
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.mark.notebooks
def test_jupyterlab_runs_notebook_00_through_its_kernel(lab):
    import nbformat  # not at the top: a second to import, and `make check` collects this module
    from jupyter_client import BlockingKernelClient  # here, not at the top: `make check` collects this module

    base, runtime = lab
    with urllib.request.urlopen(f"{base}/lab?token={TOKEN}", timeout=10) as page:
        assert page.status == 200 and b"JupyterLab" in page.read()
    # the file browser's listing: each notebook once, the percent script, as a notebook
    listed = _api(base, "/api/contents/")["content"]
    assert sorted((m["name"], m["type"]) for m in listed) == [(name, "notebook") for name in SCRIPTS]
    # a double-click opens a .py file with its type's default viewer: jupytext's notebook, not the editor
    docmanager = _api(base, "/lab/api/settings/@jupyterlab/docmanager-extension:plugin")
    viewers = docmanager["schema"]["properties"]["defaultViewers"]["default"]  # overrides.json sets the defaults
    assert viewers["python"] == "Jupytext Notebook"
    opened = _api(base, "/api/contents/00_audit_your_answer.py?type=notebook&content=1")
    assert opened["type"] == "notebook" and opened["content"]["cells"][0]["cell_type"] == "markdown"
    specs = _api(base, "/api/kernelspecs")
    python3 = specs["kernelspecs"]["python3"]["spec"]
    assert python3["display_name"] == "Python 3 (citeaudit .venv)"
    assert Path(python3["argv"][0]).resolve() == Path(sys.executable).resolve()

    # the server answers once it has started the kernel's process: seconds on a loaded machine
    kernel = _api(base, "/api/kernels", "POST", {"name": "python3", "path": ""}, timeout=60)
    client = BlockingKernelClient(connection_file=str(runtime / f"kernel-{kernel['id']}.json"))
    client.load_connection_file()
    # No heartbeat channel: it calls a kernel dead when one ping goes unanswered for a second, which a
    # loaded 2-core CI machine produced while the kernel was starting. Readiness is its kernel_info
    # reply within 60 s; a kernel that really died is named by the server's state below.
    client.start_channels(hb=False)
    try:
        try:
            client.wait_for_ready(timeout=60)
        except RuntimeError as error:
            try:
                state = _api(base, f"/api/kernels/{kernel['id']}")
            except OSError as gone:
                state = gone
            raise AssertionError(f"{error}; the server's kernel: {state}") from error
        nb = nbformat.read(NOTEBOOK, as_version=4)
        shown: list[str] = []

        def keep(message) -> None:
            content = message["content"]
            if message["msg_type"] == "error":
                shown.append("ERROR " + content["ename"] + ": " + content["evalue"])
            shown.append(content.get("text", ""))
            shown.append(content.get("data", {}).get("text/plain", ""))

        for cell in nb.cells:
            if cell.cell_type == "code":
                reply = client.execute_interactive(cell.source, timeout=120, output_hook=keep)
                assert reply["content"]["status"] == "ok", "\n".join(shown)[-3000:]
        text = "\n".join(shown)
        assert "shared/data/rfc/rfc7519.txt" in text  # found beside the checkout, no CITEAUDIT_DATA_DIR
        assert "Every citation with evidence has a recorded answer" in text and "\nREJECT\n" in text
    finally:
        client.stop_channels()
        _api(base, f"/api/kernels/{kernel['id']}", "DELETE")


# what a newcomer opens first and what the review flow runs through (issue 32): double-clicked in
# the file browser, run from the Run menu, in a real Chromium driven by Playwright
WALK = ["00_audit_your_answer.py", "01_rfc7519_audit.py", "04_threshold_tuning.py", "05_review_queue.py",
        "08_vendor_citations.py", "09_bring_your_own_judge.py"]
# Run All has finished: the first code cell has run, none is running, and the kernel is idle
RAN = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return false;
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(e => e.textContent.trim());
  const status = (document.querySelector('#jp-main-statusbar') || {}).textContent || '';
  return prompts.length > 0 && /^\\[\\d+\\]:$/.test(prompts[0]) && !prompts.includes('[*]:') && status.includes('Idle');
}"""


def _open_and_run(page, name: str) -> None:
    """Double-click `name` in the file browser; it must open as a notebook whose tab is not marked
    unsaved once its kernel is ready; then Run > Run All Cells, to the end, with nothing on stderr
    (no error, no warning)."""
    item = page.locator(f".jp-DirListing-item[title^='Name: {name}']")
    item.dblclick()
    tab = page.locator(".lm-TabBar-tab.jp-mod-current", has_text=name)
    tab.wait_for(timeout=30_000)
    page.locator(".jp-NotebookPanel:visible .jp-Notebook").wait_for(timeout=30_000)  # a notebook, not the editor
    page.wait_for_selector("#jp-main-statusbar >> text=Idle", timeout=60_000)
    assert "jp-mod-dirty" not in (tab.get_attribute("class") or ""), f"{name} is marked unsaved right after opening"
    _run_all(page, name)


def _run_all(page, name: str) -> None:
    """Run > Run All Cells, to the end, with nothing on stderr (no error, no warning)."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    for _ in range(2):  # twice, a second apart: the status may read Idle before the kernel takes the first cell
        page.wait_for_function(RAN, timeout=240_000, polling=500)
        time.sleep(1)
    stderr = page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert stderr.count() == 0, f"{name}: " + "\n".join(stderr.nth(i).inner_text()[:1500] for i in range(stderr.count()))
    prompts = page.locator(".jp-NotebookPanel:visible .jp-CodeCell .jp-InputPrompt").all_inner_texts()
    assert all(p.strip() not in ("[ ]:", "[*]:") for p in prompts), f"{name}: not every cell ran: {prompts}"


def _status_line(panel):
    """The review widget's status line ("answer: REVIEW · 6 waiting ..."), scrolled into view:
    JupyterLab renders only the cells in view."""
    status = panel.locator(".widget-html", has_text=re.compile(r"answer: \w+ · \d+ waiting")).first
    status.scroll_into_view_if_needed()
    return status


def _wait_until_saved(page, verdict: str) -> None:
    """Until the open notebook's widget says it saved a review with `verdict`."""
    page.wait_for_function(f"""() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .widget-html')]
                              .some(e => e.textContent.includes('saved {verdict} for'))""", timeout=30_000)


def _review_in_the_widget(page, reviews: Path) -> None:
    """Notebook 05's queue: a verdict button stores a review of the citation shown and the status
    line says so; then the override form overrides a verdict that stood. After each, the store
    holds exactly what the widget says it saved."""
    from citeaudit import load_reviews

    panel = page.locator(".jp-NotebookPanel:visible")
    status = _status_line(panel)
    counted = re.search(r"(\d+) waiting", status.text_content() or "")
    assert counted, status.text_content()
    waiting = int(counted.group(1))
    panel.locator("button.widget-button", has_text=re.compile(r"^contradicted$")).first.click()
    _wait_until_saved(page, "contradicted")
    said = re.search(r"saved contradicted for (\S+) to (\S+) \((\d+) review", status.text_content())
    assert said and said.group(3) == "1", status.text_content()
    store = Path(said.group(2))
    assert reviews in store.parents and store.is_file()
    assert [(r.citation_id, str(r.verdict)) for r in load_reviews(store)] == [(said.group(1), "contradicted")]
    assert f"{waiting - 1} waiting" in status.text_content()
    # nothing stood in the worked example at the calibration's threshold: the form says so, disabled
    record = panel.locator("button.widget-button", has_text="record override")
    assert record.is_disabled() and panel.get_by_text("No verdict that stood is left to override").count() == 1
    # the analyst lowers the threshold in the parameters cell and runs the notebook again
    parameters = panel.locator(".jp-CodeCell", has_text="THRESHOLD = None").first
    source = "\n".join(parameters.locator(".cm-line").all_text_contents())
    parameters.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source.replace("THRESHOLD = None", "THRESHOLD = 0.6"))
    _run_all(page, "05_review_queue.py")
    status = _status_line(panel)  # the widget of this run
    pick = panel.locator(".widget-dropdown", has_text="citation").locator("select")
    standing = pick.locator("option").all_text_contents()
    assert standing, "no verdict stands at 0.6 in notebook 05's worked example: nothing to override"
    panel.locator(".widget-dropdown", has_text="verdict").locator("select").select_option("unsupported")
    panel.locator("button.widget-button", has_text="record override").click()
    _wait_until_saved(page, "unsupported")
    overridden = standing[0].split(":")[0]
    assert [(r.citation_id, str(r.verdict)) for r in load_reviews(store)] == [
        (said.group(1), "contradicted"), (overridden, "unsupported")]
    assert "(2 review(s) in the store)" in status.text_content()
    assert standing[0] not in pick.locator("option").all_text_contents()  # no longer offered


@pytest.mark.browser
@pytest.mark.notebooks
def test_a_newcomer_opens_and_runs_the_notebooks_in_jupyterlab(lab, tmp_path):
    """JupyterLab as `make lab` serves it, in headless Chromium: each notebook of the walk opens by
    double-click as a notebook, is not marked unsaved, and runs to the end without an error or a
    warning; in notebook 05 a review and an override go to the store the widget names. About a
    minute and a half."""
    from test_report import playwright_chromium

    base, _ = lab
    with playwright_chromium() as browser:
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        try:
            page.goto(f"{base}/lab?reset&token={TOKEN}")
            page.locator(".jp-DirListing-item").first.wait_for(timeout=60_000)
            for name in WALK:
                _open_and_run(page, name)
                if name.startswith("05_"):
                    _review_in_the_widget(page, tmp_path / "reviews")
                for session in _api(base, "/api/sessions"):  # one kernel at a time, as memory allows
                    _api(base, f"/api/sessions/{session['id']}", "DELETE")
        except Exception:
            page.screenshot(path=str(tmp_path / "failed.png"))  # what the browser showed, beside the test's files
            raise
