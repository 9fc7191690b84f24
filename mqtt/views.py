"""Engine state and outbox bodies turned into the wire payloads of tidetower.mqtt.payloads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tidetower.engine import session as pure
from tidetower.engine.chances import Odds
from tidetower.engine.codec import dump
from tidetower.engine.rules import RollRecord
from tidetower.engine.session import SessionState
from tidetower.mqtt.payloads import (
    ActionItem,
    DieRead,
    HistoryItem,
    MotionBody,
    OddsBody,
    OddsRow,
    OutcomeBody,
    OutcomeChance,
    Phase,
    RollEvent,
    SessionPayload,
    SideBody,
    TidePayload,
)

HISTORY_LENGTH = 20
ReadingJson = Sequence[Mapping[str, Any]]
"""A reading's dice in their JSON form (`tray.DieRead.to_dict()`), as a roll's record keeps them."""


def tide_payload(bar: Mapping[str, Any]) -> TidePayload:
    """The retained `tide` from a dumped BarState."""
    known = {k: v for k, v in bar.items() if k in TidePayload.model_fields}
    return TidePayload(length=bar["high"] - bar["low"], **known)


def declared_odds(state: SessionState) -> OddsBody | None:
    """Exact odds of the declared roll, where its system can work them out; else None."""
    odds = pure.declared_odds(state)
    return None if odds is None else odds_body(odds)


def odds_body(odds: Odds) -> OddsBody:
    """The wire's odds: each value's chance and the chance of it or more, as floats."""
    return OddsBody(
        counts=odds.counts,
        dice=odds.dice,
        rows=[
            OddsRow(
                value=value,
                chance=float(odds.distribution[value]),
                at_least=float(odds.at_least(value)),
                label=odds.labels.get(value),
            )
            for value in odds.values()
        ],
        mean=round(float(odds.mean), 4),
        outcomes=[
            OutcomeChance(label=label, chance=float(chance))
            for label, chance in odds.outcomes.items()
        ],
        explosion=None if odds.explosion is None else float(odds.explosion),
    )


def awaits_reply(record: RollRecord, system: str) -> bool:
    """True for an opening roll of the active system: its outcome says it awaits a reply."""
    return record.system == system and record.outcome.facts.get("awaiting_reply") is True


def last_opening(state: SessionState) -> RollRecord | None:
    """The latest opening roll a reply may name, if any."""
    return next((r for r in reversed(state.history) if awaits_reply(r, state.system)), None)


def session_payload(
    state: SessionState, readings: Mapping[str, ReadingJson] | None = None
) -> SessionPayload:
    """The retained `session`: system, sides, declared next roll, its odds, recent rolls,
    the GM's latest actions and the roll `redo` would put back."""
    bar = state.bar()
    return SessionPayload(
        session_id=state.session_id,
        system=state.system,
        sides={
            "a": SideBody(label=bar.label_a, colour=bar.colour_a),
            "b": SideBody(label=bar.label_b, colour=bar.colour_b),
        },
        declared=dump(state.declared),
        odds=declared_odds(state),
        history=[history_item(r, state.system) for r in state.history[-HISTORY_LENGTH:]],
        last_roll=_last_roll(state, readings or {}),
        actions=[ActionItem.model_validate(dump(a)) for a in state.actions],
        redo=history_item(state.undone[-1], state.system) if state.undone else None,
    )


def history_item(record: RollRecord, system: str) -> HistoryItem:
    """A roll as the history lists it: who threw, when, its dice (and which the GM typed),
    what it came to, its tray photo, and whether a reply may name it (under `system`)."""
    dice = [{"kind": d.kind.value, "face": d.face} for d in record.roll.dice]
    read = dice_read(dice, record.reading)
    return HistoryItem(
        id=record.id,
        seq=record.seq,
        summary=record.outcome.summary,
        dice=[str(d) for d in record.roll.dice],
        roller=record.roll.roller or record.context.actor,
        at=record.at,
        snapshot=record.snapshot,
        typed=[i for i, die in enumerate(read) if die.typed],
        awaiting_reply=awaits_reply(record, system),
    )


def _reading(record: Mapping[str, Any], fallback: ReadingJson | None = None) -> ReadingJson | None:
    """The camera's reading of a dumped record: its own, else one kept beside it (an outbox
    event written before records kept theirs)."""
    own: ReadingJson | None = record.get("reading")
    return own if own is not None else fallback


def _last_roll(state: SessionState, readings: Mapping[str, ReadingJson]) -> RollEvent | None:
    last = state.last
    if last is None:
        return None
    return roll_event(dump(last), "result", readings.get(last.id))


def dice_read(dice: Sequence[Mapping[str, Any]], reading: ReadingJson | None) -> list[DieRead]:
    """The record's dice, with confidence and box from the reading when it matches them;
    with no reading, every die was typed by hand (a die the GM typed has no confidence)."""
    read = [DieRead(kind=d["kind"], value=d["face"], typed=reading is None) for d in dice]
    if reading is None or len(reading) != len(read):
        return read
    seen = [DieRead.from_reading(item) for item in reading]
    if [(d.kind, d.value) for d in seen] != [(d.kind, d.value) for d in read]:
        return read  # corrected by hand since: the camera's boxes no longer belong
    return seen


def roll_event(
    record: Mapping[str, Any], phase: Phase, reading: ReadingJson | None = None
) -> RollEvent:
    """A `roll` event (result or undone) from a dumped RollRecord; `reading` is used when
    the record has none of its own."""
    outcome = record["outcome"]
    motions = [MotionBody(**m) for m in outcome.get("motions", [])]
    return RollEvent(
        event=f"{record['id']}:{phase}",
        id=record["id"],
        seq=record["seq"],
        phase=phase,
        system=record["system"],
        roller=record["roll"].get("roller", ""),
        context=record["context"],
        dice=dice_read(record["roll"]["dice"], _reading(record, reading)),
        outcome=OutcomeBody(summary=outcome["summary"], facts=outcome.get("facts", {})),
        motions=motions,
        at=record.get("at"),
        snapshot=record.get("snapshot"),
    )


def seen_event(state: SessionState, reading: ReadingJson) -> RollEvent:
    """The `new` event for dice just seen, under the id the roll will be recorded with."""
    roll_id = state.next_id
    return RollEvent(
        event=f"{roll_id}:new",
        id=roll_id,
        seq=state.next_seq,
        phase="new",
        system=state.system,
        context=dump(state.declared),
        dice=[DieRead.from_reading(item) for item in reading],
    )
