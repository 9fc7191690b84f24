"""What every reply to a fuzzed command, and every command the tower accepts, must pass
(issue 17): the reply names the request's id when it has one, a refusal changes nothing, and
whatever the tower accepted it can store, publish, draw and reload."""

from __future__ import annotations

import json
import sqlite3
import sys
import unicodedata
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, get_args

from click.testing import CliRunner
from fuzz_strategies import Sent
from pydantic import BaseModel

from tidetower.engine.codec import dump, load_record
from tidetower.engine.rules import BarState
from tidetower.engine.session import SessionState
from tidetower.engine.store import OutboxEvent, SessionStore
from tidetower.engine.systems import get_system
from tidetower.engine.table import Table
from tidetower.firmware.cli import main
from tidetower.mqtt.commands import CommandDesk
from tidetower.mqtt.ledbar.node import bar_state
from tidetower.mqtt.ledbar.strip import animation, wled_state
from tidetower.mqtt.ledbar.terminal import render_bar
from tidetower.mqtt.payloads import BarPayload, CommandResult
from tidetower.mqtt.publisher import PHASES
from tidetower.mqtt.registry import reply_line
from tidetower.mqtt.settings import MqttSettings, Orientation
from tidetower.mqtt.views import bar_payload, roll_event, session_payload
from tidetower.mqtt.wording import declared_line

MAX_BYTES = MqttSettings().max_command_bytes
RETAINED = "retained commands are not run"


class Unsure(Enum):
    """The id a reply names to a body that is not JSON: none, or the id its top level shows
    (the tower reads the id of a body too deep to parse from its top level alone)."""

    ID = "no id, or the id its top level shows"


def expected_id(raw: bytes, max_bytes: int = MAX_BYTES) -> str | Unsure | None:
    """The id a reply must name: the body's, when the body is a JSON object of at most
    `max_bytes` whose `id` is 1..64 printable characters, however deep the rest nests."""
    if len(raw) > max_bytes:
        return None
    try:
        data = _patient_json(raw)
    except (UnicodeDecodeError, ValueError):
        return Unsure.ID
    value = data.get("id") if isinstance(data, dict) else None
    return value if usable(value) else None


def usable(value: object) -> bool:
    """A request id a reply can carry: 1..64 printable characters."""
    if not isinstance(value, str) or not 0 < len(value) <= 64:
        return False
    return all(unicodedata.category(c) not in ("Cs", "Cc") for c in value)


def names_its_id(reply_id: str | None, raw: bytes) -> bool:
    """True if `reply_id` is the id a reply to `raw` may name."""
    expected = expected_id(raw)
    if expected is not Unsure.ID:
        return reply_id == expected
    shown = (json.dumps(reply_id).encode(), str(reply_id).encode("utf-8", "surrogatepass"))
    return reply_id is None or (usable(reply_id) and any(form in raw for form in shown))


def _patient_json(raw: bytes) -> object:
    """JSON read at any depth a body of this size can reach (the test's parser, not the
    tower's: a body nests at most one level per byte)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, len(raw) + 200))
    try:
        return json.loads(raw.decode("utf-8"))
    finally:
        sys.setrecursionlimit(limit)


def check_reply(reply: CommandResult, sent: Sent) -> None:
    """The reply names the command and the request's id, says why in one line when it
    refuses, and goes over the wire and back unchanged."""
    assert reply.command == sent.name
    assert names_its_id(reply.id, sent.raw), (reply, sent)
    assert CommandResult.model_validate_json(reply.model_dump_json()) == reply
    if reply.ok:
        assert reply.error is None and not sent.retain
        return
    assert reply.error is not None and reply.error.message, reply
    message = reply.error.message
    assert "\n" not in message and "the tower failed" not in message, message
    assert (RETAINED in message) == sent.retain, message


@dataclass(frozen=True)
class Before:
    """The table as a command found it."""

    state: SessionState
    events: int

    @classmethod
    def of(cls, table: Table) -> Before:
        return cls(table.state, len(table.store.pending(10**6)))


def apply_checked(desk: CommandDesk, sent: Sent) -> CommandResult:
    """Send one message to the desk as the publisher does (a retained one is refused) and
    check the reply, and the table: unchanged on a refusal, whole on an acceptance."""
    table = desk.table
    before = Before.of(table)
    if sent.retain:
        reply = desk.answer(sent.name, sent.raw, retained=True)
    else:  # not answer(): a bug must fail the test, not become a refusal
        reply = desk.handle(sent.name, sent.raw)
    check_reply(reply, sent)
    if reply.ok:
        check_accepted(table, before, reply, sent)
    else:
        assert table.state == before.state, (sent, reply)
        assert len(table.store.pending(10**6)) == before.events
        check_reloads(table)
    return reply


def check_reloads(table: Table) -> None:
    """The store, opened afresh, holds exactly the table's state."""
    with SessionStore(table.store.path, read_only=True) as fresh:
        assert fresh.load() == table.state


