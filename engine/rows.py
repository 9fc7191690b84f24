"""Stored rolls read back as hostile: each row parsed, loaded and bounded as a command is
(engine/bounds.py); a row that fails is skipped and named, never the whole session."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from tidetower.engine.bounds import check_record
from tidetower.engine.codec import load, load_context, load_record, load_tracker
from tidetower.engine.dice import DieError
from tidetower.engine.hooks import printable
from tidetower.engine.rules import RollRecord
from tidetower.engine.session import SessionState, TableAction

T = TypeVar("T")
READ_ERRORS = (
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
    IndexError,
    RecursionError,
    DieError,
)
"""What loading a hostile row may raise: its shape, its bounds, or JSON nested too deep."""
SHOWN = 120
"""Characters of a row's error kept in its line (an error may quote the whole row)."""


@dataclass(frozen=True)
class BadRow:
    """A stored roll that cannot be read back, by its place in the store, and why."""

    seq: int
    reason: str

    def line(self) -> str:
        """The row named in one line, for a terminal or the log."""
        return printable(f"stored roll seq {self.seq} skipped: {self.reason}")


def reason(error: BaseException) -> str:
    """An error as a short reason on one line."""
    text = printable(str(error)).replace("\n", " ")
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def parsed(seq: int, text: str) -> dict[str, Any] | BadRow:
    """A row's JSON object, or why it is none (not JSON, nested too deep, not an object)."""
    try:
        body = json.loads(text)
    except (ValueError, TypeError, RecursionError) as error:
        return BadRow(seq, f"not JSON ({reason(error)})")
    if not isinstance(body, dict):
        return BadRow(seq, f"not a JSON object but {type(body).__name__}")
    return body


def loaded(seq: int, body: dict[str, Any], build: Callable[[dict[str, Any]], T]) -> T | BadRow:
    """What `build` makes of a row's JSON, or the row named with why it cannot."""
    try:
        return build(body)
    except READ_ERRORS as error:
        return BadRow(seq, reason(error))


def full_record(body: dict[str, Any]) -> RollRecord:
    """A stored roll's whole record, upgraded if old, within the bounds of a command."""
    return check_record(load_record(body))


def load_session(
    body: Mapping[str, Any],
    history: tuple[RollRecord, ...],
    undone: tuple[RollRecord, ...],
    earlier: int = 0,
) -> SessionState:
    """A stored session from its JSON, with its rolls and those taken back already loaded."""
    return SessionState(
        session_id=body["session_id"],
        system=body["system"],
        tracker=load_tracker(body["system"], body["tracker"]),
        declared=load_context(body["declared"]),
        history=history,
        next_seq=body["next_seq"],
        actions=tuple(load(TableAction, a) for a in body.get("actions", [])),
        undone=undone,
        set_up_after=body.get("set_up_after"),
        earlier=earlier,
    )
