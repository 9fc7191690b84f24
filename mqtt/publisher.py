"""The tower's side of MQTT: drains the table's outbox in order and answers GM commands.

Every table change is in the store's outbox before anyone hears of it; an event leaves the
outbox only once the broker has acknowledged all of its messages (PUBACK), so results made
while the broker is down go out, in order, when it is back. An event that cannot be made
into its messages is set aside in the store (never dropped) and reported, and the events
behind it go on.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from tidetower.engine.codec import dump, load_record
from tidetower.engine.dice import Roll
from tidetower.engine.hooks import printable
from tidetower.engine.rules import RollContext, RollRecord
from tidetower.engine.session import SessionState
from tidetower.engine.store import OutboxEvent
from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead
from tidetower.mqtt.client import BrokerClient, Message, Will
from tidetower.mqtt.commands import CommandDesk
from tidetower.mqtt.ha import discovery_messages
from tidetower.mqtt.inflight import WINDOW, InFlight
from tidetower.mqtt.payloads import (
    LearnPayload,
    Phase,
    TowerPayload,
)
from tidetower.mqtt.registry import Detail, LearnControl, TowerControls
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.stats import SessionStats, kept_before
from tidetower.mqtt.topics import Topics
from tidetower.mqtt.tower import LearnView, LoopView, attention_body, tower_payload
from tidetower.mqtt.views import bar_payload, roll_event, seen_event, session_payload

log = logging.getLogger(__name__)

PHASES: dict[str, Phase] = {"roll": "result", "redo": "result", "undo": "undone"}


class TablePublisher:
    """Publishes one table (`status`, `tide`, `session`, `stats`, `roll`) and runs its
    commands."""

    def __init__(
        self,
        table: Table,
        settings: MqttSettings,
        controls: TowerControls | None = None,
        learner: LearnControl | None = None,
    ) -> None:
        self.table = table
        self.settings = settings
        self.topics = Topics.of(settings)
        self.lock = table.lock  # one table change at a time: read loop or a command
        client_id = settings.client_id or f"tidetower-{settings.table}"
        self.client = BrokerClient(
            settings, client_id, persistent=True, will=Will(self.topics.status, "offline")
        )
        self.desk = CommandDesk(
            table,
            controls,
            learner,
            settings.max_command_bytes,
            record=self._record_from_command,
        )
        self._learn: LearnPayload | None = None  # the latest learning state, if any
        self._inflight = InFlight()
        self._ilock = threading.Lock()
        self._stats = SessionStats(kept_before(table.store, table.problems.report))
        """The table's `stats`, each roll counted once as the session grows."""
        self._fresh = False
        self._tower: TowerPayload | None = None  # the read loop's latest state, if it has one
        self._tower_due = False
        self._bar_due = False  # an event was set aside: send the bar as it is, once drained
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._worker: threading.Thread | None = None
        self.ticks: list[Callable[[bool], None]] = []
        """Called at each step, True after a connect (the retained `dice`: mqtt/dice.py)."""
        self.client.on_connect.append(self._on_connect)
        self.client.subscribe(self.topics.commands, self._on_command, qos=0)
        if settings.ha_discovery:
            self.client.subscribe(f"{settings.ha_prefix}/status", self._on_ha_status)

    # --- the API `tidetower run` uses ------------------------------------------------

    def start(self) -> TablePublisher:
        """Start publishing in the background; returns self."""
        self.table.listeners.append(self._on_change)
        self.table.problems.listeners.append(self._on_problem)
        self._report_parked()
        self._worker = threading.Thread(target=self._work, name="mqtt-outbox", daemon=True)
        self._worker.start()
        self.client.start()
        return self

    def stop(self) -> None:
        """Say "offline" (retained) and disconnect; undelivered events stay in the outbox."""
        if self._on_change in self.table.listeners:
            self.table.listeners.remove(self._on_change)
        if self._on_problem in self.table.problems.listeners:
            self.table.problems.listeners.remove(self._on_problem)
        self._stopping.set()
        self._wake.set()
        if self._worker is not None:
            self._worker.join(5)
        # a state set while the worker was finishing its last step is still due: the loop's
        # final state (e.g. "result" after `run --rolls N`) must not be lost on the way out
        self._publish_tower(only_if_due=True)
        self.client.stop(last_words=(self.topics.status, "offline"))

    def __enter__(self) -> TablePublisher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def record(
        self,
        roll: Roll,
        reading: Sequence[DieRead] | None = None,
        context: RollContext | None = None,
    ) -> RollRecord:
        """Record a roll on the table with the camera dice its dice point at, if any."""
        return self.table.record(roll, context, reading)

    def roll_seen(self, reading: Sequence[DieRead]) -> None:
        """Announce dice just seen (phase "new"), under the id the roll will be recorded with."""
        with self.lock:
            event = seen_event(self.table.state, reading)
        self._send(self.topics.roll, event, retain=False)

    @property
    def latest_tower(self) -> TowerPayload | None:
        """The `tower` payload last handed to the publisher (sent or not yet), if any."""
        with self._ilock:
            return self._tower

    def tower_state(
        self, state: str, attention: Mapping[str, Any] | None = None, error: str | None = None
    ) -> None:
        """Publish the read loop's state (retained `tower`) soon; never waits on the network."""
        try:
            body = tower_payload(state, attention, error)
        except ValidationError:  # a bug in the caller: say so, and keep the loop running
            log.exception("tower state %r cannot be published", state)
            return
        with self._ilock:
            self._tower, self._tower_due = body, True
        self._wake.set()

    def follow_loop(self, loop: LoopView) -> None:
        """Publish the read loop's state now and on every change it makes."""

        def changed(state: object) -> None:
            self.tower_state(str(state), attention_body(loop.attention), loop.error)

        loop.on_state.append(changed)
        changed(loop.state)

    def follow_learning(self, learner: LearnView) -> None:
        """Publish the corrections kept and the learning state now and on every change."""
        learner.on_status.append(lambda status: self.learn_state(status.to_dict()))
        self.learn_state(learner.status.to_dict())

    def learn_state(self, body: Mapping[str, Any]) -> None:
        """Publish (retained `learn`) the corrections kept and what learning from them did."""
        try:
            payload = LearnPayload.model_validate(body)
        except ValidationError:  # a bug in the caller: say so, and keep the tower running
            log.exception("learning state %r cannot be published", body)
            return
        with self._ilock:
            self._learn = payload
        self._send(self.topics.learn, payload, retain=True)

    def wait_delivered(self, timeout: float) -> bool:
        """True once every outbox event has been acknowledged by the broker."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._inflight and not self.table.store.pending(1):
                return True
            time.sleep(0.02)
        return False

    # --- outbox ------------------------------------------------------------------------

    def _on_change(self, _event: OutboxEvent) -> None:
        self._wake.set()

    def _on_problem(self, _sentence: str) -> None:
        """A problem is shown with the tower's state: send that again."""
        with self._ilock:
            if self._tower is not None:
                self._tower_due = True
        self._wake.set()

    def _report_parked(self) -> None:
        """Events set aside before this start stay aside (they block nothing): say so."""
        parked = self.table.store.parked()
        if parked:
            seqs = ", ".join(str(p.event.seq) for p in parked[:10])
            more = ", …" if len(parked) > 10 else ""
            self.table.problems.report(
                f"{len(parked)} outbox event(s) could not be published and are set aside in"
                f" the store (seq {seqs}{more}): `tidetower session outbox` lists them"
            )

    def _on_connect(self) -> None:
        with self._ilock:
            self._fresh = True
        self._wake.set()

    def _work(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(0.5)
            self._wake.clear()
            try:
                self._step()
            except Exception as error:  # the tower keeps rolling; the events stay in the outbox
                self.table.problems.report(
                    f"publishing failed ({type(error).__name__}: {error}); trying again", error
                )

    def _step(self) -> None:
        """After a connect: status, then the outbox in order, then the current state."""
        if not self.client.connected.is_set():
            return
        busy = bool(self._inflight)  # only this thread adds to it; an ack wakes it again
        with self._ilock:
            if self._fresh and busy:
                return  # paho is re-sending what was in flight; newer events wait behind it
            fresh, self._fresh = self._fresh, False
        if fresh:
            self.client.publish(self.topics.status, "online", 1, True)
        for tick in self.ticks:
            tick(fresh)
        bar_due = self._take_bar_due(drained=self._send_pending())
        if fresh:
            self._publish_state()
            return
        if bar_due:
            self._publish_bar()
        self._publish_tower(only_if_due=True)

    def _send_pending(self) -> bool:
        """Send the outbox in order, up to the window; True once every event in it is in
        flight (or set aside)."""
        events = self.table.store.pending(WINDOW * 2)
        for event in events:
            if self._inflight.has(event.seq):
                continue
            if self._inflight.full():
                return False
            if not self._send_event(event):
                return False
        return len(events) < WINDOW * 2

    def _take_bar_due(self, drained: bool) -> bool:
        """Whether an event set aside leaves the retained bar to send as it is now: only
        once the events before it are out, or an older bar would follow it."""
        with self._ilock:
            due = drained and self._bar_due
            self._bar_due = self._bar_due and not drained
        return due

    def _send_event(self, event: OutboxEvent) -> bool:
        """Publish one event; one that cannot be made into messages or sent is set aside and
        the next goes on. False when the connection is gone: it goes again on reconnecting."""
        try:
            if not isinstance(event.body, dict):
                raise ValueError(f"the stored body is not an event: {str(event.body)[:60]!r}")
            messages = self._event_messages(event.kind, event.body)
            return self._publish_event(event.seq, messages)
        except Exception as error:
            self._park(event, error)
            return True

    def _publish_event(self, seq: int, messages: list[tuple[str, str, bool]]) -> bool:
        """Publish an event's messages; it counts as delivered when all are acknowledged."""
        attempt, sent = self._inflight.begin(seq, len(messages)), 0
        try:
            for topic, text, retain in messages:
                ack = functools.partial(self._acked, seq, attempt)
                if not self.client.publish(topic, text, 1, retain, on_ack=ack):
                    break
                sent += 1
        finally:
            if sent < len(messages):  # not all out: the event is not in flight
                self._inflight.drop(seq)
        return sent == len(messages)

    def _event_messages(self, kind: str, body: Mapping[str, Any]) -> list[tuple[str, str, bool]]:
        """The event's `roll` and `tide` from its row (raising if the row cannot make them),
        then the current `session` (skipped, and reported, if the table's cannot be made)."""
        messages: list[tuple[str, str, bool]] = []
        if kind in PHASES and "record" in body:
            # an event older than records keeping their reading has it beside the record
            record = load_record(body["record"], body.get("reading"))
            event = roll_event(record, PHASES[kind])
            messages.append((self.topics.roll, event.model_dump_json(), False))
        messages.append((self.topics.tide, bar_payload(body["bar"]).model_dump_json(), True))
        state = self.table.state
        for topic, build in self._state_builders(state):
            text = self._render(topic, build)
            if text is not None:
                messages.append((topic, text, True))
        return messages

    def _state_builders(self, state: SessionState) -> list[tuple[str, Callable[[], BaseModel]]]:
        """The retained `session` and `stats` of the table as it is, to build."""
        return [
            (self.topics.session, lambda: session_payload(state)),
            (self.topics.stats, lambda: self._stats.payload(state)),
        ]

    def _park(self, event: OutboxEvent, error: Exception) -> None:
        """Set an event that cannot be published aside in the store, and say so."""
        reason = printable(f"{type(error).__name__}: {error}")
        self.table.store.park(event.seq, reason)
        with self._ilock:
            self._bar_due = True
        self._wake.set()
        self.table.problems.report(
            f"outbox event {event.seq} ({event.kind}) cannot be published ({reason}); it is"
            " set aside in the store and the events after it go on",
            error,
        )

    def _acked(self, seq: int, attempt: int) -> None:
        if self._inflight.acked(seq, attempt):
            try:
                self.table.store.delivered(seq)
            except Exception as error:  # on paho's thread: it must not stop the network loop
                self.table.problems.report(f"outbox event {seq} sent, not forgotten: {error}")
            self._inflight.drop(seq)
            self._wake.set()

    def _publish_state(self) -> None:
        """Everything retained as it is now (after any replayed events)."""
        self._publish_bar()
        self._publish_tower(only_if_due=False)
        with self._ilock:
            learn = self._learn
        if learn is not None:
            self._send(self.topics.learn, learn, retain=True)
        if self.settings.ha_discovery:
            self._publish_discovery()

    def _publish_bar(self) -> None:
        """The retained `tide`, `session` and `stats` as the table is now."""
        state = self.table.state
        self._send_built(self.topics.tide, lambda: bar_payload(dump(state.bar())), True)
        for topic, build in self._state_builders(state):
            self._send_built(topic, build, True)

    def _publish_tower(self, only_if_due: bool) -> None:
        """The latest `tower`, with the latest problems; with no read loop, clear a retained
        one left from before."""
        with self._ilock:
            body, due, self._tower_due = self._tower, self._tower_due, False
        if only_if_due and not due:
            return
        if body is None:
            self.client.publish(self.topics.tower, b"", 1, True)
            return
        problems = list(self.table.problems.latest)
        self._send(self.topics.tower, body.model_copy(update={"problems": problems}), True)

    def _send(self, topic: str, body: BaseModel, retain: bool) -> None:
        self._send_built(topic, lambda: body, retain)

    def _send_built(self, topic: str, build: Callable[[], BaseModel], retain: bool) -> None:
        """Publish what `build` makes; one that cannot be made is reported, not raised."""
        text = self._render(topic, build)
        if text is not None:
            self.client.publish(topic, text, 1, retain)

    def _render(self, topic: str, build: Callable[[], BaseModel]) -> str | None:
        """`build()` as the JSON text to send; None, and a problem reported, if it fails."""
        try:
            return build().model_dump_json()
        except Exception as error:
            self.table.problems.report(
                f"{topic} cannot be published ({type(error).__name__}: {error})", error
            )
            return None

    # --- commands and Home Assistant ---------------------------------------------------

    def _on_command(self, message: Message) -> None:
        name = self.topics.command_name(message.topic)
        if name is None or name == "result" or not message.payload:
            return  # an empty message clears a retained command (ours too): nothing to run
        if message.retain:  # kept by the broker: clear it, so no restart runs it again
            self.client.publish(message.topic, b"", 1, True)
        result = self.desk.answer(name, message.payload, retained=message.retain)
        self._send(self.topics.command_result, result, retain=False)

    def _record_from_command(self, roll: Roll) -> Detail:
        record = self.record(roll)
        return {"roll_id": record.id, "summary": record.outcome.summary}

    def _on_ha_status(self, message: Message) -> None:
        if message.payload == b"online":
            self._publish_discovery()

    def _publish_discovery(self) -> None:
        for topic, config in discovery_messages(self.settings):
            self.client.publish(topic, config, 1, True)


__all__: Sequence[str] = ("TablePublisher",)
