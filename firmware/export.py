"""Every stored throw as CSV (one row a die) or JSON (one object a throw), for a spreadsheet
or a notebook; the columns are documented in docs/firmware.md, "Statistics and export"."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from tidetower.engine.barline import Bars
from tidetower.engine.codec import load_tracker
from tidetower.engine.dice import Die
from tidetower.engine.rules import JSONValue, RollRecord, RuleError
from tidetower.engine.session import SessionState
from tidetower.engine.systems import get_system

COLUMNS = (
    "roll_id",
    "seq",
    "time",
    "actor",
    "side",
    "system",
    "die",
    "kind",
    "face",
    "confidence",
    "typed",
    "outcome",
    "position_before",
    "position_after",
)
"""The CSV's columns, in order: one row per die of each throw."""


def position(system: str, tracker: JSONValue) -> int | None:
    """Where the system's bar stands with `tracker` (as stored); None if it cannot say."""
    try:
        return get_system(system).bar(load_tracker(system, tracker)).position
    except (RuleError, KeyError, ValueError):
        return None


def positions(state: SessionState) -> list[tuple[int | None, int | None]]:
    """Each throw's bar position before it and after it, by its own result (resolved again
    from the tracker it met, as `stats tracker` draws it): a set-up between two throws is
    neither's move. None where the system's bar cannot be told."""
    bars = Bars()
    out: list[tuple[int | None, int | None]] = []
    for record in state.history:
        step = bars.add(record)
        if step is None:
            out.append((position(record.system, record.state_before), None))
        else:
            out.append((step.before, step.after))
    return out


def iso_time(at: float | None) -> str:
    """A record's time as ISO 8601 in UTC; empty when unknown."""
    return "" if at is None else datetime.fromtimestamp(at, tz=UTC).isoformat()


def die_fields(record: RollRecord, die: Die) -> dict[str, Any]:
    """One die: its rules kind and face, the camera's confidence (the lower of a d100's two
    dice; None when typed) and whether the GM typed or corrected it."""
    reads = [record.reading[i] for i in die.read] if record.reading else []
    typed = not reads or any(r.typed for r in reads)
    confidence = None if typed else round(min(r.confidence for r in reads), 4)
    return {"kind": die.kind.value, "face": die.face, "confidence": confidence, "typed": typed}


def throw_json(record: RollRecord, before: int | None, after: int | None) -> dict[str, Any]:
    """One throw as the JSON export writes it."""
    return {
        "roll_id": record.id,
        "seq": record.seq,
        "time": iso_time(record.at),
        "actor": record.context.actor,
        "side": record.context.side,
        "system": record.system,
        "dice": [die_fields(record, d) for d in record.roll.dice],
        "outcome": record.outcome.summary,
        "position_before": before,
        "position_after": after,
    }


def _on_or_after(at: float | None, since: float | None) -> bool:
    """Whether a roll recorded `at` is at or after `since` (any is, with no `since`)."""
    return since is None or (at is not None and at >= since)


def chosen(state: SessionState, since: float | None) -> list[dict[str, Any]]:
    """The throws to export, as JSON objects, in the store's order: from the first recorded
    at or after `since` on, whatever the clock said of those after it (set back)."""
    pairs = list(zip(state.history, positions(state), strict=True))
    times = [record.at for record, _ in pairs]
    first = next((i for i, at in enumerate(times) if _on_or_after(at, since)), None)
    kept = [] if first is None else pairs[first:]
    return [throw_json(record, before, after) for record, (before, after) in kept]


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""A cell a spreadsheet may run as a formula when its text starts so (OWASP, CSV injection)."""


def cell(value: Any) -> Any:
    """A CSV cell as a spreadsheet should read it: text that starts like a formula gets a
    leading single quote (an actor `=HYPERLINK(...)` stays text); numbers stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_rows(throws: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The throws as CSV rows: one per die, the throw's fields repeated, dice numbered 1..,
    each text cell safe to open in a spreadsheet (`cell`)."""
    rows = []
    for throw in throws:
        shared = {k: v for k, v in throw.items() if k != "dice"}
        for number, die in enumerate(throw["dice"], start=1):
            typed = "true" if die["typed"] else "false"
            row = {**shared, "die": number, **die, "typed": typed}
            rows.append({k: cell(v) for k, v in row.items()})
    return rows


def export_text(state: SessionState, fmt: str, since: float | None = None) -> str:
    """The session's throws as CSV or JSON text."""
    throws = chosen(state, since)
    if fmt == "json":
        return json.dumps(throws, indent=1) + "\n"
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(csv_rows(throws))
    return out.getvalue()
