"""The live table: a session that is saved before any change is seen by anyone.

Every method works out the new state first (bad input raises and changes nothing),
writes it to the store, and only then makes it current.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tidetower.engine import session as pure
from tidetower.engine.codec import dump
from tidetower.engine.dice import Roll
from tidetower.engine.hooks import Hooks, Problems
from tidetower.engine.rules import BarState, JSONValue, RollContext, RollRecord
from tidetower.engine.session import SessionState, TableAction
from tidetower.engine.store import OutboxEvent, SessionStore
from tidetower.engine.systems import DEFAULT_SYSTEM
from tidetower.engine.tray import DieRead

RECENT = 1000
"""The latest rolls a tower holds in memory (undo's reach, replies' openings); those before
are left in the store and counted by the stats from it (a year of play is some 50,000)."""


class Table:
    """One table's session, persisted on every change; resumes where it stopped."""

    def __init__(
        self,
        store_path: str | Path,
        system: str = DEFAULT_SYSTEM,
        settings: Mapping[str, JSONValue] | None = None,
        clock: Callable[[], float] = time.time,
        wait_s: float = 0.0,
        recent: int | None = None,
    ) -> None:
        """`wait_s`: how long to wait for another writer to let go of the store; `recent`:
        hold only the latest rolls in memory (None: all)."""
        self.clock = clock
        """When things happen, in seconds since the epoch: rolls and GM actions carry it."""
        self.store = SessionStore(store_path, wait_s=wait_s)
        self.problems = Problems()
        """What the tower could not do lately: a roll it could not draw or publish."""
        loaded = self.store.load(recent)
        for bad in self.store.skipped:  # left in the store as it is; the session goes on
            self.problems.report(bad.line())
        if loaded is None:
            loaded = pure.new_session(uuid.uuid4().hex[:8], system, settings)
            self.store.save(loaded)
        self.state: SessionState = loaded
        # The read loop, buttons and MQTT commands change the session from their own threads.
        self.lock = threading.RLock()
        # Called after every saved change, e.g. to wake the MQTT publisher; the change is
        # saved already, so a listener that fails is reported and the others still hear.
        self.listeners: Hooks[[OutboxEvent]] = Hooks("passing it on", self.problems)

    def _commit(
        self,
        state: SessionState,
        kind: str = "state",
        record: RollRecord | None = None,
        action: TableAction | None = None,
    ) -> SessionState:
        """Save `state` with an outbox event of `kind`, make it current, tell the listeners."""
        body: dict[str, JSONValue] = {
            "system": state.system,
            "bar": dump(state.bar()),
            "declared": dump(state.declared),
        }
        if record is not None:  # with the camera's view of each die, if it read them
            body["record"] = dump(record)
        if action is not None:  # a GM's action, for whoever shows them (the terminal)
            body["action"] = dump(action)
        event = OutboxEvent(kind, body)
        self.store.save(state, [event])
        self.state = state
        self.listeners.call(_about(kind, record), event)
        return state

    def declare(self, context: RollContext) -> None:
        """Declare the next roll."""
        with self.lock:
            self._commit(pure.declare(self.state, context))

    def record(
        self,
        roll: Roll,
        context: RollContext | None = None,
        reading: Sequence[DieRead] | None = None,
        snapshot: str | None = None,
    ) -> RollRecord:
        """Resolve and keep a roll (with the camera's reading of it and the name of its tray
        photo, if any); returns it."""
        with self.lock:
            state, record = pure.record_roll(
                self.state, roll, context, at=self.clock(), snapshot=snapshot, reading=reading
            )
            self._commit(state, "roll", record)
            return record

    def undo(self) -> RollRecord:
        """Take back the last roll; returns the roll taken back."""
        with self.lock:
            state, record = pure.undo(self.state, self.clock())
            self._commit(state, "undo", record, state.actions[-1])
            return record

    def redo(self) -> RollRecord:
        """Record the roll undone last again, if nothing changed since; returns it as
        recorded anew."""
        with self.lock:
            state, record = pure.redo(self.state, self.clock())
            self._commit(state, "redo", record, state.actions[-1])
            return record

    def reset_tracker(self, settings: Mapping[str, JSONValue]) -> None:
        """Set up the active system's tracker afresh."""
        with self.lock:
            state = pure.reset_tracker(self.state, settings, self.clock())
            self._commit(state, action=state.actions[-1])

    def switch_system(self, system: str, settings: Mapping[str, JSONValue] | None = None) -> None:
        """Change the rule system the table plays."""
        with self.lock:
            state = pure.switch_system(self.state, system, settings, self.clock())
            self._commit(state, action=state.actions[-1])

    def bar(self) -> BarState:
        """The active tracker as the LED bar shows it."""
        return self.state.bar()

    def close(self) -> None:
        """Close the store."""
        self.store.close()

    def __enter__(self) -> Table:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _about(kind: str, record: RollRecord | None) -> str:
    """The change a listener failed on, for its report: "roll a52950ec-3", "undo a52950ec-2"."""
    return f"{kind} {record.id}" if record is not None else f"the table's {kind} change"
