"""The autouse `isolated_environment` fixture (conftest.py): no test sees a developer's settings, and
what a test writes by default (the cache store, recordings, reviews) lands in its own temporary
folder, never in the checkout."""

import ast
import os
import re
from pathlib import Path

from conftest import KEPT, PREFIXES, ROOT

from citeaudit import AuditOptions, AuditRun
from citeaudit.decide.reviews import review_store_path
from citeaudit.settings import environment as config

# what the fixture itself sets
SET_BY_FIXTURE = ("CITEAUDIT_CACHE_DIR", "CITEAUDIT_REVIEW_DIR")


def test_no_setting_reaches_a_test_but_the_data_folder_and_the_temporary_folders():
    left = sorted(name for name in os.environ if name.startswith(PREFIXES))
    assert set(left) <= {*KEPT, *SET_BY_FIXTURE}, left
    assert config.model() == config.DEFAULT_MODEL and config.strategy() == config.DEFAULT_STRATEGY
    assert config.cache_mode() == "replay" and config.base_url() is None and config.api_key() is None
    assert (config.timeout(), config.retries(), config.concurrency()) == (
        config.DEFAULT_TIMEOUT, config.DEFAULT_RETRIES, config.DEFAULT_CONCURRENCY)


def test_every_variable_citeaudit_reads_is_one_the_fixture_clears():
    """A new setting read anywhere in src/ is cleared too, as long as it keeps one of the prefixes."""
    text = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "src" / "citeaudit").rglob("*.py"))
    read = set(re.findall(r"""(?:environ\.get\(|environ\[|getenv\()\s*["'](\w+)["']""", text))
    assert "CITEAUDIT_MODEL" in read and "OPENAI_BASE_URL" in read  # the scan finds them
    assert all(name.startswith(PREFIXES) for name in read), sorted(read)


def test_default_cache_and_review_folders_are_temporary_and_outside_the_checkout(isolated_environment):
    folder = Path(isolated_environment).resolve()
    assert not folder.is_relative_to(ROOT)
    assert config.cache_dir() == folder / "cache" and config.review_dir() == folder / "reviews"
    with AuditRun(AuditOptions.from_env()).cache as cache:  # what an audit opens when nothing names a folder
        assert cache.store_dir == folder / "cache" / "local" / "store"  # the user cache, inside the cache folder
        assert cache.read_also == (folder / "cache",)
    assert review_store_path("notebook", config.review_dir()).parent == folder / "reviews"
    assert not (folder / "cache").joinpath("store").is_relative_to(ROOT)


def test_each_test_gets_its_own_folders(isolated_environment, tmp_path):
    assert Path(isolated_environment) != tmp_path  # the test's tmp_path stays the test's own
    assert not any(Path(isolated_environment).iterdir())  # nothing there until something writes


ENVIRONMENT_MODULE = Path("settings") / "environment.py"
# reads of the environment that are not settings, each with why: (module, the line's code)
NOT_A_SETTING = {
    # the llama.cpp server's child process gets this process's whole environment (plus PYTHONPATH);
    # nothing in it is read as a setting here
    (Path("judge") / "localmodel.py", "env = dict(os.environ)"),
}
ENVIRONMENT_READ = re.compile(r"\b(?:environ|getenv|putenv|unsetenv)\b")


def environment_reads(package: Path) -> set[tuple[Path, str]]:
    """Every line of `package` outside `settings/environment.py` that touches the environment."""
    return {(path.relative_to(package), line.strip()) for path in package.rglob("*.py")
            if path.relative_to(package) != ENVIRONMENT_MODULE
            for line in path.read_text(encoding="utf-8").splitlines()
            if ENVIRONMENT_READ.search(line.split("#")[0])}


def test_the_environment_is_read_in_settings_environment_only():
    """Settings once: every environment variable is read by `settings/environment.py`, so the
    commands, the library and the notebooks see the same settings (`AuditOptions.from_env`)."""
    package = ROOT / "src" / "citeaudit"
    assert environment_reads(package) == NOT_A_SETTING
    read_there = environment_reads(package.parent) - {(Path("citeaudit") / p, c) for p, c in NOT_A_SETTING}
    assert read_there and all(path == Path("citeaudit") / ENVIRONMENT_MODULE for path, _ in read_there)


def test_the_environment_scan_finds_every_way_to_read_it(tmp_path):
    (tmp_path / "settings").mkdir()
    (tmp_path / "settings" / "environment.py").write_text("import os\nA = os.environ.get('A')\n")
    (tmp_path / "leak.py").write_text("import os\nfrom os import environ, getenv\nB = os.environ['B']\nC = getenv('C')\n"
                                      "D = environ.get('D')  # noqa\nE = 1  # os.environ in a comment\n")
    assert {line for _, line in environment_reads(tmp_path)} == {
        "from os import environ, getenv", "B = os.environ['B']", "C = getenv('C')", "D = environ.get('D')  # noqa"}


def threshold_defaults(package: Path) -> list[tuple[str, str, float]]:
    """(module, name, number) of every threshold given a number from 0 to 1 as its value or default:
    a parameter's default, a field's or a constant's value whose name says threshold."""
    found: list[tuple[str, str, float]] = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            pairs: list[tuple[str, ast.expr | None]] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                positional = node.args.posonlyargs + node.args.args
                pairs += [(a.arg, d) for a, d in zip(positional[len(positional) - len(node.args.defaults):],
                                                     node.args.defaults)]
                pairs += [(a.arg, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                pairs.append((node.target.id, node.value))
            elif isinstance(node, ast.Assign):
                pairs += [(target.id, node.value) for target in node.targets if isinstance(target, ast.Name)]
            numbers = [(name, value.value) for name, value in pairs if "threshold" in name.lower()
                       and isinstance(value, ast.Constant) and isinstance(value.value, (int, float))
                       and not isinstance(value.value, bool)]
            found += [(str(path.relative_to(package)), name, float(n)) for name, n in numbers if 0 <= n <= 1]
    return sorted(found)


def test_the_default_threshold_is_one_constant(tmp_path):
    """`DEFAULT_THRESHOLD` (settings/environment.py) is the only default routing threshold: no other
    module writes its own number as a threshold's default (a match score's 90 of 100 is not one)."""
    assert threshold_defaults(ROOT / "src" / "citeaudit") == [
        ("settings/environment.py", "DEFAULT_THRESHOLD", config.DEFAULT_THRESHOLD)]
    (tmp_path / "widget.py").write_text("class W:\n    threshold: float = 0.8\n\n\n"
                                        "def route(table, threshold=0.8, *, min_threshold=0.5, near_threshold=90):\n"
                                        "    pass\n")
    assert threshold_defaults(tmp_path) == [("widget.py", "min_threshold", 0.5), ("widget.py", "threshold", 0.8),
                                            ("widget.py", "threshold", 0.8)]
