"""The bounds of what the tower accepts, so whatever it accepts it can store, publish, draw
and reload: one check that MQTT, the CLI, the buttons and the config all go through.

Every refusal is a RuleError naming the field (its path, for nested values) in one line.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from tidetower.engine.rules import JSONValue, RollContext, RollRecord, RuleError

MAX_DEPTH = 8
"""How deep params and settings may nest (a flat mapping is depth 1)."""
MAX_TEXT = 200
"""The longest text a params or settings value may hold."""
MAX_KEY = 40
"""The longest params or settings key."""
MAX_ITEMS = 64
"""The most entries one list or mapping may hold."""
MAX_POOL = 50
"""The most dice a declaration's pool may hold (the `declare` command's bound)."""
MAX_DICE = 40
"""The most dice one roll may hold (the `roll` command's bound)."""
MAX_NUMBER = 1_000_000
"""The largest magnitude a number may have (each system bounds its own more tightly)."""


def text_problem(value: str) -> str | None:
    """Why `value` cannot be kept and shown as text (a lone surrogate, a control
    character), or None if it can."""
    for char in value:
        category = unicodedata.category(char)
        if category == "Cs":
            return f"holds a lone surrogate (U+{ord(char):04X}), which is not text"
        if category == "Cc":
            return f"holds a control character (U+{ord(char):04X})"
    return None


def check_text(value: str, field: str, max_length: int = MAX_TEXT) -> str:
    """`value` if it is printable text of at most `max_length` characters, else RuleError."""
    problem = text_problem(value)
    if problem is not None:
        raise RuleError(f"{field} {problem}", field=field)
    if len(value) > max_length:
        raise RuleError(
            f"{field} is {len(value)} characters; the limit is {max_length}", field=field
        )
    return value


def check_json(values: Mapping[str, JSONValue], what: str) -> None:
    """Raise RuleError naming the first value of `values` (params or settings) out of bounds:
    nesting, sizes, text, numbers. `what` names them in the message."""
    _check_mapping(values, "", 1, what)


def _check_value(value: object, path: str, depth: int, what: str) -> None:
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        check_text(value, path)
    elif isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise RuleError(f"{path} must be a finite number, got {value!r}", field=path)
        if abs(value) > MAX_NUMBER:
            raise RuleError(f"{path} must be between -{MAX_NUMBER} and {MAX_NUMBER}", field=path)
    elif isinstance(value, Mapping):
        _check_mapping(value, f"{path}.", depth + 1, what)
    elif isinstance(value, Sequence):
        if depth + 1 > MAX_DEPTH:
            raise RuleError(f"{what} nest deeper than {MAX_DEPTH} levels at {path}", field=path)
        if len(value) > MAX_ITEMS:
            raise RuleError(
                f"{path} holds {len(value)} items; the limit is {MAX_ITEMS}", field=path
            )
        for index, item in enumerate(value):
            _check_value(item, f"{path}.{index}", depth + 1, what)
    else:
        raise RuleError(f"{path} is not a JSON value: {type(value).__name__}", field=path)


def _check_mapping(values: Mapping[Any, object], prefix: str, depth: int, what: str) -> None:
    where = prefix.rstrip(".") or what
    if depth > MAX_DEPTH:
        raise RuleError(f"{what} nest deeper than {MAX_DEPTH} levels at {where}", field=where)
    if len(values) > MAX_ITEMS:
        raise RuleError(
            f"{where} holds {len(values)} entries; the limit is {MAX_ITEMS}", field=where
        )
    for key, value in values.items():
        if not isinstance(key, str):
            raise RuleError(f"{where} has a key that is not text: {key!r}", field=where)
        if text_problem(key) is not None or not key or len(key) > MAX_KEY:
            shown = ascii(key)[:60]
            raise RuleError(
                f"{where} has a key {shown} that is not 1..{MAX_KEY} printable characters",
                field=where,
            )
        _check_value(value, f"{prefix}{key}", depth, what)


def check_context(context: RollContext) -> None:
    """Raise RuleError naming the first field of a declaration out of bounds."""
    check_text(context.actor, "actor", 80)
    check_text(context.mode, "mode", 20)
    if context.pool is not None and context.pool < 0:
        raise RuleError(f"pool cannot be negative, got {context.pool}", field="pool")
    if context.pool is not None and context.pool > MAX_POOL:
        raise RuleError(f"pool must be between 0 and {MAX_POOL}, got {context.pool}", field="pool")
    if context.reply_to is not None:
        check_text(context.reply_to, "reply_to", 64)
    check_json(context.params, "params")


def check_record(record: RollRecord) -> RollRecord:
    """`record` if a command could have made it (its declaration and dice in bounds), else a
    RuleError naming the first field out of bounds: a stored roll is read back as hostile."""
    check_context(record.context)
    check_text(record.roll.roller, "roller", 80)
    if len(record.roll.dice) > MAX_DICE:
        count = len(record.roll.dice)
        raise RuleError(f"a roll of {count} dice; the limit is {MAX_DICE}", field="dice")
    return record
