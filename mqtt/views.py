"""Engine state and outbox bodies turned into the wire payloads of tidetower.mqtt.payloads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tidetower.engine import session as pure
from tidetower.engine import tray
from tidetower.engine.chances import Odds
from tidetower.engine.codec import dump
from tidetower.engine.dice import DieError
from tidetower.engine.rules import RollRecord, RuleError
from tidetower.engine.session import SessionState
from tidetower.engine.systems import get_system
from tidetower.mqtt.payloads import (
    ActionItem,
    BarPayload,
    DieBody,
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
    TrackerBody,
)

HISTORY_LENGTH = 20


def bar_payload(bar: Mapping[str, Any]) -> BarPayload:
    """The retained `tide` from a dumped BarState, with what its system's tracker is."""
    known = {k: v for k, v in bar.items() if k in BarPayload.model_fields}
    return BarPayload(length=bar["high"] - bar["low"], tracker=tracker_body(bar), **known)


def tracker_body(bar: Mapping[str, Any]) -> TrackerBody | None:
    """The tracker's kind and words, its ends named for the sides; None for a system this
    tower does not know (an outbox event of a plugin since removed)."""
    try:
        tracker = get_system(bar["system"]).describe().tracker
    except RuleError:
        return None
    ends = [tracker.end.format(side=bar.get(key, "")) for key in ("label_a", "label_b")]
    return TrackerBody(kind=tracker.kind, name=tracker.name, ends=ends, position=tracker.position)


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


def session_payload(state: SessionState) -> SessionPayload:
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
        last_roll=None if state.last is None else roll_event(state.last, "result"),
        actions=[ActionItem.model_validate(dump(a)) for a in state.actions],
        redo=history_item(state.undone[-1], state.system) if state.undone else None,
        description=dump(get_system(state.system).describe()),
    )


def history_item(record: RollRecord, system: str) -> HistoryItem:
    """A roll as the history lists it: who threw, when, its dice (and which the GM typed),
    what it came to, its tray photo, and whether a reply may name it (under `system`)."""
    return HistoryItem(
        id=record.id,
        seq=record.seq,
        summary=record.outcome.summary,
        dice=[str(d) for d in record.roll.dice],
        roller=record.roll.roller or record.context.actor,
        at=record.at,
        snapshot=record.snapshot,
        typed=[i for i, die in enumerate(rolled_dice(record)) if die.typed],
        awaiting_reply=awaits_reply(record, system),
    )


def rolled_dice(record: RollRecord) -> list[DieBody]:
    """The record's dice on the wire, each with the confidence and box of the camera dice it
    points at; a throw typed in by hand has no reading, and every die of it is typed."""
    return [DieBody.rolled(die, record.reading or ()) for die in record.roll.dice]


def roll_event(record: RollRecord, phase: Phase) -> RollEvent:
    """A `roll` event (result or undone) of a recorded roll."""
    body = dump(record)
    outcome: Any = body["outcome"]
    return RollEvent(
        event=f"{record.id}:{phase}",
        id=record.id,
        seq=record.seq,
        phase=phase,
        system=record.system,
        roller=record.roll.roller,
        context=body["context"],
        dice=rolled_dice(record),
        reading=[DieBody.seen(die) for die in record.reading or ()],
        outcome=OutcomeBody(summary=outcome["summary"], facts=outcome["facts"]),
        motions=[MotionBody(**m) for m in outcome["motions"]],
        at=record.at,
        snapshot=record.snapshot,
    )


def seen_event(state: SessionState, reading: Sequence[tray.DieRead]) -> RollEvent:
    """The `new` event for dice just seen, under the id the roll will be recorded with."""
    roll_id = state.next_id
    return RollEvent(
        event=f"{roll_id}:new",
        id=roll_id,
        seq=state.next_seq,
        phase="new",
        system=state.system,
        context=dump(state.declared),
        dice=counted_dice(reading),
        reading=[DieBody.seen(die) for die in reading],
    )


def counted_dice(reading: Sequence[tray.DieRead]) -> list[DieBody]:
    """The dice just seen as the rules will count them; none where they cannot be (a tens
    d10 alone: the GM is asked to fix it)."""
    try:
        roll = tray.roll_of(tray.Reading(tuple(reading)))
    except DieError:
        return []
    return [DieBody.rolled(die, reading) for die in roll.dice]
