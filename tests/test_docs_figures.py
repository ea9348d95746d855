"""What the documentation is built from: the measurements the tools save (tools/docs_figures.py), each
shown on one page; the settings table generated from the settings module; a README short enough to
read, whose picture is there. (Each saved measurement's figures are checked against its tool by that
tool's own test: test_numbered_set, test_egov, test_contrast_set, test_documented_figures.)"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from conftest import DOCS, ROOT

sys.path.insert(0, str(ROOT / "tools"))
import docs_figures  # tools/ is not a package: on the path above

SAVED = sorted((DOCS / "measurements" / "data").glob("*.json"))


def test_some_measurements_are_saved():
    assert {p.stem for p in SAVED} >= {"numbered_statuses", "statute_statuses", "contrast_set", "bench_focus"}


@pytest.mark.parametrize("path", SAVED, ids=lambda p: p.stem)
def test_a_saved_measurement_says_how_when_and_where_and_is_shown_once(path):
    saved = json.loads(path.read_text(encoding="utf-8"))
    python, tool_path, *_ = saved["command"].split()
    assert python == "python" and tool_path.startswith("tools/") and path.stem.startswith(Path(tool_path).stem)
    assert "--save-docs" not in saved["command"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", saved["date"]) and "cores" in saved["machine"]
    assert saved["output"].strip()
    tool = (ROOT / tool_path).read_text(encoding="utf-8")
    assert "docs_figures.run(main, __file__)" in tool, f"{tool_path} does not save with --save-docs"
    shown = [p.relative_to(DOCS) for p in DOCS.rglob("*.md") if "_build" not in p.parts
             for _ in re.findall(rf"\{{citeaudit-measurement\}} {re.escape(path.stem)}\s*$",
                                 p.read_text(encoding="utf-8"), flags=re.M)]
    assert len(shown) == 1, f"{path.stem} is shown on {shown}: once, on its page"


def test_save_docs_saves_what_the_tool_prints_and_nothing_else(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(docs_figures, "SAVED", tmp_path)
    monkeypatch.setattr(docs_figures, "commit", lambda: "abc1234")

    def main(argv):
        print(f"figures for {argv}")
        return 0

    assert docs_figures.run(main, "tools/toy_bench.py", ["--size", "3"]) == 0
    assert not (tmp_path / "toy_bench.json").exists()  # without the flag: printed only
    assert docs_figures.run(main, "tools/toy_bench.py", ["--size", "3", "--save-docs"]) == 0
    saved = json.loads((tmp_path / "toy_bench.json").read_text(encoding="utf-8"))
    assert saved["command"] == "python tools/toy_bench.py --size 3"
    assert saved["output"] == "figures for ['--size', '3']\n" and saved["commit"] == "abc1234"
    assert capsys.readouterr().out == "figures for ['--size', '3']\n" * 2  # printed both times
    assert docs_figures.run(main, "tools/toy_bench.py", ["--save-docs=toy_bench_small", "--size", "1"]) == 0
    assert json.loads((tmp_path / "toy_bench_small.json").read_text())["command"] == "python tools/toy_bench.py --size 1"
    capsys.readouterr()
    assert docs_figures.run(lambda argv: 1, "tools/failing.py", ["--save-docs"]) == 1
    assert not (tmp_path / "failing.json").exists()  # a failed run saves nothing


def test_the_settings_table_has_every_variable_the_settings_module_names():
    """The generated table (docs/_ext) against what `citeaudit where` lists and the module's own table."""
    pytest.importorskip("sphinx")  # docs/_ext is a Sphinx extension (requirements-docs.txt, `make test`)
    sys.path.insert(0, str(DOCS / "_ext"))
    import citeaudit_docs

    from citeaudit.settings import environment

    rows = {row["variable"]: row for row in citeaudit_docs.settings_rows()}
    listed = {variable for _, variable, _ in _where_rows(environment)}
    documented = set(re.findall(r"^\| ((?:CITEAUDIT|OPENAI)_[A-Z_]+)", environment.__doc__ or "", flags=re.M))
    assert listed | documented <= set(rows), sorted((listed | documented) - set(rows))
    assert "CITEAUDIT_PUBLIC_DIR" in rows  # read by public_dir(), in neither list: generated, not typed
    assert rows["CITEAUDIT_SPOT_CHECK"]["default"] == "`DEFAULT_SPOT_CHECK = 0.1`"
    assert rows["CITEAUDIT_THRESHOLD"]["read by"] == "`threshold()`"


def _where_rows(environment):
    source = (ROOT / "src" / "citeaudit" / "settings" / "environment.py").read_text(encoding="utf-8")
    body = source.split("def settings_in_force", 1)[1]
    return re.findall(r'\("([^"]+)", "((?:CITEAUDIT|OPENAI)_[A-Z_]+)", ([^)]*)\)', body)


def test_the_readme_is_short_and_its_picture_is_committed_small():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^(make \w+)", quick, flags=re.M)
    assert commands == ["make demo", "make test"]
    [picture] = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    assert (ROOT / picture).is_file() and (ROOT / picture).stat().st_size < 150_000
    assert "make docs" in readme and "make lab" in readme
