"""Stored rolls walked again in order: each one's earlier rolls (as the session gives them to
`odds` and `resolve`) and its tracker before, loaded once per distinct state: pure."""

from __future__ import annotations

import dataclasses
from collections import Counter
from functools import lru_cache
from typing import Any

from tidetower.engine.codec import load_record, load_tracker
from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import Motion, Outcome, RollContext, RollRecord

_CONTEXT = frozenset(RollContext.__dataclass_fields__)


class Replay:
    """Walks records oldest first; `add` each one after asking about it."""

    def __init__(self) -> None:
        """An empty walk: no rolls seen, no trackers loaded."""
        self._earlier: dict[str, dict[str, RollRecord]] = {}
        self._replies: Counter[str] = Counter()
        self._trackers: dict[tuple[str, str], Any] = {}

    def earlier(self, record: RollRecord) -> dict[str, RollRecord]:
        """The rolls before `record` of its system, by id (as `session.earlier_rolls`)."""
        return self._earlier.setdefault(record.system, {})

    def state_key(self, record: RollRecord) -> tuple[str, str]:
        """The record's system and its tracker before, as text (the same state stored in
        another key order only misses the cache)."""
        return record.system, repr(record.state_before)

    def tracker(self, record: RollRecord) -> Any:
        """The record's tracker before it, loaded (once per distinct state)."""
        key = self.state_key(record)
        if key not in self._trackers:
            self._trackers[key] = load_tracker(record.system, record.state_before)
        return self._trackers[key]

    def odds_key(self, record: RollRecord) -> tuple[object, ...]:
        """What a system's odds may depend on: the tracker, the declaration, the dice thrown
        and, for a reply, its opening and how many replies it had before (what `resolve`
        knows of earlier rolls)."""
        context = record.context
        opening: object = None
        if context.reply_to is not None:
            first = self.earlier(record).get(context.reply_to)
            seen = self._replies[f"{record.system}/{context.reply_to}"]
            reply = (
                (context.reply_to, seen) if first is None else (first.context, first.outcome, seen)
            )
            opening = repr(reply)
        c = context
        thrown = tuple(d.kind for d in record.roll.dice)  # an undeclared pool is the one thrown
        return (
            *self.state_key(record),
            c.actor,
            c.side,
            c.mode,
            c.pool,
            repr(c.params),
            opening,
            thrown,
        )

    def add(self, record: RollRecord) -> None:
        """Count `record` as an earlier roll for those after it."""
        self.earlier(record)[record.id] = record
        if record.context.reply_to is not None:
            self._replies[f"{record.system}/{record.context.reply_to}"] += 1


@lru_cache(maxsize=4096)
def _die(kind: str, face: int, read: tuple[int, ...]) -> Die:
    """A rules die of a stored roll (one object for each alike: a year repeats them)."""
    return Die(DieKind(kind), face, read)


def _built(body: dict[str, Any]) -> RollRecord:
    """A stored roll of this schema built straight from its JSON (KeyError, TypeError or
    ValueError when it is of another shape); the camera's reading is left out."""
    roll, outcome = body["roll"], body["outcome"]
    motions = tuple(Motion(**m) for m in outcome["motions"])
    return RollRecord(
        id=body["id"],
        seq=body["seq"],
        system=body["system"],
        context=RollContext(**body["context"]),
        roll=Roll(tuple(_die(d["kind"], d["face"], tuple(d["read"])) for d in roll["dice"])),
        outcome=Outcome(outcome["summary"], outcome["facts"], motions),
        state_before=body["state_before"],
        at=body.get("at"),
        snapshot=body.get("snapshot"),
    )


def record_of(body: dict[str, Any]) -> RollRecord:
    """A stored roll's record for figures that look at no camera dice (its `reading` left
    None): built straight from its JSON when it is of this schema (the codec's full load
    takes some 80 µs a record), else through the codec, which upgrades an older one."""
    context = body.get("context")
    if isinstance(context, dict) and "params" in context and _CONTEXT.issuperset(context):
        try:
            return _built(body)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass
    return dataclasses.replace(load_record(body), reading=None)
