"""Reading a declaration's params and settings: each bad value raises a RuleError naming it."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TypeVar

from tidetower.engine.rules import JSONValue, RuleError

T = TypeVar("T")


def check_keys(values: Mapping[str, JSONValue], known: Collection[str], what: str) -> None:
    """Raise RuleError naming any key of `values` that is not in `known`."""
    unknown = sorted(set(values) - set(known))
    if unknown:
        listed = ", ".join(sorted(known)) or "none"
        raise RuleError(
            f"unknown {what} {', '.join(unknown)}: known are {listed}", field=unknown[0]
        )


def mode(declared: str, modes: Collection[str], default: str = "") -> str:
    """The declared mode (`default` when none is), or a RuleError naming the system's modes."""
    chosen = declared or default
    if chosen not in modes:
        listed = ", ".join(modes)
        raise RuleError(f"unknown mode {chosen!r}: expected one of {listed}", field="mode")
    return chosen


def whole(
    values: Mapping[str, JSONValue],
    key: str,
    default: int | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """values[key] as a whole number within bounds, or `default` when absent."""
    value = values.get(key, default)
    if value is None:
        raise RuleError(f"{key} is required", field=key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RuleError(f"{key} must be a whole number, got {value!r}", field=key)
    if minimum is not None and value < minimum:
        raise RuleError(f"{key} must be at least {minimum}, got {value}", field=key)
    if maximum is not None and value > maximum:
        raise RuleError(f"{key} must be at most {maximum}, got {value}", field=key)
    return value


def optional_whole(
    values: Mapping[str, JSONValue], key: str, minimum: int | None = None
) -> int | None:
    """values[key] as a whole number, or None when absent."""
    return None if values.get(key) is None else whole(values, key, minimum=minimum)


def choice(values: Mapping[str, JSONValue], key: str, choices: tuple[T, ...], default: T) -> T:
    """values[key] if it is one of `choices`, else `default` when absent."""
    value = values.get(key, default)
    for option in choices:
        if value == option:
            return option
    listed = ", ".join(str(c) for c in choices if c is not None)
    raise RuleError(f"unknown {key} {value!r}: expected one of {listed}", field=key)


def flag(values: Mapping[str, JSONValue], key: str) -> bool:
    """values[key] as a true/false flag (absent is false)."""
    value = values.get(key, False)
    if not isinstance(value, bool):
        raise RuleError(f"{key} must be true or false, got {value!r}", field=key)
    return value


def text(values: Mapping[str, JSONValue], key: str, default: str | None = None) -> str:
    """values[key] as non-empty text, or `default` when absent."""
    value = values.get(key, default)
    if not isinstance(value, str) or not value:
        raise RuleError(f"{key} must be a non-empty name, got {value!r}", field=key)
    return value


def names(values: Mapping[str, JSONValue], key: str) -> tuple[str, ...]:
    """values[key] as a list of distinct non-empty names (absent is none)."""
    value = values.get(key, [])
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v for v in value):
        raise RuleError(f"{key} must be a list of names, got {value!r}", field=key)
    if len(set(value)) != len(value):
        raise RuleError(f"{key} names someone twice: {value!r}", field=key)
    return tuple(value)


def counted(values: Mapping[str, JSONValue], key: str) -> int | None:
    """values[key] when it is a whole number (not a flag), else None: a fact odds count."""
    value = values.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
