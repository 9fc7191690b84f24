"""Exact odds of a d6-pool action roll (seed 002): hits, outcome, explosions, traitor dice.

Counting, not sampling. Each die is a miss, a plain hit or a 6 (a hit that can pair).
The initial pool is counted with multinomials; the chain of bonus dice spawned by
pairs of 6s is walked one bonus die at a time, keeping integer weights over 6^dice.
Every chain ends (a pool of n dice can spawn at most n bonus dice), so the whole
distribution is exact: nothing is truncated, not even below 1e-12.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import comb

from tidetower.engine.chances import Odds
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.systems.d6_pool.actions import MODES
from tidetower.engine.systems.d6_pool.plan import POOL_PARAMS, hit_threshold, plan_action
from tidetower.engine.systems.d6_pool.pool import check_difficulty, check_threshold, traitor_dice
from tidetower.engine.systems.d6_pool.tracker import D6Table

MAX_DICE = 60


@dataclass(frozen=True)
class PoolOdds:
    """Exact chances for one action roll: hit totals, outcome bands, explosions."""

    rating: int
    threshold: int
    difficulty: int
    hits: dict[int, Fraction]
    bad: Fraction
    partial: Fraction
    full: Fraction
    explosion: Fraction

    @property
    def traitor(self) -> bool:
        """True when the rating is below 1 and traitor dice are thrown."""
        return self.rating < 1

    @property
    def success(self) -> Fraction:
        """Chance of at least a partial success."""
        return self.partial + self.full


def _initial_pool(dice: int, threshold: int) -> dict[tuple[int, int], int]:
    """Ways (over 6^dice) to throw `s` sixes and `h` other hits with `dice` dice."""
    plain, miss = 6 - threshold, threshold - 1
    ways: dict[tuple[int, int], int] = {}
    for sixes in range(dice + 1):
        for other in range(dice - sixes + 1):
            rest = dice - sixes - other
            count = comb(dice, sixes) * comb(dice - sixes, other) * plain**other * miss**rest
            ways[(sixes, other)] = count
    return ways


def _walk_chain(dice: int, threshold: int) -> dict[int, Fraction]:
    """Exact P(total hits = k): throw bonus dice one at a time until no pair is pending."""
    plain, miss = 6 - threshold, threshold - 1
    # state: (pending bonus dice, unmatched 6, hits, bonus dice thrown) -> ways
    states: dict[tuple[int, int, int, int], int] = {}
    for (sixes, other), ways in _initial_pool(dice, threshold).items():
        key = (sixes // 2, sixes % 2, sixes + other, 0)
        states[key] = states.get(key, 0) + ways
    done: dict[int, Fraction] = {}
    while states:
        nxt: dict[tuple[int, int, int, int], int] = {}
        for (pending, unmatched, hits, bonus), ways in states.items():
            if pending == 0:
                done[hits] = done.get(hits, Fraction(0)) + Fraction(ways, 6 ** (dice + bonus))
                continue
            pair = unmatched == 1
            six = (pending if pair else pending - 1, 0 if pair else 1, hits + 1, bonus + 1)
            for key, w in (
                (six, 1),
                ((pending - 1, unmatched, hits + 1, bonus + 1), plain),
                ((pending - 1, unmatched, hits, bonus + 1), miss),
            ):
                nxt[key] = nxt.get(key, 0) + ways * w
        states = nxt
    return dict(sorted(done.items()))


def hit_distribution(dice: int, threshold: int) -> dict[int, Fraction]:
    """Exact chance of each hit total from `dice` dice, exploding chains included.

    The chain is finite: b bonus dice need 2b sixes among dice + b dice, so b <= dice
    and a pool of n dice scores at most 2n hits. Nothing is truncated.
    """
    if not 1 <= dice <= MAX_DICE:
        raise RuleError(f"an exploding pool needs 1..{MAX_DICE} dice, got {dice}", field="rating")
    check_threshold(threshold)
    dist = _walk_chain(dice, threshold)
    assert sum(dist.values()) == 1
    return dist


def explosion_chance(dice: int, threshold: int = 3) -> Fraction:
    """Chance that the initial pool shows at least one pair of 6s (the threshold is moot)."""
    check_threshold(threshold)
    if dice < 2:
        return Fraction(0)
    none_or_one = Fraction(5**dice + dice * 5 ** (dice - 1), 6**dice)
    return 1 - none_or_one


def traitor_distribution(rating: int, threshold: int) -> dict[int, Fraction]:
    """Traitor dice at `rating` < 1: one hit only if every die hits, else none."""
    check_threshold(threshold)
    dice = traitor_dice(rating)
    all_hit = Fraction(7 - threshold, 6) ** dice
    return {0: 1 - all_hit, 1: all_hit}


def pool_odds(rating: int, difficulty: int = 1, threshold: int = 3) -> PoolOdds:
    """Exact odds of an action roll at `rating` dice against `difficulty`.

    A rating below 1 throws traitor dice (at most one hit, no explosions).
    """
    check_difficulty(difficulty)
    check_threshold(threshold)
    if rating < 1:
        hits, explosion = traitor_distribution(rating, threshold), Fraction(0)
    else:
        hits = hit_distribution(rating, threshold)
        explosion = explosion_chance(rating, threshold)
    bad = sum((p for k, p in hits.items() if k < difficulty), Fraction(0))
    partial = hits.get(difficulty, Fraction(0))
    return PoolOdds(rating, threshold, difficulty, hits, bad, partial, 1 - bad - partial, explosion)


BANDED_MODES = ("action", "group")
"""Pool modes read against a difficulty: bad, partial or full."""


def _pool_dice(odds: PoolOdds, banded: bool) -> str:
    """'3d6 at 4+ vs 2', '2d6 traitor at 3+ vs 1'; no difficulty for a contest or auction."""
    dice = f"{traitor_dice(odds.rating)}d6 traitor" if odds.traitor else f"{odds.rating}d6"
    return f"{dice} at {odds.threshold}+" + (f" vs {odds.difficulty}" if banded else "")


def declared_pool(table: D6Table, context: RollContext) -> Odds | None:
    """A pool roll's hits and explosion; for an action or group roll, bad/partial/full too."""
    mode = context.mode or "action"
    if mode not in MODES or MODES[mode][1] is not POOL_PARAMS:
        return None  # resistance, fortune and GM actions: no pool odds
    plan = plan_action(context, table.settings)
    odds = pool_odds(plan.rating, plan.difficulty, hit_threshold(plan, table.settings))
    banded = mode in BANDED_MODES
    outcomes = {"bad": odds.bad, "partial": odds.partial, "full": odds.full} if banded else {}
    return Odds(
        "hits", _pool_dice(odds, banded), odds.hits, outcomes=outcomes, explosion=odds.explosion
    )
