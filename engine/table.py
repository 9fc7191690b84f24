"""The live table: a session that is saved before any change is seen by anyone.

Every method works out the new state first (bad input raises and changes nothing),
writes it to the store, and only then makes it current.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path

from tidetower.engine import session as pure
from tidetower.engine.dice import Roll
from tidetower.engine.rules import BarState, JSONValue, RollContext, RollRecord
from tidetower.engine.session import SessionState
from tidetower.engine.store import SessionStore


class Table:
    """One table's session, persisted on every change; resumes where it stopped."""

    def __init__(self, store_path: str | Path, system: str = "tide",
                 settings: Mapping[str, JSONValue] | None = None) -> None:
        self.store = SessionStore(store_path)
        loaded = self.store.load()
        if loaded is None:
            loaded = pure.new_session(uuid.uuid4().hex[:8], system, settings)
            self.store.save(loaded)
        self.state: SessionState = loaded

    def _commit(self, state: SessionState) -> SessionState:
        self.store.save(state)
        self.state = state
        return state

    def declare(self, context: RollContext) -> None:
        """Declare the next roll."""
        self._commit(pure.declare(self.state, context))

    def record(self, roll: Roll, context: RollContext | None = None) -> RollRecord:
        """Resolve and keep a roll; returns its record."""
        state, record = pure.record_roll(self.state, roll, context)
        self._commit(state)
        return record

    def undo(self) -> RollRecord:
        """Take back the last roll; returns the roll taken back."""
        state, record = pure.undo(self.state)
        self._commit(state)
        return record

    def reset_tracker(self, settings: Mapping[str, JSONValue]) -> None:
        """Set up the active system's tracker afresh."""
        self._commit(pure.reset_tracker(self.state, settings))

    def switch_system(self, system: str,
                      settings: Mapping[str, JSONValue] | None = None) -> None:
        """Change the rule system the table plays."""
        self._commit(pure.switch_system(self.state, system, settings))

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
