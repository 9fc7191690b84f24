"""The d6-pool modes: each turns a declared roll (or a GM action) and its faces into the
tracker after it and the facts of its Outcome."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tidetower.engine import params as p
from tidetower.engine.rules import JSONValue, RollContext, RollRecord, RuleError
from tidetower.engine.systems.d6_pool import tracker as t
from tidetower.engine.systems.d6_pool.plan import (
    POOL_PARAMS,
    ActionPlan,
    hit_threshold,
    plan_action,
)
from tidetower.engine.systems.d6_pool.pool import (
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

D6Table = t.D6Table
Earlier = Mapping[str, RollRecord]
Step = tuple[t.D6Table, dict[str, JSONValue]]


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
            raise RuleError(f"{actor} has no momentum to spend", field="spend_momentum")
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
        raise RuleError(
            "attribute 0: this table does not allow resisting with no dice",
            field="attribute" if "attribute" in ctx.params else "pool",
        )
    dice = 2 if zero else score
    if len(faces) != dice:
        raise RuleError(
            f"a resistance roll at attribute {score} throws {dice} dice, "
            f"the tray shows {len(faces)}",
            field="dice",
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
        raise RuleError(f"reply to unknown roll {ctx.reply_to!r}", field="reply_to")
    if opening.context.mode != mode:
        raise RuleError(f"roll {opening.id} is not a {mode} roll", field="reply_to")
    return opening


def _contest(table: D6Table, ctx: RollContext, faces: tuple[int, ...], earlier: Earlier) -> Step:
    """A contest: the opening roll waits; the reply compares hits, then 6s."""
    read = _read(plan_action(ctx, table.settings), faces, table.settings)
    facts = _pool_facts(read)
    if ctx.reply_to is None:
        return table, facts | {"awaiting_reply": True}
    opening = _opening(ctx, earlier, "contest")
    first = (p.whole(opening.outcome.facts, "hits"), p.whole(opening.outcome.facts, "sixes"))
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
    rolls = [(_as_result(facts["result"]), p.whole(facts, "excess"), ctx.actor)] + [
        (_as_result(r.outcome.facts["result"]), p.whole(r.outcome.facts, "excess"), r.context.actor)
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
        raise RuleError(f"a fortune roll is one d6, the tray shows {len(faces)}", field="dice")
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
        raise RuleError("an auction roll needs the participant's name (actor)", field="actor")
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
