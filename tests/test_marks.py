"""The face-to-Mark rule: a setting, and a bigger tier is a stronger pool."""

from __future__ import annotations

from fractions import Fraction

import pytest

from tidetower.engine.dice import Die, DieError, DieKind, d100
from tidetower.engine.systems.tide.marks import MarksRule, pool_distribution, read_marks


def _mean(dist: dict[int, Fraction]) -> Fraction:
    return sum((k * p for k, p in dist.items()), Fraction(0))


def _at_least(dist: dict[int, Fraction], marks: int) -> Fraction:
    return sum((p for k, p in dist.items() if k >= marks), Fraction(0))


@pytest.mark.parametrize("rule", [MarksRule(), MarksRule("step"), MarksRule(threshold=4)])
@pytest.mark.parametrize("dice", [1, 3, 6])
def test_a_bigger_tier_is_a_stronger_pool(rule: MarksRule, dice: int) -> None:
    d6, d8, d12 = (
        pool_distribution(dice, tier, rule) for tier in (DieKind.D6, DieKind.D8, DieKind.D12)
    )
    assert _mean(d6) < _mean(d8) < _mean(d12)
    for marks in range(1, dice + 1):  # stochastic dominance, not just a better average
        assert _at_least(d6, marks) <= _at_least(d8, marks) <= _at_least(d12, marks)


def test_threshold_rule_counts_dice_showing_five_or_more() -> None:
    assert read_marks([1, 4, 5, 6, 12]) == 3
    assert read_marks([1, 4, 5, 8, 12], MarksRule("step")) == 0 + 1 + 1 + 2 + 3


def test_distribution_sums_to_one() -> None:
    assert sum(pool_distribution(5, DieKind.D8).values()) == 1


@pytest.mark.parametrize(("kind", "face"), [(DieKind.D6, 7), (DieKind.D6, 0), (DieKind.D20, 21)])
def test_impossible_faces_are_refused(kind: DieKind, face: int) -> None:
    with pytest.raises(DieError, match=f"cannot show {face}"):
        Die(kind, face)


def test_d100_from_two_d10s() -> None:
    assert d100(0, 0).face == 100
    assert d100(90, 9).face == 99
    assert d100(0, 7).face == 7
    with pytest.raises(DieError, match="tens die"):
        d100(15, 0)
