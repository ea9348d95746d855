"""Public names imported when first used (PEP 562), for `citeaudit` and each of its packages.

A package declares each public name and the module that defines it (`Home`: a pair when the public
name differs from the module's); `lazy_names` gives it the module-level `__getattr__` and `__dir__`
that import that module on the name's first use, so `import citeaudit` and `citeaudit --help`
import none of pandas, scikit-learn or the SDKs. Nothing else happens on the way: no name is made
up, none renamed but by its declaration.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

Home = dict[str, str | tuple[str, str]]


def lazy_names(package: str, home: Home) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose public names are `home`'s keys."""
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> object:
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        target = home[name]
        module, attribute = target if isinstance(target, tuple) else (target, name)
        value = getattr(importlib.import_module(module), attribute)
        namespace[name] = value  # the next use is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(home))

    return __getattr__, __dir__
