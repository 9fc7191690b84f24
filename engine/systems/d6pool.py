"""Seed 002 as a rule system: d6 action rolls and the table's clocks, momentum and stress.

Rolls and GM actions both go through `resolve`: the mode names what happens, params
carry the numbers, and a GM action (clock, bid, reveal, end of combat) has an empty
tray. Contests and group actions reply to an opening roll, as Tide replies do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tidetower.engine import d6pool_table as t
from tidetower.engine import params as p
from tidetower.engine.d6pool import (
    LIKELIHOOD,
    RESULTS,
    Clock,
    PoolRead,
    Result,
    clock_ticks,
    contest,
    fortune_target,
    outcome,
    read_pool,
    resistance_cost,
    result_rank,
)
from tidetower.engine.dice import DieKind, Roll
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

D6Table = t.D6Table
Earlier = Mapping[str, RollRecord]
Step = tuple[t.D6Table, dict[str, JSONValue]]

POOL_PARAMS = (
    "rating",
    "bonus",
    "assists",
    "push",
    "difficulty",
    "action",
    "threshold",
    "combat",
    "clock",
    "spend_momentum",
    "harm",
)
COMBAT_ROLLS = ("strike", "defend")


@dataclass(frozen=True)
class ActionPlan:
    """An action roll as declared: net dice, threshold, difficulty and what it may spend."""

    rating: int
    threshold: int
    difficulty: int
    action: str
    combat: bool
    push: str | None
    assists: tuple[str, ...]
    clock: str | None
    spend_momentum: bool
    harm: int | None


def plan_action(context: RollContext, settings: t.D6Settings) -> ActionPlan:
    """The declared action roll, checked: rating + bonus + assists + a pushed die."""
    prm = context.params
    action = str(prm.get("action", "")).lower()
    default_threshold = 4 if action in COMBAT_ROLLS else 3
    push = p.choice(prm, "push", (None, "die", "difficulty"), None)
    assists = p.names(prm, "assists")
    rating = p.whole(prm, "rating", context.pool, minimum=0, maximum=12)
    net = rating + p.whole(prm, "bonus", 0) + len(assists) + (push == "die")
    difficulty = p.whole(prm, "difficulty", 1, minimum=1, maximum=12)
    plan = ActionPlan(
        rating=net,
        threshold=p.choice(prm, "threshold", (3, 4), default_threshold),
        difficulty=max(difficulty - (push == "difficulty"), 1),
        action=action,
        combat=action in COMBAT_ROLLS or p.flag(prm, "combat"),
        push=push,
        assists=assists,
        clock=p.text(prm, "clock") if "clock" in prm else None,
        spend_momentum=p.flag(prm, "spend_momentum"),
        harm=p.optional_whole(prm, "harm", minimum=0),
    )
    if (push or plan.spend_momentum) and not context.actor:
        raise RuleError("a push or a momentum spend needs the actor's name")
    if plan.spend_momentum and action != "strike":
        raise RuleError(f"momentum is spent on a strike, not on action {action!r}")
    return plan


def hit_threshold(plan: ActionPlan, settings: t.D6Settings) -> int:
    """Return the face a die must reach: the plan's, or 3 for traitor dice where the table
    reads them so."""
    return 3 if plan.rating < 1 and settings.traitor_threshold == "three" else plan.threshold


def _read(plan: ActionPlan, faces: tuple[int, ...], settings: t.D6Settings) -> PoolRead:
    return read_pool(faces, plan.rating, hit_threshold(plan, settings))


def _pool_facts(read: PoolRead) -> dict[str, JSONValue]:
    return {
        "hits": read.hits,
        "sixes": read.sixes,
        "bonus_dice": read.bonus_dice,
        "exploded": read.exploded,
        "traitor": read.traitor,
        "dice": read.rating,
        "threshold": read.threshold,
    }


def _costs(table: D6Table, actor: str, plan: ActionPlan) -> Step:
    """Stress for the push (2, to the actor) and each assist (1, to the helper)."""
    paid: list[JSONValue] = []
    payers = ([(actor, 2)] if plan.push else []) + [(name, 1) for name in plan.assists]
    for who, amount in payers:
        table, facts = t.add_stress(table, who, amount)
        paid.append(facts)
    return table, ({"stress": paid} if paid else {})


def _momentum(table: D6Table, actor: str, plan: ActionPlan, result: str, excess: int) -> Step:
    """Spend momentum on a landed strike (+1 harm level); gain it from combat excess hits."""
    spent = False
    if plan.spend_momentum:
        if not table.has_momentum(actor):
            raise RuleError(f"{actor} has no momentum to spend")
        landed = result == "full" or (
            result == "partial" and table.settings.momentum_spend == "success"
        )
        if landed:
            table, spent = t.set_momentum(table, actor, False), True
    gained = plan.combat and excess > 0 and bool(actor)
    if gained:
        table = t.set_momentum(table, actor, True)
    facts: dict[str, JSONValue] = {"momentum_spent": spent, "momentum_gained": gained}
    if plan.harm is not None:
        facts["harm"] = 0 if result == "bad" else plan.harm + (result == "full") + spent
    return table, facts


def _action(table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier) -> Step:
    """An action roll: hits against difficulty; stress, momentum and clock follow."""
    plan = plan_action(ctx, table.settings)
    read = _read(plan, faces, table.settings)
    result, excess = outcome(read.hits, plan.difficulty)
    facts = _pool_facts(read) | {"difficulty": plan.difficulty, "result": result, "excess": excess}
    table, paid = _costs(table, ctx.actor, plan)
    table, moved = _momentum(table, ctx.actor, plan, result, excess)
    facts |= paid | moved
    if plan.clock is not None:
        table, ticked = t.apply_clock(table, plan.clock, clock_ticks(result, excess))
        facts |= ticked
    return table, facts


def _resist(table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier) -> Step:
    """A resistance roll: attribute dice; stress = 6 - highest, two 6s clear one."""
    score = p.whole(ctx.params, "attribute", ctx.pool, minimum=0, maximum=24)
    zero = score == 0
    if zero and table.settings.zero_resistance == "cannot":
        raise RuleError("attribute 0: this table does not allow resisting with no dice")
    dice = 2 if zero else score
    if len(faces) != dice:
        raise RuleError(
            f"a resistance roll at attribute {score} throws {dice} dice, "
            f"the tray shows {len(faces)}"
        )
    cost = resistance_cost(faces, zero_dice=zero)
    facts: dict[str, JSONValue] = {"attribute": score, "cost": cost}
    if ctx.actor:
        table, marked = t.add_stress(table, ctx.actor, cost)
        facts["stress"] = [marked]
    return table, facts


def _opening(ctx: RollContext, earlier: Earlier, mode: str) -> RollRecord:
    assert ctx.reply_to is not None
    opening = earlier.get(ctx.reply_to)
    if opening is None:
        raise RuleError(f"reply to unknown roll {ctx.reply_to!r}")
    if opening.context.mode != mode:
        raise RuleError(f"roll {opening.id} is not a {mode} roll")
    return opening


def _contest(table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier) -> Step:
    """A contest: the opening roll waits; the reply compares hits, then 6s."""
    read = _read(plan_action(ctx, table.settings), faces, table.settings)
    facts = _pool_facts(read)
    if ctx.reply_to is None:
        return table, facts | {"awaiting_reply": True}
    opening = _opening(ctx, earlier, "contest")
    first = (int(opening.outcome.facts["hits"]), int(opening.outcome.facts["sixes"]))
    winner, excess, why = contest(first, (read.hits, read.sixes))
    names = {"a": opening.context.actor or "the opener", "b": ctx.actor or "the reply"}
    return table, facts | {
        "reply_to": opening.id,
        "winner": names[winner] if winner else None,
        "excess": excess,
        "why": why,
    }


def _as_result(value: JSONValue) -> Result:
    return next(r for r in RESULTS if r == value)


def _group_root(ctx: RollContext, earlier: Earlier) -> RollRecord | None:
    """The leader's opening roll of the group this roll belongs to (None: this opens it)."""
    if ctx.reply_to is None:
        return None
    root = _opening(ctx, earlier, "group")
    return root if root.context.reply_to is None else _opening(root.context, earlier, "group")


