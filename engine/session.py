"""The table session: the active system, its tracker, the declared roll, history, undo.

Pure: each change takes a SessionState and returns a new one; persisting it is the
store's job (tidetower.engine.store).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tidetower.engine.bounds import check_context, check_json, check_text
from tidetower.engine.chances import Odds
from tidetower.engine.codec import dump_tracker, load_tracker
from tidetower.engine.dice import DieError, Roll
from tidetower.engine.rules import BarState, JSONValue, RollContext, RollRecord, RuleError
from tidetower.engine.systems import DEFAULT_SYSTEM, get_system
from tidetower.engine.tray import DieRead

ActionKind = Literal["undo", "redo", "reset", "system"]
ACTIONS_KEPT = 20
"""The GM's latest actions the session keeps in its log."""


@dataclass(frozen=True)
class TableAction:
    """A GM's change to the table beside the rolls (an undo, a redo, a fresh tracker, another
    system), kept in the session's log so the table sees who changed the bar and how."""

    kind: ActionKind
    text: str
    roll_id: str | None = None
    """The roll it took back, or recorded again, if any."""
    after_seq: int = 0
    """The seq of the latest roll recorded by then (a redo's own): it came after that roll."""
    at: float | None = None
    """When, in seconds since the epoch (the Table's clock); None: unknown."""


@dataclass(frozen=True)
class SessionState:
    """Everything a table needs to carry on after a reboot."""

    session_id: str
    system: str
    tracker: Any
    declared: RollContext = field(default_factory=RollContext)
    history: tuple[RollRecord, ...] = ()
    next_seq: int = 1
    actions: tuple[TableAction, ...] = ()
    """The GM's latest actions, oldest first (at most ACTIONS_KEPT)."""
    undone: tuple[RollRecord, ...] = ()
    """Rolls taken back since the last other change, the latest last: what `redo` puts back."""
    set_up_after: int | None = None
    """The seq of the latest roll when the GM last set the tracker up afresh or chose another
    system (None: never): undo does not reach behind it, or the fresh tracker would be lost."""
    earlier: int = 0
    """Rolls stored before `history` and not in it (a tower holds only its latest
    `table.RECENT` rolls): counted by the stats, out of undo's reach."""

    @property
    def rolls(self) -> int:
        """Every roll of the session: those held in `history` and those stored before."""
        return self.earlier + len(self.history)

    @property
    def next_id(self) -> str:
        """The id the next roll recorded will have."""
        return f"{self.session_id}-{self.next_seq}"

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
    session_id: str, system: str = DEFAULT_SYSTEM, settings: Mapping[str, JSONValue] | None = None
) -> SessionState:
    """A session with a fresh tracker for `system`; settings out of bounds are refused."""
    check_json(settings or {}, "settings")
    tracker = get_system(system).initial_state(settings or {})
    return SessionState(session_id=session_id, system=system, tracker=tracker)


def declare(state: SessionState, context: RollContext) -> SessionState:
    """Declare the next roll's context, after checking it against the rules and history."""
    check_context(context)
    get_system(state.system).check_context(state.tracker, context)
    if context.reply_to is not None and state.roll(context.reply_to) is None:
        raise RuleError(f"reply to unknown roll {context.reply_to!r}", field="reply_to")
    return dataclasses.replace(state, declared=context, undone=())


def earlier_rolls(state: SessionState) -> dict[str, RollRecord]:
    """The rolls a new roll may refer to (a reply's opening): this system's, by id."""
    return {r.id: r for r in state.history if r.system == state.system}


def declared_odds(state: SessionState) -> Odds | None:
    """Exact odds of the declared roll; None when nothing is declared or nothing is counted."""
    if state.declared == RollContext():
        return None
    try:
        system = get_system(state.system)
        return system.odds(state.tracker, state.declared, earlier_rolls(state))
    except (RuleError, DieError):  # a roll the engine cannot count (e.g. over 60 dice)
        return None


def check_read(roll: Roll, reading: Sequence[DieRead] | None) -> None:
    """Refuse a die that points at a camera die the reading does not have."""
    count = 0 if reading is None else len(reading)
    for die in roll.dice:
        if any(not 0 <= i < count for i in die.read):
            said = f"{die} was read from camera dice {die.read}: {count} read"
            raise RuleError(said, field="dice")


