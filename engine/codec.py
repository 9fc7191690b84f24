"""Engine values to JSON and back, with a schema version, for the store and the wire."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from typing import Any

from pydantic import TypeAdapter, ValidationError

from tidetower.engine.dice import DieError
from tidetower.engine.rules import JSONValue, RollContext, RollRecord, RuleError
from tidetower.engine.systems import get_system
from tidetower.engine.tray import DieRead, Reading, roll_of

SCHEMA_VERSION = 3
"""2: each die of a roll points at the camera dice it was read from (`Die.read`) and a
record's reading holds the camera's dice whole; 3: a declaration's fields that only its
system takes are in its `params`. Older stores are read and upgraded."""


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


def load_context(data: Mapping[str, Any]) -> RollContext:
    """A declaration from the store; one of schema 2 or older, with a system's own fields
    beside the shared ones, has them moved into its params (those left at their old
    defaults, none or false, were never declared)."""
    known = {f.name for f in fields(RollContext)}
    own = {k: v for k, v in data.items() if k not in known and v is not None and v is not False}
    shared = {k: v for k, v in data.items() if k in known}
    context: RollContext = load(
        RollContext, {**shared, "params": {**own, **shared.get("params", {})}}
    )
    return context


def load_record(
    data: Mapping[str, Any], beside: Sequence[Mapping[str, Any]] | None = None
) -> RollRecord:
    """A roll's record from the store or the outbox; one written before its dice pointed at
    their reading (schema 1, its reading perhaps `beside` it in an older outbox event) is
    upgraded first, and its declaration as `load_context` does."""
    data = {**data, "context": dump(load_context(data.get("context", {})))}
    dice = data.get("roll", {}).get("dice", [])
    if all("read" in d for d in dice):
        record: RollRecord = load(RollRecord, data)
        return record
    reading = data.get("reading") or beside
    return _pointed(load(RollRecord, {**data, "reading": None}), reading)


def _pointed(record: RollRecord, reading: Sequence[Mapping[str, Any]] | None) -> RollRecord:
    """A schema-1 record with its reading as camera dice, and each die pointing at those it
    was read from when pairing them as the tower does gives the dice recorded (else none: the
    GM changed them since)."""
    if reading is None:
        return record
    read = tuple(_camera_die(item) for item in reading)
    try:
        again = roll_of(Reading(read)).dice
    except DieError:
        again = ()
    if [(d.kind, d.face) for d in again] == [(d.kind, d.face) for d in record.roll.dice]:
        record = replace(record, roll=replace(record.roll, dice=again))
    return replace(record, reading=read)


def _camera_die(item: Mapping[str, Any]) -> DieRead:
    """A camera die in schema 1's form (`DieRead.to_dict()`: no confidence when typed)."""
    typed = item.get("confidence") is None
    confidence = 1.0 if typed else item["confidence"]
    body = {**item, "confidence": confidence, "typed": typed}
    result: DieRead = load(DieRead, body)
    return result