def _group(table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier) -> Step:
    """A group action roll: the best result stands; each bad one costs the leader 1 stress."""
    table, facts = _action(table, ctx, faces, earlier)
    root = _group_root(ctx, earlier)
    leader = root.context.actor if root else ctx.actor
    if facts["result"] == "bad":
        table, facts["leader_stress"] = t.add_stress(table, leader, 1)
    members = [r for r in earlier.values() if root and root.id in (r.id, r.context.reply_to)]
    rolls = [(_as_result(facts["result"]), int(facts["excess"]), ctx.actor)] + [
        (_as_result(r.outcome.facts["result"]), int(r.outcome.facts["excess"]), r.context.actor)
        for r in members
    ]
    best = max(rolls, key=lambda roll: result_rank(roll[0], roll[1]))
    return table, facts | {
        "leader": leader,
        "group_result": best[0],
        "group_excess": best[1],
        "group_best_by": best[2],
        "group_size": len(rolls),
    }


def _fortune(table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier) -> Step:
    """A fortune roll: one d6 against the likelihood ladder, modifiers shift the TN."""
    if len(faces) != 1:
        raise RuleError(f"a fortune roll is one d6, the tray shows {len(faces)}")
    likelihood = p.choice(ctx.params, "likelihood", tuple(LIKELIHOOD), "even")
    target = fortune_target(likelihood, p.whole(ctx.params, "modifier", 0, -3, 3))
    return table, {
        "tn": target,
        "face": faces[0],
        "success": faces[0] >= target,
        "margin": faces[0] - target,
    }


