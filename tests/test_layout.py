"""The package's shape, read from its imports and its file names.

1. No circle: no module imports another that imports it back, counting every import: at module
   level, inside a function and under `if TYPE_CHECKING:` (a type-only import is an arrow too).
2. Arrows go one way, by layer: `surfaces` (command line, views, report, dashboard, widgets,
   plots) may import anything; `workflows` (bring your own judge, profiles: they run audits)
   imports no surface; `pipeline` neither a workflow nor a surface; every other module (the
   stages sources, citations, locate, judge, decide, calibrate, and settings, table, errors,
   stores, ...) imports none of the three. `ALLOWED` lists the exceptions, each with its reason.
   `testing` (the scripted judge for tests and tools) is imported by no module of the package.
   Finer, by package (`PACKAGE_ORDER`): no package imports one later in the order; `settings` is a
   leaf (the errors, the table and nothing else).
3. No module over `MAX_LINES` lines (`TOO_LONG_FOR_NOW` lists the ones being split).
4. No two modules in one folder with confusable names. Two names (lowercase, `_` dropped) are
   confusable when one begins with the other (judge, judge_setup), when they share their first
   `STEM` letters (calibrate, calibration; locate, locators), or when both are in one group of
   `SYNONYMS` (config, options, settings). A name that merely ends in another names a kind of it or
   something else (vendor_audit is an audit of one kind; printable has nothing to do with table),
   so it is not flagged. A package counts as a module of the folder it sits in.
5. Settings are read in one place: no module outside `settings` touches the process environment
   (`os.environ`, `os.getenv`, ...), and no stage (a module below `pipeline` in `PACKAGE_ORDER`)
   calls a function of `settings.environment` that reads it (`environment_readers`) or imports
   `settings.options` (the settings object and its `from_env`): stages take values, and the run
   object (`pipeline.run.AuditRun`), the workflows and the surfaces above hand them down.
"""

import ast
import sys
from itertools import combinations
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "citeaudit"
MAX_LINES = 500
STEM = 5
SYNONYMS = ({"config", "configuration", "options", "settings", "preferences"},
            {"vocab", "vocabulary", "columns", "table", "schema"},
            {"utils", "helpers", "misc", "common"})

# (importer, imported): a module name, or a package name standing for every module under it
ALLOWED: set[tuple[str, str]] = set()
# The packages (or top-level modules) from the bottom up: a module imports only from its own entry
# or an earlier one. `testing` is imported by no module of the package (a test below says so).
PACKAGE_ORDER = (
    {"errors", "table", "strictjson", "printable", "registry", "lazy"}, {"settings"}, {"extras"}, {"sources"}, {"stores"},
    {"citations"}, {"locate"}, {"judge"}, {"decide"}, {"calibrate"}, {"pipeline"}, {"workflows"}, {"surfaces"},
    {"testing"}, {"citeaudit"},
)
# TEMPORARY: being split by other engineers (issue 31) as this test was made strict; the lead
# empties this list after merging their work.
TOO_LONG_FOR_NOW: set[str] = set()


