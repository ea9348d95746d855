"""The package's shape: no module imports another that imports it back (at module level or inside a
function), so every stage can be read, imported and tested on its own."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "citeaudit"


def module_name(path: Path) -> str:
    """`citeaudit/pipeline/audit.py` -> `pipeline.audit` (a package's `__init__` is the package)."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """The package modules `path` imports anywhere, except under `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(sub) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for sub in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and id(node) not in typing_only and node.module \
                and (node.module == "citeaudit" or node.module.startswith("citeaudit.")):
            base = node.module.removeprefix("citeaudit").removeprefix(".")
            for alias in node.names:  # `from citeaudit.x import y`: the module x.y when it is one, else x
                candidate = f"{base}.{alias.name}" if base else alias.name
                found.add(candidate if (PACKAGE / candidate.replace(".", "/")).with_suffix(".py").is_file()
                          or (PACKAGE / candidate.replace(".", "/")).is_dir() else base)
    return found


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


def test_cycles_finds_a_planted_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"], ["b", "c", "a", "b"],
                                                                        ["c", "a", "b", "c"]]


def test_no_import_cycles_in_the_package():
    graph = {module_name(path): imports_of(path) - {module_name(path), ""}
             for path in PACKAGE.rglob("*.py") if path.name != "__init__.py"}
    assert graph["pipeline.audit"] and graph["surfaces.cli.app"]  # the scan reads imports
    assert cycles(graph) == []
