"""The public API: notebooks import `citeaudit`'s public names only (`__all__`), never a
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


def test_the_declared_names_and_the_type_checkers_block_agree():
    """`citeaudit._HOME` declares each public name and its module; the `TYPE_CHECKING` block says
    the same for type checkers; and each name is the object its module defines."""
    import importlib

    tree = ast.parse((ROOT / "src" / "citeaudit" / "__init__.py").read_text(encoding="utf-8"))
    block = next(node for node in tree.body
                 if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    typed = {alias.asname or alias.name: (node.module, alias.name)
             for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    declared = {name: home if isinstance(home, tuple) else (home, name) for name, home in citeaudit._HOME.items()}
    assert declared == typed and list(citeaudit.__all__) == list(citeaudit._HOME)
    assert [name for name, (module, attribute) in declared.items()
            if getattr(importlib.import_module(module), attribute) is not getattr(citeaudit, name)] == []


def private_names(path: Path) -> list[str]:
    """Every `_name` (not a dunder) `path` imports from citeaudit, or reads as an attribute of a
    citeaudit module it imported."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               and (node.module or "").startswith("citeaudit") for alias in node.names}
    modules |= {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names if alias.name.startswith("citeaudit")}
    private = lambda name: name.startswith("_") and not name.startswith("__")  # noqa: E731
    found = [f"{node.module}.{alias.name}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             and (node.module or "").startswith("citeaudit") for alias in node.names if private(alias.name)]
    found += [f"{node.value.id}.{node.attr}" for node in ast.walk(tree) if isinstance(node, ast.Attribute)
              and isinstance(node.value, ast.Name) and node.value.id in modules and private(node.attr)]
    return found


def test_the_private_name_scan_finds_both_kinds(tmp_path):
    planted = tmp_path / "t.py"
    planted.write_text("from citeaudit.locate.textindex import _FOLD, normalize\nimport citeaudit as ca\n"
                       "from citeaudit.pipeline import audit\nca.__all__\naudit._ask\n")
    assert private_names(planted) == ["citeaudit.locate.textindex._FOLD", "audit._ask"]


def test_tests_tools_and_notebooks_use_no_private_name():
    """A private name is free to change; what the tests, tools and notebooks need is public (tests
    may read a module's public names below the package's API, to test it in parts)."""
    paths = [*(ROOT / "tests").rglob("*.py"), *(ROOT / "tools").glob("*.py"), *(ROOT / "notebooks").glob("*.py")]
    paths.remove(Path(__file__))  # this file reads the declaration itself (`citeaudit._HOME`)
    found = {str(path.relative_to(ROOT)): names for path in sorted(paths) if (names := private_names(path))}
    assert found == {}
