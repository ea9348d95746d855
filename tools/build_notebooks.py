"""Build each notebooks/NN_name.ipynb from its jupytext percent script notebooks/NN_name.py.

The .py scripts are the source of truth: edit them (linters, type checkers and editors see them),
then run `make notebooks` (`python tools/build_notebooks.py`). The .ipynb files are written with no
outputs, null execution counts, cell ids numbered in order and a python3 kernelspec, so the same
script always builds the same bytes.

    python tools/build_notebooks.py            write every notebook
    python tools/build_notebooks.py --check    exit 1, naming them, when committed notebooks differ
    python tools/build_notebooks.py --notebooks DIR   work on another folder (tests)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[1]
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
KEPT_CELL_METADATA = ("tags",)  # the `parameters` tag papermill looks for


def build(script: Path) -> str:
    """The .ipynb text the percent script `script` builds."""
    nb = jupytext.read(script, fmt="py:percent")
    nb.metadata = nbformat.from_dict({"kernelspec": KERNELSPEC})
    nb.nbformat, nb.nbformat_minor = 4, 5
    for i, cell in enumerate(nb.cells):
        cell.id = f"c{i:02d}"
        cell.metadata = nbformat.from_dict({k: v for k, v in cell.metadata.items() if k in KEPT_CELL_METADATA})
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nbformat.validate(nb)
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def scripts(folder: Path) -> list[Path]:
    """The notebook scripts: numbered percent scripts `NN_name.py`."""
    return sorted(p for p in folder.glob("[0-9][0-9]_*.py"))


def check(folder: Path) -> list[str]:
    """What is out of date: notebooks that differ from their script, or have no script."""
    problems = []
    for script in scripts(folder):
        target = script.with_suffix(".ipynb")
        if not target.exists():
            problems.append(f"{target.name}: missing; {script.name} builds it")
        elif target.read_text(encoding="utf-8") != build(script):
            problems.append(f"{target.name}: differs from what {script.name} builds")
    built = {s.with_suffix(".ipynb").name for s in scripts(folder)}
    for notebook in sorted(folder.glob("*.ipynb")):
        if notebook.name not in built:
            problems.append(f"{notebook.name}: no {notebook.with_suffix('.py').name} builds it")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 when a notebook is out of date")
    parser.add_argument("--notebooks", type=Path, default=ROOT / "notebooks", help="folder of the scripts")
    args = parser.parse_args(argv)
    if not scripts(args.notebooks):
        print(f"{args.notebooks}: no NN_name.py notebook scripts", file=sys.stderr)
        return 2
    if args.check:
        problems = check(args.notebooks)
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print("run `make notebooks` (python tools/build_notebooks.py) and commit the result", file=sys.stderr)
        return 1 if problems else 0
    for script in scripts(args.notebooks):
        target = script.with_suffix(".ipynb")
        text = build(script)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
