"""Collection of the doctests in `src/` (`--doctest-modules`, pyproject.toml): a module with no
`>>>` in it holds no doctest, so it is not imported to look for one. Every pytest process (each
xdist worker) collects, and importing the modules without doctests (scikit-learn, the vendors'
SDKs, the notebook stack behind them) cost each one seconds. The tests under `tests/` import what
they use."""

from pathlib import Path

SRC = Path(__file__).resolve().parent / "src"


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    if collection_path.suffix == ".py" and SRC in collection_path.parents:
        return ">>>" not in collection_path.read_text(encoding="utf-8") or None
    return None
