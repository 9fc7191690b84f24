"""The table session: the active system, its tracker, the declared roll, history, undo.

Pure: each change takes a SessionState and returns a new one; persisting it is the
store's job (tidetower.engine.store).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tidetower.engine.chances import Odds
from tidetower.engine.codec import dump_tracker, load_tracker
from tidetower.engine.dice import DieError, Roll
from tidetower.engine.rules import BarState, JSONValue, RollContext, RollRecord, RuleError
from tidetower.engine.systems import get_system


@dataclass(frozen=True)
class SessionState:
    """Everything a table needs to carry on after a reboot."""

    session_id: str
    system: str
    tracker: Any
    declared: RollContext = field(default_factory=RollContext)
    history: tuple[RollRecord, ...] = ()
    next_seq: int = 1

    def roll(self, roll_id: str) -> RollRecord | None:
        """The recorded roll with this id, if any."""
        return next((r for r in self.history if r.id == roll_id), None)

    def bar(self) -> BarState:
        """The active tracker as the LED bar shows it."""
        return get_system(self.system).bar(self.tracker)

    @property
    def last(self) -> RollRecord | None:
        """The most recent roll, if any."""
        return self.history[-1] if self.history else None


def new_session(
    session_id: str, system: str = "tide", settings: Mapping[str, JSONValue] | None = None
) -> SessionState:
    """A session with a fresh tracker for `system`."""
    tracker = get_system(system).initial_state(settings or {})
    return SessionState(session_id=session_id, system=system, tracker=tracker)


def declare(state: SessionState, context: RollContext) -> SessionState:
    """Declare the next roll's context, after checking it against the rules and history."""
    get_system(state.system).check_context(state.tracker, context)
    if context.reply_to is not None and state.roll(context.reply_to) is None:
        raise RuleError(f"reply to unknown roll {context.reply_to!r}", field="reply_to")
    return dataclasses.replace(state, declared=context)


def declared_odds(state: SessionState) -> Odds | None:
    """Exact odds of the declared roll; None when nothing is declared or nothing is counted."""
    if state.declared == RollContext():
        return None
    try:
        return get_system(state.system).odds(state.tracker, state.declared)
    except (RuleError, DieError):  # a roll the engine cannot count (e.g. over 60 dice)
        return None


def record_roll(
    state: SessionState, roll: Roll, context: RollContext | None = None
) -> tuple[SessionState, RollRecord]:
    """Resolve a roll under the declared context (or `context`) and add it to the history."""
    context = state.declared if context is None else context
    system = get_system(state.system)
    earlier = {r.id: r for r in state.history if r.system == state.system}
    tracker, outcome = system.resolve(state.tracker, context, roll, earlier)
    record = RollRecord(
        id=f"{state.session_id}-{state.next_seq}",
        seq=state.next_seq,
        system=state.system,
        context=context,
        roll=roll,
        outcome=outcome,
        state_before=dump_tracker(state.system, state.tracker),
    )
    return dataclasses.replace(
        state,
        tracker=tracker,
        declared=RollContext(),
        history=(*state.history, record),
        next_seq=state.next_seq + 1,
    ), record


def undo(state: SessionState) -> tuple[SessionState, RollRecord]:
    """Take back the last roll: its tracker state returns and its declaration is re-armed."""
    last = state.last
    if last is None:
        raise RuleError("nothing to undo: no roll has been recorded")
    if last.system != state.system:
        raise RuleError(
            f"the last roll was made under {last.system!r} but the table now plays "
            f"{state.system!r}: switch back to undo it"
        )
    tracker = load_tracker(state.system, last.state_before)
    return dataclasses.replace(
        state,
        tracker=tracker,
        declared=last.context,
        history=state.history[:-1],
    ), last


def reset_tracker(state: SessionState, settings: Mapping[str, JSONValue]) -> SessionState:
    """Set up the active system's tracker afresh (e.g. a new Tide); history is kept."""
    tracker = get_system(state.system).initial_state(settings)
    return dataclasses.replace(state, tracker=tracker, declared=RollContext())


def switch_system(
    state: SessionState, system: str, settings: Mapping[str, JSONValue] | None = None
) -> SessionState:
    """Change the table's rule system; its tracker starts fresh, the history is kept."""
    tracker = get_system(system).initial_state(settings or {})
    return dataclasses.replace(state, system=system, tracker=tracker, declared=RollContext())
