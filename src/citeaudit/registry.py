"""What can be added to citeaudit, by name: one `Registry` shape, five registries, one plugin door.

Each way citeaudit can be extended is a `Registry` of objects registered by name:

  registry           entry-point group           an object is                        built-ins in
  STRATEGIES         citeaudit.strategies        a judge strategy (JudgeStrategy)    citeaudit.judge.strategies
  FORMATS            citeaudit.formats           a source format (SourceFormat)      citeaudit.sources
  VENDOR_FORMATS     citeaudit.vendor_formats    a response format (VendorFormat)    citeaudit.citations.responses
  CONTRAST_CHECKS    citeaudit.contrast_checks   a check (ContrastCheckRule)         citeaudit.decide.contrast
  CITATION_KINDS     citeaudit.citation_kinds    a citation kind (CitationKind)      citeaudit.citations.kinds

A registry is filled on its first reading (`get`, `names`, `in`, iterating), once: first the module
that registers citeaudit's own objects (`builtins`: imported only then, as fsspec imports an
implementation when it is first used), then every installed package's entry points of its group
(as pytest's `pytest11` and simonw/llm's `llm` groups). Names keep the order they were registered
in: citeaudit's own first, then the plugins by distribution name; every list of choices (`--help`)
reads that order.

The plugin contract: a package declares, in its `pyproject.toml`,

    [project.entry-points."citeaudit.strategies"]
    veto = "citeaudit_example_plugin.veto:Veto"

(tests/plugins/citeaudit-example-plugin is a whole one). The entry point's name is the name the
object is registered under (`--strategy veto`); its value is the object, or a class (or another
callable without arguments) that makes it. The object has the attributes the registry's kind
requires (`required`: a strategy's `name`, `asks`, `read`, ...) and its own `name`, when it has
one, is the entry point's name. A plugin that cannot be imported,
makes no object, lacks an attribute, or takes a name citeaudit or another plugin registered is a
`PluginError` (an `InputError`: the command line exits 2 with the message, never a traceback)
naming the package, the entry point and the fix (upgrade or uninstall the package).
"""

from __future__ import annotations

import functools
import importlib
import re
import threading
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint, EntryPoints, entry_points
from typing import Any, Generic, TypeVar

from citeaudit.errors import InputError

T = TypeVar("T")
NAME = re.compile(r"[a-z][a-z0-9_+-]{0,39}")  # a word for a command line, an option value and a file name


class PluginError(InputError):
    """An installed plugin (a package's entry point) cannot be registered; the message names the
    package, the entry point and the fix."""


@functools.cache
def _every_entry_point() -> Any:
    """Every installed package's entry points, read once for all five registries (one scan of the
    packages' metadata: 43 ms here, where a scan per group took 40 ms each)."""
    return entry_points()


def _installed(group: str) -> EntryPoints:
    """The installed packages' entry points of `group`."""
    found: EntryPoints = _every_entry_point().select(group=group)
    return found


def rescan_entry_points() -> None:
    """Read the installed packages' entry points again when a registry is next filled (a test or a
    program that installed a package after citeaudit read them)."""
    _every_entry_point.cache_clear()


