"""Seed 002 as a rule system: d6 action rolls and the table's clocks, momentum and stress.

Rolls and GM actions both go through `resolve`: the mode names what happens (actions.py),
params carry the numbers, and a GM action (clock, bid, reveal, end of combat) has an empty
tray. Contests and group actions reply to an opening roll, as replies to an opening do.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from tidetower.engine import params as p
from tidetower.engine.chances import Odds
from tidetower.engine.describe import Description
from tidetower.engine.dice import DieKind, Roll
from tidetower.engine.rules import (
    BarState,
    JSONValue,
    Outcome,
    PracticeTurn,
    RollContext,
    RollRecord,
    RuleError,
    RuleSystem,
)
from tidetower.engine.systems import register
from tidetower.engine.systems.d6_pool import tracker as t
from tidetower.engine.systems.d6_pool.actions import MODES, Earlier
from tidetower.engine.systems.d6_pool.declare import DESCRIPTION
from tidetower.engine.systems.d6_pool.odds import declared_pool
from tidetower.engine.systems.d6_pool.plan import POOL_PARAMS, plan_action
from tidetower.engine.systems.d6_pool.tracker import D6Table


def _d6_faces(roll: Roll, throws: bool, mode: str) -> tuple[int, ...]:
    stray = [d for d in roll.dice if d.kind is not DieKind.D6]
    if stray:
        raise RuleError(
            f"{stray[0].kind.value} is not part of a d6-pool roll: throw d6 only", field="dice"
        )
    if not throws and roll.dice:
        raise RuleError(
            f"{mode} is a GM action: it takes no dice, the tray shows {len(roll.dice)}",
            field="dice",
        )
    return roll.faces(DieKind.D6)


def _hits(count: JSONValue) -> str:
    """'1 hit', '3 hits'."""
    return f"{count} hit" + ("" if count == 1 else "s")


def _summary(ctx: RollContext, mode: str, facts: Mapping[str, JSONValue]) -> str:
    """A line for the table: an action's hits against its difficulty, else the facts that
    have a value (none reads "None")."""
    who = ctx.actor or "the table"
    if mode in ("action", "group") and "result" in facts:
        extra = f", {facts['excess']} excess" if facts["excess"] else ""
        hits = _hits(facts["hits"])
        return f"{who}: {hits} vs difficulty {facts['difficulty']}: {facts['result']}{extra}"
    if mode == "auction":
        return f"{who} rolled for the auction: hits hidden until the reveal"
    if mode == "reveal":
        return f"auction: {' and '.join(p.names(facts, 'winners'))} ({facts['why']})"
    shown = ", ".join(
        f"{k} {v}"
        for k, v in facts.items()
        if k != "mode" and v is not None and not isinstance(v, list | dict)
    )
    return f"{who}, {mode}" + (f": {shown}" if shown else "")


@register
class D6PoolSystem(RuleSystem[D6Table]):
    """Seed 002: d6 pools with hits, exploding 6s, traitor dice, clocks and momentum."""

    name = "d6-pool"
    state_type = D6Table

    def initial_state(self, settings: Mapping[str, JSONValue]) -> D6Table:
        return D6Table(settings=t.settings_from(settings))

    def check_context(self, state: D6Table, context: RollContext) -> None:
        mode = p.mode(context.mode, MODES, "action")
        known = MODES[mode][1]
        p.check_keys(context.params, known, f"{mode} param(s)")
        if known is POOL_PARAMS:
            plan_action(context, state.settings)

    def resolve(
        self, state: D6Table, context: RollContext, roll: Roll, earlier: Earlier
    ) -> tuple[D6Table, Outcome]:
        self.check_context(state, context)
        mode = context.mode or "action"
        handler, _, throws = MODES[mode]
        table, facts = handler(state, context, _d6_faces(roll, throws, mode), earlier)
        facts["mode"] = mode
        return table, Outcome(_summary(context, mode, facts), facts)

    def describe(self) -> Description:
        return DESCRIPTION

    def bar(self, state: D6Table) -> BarState:
        """The first clock from empty to full, every clock a segment; with no clock, an
        empty bar with no words (the page says so by the tracker's kind)."""
        segments = tuple((c.name, c.filled, c.size) for c in state.clocks)
        first = state.clocks[0] if state.clocks else None
        return BarState(
            system=self.name,
            low=0,
            high=first.size if first else 1,
            position=first.filled if first else 0,
            label_a=first.name if first else "",
            label_b="full" if first else "",
            segments=segments,
        )

    def odds(
        self, state: D6Table, context: RollContext, earlier: Mapping[str, RollRecord]
    ) -> Odds | None:
        return declared_pool(state, context)

    def scored(self, outcome: Outcome) -> int | None:
        """A pool's hits, as its odds count them (resistance, fortune, GM actions: none)."""
        return p.counted(outcome.facts, "hits")

    def practice_turn(
        self,
        state: D6Table,
        history: Sequence[RollRecord],
        rng: random.Random,
        options: Mapping[str, JSONValue],
    ) -> PracticeTurn:
        """A player's action roll at a rating of 1 to 4, thrown as that many d6."""
        rating = rng.randint(1, 4)
        return PracticeTurn(RollContext(actor="Player", pool=rating), (DieKind.D6,) * rating)
