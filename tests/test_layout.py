"""The package's shape: no module imports another that imports it back (at module level or inside a
function), so every stage can be read, imported and tested on its own."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "citeaudit"


def imports_of(path: Path) -> set[str]:
    """The package modules `path` imports anywhere, except under `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(sub) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for sub in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and id(node) not in typing_only:
            found |= {node.module.split(".")[0]} if node.module else {alias.name for alias in node.names}
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
    graph = {path.stem: imports_of(path) for path in PACKAGE.glob("*.py")}
    assert graph["audit"] and graph["cli"]  # the scan reads imports
    assert cycles(graph) == []