class Registry(Generic[T]):
    """Objects of one kind, registered by name (the module's docstring has the contract).

    `what` names the kind in messages ("judge strategy"); `group` is the entry-point group plugins
    declare; `builtins` the module that registers citeaudit's own (imported on the first reading);
    `required` the attributes an object must have; `hint` how a user picks one (an option, a
    variable), said in the error for an unknown name. `validate(name, obj)`, when set (by the
    built-ins' module), raises `ValueError` for an object this registry cannot take (a source
    format's extension claimed by another, say).
    """

    def __init__(self, what: str, group: str, builtins: str, required: tuple[str, ...] = (), hint: str = "") -> None:
        self.what, self.group, self.builtins, self.required, self.hint = what, group, builtins, required, hint
        self.validate: Callable[[str, T], None] | None = None
        self._objects: dict[str, T] = {}
        self._plugins: dict[str, str] = {}  # name -> the distribution that registered it
        self._state = "empty"  # "loading" while the built-ins and plugins are read, then "loaded"
        self._failure: PluginError | None = None  # a plugin that could not be registered, said on every reading
        self._lock = threading.RLock()

    # registering
    def register(self, name: str, obj: T, clobber: bool = False) -> T:
        """Register `obj` as `name`; `ValueError` when the name is not a word, is taken (unless
        `clobber`), or `validate` refuses the object."""
        name = str(name)  # a `StrEnum` member's value: names are plain strings
        if not NAME.fullmatch(name):
            raise ValueError(f"{self.what} name {name!r}: use lower-case letters, digits, '_', '-' or '+' (it is an "
                             "option's value and part of file names)")
        missing = [attribute for attribute in self.required if not hasattr(obj, attribute)]
        if missing:
            raise ValueError(f"{obj!r} is not a {self.what}: it has no {', '.join(missing)}")
        if self.validate is not None and not (clobber and name in self._objects):
            self.validate(name, obj)
        if name in self._objects and not clobber:
            raise ValueError(f"{self.what} {name!r} is registered already ({self._objects[name]!r}); "
                             "pass clobber=True to replace it")
        self._objects[name] = obj
        return obj

    def find(self, name: str | None) -> T | None:
        """The object registered as `name`, or None (a document whose format no registry entry names)."""
        self._load()
        return self._objects.get(name) if isinstance(name, str) else None

    def registered(self) -> list[T]:
        """What is registered so far, without reading the built-ins or the plugins (for `validate`)."""
        return list(self._objects.values())

    def unregister(self, name: str) -> None:
        """Remove `name` (a test's own object, say); nothing when it is not registered."""
        self._objects.pop(name, None)
        self._plugins.pop(name, None)

    # reading
    def get(self, name: str) -> T:
        """The object registered as `name`; `InputError` naming the registered names otherwise."""
        self._load()
        try:
            return self._objects[str(name)]
        except KeyError:
            how = f" ({self.hint})" if self.hint else ""
            raise InputError(f"unknown {self.what} {name!r}: use one of {', '.join(self._objects)}{how}") from None

    def names(self) -> tuple[str, ...]:
        """The registered names, citeaudit's own first, in the order they were registered."""
        self._load()
        return tuple(self._objects)

    def items(self) -> list[tuple[str, T]]:
        self._load()
        return list(self._objects.items())

    def values(self) -> list[T]:
        self._load()
        return list(self._objects.values())

    def plugin_of(self, name: str) -> str | None:
        """The distribution whose entry point registered `name`; None for citeaudit's own."""
        self._load()
        return self._plugins.get(name)

    def __getitem__(self, name: str) -> T:
        self._load()
        return self._objects[str(name)]

    def __contains__(self, name: object) -> bool:
        self._load()
        return isinstance(name, str) and name in self._objects

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        return f"<Registry {self.group}: {', '.join(self._objects) or 'not read yet'}>"

    # filling
    def _load(self) -> None:
        if self._state == "loaded" and self._failure is None:
            return
        with self._lock:  # one thread reads the built-ins and plugins; another waits for them
            if self._failure is not None:
                raise self._failure
            if self._state != "empty":  # loaded, or being loaded further up this thread's stack
                return
            self._state = "loading"
            try:
                importlib.import_module(self.builtins)
            except BaseException:
                self._state = "empty"
                raise
            try:
                for point in sorted(_installed(self.group), key=_order):
                    self._load_plugin(point)
            except PluginError as exc:
                self._failure = exc
                raise
            finally:
                self._state = "loaded"

    def reload_plugins(self) -> None:
        """Read the installed entry points again (a test that installs or removes a plugin in process)."""
        for name in list(self._plugins):
            self.unregister(name)
        self._failure = None
        rescan_entry_points()
        self._state = "empty"

    def _load_plugin(self, point: EntryPoint) -> None:
        package = point.dist.name if point.dist is not None else "an installed package"
        where = f"{package}'s entry point {point.name} = {point.value!r} (group {self.group!r})"
        fix = (f"Fix: upgrade {package} to a version made for this citeaudit, or uninstall it "
               f"(pip uninstall {package}).")
        if point.name in self._objects:
            owner = self._plugins.get(point.name)
            taken = f"the package {owner}" if owner else "citeaudit itself"
            raise PluginError(f"plugin {where} names a {self.what} {point.name!r} that {taken} registered already. "
                              f"{fix}")
        try:
            loaded = point.load()
            obj = loaded() if isinstance(loaded, type) or (callable(loaded) and _is_factory(loaded)) else loaded
        except Exception as exc:
            raise PluginError(f"plugin {where} failed to load: {type(exc).__name__}: {exc}. {fix}") from exc
        own = getattr(obj, "name", point.name)
        if own != point.name:
            raise PluginError(f"plugin {where} makes a {self.what} named {own!r}, not {point.name!r}: the entry "
                              f"point's name is the one it is registered under. {fix}")
        try:
            self.register(point.name, obj)
        except ValueError as exc:
            raise PluginError(f"plugin {where} is not a {self.what} citeaudit can take: {exc}. {fix}") from exc
        self._plugins[point.name] = package


def _order(point: EntryPoint) -> tuple[str, str]:
    return ((point.dist.name if point.dist is not None else "").lower(), point.name)


def _is_factory(loaded: Callable[..., Any]) -> bool:
    """A function an entry point names to make the object (`make_format`), not an object that is
    callable itself: a plain function or a functools.partial."""
    return isinstance(loaded, (functools.partial, type(_is_factory)))


STRATEGIES: Registry[Any] = Registry(
    "judge strategy", "citeaudit.strategies", "citeaudit.judge.strategies",
    required=("name", "summary", "prompt_version", "asks", "read", "answer_keys", "calls_per_citation"),
    hint="--strategy or CITEAUDIT_STRATEGY")
FORMATS: Registry[Any] = Registry(
    "document format", "citeaudit.formats", "citeaudit.sources", required=("name", "load", "extensions"),
    hint="--format")
VENDOR_FORMATS: Registry[Any] = Registry(
    "response format", "citeaudit.vendor_formats", "citeaudit.citations.responses",
    required=("name", "parse", "detect"), hint="--response-format")
CONTRAST_CHECKS: Registry[Any] = Registry(
    "contrast check", "citeaudit.contrast_checks", "citeaudit.decide.contrast", required=("name", "check", "reads"),
    hint="--contrast-checks or CITEAUDIT_CONTRAST_CHECKS")
CITATION_KINDS: Registry[Any] = Registry(
    "citation kind", "citeaudit.citation_kinds", "citeaudit.citations.kinds",
    required=("name", "label", "target", "where", "place", "no_quote_evidence", "evidence_whole"))
REGISTRIES = (STRATEGIES, FORMATS, VENDOR_FORMATS, CONTRAST_CHECKS, CITATION_KINDS)
