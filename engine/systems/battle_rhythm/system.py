"""Seed 003 as a rule system: the battle rhythm's Count clock and attack resolution.

GM actions with an empty tray move the clock: declare, abandon, advance, rewind.
An "attack" throws the PCs' lots (2d6 each, attacker's pair first) and reads
Offense - Defense = Accuracy (attack.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from tidetower.engine import params as p
from tidetower.engine.chances import Odds
from tidetower.engine.describe import Description
from tidetower.engine.dice import Roll
from tidetower.engine.rules import (
    BarState,
    JSONValue,
    Outcome,
    RollContext,
    RollRecord,
    RuleError,
    RuleSystem,
)
from tidetower.engine.systems import register
from tidetower.engine.systems.battle_rhythm import rhythm as r
from tidetower.engine.systems.battle_rhythm.attack import attack_facts
from tidetower.engine.systems.battle_rhythm.declare import DESCRIPTION, MODE_PARAMS, ORDERS
from tidetower.engine.systems.battle_rhythm.odds import declared_lots
from tidetower.engine.systems.battle_rhythm.rhythm import BattleRhythm


def rhythm_from(settings: Mapping[str, JSONValue]) -> BattleRhythm:
    """A new scene from settings: each character's Mobility and the declaration order."""
    p.check_keys(settings, [f.name for f in DESCRIPTION.settings], "battle-rhythm setting(s)")
    speeds = _mobility(settings.get("mobility", {}))
    order = p.choice(settings, "declare_order", ORDERS, "mobility")
    return BattleRhythm(mobility=speeds, declare_order=order)


def _mobility(given: JSONValue) -> dict[str, int]:
    """Each character's Mobility, from a mapping of names or a list of "Name:N"."""
    if isinstance(given, list | tuple) and all(isinstance(v, str) for v in given):
        pairs = [str(v).rpartition(":") for v in given]
        given = {n: int(v) if v.lstrip("-").isdigit() else v for n, _, v in pairs}
    if not isinstance(given, Mapping) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in given.values()
    ):
        raise RuleError(
            f"mobility must map names to whole numbers, got {given!r}", field="mobility"
        )
    return {str(k): p.whole(given, k) for k in given}


def _clock_action(scene: BattleRhythm, ctx: RollContext) -> BattleRhythm:
    """The scene after the GM action named by ctx.mode."""
    prm = ctx.params
    action = str(prm["action"]) if prm.get("action") is not None else None
    if ctx.mode == "declare":
        return r.declare(
            scene,
            ctx.actor,
            action or "action",
            p.whole(prm, "effort"),
            p.optional_whole(prm, "starts_at"),
            p.flag(prm, "alongside"),
        )
    if ctx.mode == "abandon":
        return r.abandon(scene, ctx.actor, action)
    if ctx.mode == "advance":
        return r.advance(scene, p.optional_whole(prm, "counts"))
    return r.rewind(scene)


def _clock_facts(scene: BattleRhythm) -> dict[str, JSONValue]:
    return {
        "count": scene.count,
        "next_due": scene.next_due(),
        "resolved": [{"actor": a.actor, "action": a.action} for a in scene.resolved],
        "pending": [
            {"actor": a.actor, "action": a.action, "remaining": a.remaining(scene.count)}
            for a in sorted(scene.pending, key=lambda a: (a.due, a.actor))
        ],
    }


def _clock_summary(scene: BattleRhythm, ctx: RollContext) -> str:
    """A line for the table: what the GM action did to the Count clock."""
    if ctx.mode == "advance" and scene.resolved:
        done = ", ".join(f"{a.actor} resolves {a.action}" for a in scene.resolved)
    elif ctx.mode == "declare":
        mine = scene.pending[-1]
        done = f"{mine.actor} declares {mine.action}, due in {mine.remaining(scene.count)}"
    else:
        nxt = scene.next_due()
        done = f"{ctx.mode}; next action in " + ("-" if nxt is None else str(nxt - scene.count))
    return f"Count {scene.count}: {done}"


def _attack_summary(ctx: RollContext, facts: Mapping[str, JSONValue]) -> str:
    """'Ash lands (no intervention of fate, accuracy 2)'; an undefended attack says so."""
    verdict = "lands" if facts["lands"] else "misses"
    aim = "undefended" if facts["accuracy"] is None else f"accuracy {facts['accuracy']}"
    return f"{ctx.actor or 'the attack'} {verdict} ({facts['lot_name']}, {aim})"


@register
class BattleRhythmSystem(RuleSystem[BattleRhythm]):
    """Seed 003: the Count clock of declared actions, and Cast Lots for attacks."""

    name = "battle-rhythm"
    state_type = BattleRhythm

    def initial_state(self, settings: Mapping[str, JSONValue]) -> BattleRhythm:
        return rhythm_from(settings)

    def describe(self) -> Description:
        return DESCRIPTION

    def check_context(self, state: BattleRhythm, context: RollContext) -> None:
        mode = p.mode(context.mode, MODE_PARAMS, "attack")
        p.check_keys(context.params, MODE_PARAMS[mode], f"{mode} param(s)")

    def resolve(
        self,
        state: BattleRhythm,
        context: RollContext,
        roll: Roll,
        earlier: Mapping[str, RollRecord],
    ) -> tuple[BattleRhythm, Outcome]:
        self.check_context(state, context)
        if context.mode in ("", "attack"):
            facts = attack_facts(context, roll)
            return state, Outcome(_attack_summary(context, facts), facts | {"mode": "attack"})
        if roll.dice:
            raise RuleError(
                f"{context.mode} is a GM action: it takes no dice, the tray shows {len(roll.dice)}",
                field="dice",
            )
        scene = _clock_action(state, context)
        facts = _clock_facts(scene) | {"mode": context.mode}
        return scene, Outcome(_clock_summary(scene, context), facts)

    def odds(
        self, state: BattleRhythm, context: RollContext, earlier: Mapping[str, RollRecord]
    ) -> Odds | None:
        return declared_lots(context)

    def scored(self, outcome: Outcome) -> int | None:
        """An attack's Cast Lot (FUMBLE -2 .. CRIT +2), as its odds count it."""
        return p.counted(outcome.facts, "lot")

    def bar(self, state: BattleRhythm) -> BarState:
        """Counts from now to the last pending action, the marker at the next one; each
        pending action a segment (its words are the description's tracker's)."""
        nxt = state.next_due()
        ahead = max((a.remaining(state.count) for a in state.pending), default=1)
        segments = tuple(
            (f"{a.actor}: {a.action}", max(a.effort - a.remaining(state.count), 0), a.effort)
            for a in sorted(state.pending, key=lambda a: a.due)
        )
        return BarState(
            system=self.name,
            low=0,
            high=max(ahead, 1),
            position=0 if nxt is None else nxt - state.count,
            label_a="now",
            label_b="last due",
            segments=segments,
        )
