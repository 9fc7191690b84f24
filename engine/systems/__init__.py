"""Rule systems register here by name; the session picks one by the name in config.

Each built-in is one package of this folder (its rules, tracker, odds and RuleSystem)
and one line of `_BUILTIN_MODULES`.
"""

from __future__ import annotations

import importlib
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


def register(system_class: type[RuleSystem[Any]]) -> type[RuleSystem[Any]]:
    """Class decorator: make a rule system available under its `name`."""
    _SYSTEMS[system_class.name] = system_class()
    return system_class


def _load_builtins() -> None:
    for module in _BUILTIN_MODULES:
        importlib.import_module(f"{__name__}.{module}")


def get_system(name: str) -> RuleSystem[Any]:
    """The registered system called `name`, or a RuleError listing the known ones."""
    _load_builtins()
    try:
        return _SYSTEMS[name]
    except KeyError:
        known = ", ".join(sorted(_SYSTEMS))
        raise RuleError(f"unknown rule system {name!r}: known systems are {known}") from None


def system_names() -> list[str]:
    """Names of every registered system, sorted."""
    _load_builtins()
    return sorted(_SYSTEMS)
