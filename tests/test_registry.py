"""The one registry shape (`citeaudit.registry`): names, the error for an unknown one, and plugins read
from real entry points (a `*.dist-info` folder put on `sys.path`, as pip installs one), broken ones
refused with a message naming the package and the fix. tests/test_plugins.py installs a real plugin
package into a virtual environment and uses it from the command line."""

import sys
from dataclasses import dataclass

import pytest
from click.testing import CliRunner

from citeaudit import registry
from citeaudit.errors import InputError
from citeaudit.registry import PluginError, Registry

GROUP = "citeaudit.test_widgets"


@dataclass(frozen=True)
class Widget:
    name: str
    size: int = 1


def widgets():
    made = Registry("widget", GROUP, "citeaudit.errors", required=("name", "size"), hint="--widget")
    made.register("screw", Widget("screw"))
    return made


def install(tmp_path, monkeypatch, entry_points: str, module: str = "", package: str = "widget-plugin"):
    """A package installed the way pip leaves one: its module, and its dist-info with the entry points."""
    dist = tmp_path / f"{package.replace('-', '_')}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(entry_points)
    if module:
        (tmp_path / "widget_plugin_mod.py").write_text(module)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "widget_plugin_mod", raising=False)
    registry.rescan_entry_points()


def test_names_keep_their_order_and_an_unknown_one_is_refused_with_the_choices():
    made = widgets()
    made.register("nail", Widget("nail"))
    assert made.names() == ("screw", "nail") and list(made) == ["screw", "nail"] and "nail" in made
    assert made.get("nail") == Widget("nail") and made.find("bolt") is None
    with pytest.raises(InputError, match=r"^unknown widget 'bolt': use one of screw, nail \(--widget\)$"):
        made.get("bolt")
    with pytest.raises(ValueError, match="widget 'nail' is registered already"):
        made.register("nail", Widget("nail", 2))
    with pytest.raises(ValueError, match="is not a widget: it has no name, size"):
        made.register("pin", object())
    with pytest.raises(ValueError, match="lower-case letters"):
        made.register("Two Words", Widget("Two Words"))
    assert made.names() == ("screw", "nail")


def test_a_plugins_object_or_class_is_registered_after_the_built_ins(tmp_path, monkeypatch):
    install(tmp_path, monkeypatch, f"[{GROUP}]\nbolt = widget_plugin_mod:BOLT\nrivet = widget_plugin_mod:Rivet\n",
            "from dataclasses import dataclass\n"
            "@dataclass(frozen=True)\nclass Widget:\n    name: str\n    size: int = 3\n"
            "BOLT = Widget('bolt')\n"
            "class Rivet:\n    name = 'rivet'\n    size = 4\n")
    made = widgets()
    assert "widget_plugin_mod" not in sys.modules  # nothing is read before the first reading
    assert made.names() == ("screw", "bolt", "rivet")
    assert made.get("bolt").size == 3 and made.get("rivet").size == 4  # an object, and a class made into one
    assert made.plugin_of("bolt") == "widget-plugin" and made.plugin_of("screw") is None


FIX = r"Fix: upgrade widget-plugin to a version made for this citeaudit, or uninstall it \(pip uninstall widget-plugin\)\."


@pytest.mark.parametrize(("entry", "module", "says"), [
    ("bolt = no_such_module:BOLT", "",
     r"failed to load: ModuleNotFoundError: No module named 'no_such_module'\. "),
    ("bolt = widget_plugin_mod:BOLT", "BOLT = 1 / 0\n", r"failed to load: ZeroDivisionError: division by zero\. "),
    ("screw = widget_plugin_mod:SCREW", "class W:\n    name = 'screw'\n    size = 1\nSCREW = W()\n",
     r"names a widget 'screw' that citeaudit itself registered already\. "),
    ("bolt = widget_plugin_mod:BOLT", "class W:\n    name = 'bolt'\nBOLT = W()\n",
     r"is not a widget citeaudit can take: .* it has no size\. "),
    ("bolt = widget_plugin_mod:BOLT", "class W:\n    name = 'nut'\n    size = 1\nBOLT = W()\n",
     r"makes a widget named 'nut', not 'bolt': the entry point's name is the one it is registered under\. "),
])
def test_a_broken_plugin_is_named_with_the_fix(tmp_path, monkeypatch, entry, module, says):
    install(tmp_path, monkeypatch, f"[{GROUP}]\n{entry}\n", module)
    made = widgets()
    where = rf"^plugin widget-plugin's entry point {entry.split(' = ')[0]} = '{entry.split(' = ')[1]}' \(group '{GROUP}'\) "
    with pytest.raises(PluginError, match=where + says + FIX + "$"):
        made.names()
    with pytest.raises(PluginError, match=says):  # every reading says it again, nothing half-registered
        made.get("screw")


@pytest.fixture
def broken_strategy_plugin(tmp_path, monkeypatch):
    install(tmp_path, monkeypatch, "[citeaudit.strategies]\nvote = widget_plugin_mod:Vote\n",
            "import no_such_dependency\n", package="citeaudit-vote")
    registry.STRATEGIES.reload_plugins()
    yield
    monkeypatch.undo()
    registry.STRATEGIES.reload_plugins()  # the real ones again
    assert "vote" not in registry.STRATEGIES.names()


def test_the_command_line_reports_a_broken_plugin_and_exits_2(broken_strategy_plugin):
    from citeaudit.surfaces.cli import main

    result = CliRunner().invoke(main, ["audit", "--help"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: plugin citeaudit-vote's entry point vote = 'widget_plugin_mod:Vote' "
                                    "(group 'citeaudit.strategies') failed to load: ModuleNotFoundError: No module "
                                    "named 'no_such_dependency'. Fix: upgrade citeaudit-vote")
    assert "Traceback" not in result.output