def record_roll(
    state: SessionState,
    roll: Roll,
    context: RollContext | None = None,
    *,
    at: float | None = None,
    snapshot: str | None = None,
    reading: Sequence[DieRead] | None = None,
) -> tuple[SessionState, RollRecord]:
    """Resolve a roll under the declared context (or `context`) and add it to the history,
    with when it was recorded, its tray photo and the camera's reading, if known."""
    check_text(roll.roller, "roller", 80)
    check_read(roll, reading)
    context = state.declared if context is None else context
    check_context(context)
    system = get_system(state.system)
    tracker, outcome = system.resolve(state.tracker, context, roll, earlier_rolls(state))
    record = RollRecord(
        id=state.next_id,
        seq=state.next_seq,
        system=state.system,
        context=context,
        roll=roll,
        outcome=outcome,
        state_before=dump_tracker(state.system, state.tracker),
        at=at,
        snapshot=snapshot,
        reading=None if reading is None else tuple(reading),
    )
    return dataclasses.replace(
        state,
        tracker=tracker,
        declared=RollContext(),
        history=(*state.history, record),
        next_seq=state.next_seq + 1,
        undone=(),
    ), record


def logged(
    state: SessionState,
    kind: ActionKind,
    text: str,
    roll_id: str | None = None,
    at: float | None = None,
) -> SessionState:
    """`state` with a GM action added to its log (the oldest dropped beyond ACTIONS_KEPT)."""
    action = TableAction(kind, text, roll_id, state.next_seq - 1, at)
    return dataclasses.replace(state, actions=(*state.actions, action)[-ACTIONS_KEPT:])


def undo(state: SessionState, at: float | None = None) -> tuple[SessionState, RollRecord]:
    """Take back the last roll: its tracker state returns and its declaration is re-armed;
    `redo` can put it back while nothing else changes."""
    last = state.last
    if last is None and state.earlier:
        raise RuleError("nothing to undo: the rolls before this start are out of undo's reach")
    if last is None:
        raise RuleError("nothing to undo: no roll has been recorded")
    refused = undo_refusal(state, last)
    if refused is not None:
        raise RuleError(refused)
    tracker = load_tracker(state.system, last.state_before)
    undone = dataclasses.replace(
        state,
        tracker=tracker,
        declared=last.context,
        history=state.history[:-1],
        undone=(*state.undone, last),
    )
    text = f"undid {last.id}: {last.outcome.summary}"
    return logged(undone, "undo", text, last.id, at), last


def undo_refusal(state: SessionState, last: RollRecord) -> str | None:
    """Why taking back `last` would throw away a later change (another system, a tracker set
    up afresh), in the table's words; None when nothing later would be lost."""
    if last.system != state.system:
        return (
            f"cannot take back {last.id}: it was made under {last.system!r} but the table "
            f"now plays {state.system!r}; undo would lose that switch"
        )
    if state.set_up_after is not None and state.set_up_after >= last.seq:
        bar = state.bar()
        return (
            f"cannot take back {last.id}: a new {state.system} was set up after it "
            f"({bar.label_a} v {bar.label_b}, the bar at {bar.position} of "
            f"{bar.low}..{bar.high}); undo would lose that set-up"
        )
    return None


def redo(state: SessionState, at: float | None = None) -> tuple[SessionState, RollRecord]:
    """Record the roll taken back last again, as it was (dice, declaration, photo, reading),
    under a new id; refused once anything else has changed since the undo."""
    if not state.undone:
        raise RuleError(
            "nothing to redo: redo puts back a roll just undone, before anything else changes"
        )
    again = state.undone[-1]
    redone, record = record_roll(
        state,
        again.roll,
        again.context,
        at=again.at,
        snapshot=again.snapshot,
        reading=again.reading,
    )
    redone = dataclasses.replace(redone, undone=state.undone[:-1])
    text = f"redid {again.id} as {record.id}: {record.outcome.summary}"
    return logged(redone, "redo", text, record.id, at), record


def reset_tracker(
    state: SessionState, settings: Mapping[str, JSONValue], at: float | None = None
) -> SessionState:
    """Set up the active system's tracker afresh (after a rout, say); history is kept."""
    check_json(settings, "settings")
    tracker = get_system(state.system).initial_state(settings)
    fresh = dataclasses.replace(
        state,
        tracker=tracker,
        declared=RollContext(),
        undone=(),
        set_up_after=state.next_seq - 1,
    )
    bar = fresh.bar()
    text = f"set up {state.system} afresh: the bar at {bar.position} of {bar.low}..{bar.high}"
    return logged(fresh, "reset", text, at=at)


def switch_system(
    state: SessionState,
    system: str,
    settings: Mapping[str, JSONValue] | None = None,
    at: float | None = None,
) -> SessionState:
    """Change the table's rule system; its tracker starts fresh, the history is kept."""
    check_json(settings or {}, "settings")
    tracker = get_system(system).initial_state(settings or {})
    # a fresh tracker, as a set-up makes: undo never reaches behind it (switching back too)
    switched = dataclasses.replace(
        state,
        system=system,
        tracker=tracker,
        declared=RollContext(),
        undone=(),
        set_up_after=state.next_seq - 1,
    )
    return logged(switched, "system", f"switched from {state.system} to {system}", at=at)
