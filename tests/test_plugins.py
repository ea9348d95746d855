"""Another package extends citeaudit through entry points, without editing it (`citeaudit.registry`).

The example plugin kept here (tests/plugins/citeaudit-example-plugin: the `veto` strategy and the
`glossary` source format) is installed with pip into a new virtual environment that reads the
packages of the one running the tests (a `.pth` line adds its site-packages, citeaudit with them), so
nothing but the plugin is installed; pip builds it with citeaudit's own build backend and pin
(hatchling, from pip's cache once citeaudit was installed from source, as `make` does). Then, in that environment only, `citeaudit audit --help` offers both, the format loads a
file and resolves its own locator, and the strategy judges the worked example from the shipped
recordings (it sends `panel`'s requests, so the real model's recorded answers answer it) with its
own reading of the answers. About 20 s here (a venv, a pip install of 9 s, six command lines): `slow`.
"""

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from conftest import DATA, ROOT

pytestmark = [pytest.mark.slow, pytest.mark.cli]

PLUGIN = Path(__file__).parent / "plugins" / "citeaudit-example-plugin"
CLI = "import sys; from citeaudit.surfaces.cli import main; main(prog_name='citeaudit')"


@pytest.fixture(scope="module")
def plugin_python(tmp_path_factory):
    """The python of a new venv that sees this environment's packages and has the plugin installed."""
    env = tmp_path_factory.mktemp("plugin-venv")
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    here = sysconfig.get_paths()["purelib"]  # citeaudit (installed or editable) and its dependencies
    Path(purelib, "_project_packages.pth").write_text(f"import site; site.addsitedir({here!r})\n")
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--disable-pip-version-check",
         "--no-deps", str(PLUGIN)],
        capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    return python


def citeaudit(python, *args, cwd=None):
    return subprocess.run([str(python), "-c", CLI, *args], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env=os.environ)


def test_the_plugins_strategy_and_format_are_offered_only_where_it_is_installed(plugin_python):
    shown = citeaudit(plugin_python, "audit", "--help")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())  # click wraps the help
    assert "[rfc|text|markdown|html|pdf|egov|glossary]" in text  # --format: citeaudit's own, then the plugin's
    assert "panel+examples|probe|stacked|veto]" in text  # --strategy
    assert "veto (panel's three answers, the contradiction question as a veto)" in text
    here = subprocess.run([sys.executable, "-c", CLI, "audit", "--help"], capture_output=True, text=True)
    assert "glossary" not in here.stdout and "veto" not in here.stdout  # this environment has no plugin


def test_the_plugins_format_loads_its_files_and_resolves_its_own_locators(plugin_python, tmp_path):
    out = tmp_path / "glossary.jsonl"
    result = citeaudit(plugin_python, "audit", "--source", str(PLUGIN / "data" / "tokens.gloss"), "--citations",
                       str(PLUGIN / "data" / "tokens_citations.json"), "--locate-only", "--output", str(out))
    assert result.returncode == 1, result.stderr  # a fabricated citation: REJECT
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert {i: (r["quote_status"], r["found_section"], r["section_match"], r["verdict"]) for i, r in rows.items()} == {
        "expiry": ("exact", "access-token", True, None),  # `entry access-token`: the format's own locator
        "refresh": ("exact", "refresh-token", False, None),  # cited under access-token, found under refresh-token
        "revoked": ("missing", None, None, "fabricated")}
    assert "REJECT" in result.stdout


def test_the_plugins_strategy_judges_from_the_recordings_with_its_own_rule(plugin_python, tmp_path, recorded_cache):
    runs = {}
    for strategy in ("panel", "veto"):
        out = tmp_path / f"{strategy}.jsonl"
        result = citeaudit(plugin_python, "audit", "--source", "rfc7519.txt", "--citations",
                           str(DATA / "rfc7519_citations.json"), "--strategy", strategy, "--cache-mode", "replay",
                           "--output", str(out), cwd=ROOT)
        assert result.returncode == 1, result.stderr
        runs[strategy] = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    judged = [i for i, r in runs["veto"].items() if r["verdict"] != "fabricated"]
    assert len(judged) == 7
    for i in judged:
        veto, panel = runs["veto"][i], runs["panel"][i]
        assert veto["error"] is None and veto["cached"] is True  # the recorded answers of the real model
        assert veto["answers"] == panel["answers"]  # the same three questions, answered once
        q = veto["answers"]
        supports = q["true"] * (1 - q["contradict"])  # the plugin's own rule
        assert veto["probabilities"]["supports"] == pytest.approx(supports)
        assert veto["probabilities"]["contradicts"] == pytest.approx((1 - supports) * q["false"])
    assert any(runs["veto"][i]["probabilities"] != runs["panel"][i]["probabilities"] for i in judged)
