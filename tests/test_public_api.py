"""Notebooks are users: they import `citeaudit`'s public names only (`__all__`), never a
module path inside the package, so the package's internals can move without breaking them."""

import ast
from pathlib import Path

import citeaudit

ROOT = Path(__file__).resolve().parents[1]


def private_imports(path: Path) -> list[str]:
    """Every import in `path` of a citeaudit name that is not public: a sub-module path, or a name
    `from citeaudit import` that is not in `citeaudit.__all__`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("citeaudit."):
                found.append(f"from {node.module} import ...")
            elif node.module == "citeaudit":
                found += [f"citeaudit.{a.name}" for a in node.names if a.name not in citeaudit.__all__]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("citeaudit.")]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ca" \
                and node.attr not in citeaudit.__all__:
            found.append(f"ca.{node.attr}")
    return found


def test_the_scan_finds_a_private_import(tmp_path):
    planted = tmp_path / "nb.py"
    planted.write_text("import citeaudit as ca\nfrom citeaudit.judge.cache import CallCache\n"
                       "from citeaudit import table\nca.audit_quotes\nca.project_dir\nca.settings\n")
    assert private_imports(planted) == ["from citeaudit.judge.cache import ...", "citeaudit.table", "ca.settings"]


def test_notebooks_import_only_public_names():
    found = {path.name: private_imports(path) for path in sorted((ROOT / "notebooks").glob("*.py"))}
    assert found and {name: names for name, names in found.items() if names} == {}


def test_every_public_name_exists():
    assert [name for name in citeaudit.__all__ if not hasattr(citeaudit, name)] == []
