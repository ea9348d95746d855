"""The public API: `citeaudit` holds the analyst's verbs and nouns (a few dozen names); the rest is
public in named modules, each package's `__all__` and the modules of `citeaudit.PUBLIC_MODULES`.
Tools, notebooks and the docs' code import public names only, never a module path inside a
package, so the package's internals can move without breaking them."""

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import citeaudit

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(f"citeaudit.{m.name}" for m in pkgutil.iter_modules(citeaudit.__path__) if m.ispkg)


def public(module: str, name: str | None = None) -> bool:
    """Whether `module` is public (citeaudit, a package, or one of `PUBLIC_MODULES`), and `name`
    one of its public names: in its `__all__` (the top and the packages), not `_private` (the
    public modules), or a public module itself."""
    if module == "citeaudit" or module in PACKAGES:
        if name is None:
            return True
        return name in importlib.import_module(module).__all__ or public(f"{module}.{name}")
    if module in citeaudit.PUBLIC_MODULES:
        return name is None or not name.startswith("_") or public(f"{module}.{name}")
    return False


def private_imports(path: Path) -> list[str]:
    """Every import in `path` of a citeaudit name that is not public, and every `ca.name` read of a
    name not in `citeaudit.__all__`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("citeaudit"):
            module = node.module
            found += [f"{module}.{a.name}" for a in node.names if not public(module, a.name)]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("citeaudit") and not public(a.name)]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ca" \
                and node.attr not in citeaudit.__all__:
            found.append(f"ca.{node.attr}")
    return found


def test_the_scan_finds_a_private_import(tmp_path):
    planted = tmp_path / "nb.py"
    planted.write_text("import citeaudit as ca\nfrom citeaudit.judge.cache import CallCache\n"
                       "from citeaudit import table, step1_view\nfrom citeaudit.surfaces import step1_view, cli\n"
                       "from citeaudit.decide.contrast import entities\nimport citeaudit.judge.judge\n"
                       "ca.audit_quotes\nca.project_dir\n")
    assert private_imports(planted) == ["citeaudit.judge.cache.CallCache", "citeaudit.step1_view",
                                        "citeaudit.surfaces.cli", "citeaudit.judge.judge", "ca.project_dir"]


def test_tools_notebooks_and_docs_import_only_public_names():
    paths = [*(ROOT / "tools").glob("*.py"), *(ROOT / "notebooks").glob("*.py"), *(ROOT / "docs").glob("*.py")]
    found = {str(path.relative_to(ROOT)): names for path in sorted(paths) if (names := private_imports(path))}
    assert paths and found == {}


def test_the_top_level_is_a_few_dozen_names():
    assert 30 <= len(citeaudit.__all__) <= 50
    assert {"audit_quotes", "load_rfc", "record_review", "write_report", "fit_calibration", "Audit",
            "AuditOptions", "Verdict"} <= set(citeaudit.__all__)


@pytest.mark.parametrize("package", ["citeaudit", *PACKAGES])
def test_every_public_name_exists_and_none_is_shadowed_by_a_module(package):
    """Each name of a package's `__all__` is an object, not a sub-module that an import of the
    sub-module would put in the name's place (why `decide/route.py` became `routing.py`)."""
    module = importlib.import_module(package)
    shadowed = [name for name in module.__all__
                if name in {sub.name for sub in pkgutil.iter_modules(module.__path__)}]
    assert shadowed == []
    assert [name for name in module.__all__ if not hasattr(module, name)] == []


@pytest.mark.parametrize("package", ["citeaudit", *(p for p in PACKAGES if p != "citeaudit.sources")])
def test_the_declared_names_and_the_type_checkers_block_agree(package):
    """A package's `_HOME` declares each public name and its module; its `TYPE_CHECKING` block
    says the same for type checkers; and each name is the object its module defines."""
    module = importlib.import_module(package)
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body
                 if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    typed = {alias.asname or alias.name: (node.module, alias.name)
             for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    declared = {name: home if isinstance(home, tuple) else (home, name) for name, home in module._HOME.items()}
    assert declared == typed and list(module.__all__) == list(module._HOME)
    assert [name for name, (home, attribute) in declared.items()
            if getattr(importlib.import_module(home), attribute) is not getattr(module, name)] == []


def test_a_moved_name_says_where_it_lives_now():
    with pytest.raises(AttributeError, match=r"citeaudit.step1_view is in citeaudit.surfaces now: "
                                             r"from citeaudit.surfaces import step1_view"):
        _ = citeaudit.step1_view
    moved = {name: home for home, names in citeaudit._MOVED.items() for name in names.split()}
    assert [name for name, home in moved.items() if not public(home, name)] == []
    assert not set(moved) & set(citeaudit.__all__)


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
    paths.remove(Path(__file__))  # this file reads the declarations themselves (`_HOME`, `_MOVED`)
    found = {str(path.relative_to(ROOT)): names for path in sorted(paths) if (names := private_names(path))}
    assert found == {}