def check_accepted(table: Table, before: Before, reply: CommandResult, sent: Sent) -> None:
    """What the tower accepted it can store, publish and draw."""
    check_reloads(table)
    for event in table.store.pending(10**6)[before.events :]:
        for payload in event_payloads(event, table.state):
            check_wire(payload)
    check_drawn(table.state.bar(), table.state)
    body = json.loads(sent.raw)
    reply_line(reply.model_dump(mode="json"), body).encode()


def event_payloads(event: OutboxEvent, state: SessionState) -> list[BaseModel]:
    """The messages the publisher sends for an outbox event (roll, tide, session)."""
    body = event.body
    assert isinstance(body, dict)
    payloads: list[BaseModel] = []
    record = body.get("record")
    if event.kind in PHASES and isinstance(record, dict):
        reading: Any = body.get("reading")
        payloads.append(roll_event(load_record(record, reading), PHASES[event.kind]))
    payloads.append(bar_payload(body["bar"]))  # type: ignore[arg-type]
    payloads.append(session_payload(state))
    return payloads


def check_wire(payload: BaseModel) -> None:
    """A payload is strict JSON (no NaN, no lone surrogate) and reads back the same."""
    wire = payload.model_dump_json()
    json.loads(wire, parse_constant=_no_constant)
    wire.encode("utf-8")
    assert type(payload).model_validate_json(wire) == payload


def _no_constant(name: str) -> object:
    raise AssertionError(f"{name} is not JSON")


def check_drawn(bar: BarState, state: SessionState) -> None:
    """The terminal bar, the LED strip's frames and the declared roll in words can all be
    drawn, as text a terminal can print."""
    render_bar(bar).encode("utf-8")
    declared_line(dump(state.declared), get_system(state.system).describe()).encode("utf-8")
    tide = check_tide_reloads(bar)
    for orientation in get_args(Orientation):
        for step in animation(None, tide, 60, orientation):
            json.dumps(wled_state(step.frame))


def check_tide_reloads(bar: BarState) -> BarPayload:
    """The retained `tide` for `bar` reads back as the bar the LED nodes draw."""
    tide = bar_payload(dump(bar))
    again = BarPayload.model_validate_json(tide.model_dump_json())
    assert again == tide
    assert bar_state(again) == bar
    return again


def check_store(path: Path, state: SessionState) -> None:
    """After the table is closed: SQLite's integrity check passes, the rolls are in order,
    a fresh Table resumes the same state, and `tidetower session show` reads it."""
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        for (body,) in db.execute("SELECT body FROM outbox"):
            json.loads(body)
    finally:
        db.close()
    seqs = [r.seq for r in state.history]
    assert seqs == sorted(set(seqs)) and (not seqs or state.next_seq > seqs[-1])
    assert len({r.id for r in state.history}) == len(seqs)
    with Table(path) as again:
        assert again.state == state
        check_tide_reloads(again.bar())
    for extra in ([], ["--json"]):
        shown = CliRunner().invoke(main, ["session", "show", "--store", str(path), *extra])
        assert shown.exit_code == 0 and shown.exception is None, shown.output
