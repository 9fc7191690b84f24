"""The shapes every rule system shares: what was declared, what came of a roll, the bar."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

from typing_extensions import TypeAliasType

from tidetower.engine.chances import Odds
from tidetower.engine.dice import DieKind, Roll
from tidetower.engine.tray import DieRead

if TYPE_CHECKING:
    from tidetower.engine.describe import Description

Side = Literal["a", "b"]
JSONValue = TypeAliasType(
    "JSONValue", "str | int | float | bool | Sequence[JSONValue] | Mapping[str, JSONValue] | None"
)
"""A value as JSON holds it: settings, params, a dumped tracker."""

SIDES: tuple[Side, Side] = ("a", "b")


class RuleError(ValueError):
    """A declaration or reading the active rule system cannot accept; nothing changed."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        """The input refused, so every surface names it alike: a RollContext field (`pool`),
        a params or settings key (`defender`), `dice`, or None for the whole request."""


def other_side(side: Side) -> Side:
    """The opposing side."""
    return "b" if side == "a" else "a"


@dataclass(frozen=True)
class RollContext:
    """What the GM declared for the next roll: who, for which side, against what; the
    fields only one system takes (its Description's) are in `params`."""

    actor: str = ""
    side: Side | None = None
    reply_to: str | None = None
    mode: str = ""
    pool: int | None = None
    params: Mapping[str, JSONValue] = field(default_factory=dict)


@dataclass(frozen=True)
class Motion:
    """One move of a shared tracker, with what caused it (seed 000's Before / After)."""

    cause: str
    before: int
    after: int


@dataclass(frozen=True)
class Outcome:
    """What a roll means under the active system: a line for the table and the facts."""

    summary: str
    facts: Mapping[str, JSONValue] = field(default_factory=dict)
    motions: tuple[Motion, ...] = ()


@dataclass(frozen=True)
class BarState:
    """A tracker as the LED bar shows it: a range, a marker, two sides and their colours."""

    system: str
    low: int
    high: int
    position: int
    label_a: str = "A"
    label_b: str = "B"
    colour_a: str = "#dc143c"
    colour_b: str = "#008080"
    routed: Side | None = None
    last_motion: Motion | None = None
    # Trackers with several parts (d6-pool clocks, pending Counts): (label, filled, size) each.
    segments: tuple[tuple[str, int, int], ...] = ()


@dataclass(frozen=True)
class RollRecord:
    """One roll in the session's history, with the tracker state from before it."""

    id: str
    seq: int
    system: str
    context: RollContext
    roll: Roll
    outcome: Outcome
    state_before: JSONValue
    at: float | None = None
    """When it was recorded, in seconds since the epoch (the Table's clock); None: unknown."""
    snapshot: str | None = None
    """The file name of the tray photo it was read from, if the tower kept one."""
    reading: tuple[DieRead, ...] | None = None
    """The camera's dice as it read them (confidence, box; or typed by the GM), which each die
    of `roll` points at (`Die.read`); None: the throw was entered by hand."""


@dataclass(frozen=True)
class PracticeTurn:
    """What a simulated table does next under a system: set up, declare, throw."""

    context: RollContext | None = None
    """The roll the GM declares; None leaves the declaration as it is."""
    dice: tuple[DieKind, ...] = ()
    """The dice the player throws; none named: a handful of d6, as many as the player likes."""
    reset: Mapping[str, JSONValue] | None = None
    """Settings to set the tracker up afresh with before declaring (after a rout, say)."""
    narration: str = ""
    """What a worked example (option `story`) says before this throw."""
    done: bool = False
    """The worked example is over: say the narration and throw nothing more."""


def alternate_side(history: Sequence[RollRecord]) -> Side:
    """The side whose turn it is when the sides take turns: "a" first."""
    return SIDES[len(history) % 2]


def attack_in_turn(history: Sequence[RollRecord], *dice: DieKind) -> PracticeTurn:
    """A practice turn where the sides take turns to attack, throwing `dice`."""
    side = alternate_side(history)
    context = RollContext(actor=f"Side {side.upper()}", side=side, mode="attack")
    return PracticeTurn(context, dice)


StateT = TypeVar("StateT")


class RuleSystem(Generic[StateT]):
    """A game's rules: turns a declared roll into an Outcome and moves its tracker.

    A system registers with `tidetower.engine.systems.register`; `initial_state`, `resolve`
    and `bar` are required; `describe`, `check_context`, `odds`, `scored` and `practice_turn`
    have defaults.
    """

    name: ClassVar[str]
    state_type: ClassVar[type[Any]]

    def initial_state(self, settings: Mapping[str, JSONValue]) -> StateT:
        """The tracker a new scene starts with, from the GM's settings ({}: the defaults)."""
        raise NotImplementedError

    def resolve(
        self,
        state: StateT,
        context: RollContext,
        roll: Roll,
        earlier: Mapping[str, RollRecord],
    ) -> tuple[StateT, Outcome]:
        """The Outcome of `roll` under `context`, and the tracker after it."""
        raise NotImplementedError

    def bar(self, state: StateT) -> BarState:
        """The tracker as the LED bar draws it."""
        raise NotImplementedError

    def describe(self) -> Description:
        """The system's settings, declaration and tracker, for the page, CLIs and LED bar;
        the default: no settings, any mode, a two-sided bar."""
        from tidetower.engine.describe import plain  # describe.py builds on this module

        return plain(self.name)

    def check_context(self, state: StateT, context: RollContext) -> None:
        """Raise RuleError if `context` cannot be declared now; the default accepts all."""

    def odds(
        self, state: StateT, context: RollContext, earlier: Mapping[str, RollRecord]
    ) -> Odds | None:
        """Exact odds of the roll `context` declares, knowing the rolls before it as `resolve`
        does (a reply's opening); None when it throws nothing to count."""
        return None

    def scored(self, outcome: Outcome) -> int | None:
        """The value this system's odds count, as the outcome came out (None: nothing counted)."""
        return None

    def thrown_odds(
        self,
        state: StateT,
        context: RollContext,
        roll: Roll,
        earlier: Mapping[str, RollRecord],
    ) -> Odds | None:
        """The odds a throw had, knowing the dice it was thrown with (where the declaration
        left the pool to the player, the pool thrown), for judging its luck afterwards; the
        default: the declared roll's `odds`."""
        return self.odds(state, context, earlier)

    def declared_dice(self, state: StateT, context: RollContext) -> tuple[DieKind, ...] | None:
        """The dice `context` says to throw (a pool of one kind), where it says; None: the
        declaration leaves the dice to the player."""
        return None

    def practice_turn(
        self,
        state: StateT,
        history: Sequence[RollRecord],
        rng: random.Random,
        options: Mapping[str, JSONValue],
    ) -> PracticeTurn:
        """What a simulated table does next, drawing from `rng`; `options` a system does not
        take are ignored. The default declares nothing and throws a handful of d6."""
        return PracticeTurn()
