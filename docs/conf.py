"""Sphinx configuration of citeaudit's documentation site (`make docs`).

Pages are MyST Markdown; the notebooks are pages too (myst-nb executes them in replay mode, keeping
what it ran in jupyter-cache); the command line comes from its click commands (sphinx-click), the
public API from the docstrings (autodoc), the settings table from the settings module and the
measurements from the JSON the measuring tools write (docs/_ext/citeaudit_docs.py). Built with
warnings as errors and nitpicky references: the Makefile's `docs` target and tests/test_docs.py.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path[:0] = [str(DOCS / "_ext"), str(ROOT / "src")]

project = "citeaudit"
author = "the citeaudit authors"
copyright = "the citeaudit authors, MIT licence"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx_click",
    "citeaudit_docs",
]

html_theme = "furo"
html_title = "citeaudit"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]
nitpicky = True
# types named in signatures that live outside this project (no network: no intersphinx inventories)
nitpick_ignore_regex = [
    (r"py:.*", r"(pandas|pd|numpy|np|matplotlib|pathlib|datetime|collections|typing|httpx|openai|click|"
               r"concurrent|dask|distributed|pydantic|ipywidgets|enum|os|io|json|decimal|types|abc|re)\..*"),
    (r"py:.*", r"(Path|DataFrame|Series|Styler|Figure|Axes|ndarray|Iterable|Iterator|Sequence|Mapping|Callable|"
               r"Any|Literal|Self|TextIO|BinaryIO|IO|Generator|StrEnum|Enum|BaseModel|Client|Widget|T|"
               r"NDArray|Hashable|Collection|ContextManager|AbstractContextManager)"),
    (r"py:class", r"citeaudit\..*\._.*"),  # private helpers a public signature names
]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# The notebooks (copied from notebooks/ by citeaudit_docs at build start) run at build time in replay
# mode from the shipped recordings; jupyter-cache keeps each one's outputs until its code changes.
nb_execution_mode = os.environ.get("CITEAUDIT_DOCS_EXECUTE", "cache")
nb_execution_cache_path = os.environ.get("CITEAUDIT_DOCS_JUPYTER_CACHE", str(DOCS / "_build" / ".jupyter_cache"))
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_in_temp = True  # what a notebook writes (reviews, outputs) goes to a scratch folder
nb_merge_streams = True

autodoc_member_order = "bysource"
autodoc_typehints = "none"  # signatures as written by the user; the docstrings say what each takes
autodoc_default_options = {"members": False}

suppress_warnings = ["mystnb.unknown_mime_type"]  # widget state in outputs: no static rendering
