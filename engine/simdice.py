"""Simulated dice for demos and the simulated tower: seeded, never the global random."""

from __future__ import annotations

import random

from tidetower.engine.dice import Die, DieKind, Roll, d100


class SimulatedDice:
    """Throws fair dice from its own seeded generator, so a seed replays the same throws."""

    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    def die(self, kind: DieKind) -> Die:
        """One fair die of `kind`; a d100 comes from a tens and a units d10."""
        if kind is DieKind.D100:
            return d100(10 * self._random.randrange(10), self._random.randrange(10))
        return Die(kind, self._random.randint(1, kind.sides))

    def throw(self, *groups: tuple[int, DieKind], roller: str = "") -> Roll:
        """A throw of several groups of dice, e.g. throw((4, DieKind.D6), (1, DieKind.D20))."""
        return Roll(tuple(self.die(kind) for count, kind in groups for _ in range(count)), roller)
