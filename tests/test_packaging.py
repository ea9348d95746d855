"""The install as a package: which folders are in force from a checkout and from an installed
package, advice that names a Makefile target only in a checkout, the extras that the base install
leaves out, and requirements*.txt pinning what pyproject.toml asks for. (The wheel itself is built,
installed and run in tests/test_wheel.py.)"""

import sys
import tomllib

import pytest
from click.testing import CliRunner
from conftest import DATA, ROOT
from packaging.requirements import Requirement

from citeaudit.decide.calibration import fit_command, load_calibration, save_profile_file
from citeaudit.errors import MissingExtraError
from citeaudit.settings import environment as config
from citeaudit.settings.environment import DEFAULT_MODEL
from citeaudit.settings.options import AuditOptions
from citeaudit.surfaces import cli


@pytest.fixture
def installed(monkeypatch, tmp_path):
    """citeaudit as an installed package sees it: no checkout around it, HOME a fresh folder, none
    of the folder variables set."""
    monkeypatch.setattr(config, "checkout_dir", lambda: None)
    for name in ("CITEAUDIT_CACHE_DIR", "CITEAUDIT_REVIEW_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home" / ".local" / "share" / "citeaudit"


def test_in_a_checkout_the_shipped_files_are_the_checkouts_and_yours_stay_in_ignored_folders(monkeypatch):
    for name in ("CITEAUDIT_CACHE_DIR", "CITEAUDIT_REVIEW_DIR"):
        monkeypatch.delenv(name)
    assert config.checkout_dir() == ROOT and config.shipped_dir() == ROOT
    assert config.cache_dir() == ROOT / "cache" and config.shipped_data_dir() == DATA
    assert config.user_cache_dir() == ROOT / "cache" / "local" and config.review_dir() == ROOT / "reviews"
    assert config.find_input("data/rfc7519_citations.json").resolve() == DATA / "rfc7519_citations.json"


def test_installed_what_you_make_goes_to_your_user_folder(installed):
    assert config.home_dir() == installed
    assert config.user_cache_dir() == installed / "cache"
    assert config.review_dir() == installed / "reviews"
    assert config.download_dir() == installed / "sources" and config.models_dir() == installed / "models"
    # the package's own shipped folder is never the one written, even when named as the shipped folder
    assert config.user_cache_dir(config.cache_dir()) == installed / "cache"
    yours = [folder for _, folder, origin in config.folders() if origin == "platformdirs user data folder"]
    assert len(yours) == 6 and all(folder.is_relative_to(installed) for folder in yours)


def test_citeaudit_home_and_the_folder_variables_override_in_that_order(installed, monkeypatch, tmp_path):
    monkeypatch.setenv("CITEAUDIT_HOME", str(tmp_path / "mine"))
    assert config.user_cache_dir() == tmp_path / "mine" / "cache"
    assert config.review_dir() == tmp_path / "mine" / "reviews"
    rows = {name: (path, origin) for name, path, origin in config.folders()}
    assert rows["review stores"] == (tmp_path / "mine" / "reviews", "CITEAUDIT_HOME")
    monkeypatch.setenv("CITEAUDIT_USER_CACHE", str(tmp_path / "uc"))
    monkeypatch.setenv("CITEAUDIT_REVIEW_DIR", str(tmp_path / "rv"))
    assert (config.user_cache_dir(), config.review_dir()) == (tmp_path / "uc", tmp_path / "rv")
    rows = {name: (path, origin) for name, path, origin in config.folders()}
    assert rows["your cache (recordings, calibrations, profiles, store)"] == (tmp_path / "uc", "CITEAUDIT_USER_CACHE")


def test_citeaudit_home_in_a_checkout_takes_your_state_out_of_it(monkeypatch, tmp_path):
    for name in ("CITEAUDIT_CACHE_DIR", "CITEAUDIT_REVIEW_DIR"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("CITEAUDIT_HOME", str(tmp_path))
    assert config.cache_dir() == ROOT / "cache"  # the shipped recordings are still the checkout's
    assert (config.user_cache_dir(), config.review_dir()) == (tmp_path / "cache", tmp_path / "reviews")


def test_fitting_advice_names_make_only_in_a_checkout(monkeypatch):
    assert fit_command(DEFAULT_MODEL, "panel") == "make calibrate-qwen"
    monkeypatch.setattr(config, "checkout_dir", lambda: None)
    advice = fit_command(DEFAULT_MODEL, "panel")
    assert advice.startswith(f"citeaudit judge-setup --model {DEFAULT_MODEL} --strategy panel") and "make" not in advice


def test_where_prints_every_folder_and_setting_with_its_origin(monkeypatch, isolated_environment):
    monkeypatch.setenv("CITEAUDIT_STRATEGY", "choice")
    result = CliRunner().invoke(cli.main, ["where"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(line.split()[:2] == ["shipped", "files"] and str(ROOT) in line and "[checkout" in line for line in lines)
    assert any(line.startswith("  shipped recordings") and "[CITEAUDIT_CACHE_DIR]" in line for line in lines)
    assert any(line.split()[:1] == ["strategy"] and "choice  [CITEAUDIT_STRATEGY]" in line for line in lines)
    assert any(line.split()[:2] == ["cache", "mode"] and "replay  [default]" in line for line in lines)
    # the isolated cache folder has no calibration: none is in force, and where says so
    assert any("none for" in line and "the default threshold 0.8" in line for line in lines)


def test_where_names_the_profile_in_force_not_the_models_calibration(monkeypatch, isolated_environment):
    """CITEAUDIT_PROFILE routes every audit by the profile, so `where` shows that file, or why it
    cannot be read (the shipped calibration would be the wrong answer)."""
    monkeypatch.setenv("CITEAUDIT_PROFILE", "team-a")
    result = CliRunner().invoke(cli.main, ["where"])
    assert result.exit_code == 0, result.output
    assert "  cannot tell: no profile 'team-a' in " in result.output
    shipped = load_calibration(DEFAULT_MODEL, "panel", ROOT / "cache")
    assert shipped is not None
    saved = save_profile_file("team-a", shipped, config.user_cache_dir())
    result = CliRunner().invoke(cli.main, ["where"])
    assert f"  {saved}  [profile team-a]" in result.output.splitlines()
    assert "qwen2.5-coder-1.5b-instruct-q4_k_m.panel.json" not in result.output


def test_where_shows_a_setting_that_does_not_read_and_still_the_folders(monkeypatch):
    monkeypatch.setenv("CITEAUDIT_THRESHOLD", "abc")
    result = CliRunner().invoke(cli.main, ["where"])
    assert result.exit_code == 0, result.output
    assert "  cannot tell: CITEAUDIT_THRESHOLD='abc' is not a number from 0 to 1" in result.output
    assert any(line.split()[:1] == ["threshold"] and "[CITEAUDIT_THRESHOLD, invalid:" in line
               for line in result.output.splitlines())
    assert "  shipped files" in result.output


def test_a_batch_without_the_dask_extra_says_which_extra_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "dask", None)  # what an install without [dask] has
    result = CliRunner().invoke(cli.main, ["batch", str(DATA / "batch" / "example.jsonl"), "--locate-only", "--output", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 2, result.output
    assert "pip install -e '.[dask]'" in result.output and "Traceback" not in result.output  # in a checkout
    with pytest.raises(MissingExtraError, match=r"plotting needs matplotlib, .*\[lab\]"):
        monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
        monkeypatch.delitem(sys.modules, "citeaudit.surfaces.plots", raising=False)
        import citeaudit.surfaces.plots  # noqa: F401


def _pins(name: str) -> dict[str, str]:
    """The `name==version` lines of a requirements file and those it includes (-r)."""
    pins: dict[str, str] = {}
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r "):
            pins.update(_pins(line[3:].strip()))
        elif "==" in line:
            requirement = Requirement(line)
            pins[requirement.name.lower()] = str(requirement.specifier).removeprefix("==")
    return pins


@pytest.mark.parametrize(("group", "requirements"), [
    ("base", "requirements.txt"), ("dask", "requirements.txt"), ("lab", "requirements-lab.txt"),
    ("vendors", "requirements-dev.txt"), ("local", "requirements-test.txt"), ("docs", "requirements-docs.txt")])
def test_requirements_pin_what_pyproject_asks_for(group, requirements):
    """`make` installs requirements*.txt, pip the pyproject's ranges: each package of the base install
    and of each extra is pinned in the file `make` installs for it, at a version its range allows."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = project["dependencies"] if group == "base" else project["optional-dependencies"][group]
    pins = _pins(requirements)
    for line in wanted:
        requirement = Requirement(line)
        name = requirement.name.lower()
        assert name in pins, f"{name} ({group}) is not pinned in {requirements}"
        assert requirement.specifier.contains(pins[name]), f"{requirements} pins {name}=={pins[name]}, not in {line}"


def test_the_base_install_leaves_the_extras_out():
    base = {Requirement(line).name.lower() for line in
            tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]}
    assert not base & {"dask", "distributed", "matplotlib", "ipywidgets", "jupyterlab", "llama-cpp-python"}


def test_installed_the_missing_extra_is_named_for_pip_and_never_for_the_checkout(installed, monkeypatch):
    from citeaudit.extras import require
    from citeaudit.judge.localmodel import llama_cpp_fix

    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(MissingExtraError, match=r"a batch needs dask, .*: pip install 'citeaudit\[dask\]' \(the dask extra"):
        require("dask", "dask", "a batch")
    assert "pip install 'citeaudit[local]'" in llama_cpp_fix() and "project folder" not in llama_cpp_fix()


def test_an_empty_model_variable_is_unset_not_a_model_named_nothing(monkeypatch):
    monkeypatch.setenv("CITEAUDIT_MODEL", "")
    assert AuditOptions.from_env().model == DEFAULT_MODEL
    assert ("model", DEFAULT_MODEL, "default") in config.settings_in_force()
