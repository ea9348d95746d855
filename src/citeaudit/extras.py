"""The optional parts of the install, and the one way a feature asks for one (`require`).

The base install (`pip install citeaudit`) audits, judges, calibrates and reports; each extra adds
what one way of working needs. `requirements*.txt` pin the same packages for `make`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from citeaudit.errors import MissingExtraError
from citeaudit.settings.environment import install_extra

# extra -> what it adds (pyproject.toml's [project.optional-dependencies] hold the packages)
EXTRAS = {
    "local": "llama.cpp's server for the local judge (`citeaudit serve-local`; the models: `citeaudit models install`)",
    "lab": "the notebooks: JupyterLab, widgets, plots and styled tables",
    "dask": "batches of answers on Dask (`citeaudit batch`, `audit_batch`)",
    "vendors": "the vendors' SDK types that read saved API responses (`citeaudit audit --response`)",
}


def require(module: str, extra: str, what: str) -> ModuleType:
    """`module` imported, or `MissingExtraError` saying that `what` needs the extra `extra`.

    >>> require("json", "lab", "reading JSON").__name__
    'json'
    >>> require("no_such_module_here", "dask", "a batch")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    citeaudit.errors.MissingExtraError: a batch needs no_such_module_here, ...[dask]' (the dask extra: ...
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name and not (module == exc.name or module.startswith(exc.name + ".")):
            raise  # the module is there but one of its own imports failed: a real error, not a missing extra
        raise MissingExtraError(f"{what} needs {module.split('.')[0]}, which the base install leaves out: "
                                f"{install_extra(extra)} (the {extra} extra: {EXTRAS[extra]})") from None
