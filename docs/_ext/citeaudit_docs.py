"""The parts of citeaudit's documentation built from the code, as a Sphinx extension.

- the cookbook: `notebooks/*.ipynb` copied into `docs/cookbook/` at build start (git ignores the
  copies; the percent scripts stay the source), so that myst-nb executes each into its page;
- `citeaudit-api`: the top level's names, then autodoc of every package's public names (`__all__`)
  under its stage's heading, then the public modules;
- `citeaudit-settings`: the table of every environment variable the settings module reads, which
  function reads it, what that function's docstring says and the default it falls back to, found
  by reading `settings/environment.py` (so a new variable is in the table without anyone typing it);
- `citeaudit-measurement`: a measuring tool's saved figures (`docs/measurements/data/NAME.json`:
  the command, the date, the machine and what the tool printed), shown as the tool printed them
  (`:markdown:` when it prints Markdown tables);
- docstrings written in the project's Markdown-ish style (`name` for code) read as reStructuredText
  literals, so autodoc renders them without warnings.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SETTINGS = ROOT / "src" / "citeaudit" / "settings" / "environment.py"
MEASUREMENTS = DOCS / "measurements" / "data"

# the stages of the pipeline, in its order, as the API page groups the public names
STAGES = [
    ("sources", "Documents (load)"),
    ("citations", "Citations (input)"),
    ("locate", "Step 1: locate"),
    ("judge", "Step 2: judge"),
    ("decide", "Steps 3 and 4: route, review, decide"),
    ("pipeline", "Running the stages"),
    ("calibrate", "Calibration"),
    ("workflows", "Workflows"),
    ("surfaces", "What people see (surfaces)"),
    ("settings", "Settings"),
    ("table", "The table's words"),
    ("errors", "Errors"),
]
# functions that list the variables for `citeaudit where` rather than read one setting
LISTINGS = {"folders", "settings_in_force", "_origin", "_in_checkout_home"}


def copy_notebooks(app: Sphinx) -> None:
    """notebooks/*.ipynb into docs/cookbook/, rewritten only when changed (Sphinx and jupyter-cache
    then rebuild only what changed)."""
    target = DOCS / "cookbook"
    for notebook in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        copy = target / notebook.name
        if not copy.exists() or copy.read_bytes() != notebook.read_bytes():
            shutil.copyfile(notebook, copy)


def notebook_environment() -> None:
    """What the notebooks' kernels see at build time: replay from the shipped recordings, no key, no
    endpoint, and a scratch folder for what they make (the developer's own recordings, calibrations
    and reviews never change a page)."""
    scratch = Path(tempfile.mkdtemp(prefix="citeaudit-docs-"))
    for name in [n for n in os.environ if n.startswith("CITEAUDIT_") and n not in ("CITEAUDIT_DATA_DIR",
                                                                                   "CITEAUDIT_PUBLIC_DIR")]:
        if not name.startswith("CITEAUDIT_DOCS_"):
            del os.environ[name]
    os.environ.pop("OPENAI_API_KEY", None)
    # CITEAUDIT_HOME too: what a notebook builds (the public sets of notebook 04, build/) goes there,
    # not into the checkout, where a test run's notebooks build the same files at the same time
    os.environ.update({"CITEAUDIT_CACHE_MODE": "replay", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                       "CITEAUDIT_HOME": str(scratch), "CITEAUDIT_USER_CACHE": str(scratch / "cache"),
                       "CITEAUDIT_REVIEW_DIR": str(scratch / "reviews")})


# ---- docstrings ---------------------------------------------------------------------------------

_CODE = re.compile(r"(?<![`:])`([^`\n]+)`(?!`)")
_SPECIAL = re.compile(r"(\*|\||(?<=\w)_(?=\W|$))")


def rst_line(line: str) -> str:
    """One docstring line in the project's style as reStructuredText: `code` becomes a literal, and
    `*`, `|` and a word's trailing `_` outside literals are escaped (they are text here, not markup)."""
    parts = re.split(r"(``[^`]*``)", _CODE.sub(lambda m: "``" + m.group(1) + "``", line))
    return "".join(p if p.startswith("``") else _SPECIAL.sub(r"\\\1", p) for p in parts)


def docstring_as_rst(app: Sphinx, what: str, name: str, obj: object, options: dict, lines: list[str]) -> None:
    """Rewrites autodoc's docstring lines in place: prose lines by `rst_line`, doctest blocks as they
    are; an indented run after prose is a literal block (tables and examples in the docstrings)."""
    joined: list[str] = []
    for line in lines:  # a `literal` broken across two lines of prose is put back on one
        if joined and joined[-1].count("`") % 2 and line.strip() and not line.strip().startswith(">>>"):
            joined[-1] = joined[-1] + " " + line.strip()
        else:
            joined.append(line)
    out: list[str] = []
    in_doctest = False
    for line in joined:
        stripped = line.strip()
        if stripped.startswith(">>>"):
            if not in_doctest and out and out[-1].strip():
                out.append("")
            in_doctest = True
            out.append(line)
            continue
        if in_doctest and stripped:
            out.append(line)
            continue
        in_doctest = False
        if line.startswith(" ") and stripped:
            if out and out[-1].strip() and not out[-1].startswith(" "):
                out[-1] = out[-1] + " ::" if not out[-1].endswith("::") else out[-1]
                out.append("")
            elif (not out or not out[-1].strip()) and not any(o.endswith("::") for o in out[-3:]):
                out += ["::", ""]
            out.append(line)
            continue
        out.append(rst_line(line))
    lines[:] = out


# ---- the API page -------------------------------------------------------------------------------

def directive_for(obj: object) -> str:
    """The autodoc directive that documents `obj`."""
    if isinstance(obj, (str, float, int, tuple, dict, list)) or not callable(obj):
        return "autodata"
    if isinstance(obj, type):
        return "autoexception" if issubclass(obj, BaseException) else "autoclass"
    return "autofunction"


def public_names() -> list[tuple[str, str, str]]:
    """(stage, name, autodoc directive) for every public name of every package (its `__all__`), and
    of `citeaudit.table` and `citeaudit.errors` the names that were or are at the top level."""
    import importlib

    import citeaudit

    rows = []
    for stage, _ in STAGES:
        module = importlib.import_module(f"citeaudit.{stage}")
        if stage in ("table", "errors"):
            names = [n for n in citeaudit.__all__ if citeaudit._HOME[n] == f"citeaudit.{stage}"]
            names += citeaudit._MOVED.get(f"citeaudit.{stage}", "").split()
        else:
            names = list(module.__all__)
        rows += [(stage, name, directive_for(getattr(module, name))) for name in names]
    return rows


def top_level() -> list[tuple[str, str]]:
    """(name, where it is documented) for every name of `citeaudit.__all__`, in its order."""
    import citeaudit

    rows = []
    for name in citeaudit.__all__:
        home = citeaudit._HOME[name]
        module, attribute = home if isinstance(home, tuple) else (home, name)
        parts = module.split(".")
        rows.append((name, ".".join(parts[:2]) + "." + attribute))
    return rows


class ApiDirective(SphinxDirective):
    """`.. citeaudit-api::`: the top level's names, each linked to where it is documented, then
    every package's public names, autodoc'ed under its stage's heading, then the public modules."""

    def run(self) -> list[nodes.Node]:
        import importlib

        import citeaudit

        rows = public_names()
        text: list[str] = ["The top level: ``import citeaudit``", "-" * 36, "",
                           f"The {len(citeaudit.__all__)} names of ``citeaudit.__all__``, each documented below in "
                           "the package it comes from, under the same name.", ""]
        text += [", ".join(f":py:obj:`{name} <{target}>`" for name, target in top_level()), ""]
        for stage, title in STAGES:
            names = [(n, k) for s, n, k in rows if s == stage]
            if not names:
                continue
            heading = f"{title}: ``citeaudit.{stage}``"
            text += [heading, "-" * len(heading), ""]
            for name, kind in names:
                text += [f".. {kind}:: citeaudit.{stage}.{name}", ""]
        others = [m for m in citeaudit.PUBLIC_MODULES if m not in {f"citeaudit.{s}" for s, _ in STAGES}]
        heading = "Public modules"
        text += [heading, "-" * len(heading), "",
                 "Modules public as a whole (``citeaudit.PUBLIC_MODULES``): every name without a leading "
                 "underscore is theirs to use. What each is for, from its docstring:", ""]
        for name in others:
            doc = (importlib.import_module(name).__doc__ or "").strip().split("\n\n")[0]
            text += [f"- ``{name}``: " + " ".join(rst_line(line) for line in doc.splitlines())]
        text.append("")
        container = nodes.section()
        nested_parse_with_titles(self.state, StringList(text, source="citeaudit-api"), container,
                                 self.content_offset)
        return list(container.children)


# ---- the settings table -------------------------------------------------------------------------

def settings_rows() -> list[dict[str, str]]:
    """Every environment variable `settings/environment.py` reads: the variable, the functions that
    read it, the first sentence of the first one's docstring, and the `DEFAULT_*` names it falls back to
    with their values."""
    source = SETTINGS.read_text(encoding="utf-8")
    tree = ast.parse(source)
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name.startswith(("DEFAULT_", "MAX_")):
                constants[name] = ast.get_source_segment(source, node.value) or ""
    found: dict[str, dict] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.name in LISTINGS:
            continue
        read = [n.args[0].value for n in ast.walk(node) if isinstance(n, ast.Call) and n.args
                and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)
                and re.fullmatch(r"(CITEAUDIT|OPENAI)_[A-Z_]+", n.args[0].value)
                and ast.unparse(n.func) in ("os.environ.get", "os.getenv")]
        defaults = sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in constants})
        doc = " ".join((ast.get_docstring(node) or "").split("\n\n")[0].split())
        for variable in read:
            row = found.setdefault(variable, {"functions": [], "doc": doc, "defaults": []})
            row["functions"].append(node.name)
            row["defaults"] += [d for d in defaults if d not in row["defaults"]]
    return [{"variable": v, "read by": ", ".join(f"`{f}()`" for f in r["functions"]), "what": r["doc"],
             "default": "; ".join(f"`{d} = {constants[d]}`" for d in r["defaults"])}
            for v, r in sorted(found.items())]


class SettingsDirective(SphinxDirective):
    """`.. citeaudit-settings::`: the generated table of environment variables."""

    def run(self) -> list[nodes.Node]:
        rows = settings_rows()
        table = nodes.table(classes=["citeaudit-settings"])
        group = nodes.tgroup(cols=4)
        table += group
        for width in (18, 16, 50, 16):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        group += head
        head += self._row(["variable", "read by", "what it sets", "default"], literal=False)
        body = nodes.tbody()
        group += body
        for row in rows:
            body += self._row([row["variable"], row["read by"], row["what"], row["default"] or "none"])
        return [table]

    def _row(self, cells: list[str], literal: bool = True) -> nodes.row:
        row = nodes.row()
        for i, text in enumerate(cells):
            entry = nodes.entry()
            paragraph = nodes.paragraph()
            if literal and i == 0:
                paragraph += nodes.literal(text=text)
            else:
                for j, piece in enumerate(text.split("`")):
                    paragraph += nodes.literal(text=piece) if j % 2 else nodes.Text(piece)
            entry += paragraph
            row += entry
        return row


# ---- measurements -------------------------------------------------------------------------------

def load_measurement(name: str) -> dict:
    """A measuring tool's saved figures: `docs/measurements/data/NAME.json`."""
    return json.loads((MEASUREMENTS / f"{name}.json").read_text(encoding="utf-8"))


class MeasurementDirective(SphinxDirective):
    """`.. citeaudit-measurement:: NAME`: the command, then what it printed, then where and when."""

    required_arguments = 1
    option_spec: ClassVar[dict] = {"markdown": directives.flag}  # the tool prints Markdown tables

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        path = MEASUREMENTS / f"{name}.json"
        self.env.note_dependency(str(path))
        try:
            saved = load_measurement(name)
        except (OSError, ValueError) as exc:
            raise self.error(f"measurement {name}: cannot read {path}: {exc}") from None
        command = nodes.literal_block(text=f"$ {saved['command']}", language="console")
        if "markdown" in self.options:
            shown = nodes.container(classes=["citeaudit-measurement"])
            self.state.nested_parse(StringList(saved["output"].splitlines(), source=str(path)), 0, shown)
            output: nodes.Node = shown
        else:
            output = nodes.literal_block(text=saved["output"].rstrip("\n"), language="text")
        note = nodes.paragraph()
        note += nodes.emphasis(text=f"Printed on {saved['date']} by {saved['machine']}"
                                    + (f" at commit {saved['commit']}" if saved.get("commit") else "")
                                    + f"; saved in docs/measurements/data/{name}.json.")
        return [command, output, note]


def setup(app: Sphinx) -> dict:
    notebook_environment()
    app.connect("builder-inited", copy_notebooks)
    app.connect("autodoc-process-docstring", docstring_as_rst)
    app.add_directive("citeaudit-api", ApiDirective)
    app.add_directive("citeaudit-settings", SettingsDirective)
    app.add_directive("citeaudit-measurement", MeasurementDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
