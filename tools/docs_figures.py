"""Measurements the documentation shows, saved by the tool that measures them.

A measuring tool ends with `sys.exit(docs_figures.run(main, __file__))`. Run with `--save-docs`,
it prints as ever and also saves what it printed, with the command (less `--save-docs`), the date,
the machine and the commit, as `docs/measurements/data/NAME.json` (NAME: the tool's file name, or
the one given as `--save-docs=NAME` for another measurement of the same tool); the measurement
pages show that file (the `citeaudit-measurement` directive of docs/_ext/citeaudit_docs.py), and the
tests check it: tests/test_docs_figures.py its form and that one page shows it, each deterministic
tool's own test that the tool still prints it. A timing cannot be run again to compare: its saved
output is the figure, shown once.
Prose around a figure explains it; the figure itself is never typed again.
"""

from __future__ import annotations

import io
import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable
from contextlib import redirect_stdout
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parents[1]
SAVED = ROOT / "docs" / "measurements" / "data"
FLAG = "--save-docs"


class _Tee(io.StringIO):
    """What is written goes to the terminal and is kept."""

    def __init__(self, terminal: TextIO) -> None:
        super().__init__()
        self.terminal = terminal

    def write(self, text: str) -> int:
        self.terminal.write(text)
        return super().write(text)


def machine() -> str:
    """The machine a figure was measured on, in the words a reader compares: cores, architecture, Python."""
    return f"{os.cpu_count()} cores, {platform.machine()}, {platform.system()}, Python {platform.python_version()}"


def commit() -> str | None:
    """The checkout's commit (short), else None (outside git)."""
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    return done.stdout.strip() or None


def path(name: str) -> Path:
    return SAVED / f"{name}.json"


def save(name: str, command: str, output: str) -> Path:
    """Writes `docs/measurements/data/NAME.json`."""
    record = {"command": command, "date": datetime.now(UTC).strftime("%Y-%m-%d"), "machine": machine(),
              "commit": commit(), "output": output}
    target = path(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return target


def load(name: str) -> dict:
    """A saved measurement: command, date, machine, commit, output."""
    return json.loads(path(name).read_text(encoding="utf-8"))


def arguments(saved: dict) -> list[str]:
    """The arguments of a saved command, after `python tools/NAME.py`."""
    return saved["command"].split()[2:]


def run(main: Callable[[list[str]], int], tool_file: str, argv: list[str] | None = None) -> int:
    """Runs a tool's `main`; with `--save-docs`, saves what it printed (when it exits 0)."""
    args = list(sys.argv[1:] if argv is None else argv)
    flags = [a for a in args if a == FLAG or a.startswith(FLAG + "=")]
    if not flags:
        return main(args)
    args = [a for a in args if a not in flags]
    tool = Path(tool_file).stem
    name = flags[-1].partition("=")[2] or tool  # --save-docs=NAME: a second measurement of one tool
    kept = _Tee(sys.stdout)
    with redirect_stdout(kept):
        status = main(args)
    if status == 0:
        saved = save(name, " ".join(["python", f"tools/{tool}.py", *args]), kept.getvalue())
        print(f"saved in {saved.relative_to(ROOT) if saved.is_relative_to(ROOT) else saved}", file=sys.stderr)
    return status
