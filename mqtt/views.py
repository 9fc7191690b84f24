"""Engine state and outbox bodies turned into the wire payloads of tidetower.mqtt.payloads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tidetower.engine.codec import dump
from tidetower.engine.marks import pool_distribution
from tidetower.engine.session import SessionState
from tidetower.engine.systems.tide import TideScene
from tidetower.mqtt.payloads import (
    DieRead,
    HistoryItem,
    MotionBody,
    OddsBody,
    OddsRow,
    OutcomeBody,
    Phase,
    RollEvent,
    SessionPayload,
    SideBody,
    TidePayload,
)

HISTORY_LENGTH = 20
Reading = Sequence[Mapping[str, Any]]


def tide_payload(bar: Mapping[str, Any]) -> TidePayload:
    """The retained `tide` from a dumped BarState."""
    known = {k: v for k, v in bar.items() if k in TidePayload.model_fields}
    return TidePayload(length=bar["high"] - bar["low"], **known)


def declared_odds(state: SessionState) -> OddsBody | None:
    """Odds of the declared roll where the rules allow working them out (a Tide Marks pool)."""
    declared = state.declared
    scene = state.tracker
    if not isinstance(scene, TideScene) or declared.marks is not None:
        return None
    if declared.tier is None or not declared.pool:
        return None
    dist = pool_distribution(declared.pool, declared.tier, scene.marks_rule)
    rows, left = [], 1.0
    for value, chance in dist.items():
        rows.append(OddsRow(value=value, chance=float(chance), at_least=max(left, 0.0)))
        left -= float(chance)
    mean = float(sum(v * c for v, c in dist.items()))
    return OddsBody(counts="Marks", dice=f"{declared.pool}{declared.tier.value}", rows=rows,
                    mean=round(mean, 4))


def session_payload(state: SessionState,
                    readings: Mapping[str, Reading] | None = None) -> SessionPayload:
    """The retained `session`: system, sides, declared next roll, its odds, recent rolls."""
    bar = state.bar()
    history = [HistoryItem(id=r.id, seq=r.seq, summary=r.outcome.summary,
                           dice=[str(d) for d in r.roll.dice])
               for r in state.history[-HISTORY_LENGTH:]]
    return SessionPayload(
        session_id=state.session_id, system=state.system,
        sides={"a": SideBody(label=bar.label_a, colour=bar.colour_a),
               "b": SideBody(label=bar.label_b, colour=bar.colour_b)},
        declared=dump(state.declared), odds=declared_odds(state), history=history,
        last_roll=_last_roll(state, readings or {}))


def _last_roll(state: SessionState, readings: Mapping[str, Reading]) -> RollEvent | None:
    last = state.last
    if last is None:
        return None
    return roll_event(dump(last), "result", readings.get(last.id))


def _reading_die(item: Mapping[str, Any]) -> DieRead:
    """A die from the camera's reading (vision calls the kind `die`); other keys are left out."""
    return DieRead(kind=item.get("kind", item.get("die")), value=item["value"],
                   confidence=item.get("confidence"), box=item.get("box"))


def dice_read(dice: Sequence[Mapping[str, Any]], reading: Reading | None) -> list[DieRead]:
    """The record's dice, with confidence and box from the reading when it matches them."""
    read = [DieRead(kind=d["kind"], value=d["face"]) for d in dice]
    if reading is None or len(reading) != len(read):
        return read
    seen = [_reading_die(item) for item in reading]
    if [(d.kind, d.value) for d in seen] != [(d.kind, d.value) for d in read]:
        return read  # corrected by hand since: the camera's boxes no longer belong
    return seen


def roll_event(record: Mapping[str, Any], phase: Phase,
               reading: Reading | None = None) -> RollEvent:
    """A `roll` event (result or undone) from a dumped RollRecord."""
    outcome = record["outcome"]
    motions = [MotionBody(**m) for m in outcome.get("motions", [])]
    return RollEvent(
        event=f"{record['id']}:{phase}", id=record["id"], seq=record["seq"], phase=phase,
        system=record["system"], roller=record["roll"].get("roller", ""),
        context=record["context"], dice=dice_read(record["roll"]["dice"], reading),
        outcome=OutcomeBody(summary=outcome["summary"], facts=outcome.get("facts", {})),
        motions=motions)


def seen_event(state: SessionState, reading: Reading) -> RollEvent:
    """The `new` event for dice just seen, under the id the roll will be recorded with."""
    roll_id = f"{state.session_id}-{state.next_seq}"
    return RollEvent(event=f"{roll_id}:new", id=roll_id, seq=state.next_seq, phase="new",
                     system=state.system, context=dump(state.declared),
                     dice=[_reading_die(item) for item in reading])