def _auction(table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier) -> Step:
    """A secret auction roll: hits go into the tracker, hidden until the reveal."""
    if not ctx.actor:
        raise RuleError("an auction roll needs the participant's name (actor)")
    read = _read(plan_action(ctx, table.settings), faces, table.settings)
    table = t.auction_roll(table, ctx.actor, read.hits, read.sixes)
    return table, {"auction_participants": len(table.auction), "hidden": True}


def _bid(table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier) -> Step:
    bid = p.whole(ctx.params, "bid", None, minimum=1)
    return t.auction_bid(table, ctx.actor, bid), {"bidder": ctx.actor, "bid": bid}


def _reveal(table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier) -> Step:
    return t.auction_reveal(table)


def _new_clock(table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier) -> Step:
    prm = ctx.params
    clock = Clock(
        p.text(prm, "clock"),
        p.whole(prm, "size", 4),
        p.whole(prm, "filled", 0),
        p.choice(prm, "kind", ("progress", "danger"), "progress"),
        p.text(prm, "rival") if "rival" in prm else None,
    )
    return t.add_clock(table, clock), {"clock": clock.name, "size": clock.size}


def _tick_clock(table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier) -> Step:
    return t.apply_clock(table, p.text(ctx.params, "clock"), p.whole(ctx.params, "segments", 1))


def _remove_clock(
    table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier
) -> Step:
    name = p.text(ctx.params, "clock")
    return t.remove_clock(table, name), {"removed": name}


def _stress(table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier) -> Step:
    return t.add_stress(table, ctx.actor, p.whole(ctx.params, "amount", None, -20, 20))


def _end_combat(table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier) -> Step:
    return t.end_combat(table), {"momentum_expired": list(table.momentum)}


Handler = Callable[[D6Table, RollContext, tuple[int, ...], Earlier], Step]

# mode -> (handler, params it takes, whether it throws dice)
MODES: dict[str, tuple[Handler, tuple[str, ...], bool]] = {
    "action": (_action, POOL_PARAMS, True),
    "resist": (_resist, ("attribute",), True),
    "contest": (_contest, POOL_PARAMS, True),
    "group": (_group, POOL_PARAMS, True),
    "fortune": (_fortune, ("likelihood", "modifier"), True),
    "auction": (_auction, POOL_PARAMS, True),
    "bid": (_bid, ("bid",), False),
    "reveal": (_reveal, (), False),
    "new-clock": (_new_clock, ("clock", "size", "filled", "kind", "rival"), False),
    "tick-clock": (_tick_clock, ("clock", "segments"), False),
    "remove-clock": (_remove_clock, ("clock",), False),
    "stress": (_stress, ("amount",), False),
    "end-combat": (_end_combat, (), False),
}


def _d6_faces(roll: Roll, throws: bool, mode: str) -> tuple[int, ...]:
    stray = [d for d in roll.dice if d.kind is not DieKind.D6]
    if stray:
        raise RuleError(f"{stray[0].kind.value} is not part of a d6-pool roll: throw d6 only")
    if not throws and roll.dice:
        raise RuleError(f"{mode} is a GM action: it takes no dice, the tray shows {len(roll.dice)}")
    return roll.faces(DieKind.D6)


def _summary(ctx: RollContext, mode: str, facts: Mapping[str, JSONValue]) -> str:
    who = ctx.actor or "the table"
    if mode in ("action", "group") and "result" in facts:
        extra = f", {facts['excess']} excess" if facts["excess"] else ""
        return f"{who}: {facts['hits']} hits vs {facts['difficulty']}: {facts['result']}{extra}"
    if mode == "auction":
        return f"{who} rolled for the auction: hits hidden until the reveal"
    if mode == "reveal":
        return f"auction: {' and '.join(map(str, facts['winners']))} ({facts['why']})"
    shown = ", ".join(
        f"{k} {v}" for k, v in facts.items() if k != "mode" and not isinstance(v, list | dict)
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
        mode = context.mode or "action"
        if mode not in MODES:
            raise RuleError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}")
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

    def bar(self, state: D6Table) -> BarState:
        segments = tuple((c.name, c.filled, c.size) for c in state.clocks)
        first = state.clocks[0] if state.clocks else None
        return BarState(
            system=self.name,
            low=0,
            high=first.size if first else 1,
            position=first.filled if first else 0,
            label_a=first.name if first else "no clock",
            label_b="full",
            segments=segments,
        )