def module_name(path: Path) -> str:
    """`citeaudit/pipeline/audit.py` -> `pipeline.audit`; a package's `__init__` is the package
    (the top one is `citeaudit`)."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    return ".".join(parts) or "citeaudit"


def _resolve(dotted: str) -> str:
    """`citeaudit.x.y` -> the package module it names (`x.y`), or `citeaudit` for the package itself."""
    return dotted.removeprefix("citeaudit").removeprefix(".") or "citeaudit"


def _is_module(name: str) -> bool:
    path = PACKAGE / name.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports_of(path: Path) -> set[str]:
    """Every package module `path` imports, wherever the import is (type-only imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = module_name(path).split(".") if module_name(path) != "citeaudit" else []
    package = here if path.name == "__init__.py" else here[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {_resolve(alias.name) for alias in node.names
                      if alias.name == "citeaudit" or alias.name.startswith("citeaudit.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the importing module's package
                base = ".".join([*package[:len(package) - node.level + 1], *([node.module] if node.module else [])])
            elif node.module == "citeaudit" or (node.module or "").startswith("citeaudit."):
                base = _resolve(node.module or "")
                base = "" if base == "citeaudit" else base
            else:
                continue
            for alias in node.names:  # `from citeaudit.x import y`: the module x.y when it is one, else x
                candidate = f"{base}.{alias.name}" if base else alias.name
                found.add(candidate if _is_module(candidate) else base or "citeaudit")
    return found


def graph() -> dict[str, set[str]]:
    return {module_name(path): imports_of(path) - {module_name(path)} for path in PACKAGE.rglob("*.py")}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import path that leads back to where it started (each cycle once per starting module)."""
    found = []

    def walk(path: list[str]) -> None:
        for nxt in sorted(graph.get(path[-1], ())):
            if nxt == path[0]:
                found.append([*path, nxt])
            elif nxt not in path and nxt in graph:
                walk([*path, nxt])

    for module in sorted(graph):
        walk([module])
    return found


def layer(module: str) -> int:
    """3 for a surface, 2 for a workflow, 1 for the pipeline, 0 for the rest (the top package
    `citeaudit` imports everything to list the public API, and nothing may import it)."""
    return {"surfaces": 3, "workflows": 2, "pipeline": 1, "citeaudit": 4}.get(module.split(".")[0], 0)


def rank(module: str) -> int:
    """Where a module's package (or top-level module) stands in `PACKAGE_ORDER`."""
    top = module.split(".")[0]
    return next(i for i, names in enumerate(PACKAGE_ORDER) if top in names)


def against_order(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every import from a module to one of a package later in `PACKAGE_ORDER`."""
    return sorted((importer, imported) for importer, targets in graph.items() for imported in targets
                  if rank(imported) > rank(importer))


def _under(module: str, name: str) -> bool:
    return module == name or module.startswith(name + ".")


def wrong_way(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every import from a module to one of a higher layer that `ALLOWED` does not list."""
    return sorted((importer, imported) for importer, targets in graph.items() for imported in targets
                  if layer(imported) > layer(importer)
                  and not any(_under(importer, a) and _under(imported, b) for a, b in ALLOWED))


def confusable(a: str, b: str) -> bool:
    """Whether two names in one folder can be confused (the rule in the module docstring)."""
    x, y = a.lower().replace("_", ""), b.lower().replace("_", "")
    return (x.startswith(y) or y.startswith(x) or x[:STEM] == y[:STEM]
            or any(x in group and y in group for group in SYNONYMS))


def test_the_scan_reads_every_kind_of_import():
    scan = graph()
    assert "pipeline.jsonl" in scan["pipeline.batch"] and "surfaces.cli.app" in scan["surfaces.cli.audit_commands"]
    assert "table" in scan["pipeline.audit"]  # `from citeaudit import table as C`
    assert "settings.options" in scan["surfaces.cli.audit_commands"]  # under TYPE_CHECKING only
    assert "pipeline.audit" in scan["workflows.judge_setup"]  # inside a function only


def test_cycles_finds_a_planted_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"], ["b", "c", "a", "b"],
                                                                        ["c", "a", "b", "c"]]


def test_no_import_cycles_in_the_package_type_only_imports_included():
    assert cycles(graph()) == []


def test_a_type_only_import_back_is_a_cycle(tmp_path, monkeypatch):
    """The shape the package had: runtime imports inside methods one way, type-only ones back."""
    fake = tmp_path / "citeaudit"
    (fake / "pipeline").mkdir(parents=True)
    (fake / "surfaces").mkdir()
    for init in (fake / "__init__.py", fake / "pipeline" / "__init__.py", fake / "surfaces" / "__init__.py"):
        init.write_text("")
    (fake / "pipeline" / "audit.py").write_text(
        "class Audit:\n    def html(self):\n        from citeaudit.surfaces.report import render\n")
    (fake / "surfaces" / "report.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from citeaudit.pipeline.audit import Audit\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    planted = graph()
    assert cycles(planted) == [["pipeline.audit", "surfaces.report", "pipeline.audit"],
                               ["surfaces.report", "pipeline.audit", "surfaces.report"]]
    assert wrong_way(planted) == [("pipeline.audit", "surfaces.report")]


def test_arrows_go_one_way():
    """Surfaces may import anything, the pipeline no surface, the stages neither (but `ALLOWED`)."""
    scan = graph()
    assert wrong_way(scan) == []  # nor does any module import the package's public API (`citeaudit`)
    used = {(a, b) for a, b in ALLOWED if any(_under(m, a) and any(_under(t, b) for t in targets)
                                              for m, targets in scan.items())}
    assert used == ALLOWED, f"stale exceptions: {ALLOWED - used}"


def test_packages_import_only_down_their_order():
    """Type-only and function-level imports included, with no exception."""
    scan = graph()
    assert {m for m in scan if m != "citeaudit"} <= {m for m in scan if rank(m) >= 0}  # every module placed
    assert against_order(scan) == []


def test_settings_is_a_leaf():
    """`settings` imports the errors, the table, the registries' names and `lazy` (its public names,
    imported on first use), nothing that judges or routes (not even inside a function or for a
    type): what builds the judge is `pipeline.run`.
    (`registry` is at the bottom of the order; a registry fills itself on first reading by importing
    the module that registers citeaudit's own objects, by its dotted name, which this scan of import
    statements does not count: `parse_strategy` and `all` of the contrast checks read the names.)"""
    scan = graph()
    assert {t.split(".")[0] for m, ts in scan.items() if m.startswith("settings") for t in ts} == {
        "settings", "errors", "table", "registry", "lazy"}


def test_the_order_check_finds_a_planted_import_up():
    assert against_order({"sources.text": {"decide.route", "errors"}, "pipeline.audit": {"sources.text"}}) == [
        ("sources.text", "decide.route")]


def test_no_module_of_the_package_imports_the_scripted_judge():
    """`citeaudit.testing` is for tests, tools and docs: the pipeline never answers with it."""
    scan = graph()
    assert "testing" in scan and sorted(m for m, targets in scan.items() if "testing" in targets) == []


def test_no_module_is_too_long():
    lengths = {str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines())
               for path in PACKAGE.rglob("*.py")}
    assert {name: n for name, n in lengths.items() if n > MAX_LINES and name not in TOO_LONG_FOR_NOW} == {}
    stale = sorted(name for name in TOO_LONG_FOR_NOW if lengths.get(name, 0) <= MAX_LINES)
    assert not stale, f"split or gone, drop them from TOO_LONG_FOR_NOW: {stale}"


@pytest.mark.parametrize("a, b, expected", [
    ("calibrate", "calibration", True), ("locate", "locators", True), ("judge", "judge_setup", True),
    ("judge", "judgesetup", True), ("config", "options", True), ("vocab", "columns", True),
    ("table", "printable", False), ("audit", "vendor_audit", False), ("report", "views", False),
    ("environment", "options", False), ("stores", "strictjson", False),
])
def test_confusable_names(a, b, expected):
    assert confusable(a, b) == confusable(b, a) == expected


def test_no_two_modules_in_one_folder_have_confusable_names():
    pairs = []
    for folder in [PACKAGE, *(d for d in PACKAGE.rglob("*") if (d / "__init__.py").is_file())]:
        names = [p.stem for p in folder.glob("*.py") if not p.stem.startswith("__")] + \
            [d.name for d in folder.iterdir() if (d / "__init__.py").is_file()]
        pairs += [(str(folder.relative_to(PACKAGE.parent)), a, b) for a, b in combinations(sorted(names), 2)
                  if confusable(a, b)]
    assert pairs == []


ENVIRONMENT = PACKAGE / "settings" / "environment.py"
# Modules outside `settings` that may touch the process environment, each with its reason.
ENVIRONMENT_PASSED_ON = {
    # the llama.cpp server's child process gets this process's whole environment (plus PYTHONPATH):
    # handed on to a subprocess, nothing in it read as a setting here
    "judge.localmodel": "passes the environment to the local server's process",
}


def environment_touches(tree: ast.AST) -> list[int]:
    """The lines that touch the process environment: `os.environ`, `os.getenv`, `os.putenv`,
    `os.unsetenv`, or any of them imported from `os`."""
    names = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}
    return sorted({node.lineno for node in ast.walk(tree)
                   if (isinstance(node, ast.Attribute) and node.attr in names
                       and isinstance(node.value, ast.Name) and node.value.id == "os")
                   or (isinstance(node, ast.ImportFrom) and node.module == "os"
                       and any(alias.name in names for alias in node.names))})


def environment_readers(path: Path = ENVIRONMENT) -> set[str]:
    """The functions of the settings module that read the environment: those that touch it, and
    those that call one that does (by name, within the module)."""
    functions = {node.name: node for node in ast.parse(path.read_text(encoding="utf-8")).body
                 if isinstance(node, ast.FunctionDef)}
    calls = {name: {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
             for name, node in functions.items()}
    readers = {name for name, node in functions.items() if environment_touches(node)}
    while grown := {name for name, called in calls.items() if called & readers} - readers:
        readers |= grown
    return readers


def settings_used(tree: ast.AST) -> set[str]:
    """The names a module takes from `settings.environment` (`from ... import x`, `config.x` where
    `config` is the module imported under any name) and `options` when it imports `settings.options`."""
    aliases, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "citeaudit.settings.environment":
            used |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module == "citeaudit.settings":
            aliases |= {alias.asname or alias.name for alias in node.names if alias.name == "environment"}
            used |= {"options" for alias in node.names if alias.name == "options"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("citeaudit.settings.options"):
            used.add("options")
        elif isinstance(node, ast.Import):
            aliases |= {alias.asname for alias in node.names
                        if alias.name == "citeaudit.settings.environment" and alias.asname}
    used |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
             and isinstance(node.value, ast.Name) and node.value.id in aliases}
    return used


def test_the_reader_scan_follows_calls_and_finds_every_kind_of_touch():
    readers = environment_readers()
    assert {"home_dir", "user_cache_dir", "source_dirs", "timeout", "use_grammar"} <= readers  # direct and through calls
    assert not {"find_input", "shipped_dir", "parse_strategy", "install_extra", "in_checkout"} & readers
    planted = ast.parse("import os\nfrom os import getenv\nx = os.environ.get('A')\ny = dict(os.environ)\nz = 1\n")
    assert environment_touches(planted) == [2, 3, 4]
    assert settings_used(ast.parse("from citeaudit.settings import environment as cfg\ncfg.cache_dir()\n"
                                   "from citeaudit.settings.options import AuditOptions\n")) == {"cache_dir", "options"}


def test_only_settings_reads_the_environment():
    """No module outside `settings` touches the process environment (`ENVIRONMENT_PASSED_ON` lists
    the exceptions, each with its reason)."""
    touching = {module_name(path): lines for path in PACKAGE.rglob("*.py")
                if not module_name(path).startswith("settings")
                and (lines := environment_touches(ast.parse(path.read_text(encoding="utf-8"))))}
    assert set(touching) == set(ENVIRONMENT_PASSED_ON), touching


def test_no_stage_reads_a_setting_or_imports_the_settings_object():
    """The stages (below `pipeline`) take values: they call no reader of `settings.environment` and
    never import `settings.options` (`AuditOptions.from_env`); constants, pure parsers and value
    checks are theirs to use."""
    readers = environment_readers() | {"options"}
    found = {module_name(path): sorted(settings_used(ast.parse(path.read_text(encoding="utf-8"))) & readers)
             for path in PACKAGE.rglob("*.py")
             if rank(module_name(path)) < rank("pipeline") and not module_name(path).startswith("settings")}
    assert {module: names for module, names in found.items() if names} == {}
