"""Engine values to JSON and back, with a schema version, for the store and the wire."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from tidetower.engine.rules import JSONValue, RuleError
from tidetower.engine.systems import get_system

SCHEMA_VERSION = 1


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def adapter(kind: type[Any]) -> TypeAdapter[Any]:
    """A cached pydantic adapter for an engine dataclass (building one is slow)."""
    if kind not in _ADAPTERS:
        _ADAPTERS[kind] = TypeAdapter(kind)
    return _ADAPTERS[kind]


def dump(value: Any) -> dict[str, JSONValue]:
    """An engine dataclass as a JSON-ready object."""
    data: dict[str, JSONValue] = adapter(type(value)).dump_python(value, mode="json")
    return data


def load(kind: type[Any], data: JSONValue) -> Any:
    """An engine dataclass rebuilt from JSON-ready data, or a RuleError saying what is wrong."""
    try:
        return adapter(kind).validate_python(data)
    except (ValidationError, ValueError) as error:
        raise RuleError(f"cannot read {kind.__name__}: {error}") from None


def dump_tracker(system: str, tracker: Any) -> JSONValue:
    """A system's tracker state as JSON-ready data."""
    data: JSONValue = adapter(get_system(system).state_type).dump_python(tracker, mode="json")
    return data


def load_tracker(system: str, data: JSONValue) -> Any:
    """A system's tracker state rebuilt from JSON-ready data."""
    return load(get_system(system).state_type, data)
