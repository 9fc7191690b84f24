"""How lucky was the table? Each stored throw's odds worked out again from the tracker it met,
set against what the system says it scored: per actor and per side, the sum expected against
the sum rolled, how unusual that is (a normal approximation), the best and worst throws by
their odds, and the moves of the bar: pure, records in, dataclasses out."""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tidetower.engine.barline import Bars
from tidetower.engine.chances import Odds
from tidetower.engine.dice import DieError
from tidetower.engine.replay import Replay
from tidetower.engine.rules import RollRecord, RuleError, RuleSystem
from tidetower.engine.systems import get_system
from tidetower.engine.who import Who, side_name, who_of

MIN_THROWS = 5
"""Fewer throws than this and the verdict is "too few throws to tell"."""
ALPHA = 0.05
"""A tally is called lucky or unlucky when the odds would give one this far out < 1 in 20."""
TOO_FEW = "too few throws to tell"
LUCKIER = "luckier than the odds"
UNLUCKIER = "unluckier than the odds"
AS_EXPECTED = "as the odds expected"


@dataclass(frozen=True)
class Shape:
    """One Odds as luck uses it: what it counts, the throw, its mean, variance, chances."""

    counts: str
    dice: str
    mean: float
    variance: float
    chances: tuple[tuple[int, float], ...]
    labels: Mapping[int, str]
    tails: Mapping[int, tuple[float, float]] = field(default_factory=dict)
    """Each value's chance of it or more and of it or less, worked out once (`shape_of`)."""

    def at_least(self, value: int) -> float:
        """The chance of `value` or more."""
        tail = self.tails.get(value)
        return tail[0] if tail else sum(c for v, c in self.chances if v >= value)

    def at_most(self, value: int) -> float:
        """The chance of `value` or less."""
        tail = self.tails.get(value)
        return tail[1] if tail else sum(c for v, c in self.chances if v <= value)


def shape_of(odds: Odds) -> Shape:
    """An Odds' figures as floats, worked out once: a year's throws ask them 10,000 times."""
    mean = odds.mean
    variance = sum(((v - mean) ** 2 * c for v, c in odds.distribution.items()), mean * 0)
    exact = sorted(odds.distribution.items())
    chances = tuple((v, float(c)) for v, c in exact)
    tails = {
        v: (
            float(sum((c for w, c in exact if w >= v), mean * 0)),
            float(sum((c for w, c in exact if w <= v), mean * 0)),
        )
        for v, _ in exact
    }
    return Shape(odds.counts, odds.dice, float(mean), float(variance), chances, odds.labels, tails)


@dataclass(frozen=True)
class Throw:
    """One counted throw: what it scored against its odds."""

    who: Who
    shape: Shape
    rolled: int

    @property
    def chance(self) -> float:
        """The chance of at least what was rolled: lower is luckier."""
        return self.shape.at_least(self.rolled)

    @property
    def below(self) -> float:
        """The chance of at most what was rolled: lower is unluckier."""
        return self.shape.at_most(self.rolled)

    @property
    def label(self) -> str:
        """The table's name for the value rolled, else the value."""
        return self.shape.labels.get(self.rolled, str(self.rolled))


@dataclass(frozen=True)
class Uncounted:
    """A throw with no odds to set it against, and why."""

    who: Who
    reason: str


@dataclass(frozen=True)
class Move:
    """One throw that moved the bar (barline.Step.moved, the one count of a move): its
    causes as the system put them, from, to, and who threw."""

    who: Who
    cause: str
    before: int
    after: int


@dataclass(frozen=True)
class Tally:
    """One actor's or side's throws of one count: the sum expected against the sum rolled."""

    by: str
    """"actor" or "side"."""
    name: str
    counts: str
    throws: int
    expected: float
    rolled: int
    variance: float

    @property
    def z(self) -> float:
        """How many standard deviations the sum rolled lies from the sum expected."""
        spread = math.sqrt(self.variance)
        return (self.rolled - self.expected) / spread if spread > 0 else 0.0

    @property
    def p(self) -> float:
        """The two-sided chance of a sum at least this far out (normal approximation)."""
        return math.erfc(abs(self.z) / math.sqrt(2.0))

    @property
    def verdict(self) -> str:
        """What the figures say, plainly."""
        if self.throws < MIN_THROWS:
            return TOO_FEW
        if self.p >= ALPHA:
            return AS_EXPECTED
        return LUCKIER if self.z > 0 else UNLUCKIER


