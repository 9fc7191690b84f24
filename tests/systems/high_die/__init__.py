"""High die: a rule system in one folder, to prove that one folder is all a system needs.

A side throws one d6; a face of `target` (4) or more pushes the bar one step toward that
side's end. The bar runs from -span (side A's end) to +span (side B's), starting at 0.
Importing this module registers it (tests/test_new_system.py does, and puts it away after).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from tidetower.engine import params as p
from tidetower.engine.chances import Odds
from tidetower.engine.describe import Description, Field, Mode, Tracker, read_fields
from tidetower.engine.dice import DieKind, Roll
from tidetower.engine.rules import (
    BarState,
    JSONValue,
    Motion,
    Outcome,
    PracticeTurn,
    RollContext,
    RollRecord,
    RuleError,
    RuleSystem,
    Side,
    alternate_side,
)
from tidetower.engine.systems import register


@dataclass(frozen=True)
class HighDie:
    """The tracker: where the bar stands, how far it reaches, the face that pushes it."""

    position: int = 0
    span: int = 3
    target: int = 4
    last_motion: Motion | None = None


DESCRIPTION = Description(
    title="High die",
    setup="Set up the bar",
    tracker=Tracker("two-sided", "the high-die bar", end="{side}'s end"),
    settings=(
        Field("span", "Span", default=3, minimum=1, maximum=10, help="steps from 0 to an end"),
        Field("target", "Target", default=4, minimum=1, maximum=6, help="the face that pushes"),
    ),
    fields=(Field("side", "Side", "side", help="the side that throws"),),
    modes=(Mode("throw", ("side",)),),
    default_mode="throw",
)


def _side(context: RollContext) -> Side:
    if context.side is None:
        raise RuleError("name the side that throws ('a' or 'b')", field="side")
    return context.side


@register
class HighDieSystem(RuleSystem[HighDie]):
    """One d6 for a side: `target` or more pushes the bar a step toward that side."""

    name = "high-die"
    state_type = HighDie

    def initial_state(self, settings: Mapping[str, JSONValue]) -> HighDie:
        read: Any = read_fields(DESCRIPTION.settings, settings, "high-die setting(s)")
        return HighDie(span=read["span"], target=read["target"])

    def describe(self) -> Description:
        return DESCRIPTION

    def check_context(self, state: HighDie, context: RollContext) -> None:
        p.mode(context.mode, [m.name for m in DESCRIPTION.modes], DESCRIPTION.default_mode)
        _side(context)

    def resolve(
        self,
        state: HighDie,
        context: RollContext,
        roll: Roll,
        earlier: Mapping[str, RollRecord],
    ) -> tuple[HighDie, Outcome]:
        side = _side(context)
        if [d.kind for d in roll.dice] != [DieKind.D6]:
            raise RuleError("high die is one d6")
        face = roll.dice[0].face
        if face < state.target:
            return state, Outcome(f"{face}: the bar holds", {"face": face, "pushed": False})
        after = max(-state.span, min(state.span, state.position + (-1 if side == "a" else 1)))
        motion = Motion(f"{face} pushes toward {side.upper()}", state.position, after)
        moved = dataclasses.replace(state, position=after, last_motion=motion)
        return moved, Outcome(f"{face}: pushed", {"face": face, "pushed": True}, (motion,))

    def bar(self, state: HighDie) -> BarState:
        return BarState(
            system=self.name,
            low=-state.span,
            high=state.span,
            position=state.position,
            last_motion=state.last_motion,
        )

    def scored(self, outcome: Outcome) -> int | None:
        """1 when the throw pushed the bar, else 0: the steps its odds count."""
        return 1 if outcome.facts.get("pushed") else 0

    def odds(
        self, state: HighDie, context: RollContext, earlier: Mapping[str, RollRecord]
    ) -> Odds | None:
        push = Fraction(7 - state.target, 6)
        return Odds(
            "steps",
            f"1d6 at {state.target}+",
            {0: 1 - push, 1: push},
            outcomes={"pushes": push, "holds": 1 - push},
        )

    def practice_turn(
        self,
        state: HighDie,
        history: Sequence[RollRecord],
        rng: random.Random,
        options: Mapping[str, JSONValue],
    ) -> PracticeTurn:
        side = alternate_side(history)
        return PracticeTurn(RollContext(actor=f"Side {side.upper()}", side=side), (DieKind.D6,))
