"""Exact chances: the odds a rule system gives for a declared roll, and the sums it counts with.

Every chance is a Fraction; surfaces (the wire, the CLI) turn them into floats to show.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

Distribution = Mapping[int, Fraction]
"""Value -> exact chance; the chances sum to 1."""


@dataclass(frozen=True)
class Odds:
    """Exact odds of a declared roll: what it counts, its dice, and the chance of each count."""

    counts: str
    """What a value counts: "hits", "lot", "grade"."""
    dice: str
    """The throw as the table says it: "3d6 at 3+ vs 2", "d100 under 70%"."""
    distribution: Distribution
    labels: Mapping[int, str] = field(default_factory=dict)
    """The table's name for a value, where it has one (a grade, a lot)."""
    best_first: bool = False
    """List the values from the highest down (grades: CRITICAL first)."""
    outcomes: Mapping[str, Fraction] = field(default_factory=dict)
    """What the roll comes to (bad / partial / full, lands / misses), in the table's order."""
    explosion: Fraction | None = None
    """d6-pool: the chance a pair of 6s explodes."""

    def values(self) -> list[int]:
        """The values in the order the table lists them."""
        return sorted(self.distribution, reverse=self.best_first)

    def at_least(self, value: int) -> Fraction:
        """The chance of `value` or more."""
        return sum((c for v, c in self.distribution.items() if v >= value), Fraction(0))

    @property
    def mean(self) -> Fraction:
        """The mean value."""
        return sum((v * c for v, c in self.distribution.items()), Fraction(0))


def convolve(a: Distribution, b: Distribution) -> dict[int, Fraction]:
    """Distribution of the sum of two independent counts."""
    out: dict[int, Fraction] = {}
    for x, px in a.items():
        for y, py in b.items():
            out[x + y] = out.get(x + y, Fraction(0)) + px * py
    return out


def difference(a: Distribution, b: Distribution) -> dict[int, Fraction]:
    """Distribution of a - b for two independent counts, by value."""
    out: dict[int, Fraction] = {}
    for x, px in a.items():
        for y, py in b.items():
            out[x - y] = out.get(x - y, Fraction(0)) + px * py
    return dict(sorted(out.items()))
