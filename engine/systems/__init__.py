"""Rule systems register here by name; the session picks one by the name in config.

Each built-in is one package of this folder (its rules, tracker, odds and RuleSystem)
and one line of `_BUILTIN_MODULES`. Other packages add systems with `register`, or,
installed, through the entry-point group `tidetower.systems` (docs/architecture.md).
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

from tidetower.engine.rules import RuleError, RuleSystem

_SYSTEMS: dict[str, RuleSystem[Any]] = {}

# Packages of this folder that hold the built-in systems, imported on first use.
_BUILTIN_MODULES = (
    "tide",
    "tide_of_battle",
    "d6_pool",
    "battle_rhythm",
    "graded_d100",
)
DEFAULT_SYSTEM = _BUILTIN_MODULES[0]
"""The system a table plays when its config names none."""
PLUGIN_GROUP = "tidetower.systems"
"""Entry-point group of installed third-party systems: each names a module that registers
its system on import, or a RuleSystem class to register."""
_loaded = False


def register(system_class: type[RuleSystem[Any]]) -> type[RuleSystem[Any]]:
    """Class decorator: make a rule system available under its `name`."""
    _SYSTEMS[system_class.name] = system_class()
    return system_class


def unregister(name: str) -> None:
    """Forget the system called `name` (a test's own system, put away after the test)."""
    _SYSTEMS.pop(name, None)


def _load_plugins() -> None:
    """Load the systems installed under the entry-point group `tidetower.systems`."""
    for entry in entry_points(group=PLUGIN_GROUP):
        try:
            loaded = entry.load()
        except Exception as error:
            raise RuleError(
                f"rule system plugin {entry.name!r} ({entry.value}) does not load: {error}"
            ) from error
        if isinstance(loaded, type) and issubclass(loaded, RuleSystem):
            register(loaded)


def _load() -> None:
    """Import the built-ins and the installed plugins, once."""
    global _loaded
    if _loaded:
        return
    for module in _BUILTIN_MODULES:
        importlib.import_module(f"{__name__}.{module}")
    _load_plugins()
    _loaded = True


def get_system(name: str) -> RuleSystem[Any]:
    """The registered system called `name`, or a RuleError listing the known ones."""
    _load()
    try:
        return _SYSTEMS[name]
    except KeyError:
        known = ", ".join(sorted(_SYSTEMS))
        raise RuleError(f"unknown rule system {name!r}: known systems are {known}") from None


def system_names() -> list[str]:
    """Names of every registered system, sorted."""
    _load()
    return sorted(_SYSTEMS)