@dataclass(frozen=True)
class Luck:
    """The table's luck: counted throws, those without odds, the bar's moves."""

    throws: tuple[Throw, ...]
    uncounted: tuple[Uncounted, ...]
    moves: tuple[Move, ...]

    def tallies(self) -> list[Tally]:
        """Per actor, then per side, each count apart, in the order first thrown."""
        return tally(self.throws, "actor") + tally(self.throws, "side")

    def of(self, actor: str) -> Luck:
        """Only `actor`'s throws, those without odds, and moves."""
        return Luck(
            tuple(t for t in self.throws if t.who.actor == actor),
            tuple(u for u in self.uncounted if u.who.actor == actor),
            tuple(m for m in self.moves if m.who.actor == actor),
        )

    def best(self, n: int = 3) -> list[Throw]:
        """The `n` luckiest throws: the least likely to score as much."""
        return heapq.nsmallest(n, self.throws, key=lambda t: (t.chance, -t.below))

    def worst(self, n: int = 3) -> list[Throw]:
        """The `n` unluckiest throws: the least likely to score as little."""
        return heapq.nsmallest(n, self.throws, key=lambda t: (t.below, -t.chance))


def tally(throws: Iterable[Throw], by: str) -> list[Tally]:
    """The throws summed per actor (or side) and count; a side's own throws (no actor, or
    one named as the side) count under the side alone, never as an actor too."""
    sums: dict[tuple[str, str], list[float]] = {}
    for t in throws:
        if by == "actor" and t.who.for_side:
            continue
        name = t.who.actor if by == "actor" else side_name(t.who.side)
        row = sums.setdefault((name, t.shape.counts), [0, 0.0, 0, 0.0])
        row[0] += 1
        row[1] += t.shape.mean
        row[2] += t.rolled
        row[3] += t.shape.variance
    return [
        Tally(by, name, counts, int(n), e, int(r), v)
        for (name, counts), (n, e, r, v) in sums.items()
    ]


def counts_nothing(system: RuleSystem[Any]) -> bool:
    """Whether a system gives no odds for any roll (it keeps the default `odds`)."""
    return type(system).odds is RuleSystem.odds


class Judge:
    """Works out each throw's odds again, once per distinct tracker, declaration, opening."""

    def __init__(self) -> None:
        """No odds worked out yet."""
        self.replay = Replay()
        self._shapes: dict[tuple[object, ...], Shape | str] = {}

    def shape(self, record: RollRecord) -> Shape | str:
        """The record's odds as a Shape, or why it has none."""
        key = self.replay.odds_key(record)
        if key not in self._shapes:
            self._shapes[key] = self._work_out(record)
        return self._shapes[key]

    def _work_out(self, record: RollRecord) -> Shape | str:
        """The odds of one record from the tracker it met, or why there are none."""
        try:
            system = get_system(record.system)
            if counts_nothing(system):
                return f"no odds: {record.system} does not count its rolls"
            tracker, earlier = self.replay.tracker(record), self.replay.earlier(record)
            odds = system.thrown_odds(tracker, record.context, record.roll, earlier)
        except (RuleError, DieError, KeyError, ValueError) as error:
            return f"no odds: cannot work them out again ({error})"
        if odds is None:
            return f"no odds: {record.system} counts nothing for this roll"
        return shape_of(odds)

    def judge(self, record: RollRecord, who: Who) -> Throw | Uncounted:
        """One record counted against its odds, or set apart saying why not."""
        shape = self.shape(record)
        self.replay.add(record)
        if isinstance(shape, str):
            return Uncounted(who, shape)
        rolled = get_system(record.system).scored(record.outcome)
        if rolled is None:
            return Uncounted(who, f"no odds: {record.system} scored nothing here")
        return Throw(who, shape, rolled)


class LuckWalk:
    """The table's luck taken one record at a time, oldest first, so a session's is kept up
    to date roll by roll rather than worked out again from its first roll."""

    def __init__(self) -> None:
        """No record judged yet."""
        self.judge = Judge()
        self.bars = Bars()
        self.throws: list[Throw] = []
        self.uncounted: list[Uncounted] = []
        self.moves: list[Move] = []

    def add(self, record: RollRecord) -> None:
        """Judge the next record against its odds and note its moves of the bar."""
        who = who_of(record)
        found = self.judge.judge(record, who)
        if isinstance(found, Throw):
            self.throws.append(found)
        else:
            self.uncounted.append(found)
        step = self.bars.add(record)
        if step is not None and step.moved:
            self.moves.append(Move(who, "; ".join(step.causes), step.before, step.after))

    def luck(self) -> Luck:
        """The luck of the records added so far."""
        return Luck(tuple(self.throws), tuple(self.uncounted), tuple(self.moves))


def luck(records: Iterable[RollRecord]) -> Luck:
    """The table's luck over `records`, oldest first."""
    walk = LuckWalk()
    for record in records:
        walk.add(record)
    return walk.luck()
