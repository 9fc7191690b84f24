"""Exact odds: every number seed 002 quotes, sums to 1, and agreement with 200k rolls."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tidetower.engine.dice import DieError, DieKind
from tidetower.engine.rules import RuleError
from tidetower.engine.systems.d6_pool.odds import explosion_chance, hit_distribution, pool_odds
from tidetower.engine.systems.graded_d100.grades import GRADES, grade
from tidetower.engine.systems.graded_d100.odds import d100_odds
from tidetower.engine.systems.tide.marks import MarksRule
from tidetower.engine.systems.tide.odds import marks_odds

ROLLS = 200_000
TOLERANCE = 0.005  # half a percentage point


def pct(value: Fraction, places: int = 0) -> float:
    """A chance as the seed rounds it: percent to `places` decimals."""
    return round(float(value) * 100, places)


# --- every number seed 002 quotes -------------------------------------------------------


def test_rank_0_two_traitor_dice_need_both_to_hit_44_percent() -> None:
    assert pct(pool_odds(0).success) == 44


def test_rank_1_against_difficulty_1_is_two_in_three() -> None:
    assert pool_odds(1, difficulty=1).success == Fraction(2, 3)


def test_rank_2_has_89_percent_of_at_least_one_hit() -> None:
    assert pct(1 - pool_odds(2).hits[0]) == 89


def test_rank_4_still_has_1_2_percent_of_zero_hits() -> None:
    assert pct(pool_odds(4).hits[0], 1) == 1.2


def test_a_pair_of_sixes_in_2d_is_2_8_percent_and_in_4d_13_2_percent() -> None:
    assert pct(explosion_chance(2), 1) == 2.8
    assert pct(explosion_chance(4), 1) == 13.2
    assert pct(pool_odds(4).explosion, 1) == 13.2


@pytest.mark.parametrize(("rating", "quoted"), [(-1, 30), (-2, 20)])
def test_traitor_dice_below_zero(rating: int, quoted: int) -> None:
    odds = pool_odds(rating)
    assert odds.traitor
    assert pct(odds.success) == quoted
    assert odds.explosion == 0 and max(odds.hits) == 1


def test_skill_dice_hit_two_in_three_and_combat_dice_half() -> None:
    assert pool_odds(1, threshold=3).hits[1] == Fraction(2, 3)
    assert pool_odds(1, threshold=4).hits[1] == Fraction(1, 2)


# --- exactness of the chain --------------------------------------------------------------


def test_two_dice_both_six_always_spawn_one_bonus_die() -> None:
    # 2d at 3+: 3 hits needs both dice 6 (1/36) and the bonus die to hit (2/3).
    assert hit_distribution(2, 3)[3] == Fraction(1, 36) * Fraction(2, 3)
    assert max(hit_distribution(2, 3)) == 3


def test_chains_are_finite_so_nothing_is_truncated() -> None:
    for dice in range(1, 13):
        dist = hit_distribution(dice, 3)
        assert sum(dist.values()) == 1
        assert max(dist) <= 2 * dice


def test_outcome_bands_partition_the_hits() -> None:
    odds = pool_odds(5, difficulty=2, threshold=4)
    assert odds.bad == odds.hits[0] + odds.hits[1]
    assert odds.partial == odds.hits[2]
    assert odds.full == sum(p for k, p in odds.hits.items() if k > 2)


@pytest.mark.parametrize("bad", [{"difficulty": 0}, {"threshold": 5}, {"difficulty": -1}])
def test_bad_odds_questions_raise_rule_errors(bad: dict[str, int]) -> None:
    with pytest.raises(RuleError, match=next(iter(bad))):
        pool_odds(3, **bad)


@settings(max_examples=40, deadline=None)
@given(st.integers(-4, 12), st.integers(1, 8), st.sampled_from([3, 4]))
def test_pool_probabilities_sum_to_one(rating: int, difficulty: int, threshold: int) -> None:
    odds = pool_odds(rating, difficulty, threshold)
    assert abs(float(sum(odds.hits.values())) - 1) < 1e-9
    assert abs(float(odds.bad + odds.partial + odds.full) - 1) < 1e-9
    assert all(p >= 0 for p in odds.hits.values())


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 6),
    st.sampled_from(["d6", "d8", "d12"]),
    st.integers(0, 5),
    st.sampled_from(["small-skirmish", "skirmish", "battle"]),
)
def test_marks_probabilities_sum_to_one(dice: int, tier: str, vs: int, size: str) -> None:
    odds = marks_odds(dice, DieKind(tier), vs, None, size)
    for dist in (odds.marks, odds.margin, odds.steps):
        assert abs(float(sum(dist.values())) - 1) < 1e-9


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 100))
def test_d100_probabilities_sum_to_one(chance: int) -> None:
    odds = d100_odds(chance)
    assert abs(float(sum(odds.values())) - 1) < 1e-9
    assert list(odds) == list(GRADES)


def test_marks_steps_follow_seed_000_floor_rule() -> None:
    odds = marks_odds(1, DieKind.D8, 0, None, "battle")
    # One d8 gives at most 1 Mark: never 3 Marks of margin, so never a Battle step.
    assert odds.steps == {0: Fraction(1)}
    assert marks_odds(2, DieKind.D8, 0, None, "small-skirmish").steps[2] == Fraction(1, 4)


def test_marks_reject_bad_sizes_and_negative_pools() -> None:
    with pytest.raises(RuleError, match="size"):
        marks_odds(2, DieKind.D8, size="war")
    with pytest.raises(DieError, match="vs"):
        marks_odds(2, DieKind.D8, vs=-1)


# --- 200k-roll simulation ----------------------------------------------------------------


def simulate_pool(
    dice: int, threshold: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Hits and 'exploded' of ROLLS throws, rolling bonus dice pair by pair of 6s."""
    if dice < 1:
        faces = rng.integers(1, 7, size=(ROLLS, 2 - dice))
        return (faces >= threshold).all(axis=1).astype(int), np.zeros(ROLLS, dtype=bool)
    faces = rng.integers(1, 7, size=(ROLLS, dice))
    hits = (faces >= threshold).sum(axis=1)
    sixes = (faces == 6).sum(axis=1)
    pending, unmatched = sixes // 2, sixes % 2
    exploded = pending > 0
    while (live := pending > 0).any():
        bonus = rng.integers(1, 7, size=ROLLS)
        hits = hits + (live & (bonus >= threshold))
        six = live & (bonus == 6)
        unmatched = unmatched + six
        pending = pending - live + (unmatched == 2)
        unmatched = unmatched % 2
    return hits, exploded


