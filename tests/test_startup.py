"""Start-up: the command line and `import citeaudit` import only what they use (issue 36).

Times are the benchmark's (`tools/bench_locate.py --cli`); these tests check the behaviour that
makes them: which heavy stacks a fresh interpreter has imported after starting the command line.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import citeaudit

pytestmark = pytest.mark.cli

HEAVY = ("pandas", "numpy", "sklearn", "scipy", "openai", "httpx", "pydantic", "dask", "matplotlib", "ipywidgets")


def _imported_after(code: str) -> list[str]:
    """The heavy top-level packages a fresh interpreter holds after running `code`."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return [name for name in json.loads(done.stdout.splitlines()[-1]) if name in HEAVY]


def test_import_citeaudit_imports_no_heavy_stack():
    assert _imported_after("import citeaudit") == []


def test_the_command_lines_help_imports_no_heavy_stack():
    code = ("import sys\nfrom citeaudit.surfaces.cli import main\nsys.argv = ['citeaudit', '--help']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass")
    assert _imported_after(code) == []


def test_a_commands_help_lists_the_registered_formats_and_strategies():
    from click.testing import CliRunner

    from citeaudit.judge.strategies import STRATEGIES
    from citeaudit.sources import FORMATS
    from citeaudit.surfaces.cli import main

    shown = CliRunner().invoke(main, ["audit", "--help"], terminal_width=400).output
    assert f"[{'|'.join(FORMATS)}]" in shown
    assert all(name in shown for name in STRATEGIES)


def test_a_public_name_is_imported_when_first_used():
    assert _imported_after("import citeaudit\nciteaudit.Audit") != []  # the pipeline, with pandas
    assert set(citeaudit.__all__) <= set(dir(citeaudit))
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        citeaudit.no_such_name  # noqa: B018