@pytest.mark.parametrize(
    ("dice", "threshold", "difficulty"), [(4, 3, 1), (6, 4, 2), (-1, 3, 1), (10, 3, 4)]
)
def test_pool_odds_agree_with_200k_rolls(dice: int, threshold: int, difficulty: int) -> None:
    rng = np.random.default_rng(2026_11_29 + dice)
    hits, exploded = simulate_pool(dice, threshold, rng)
    odds = pool_odds(dice, difficulty, threshold)
    assert abs(float(odds.bad) - (hits < difficulty).mean()) < TOLERANCE
    assert abs(float(odds.partial) - (hits == difficulty).mean()) < TOLERANCE
    assert abs(float(odds.full) - (hits > difficulty).mean()) < TOLERANCE
    assert abs(float(odds.explosion) - exploded.mean()) < TOLERANCE
    for k, p in odds.hits.items():
        assert abs(float(p) - (hits == k).mean()) < TOLERANCE


def test_marks_odds_agree_with_200k_rolls() -> None:
    rng = np.random.default_rng(7)
    rule = MarksRule()
    mine = (rng.integers(1, 9, size=(ROLLS, 3)) >= rule.threshold).sum(axis=1)
    reply = (rng.integers(1, 7, size=(ROLLS, 2)) >= rule.threshold).sum(axis=1)
    margin = mine - reply
    steps = np.sign(margin) * (np.abs(margin) // 3)
    odds = marks_odds(3, DieKind.D8, 2, DieKind.D6, "battle")
    for dist, sample in ((odds.marks, mine), (odds.margin, margin), (odds.steps, steps)):
        for k, p in dist.items():
            assert abs(float(p) - (sample == k).mean()) < TOLERANCE


def test_d100_odds_agree_with_200k_rolls_of_two_d10() -> None:
    rng = np.random.default_rng(4)
    tens, units = rng.integers(0, 10, ROLLS), rng.integers(0, 10, ROLLS)
    rolls = tens * 10 + units
    rolls[rolls == 0] = 100
    for chance in (65, 80, 33):
        graded = np.array([grade(chance - r) for r in range(101)])[rolls]
        for name, p in d100_odds(chance).items():
            assert abs(float(p) - (graded == name).mean()) < TOLERANCE
