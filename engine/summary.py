"""A session's figures over its rolls, summarised: each die's faces counted, the luck's
tallies, best and worst throws and reasons, the bar's latest steps and its moves counted:
what the retained `stats` needs of rolls no longer held one by one (a year of play is some
50,000), and two summaries of rolls in turn make one: pure, records in, dataclasses out."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tidetower.engine.barline import Step
from tidetower.engine.luck import LuckWalk, Tally, Throw
from tidetower.engine.rules import RollRecord
from tidetower.engine.stats import Counted

KEPT_STEPS = 250
"""The latest steps of the bar kept one by one; the moves before them are counted only."""
TOP = 3
"""The best and worst throws kept."""


def _best_key(t: Throw) -> tuple[float, float]:
    return (t.chance, -t.below)


def _worst_key(t: Throw) -> tuple[float, float]:
    return (t.below, -t.chance)


@dataclass(frozen=True)
class Summary:
    """The figures of some rolls, in the order thrown; `then` adds the rolls after them."""

    rolls: int = 0
    dice: Counter[Counted] = field(default_factory=Counter)
    tallies: tuple[Tally, ...] = ()
    """Per actor, then per side, each count apart, in the order first thrown."""
    best: tuple[Throw, ...] = ()
    worst: tuple[Throw, ...] = ()
    throws: int = 0
    """The throws counted against their odds."""
    uncounted: Counter[str] = field(default_factory=Counter)
    """Why throws have no odds, and how many each."""
    moves: int = 0
    """The moves of the bar in these throws, any system (luck's count)."""
    steps: tuple[Step, ...] = ()
    """The active system's latest KEPT_STEPS steps that moved or routed the bar."""
    bar_moves: int = 0
    """The throws that moved the active system's bar."""
    seqs: Mapping[str, int] = field(default_factory=dict)
    """The seq of each roll kept one by one (the steps, best and worst), by id."""

    def then(self, later: Summary) -> Summary:
        """These rolls and `later`'s after them, as one summary."""
        steps = (*self.steps, *later.steps)[-KEPT_STEPS:]
        best = heapq.nsmallest(TOP, (*self.best, *later.best), key=_best_key)
        worst = heapq.nsmallest(TOP, (*self.worst, *later.worst), key=_worst_key)
        every = {**self.seqs, **later.seqs}
        kept = [s.who.id for s in steps] + [t.who.id for t in (*best, *worst)]
        return Summary(
            rolls=self.rolls + later.rolls,
            dice=self.dice + later.dice,
            tallies=merged(self.tallies, later.tallies),
            best=tuple(best),
            worst=tuple(worst),
            throws=self.throws + later.throws,
            uncounted=self.uncounted + later.uncounted,
            moves=self.moves + later.moves,
            steps=steps,
            bar_moves=self.bar_moves + later.bar_moves,
            seqs={i: every[i] for i in kept if i in every},
        )


def merged(first: Iterable[Tally], then: Iterable[Tally]) -> tuple[Tally, ...]:
    """Tallies of the same actor (or side) and count added up, in the order first seen."""
    sums: dict[tuple[str, str, str], Tally] = {}
    for t in (*first, *then):
        key = (t.by, t.name, t.counts)
        was = sums.get(key)
        if was is None:
            sums[key] = t
            continue
        sums[key] = Tally(
            t.by,
            t.name,
            t.counts,
            was.throws + t.throws,
            was.expected + t.expected,
            was.rolled + t.rolled,
            was.variance + t.variance,
        )
    return tuple(sums.values())


class SummaryWalk:
    """Rolls summarised one at a time, oldest first, the bar of `system` followed."""

    def __init__(self, system: str) -> None:
        """No roll walked yet."""
        self.rolls = 0
        self.dice: Counter[Counted] = Counter()
        self.luck = LuckWalk()
        self.bar = self.luck.bars.walk(system)  # one walk of the bar: the moves luck counts
        self.seqs: dict[str, int] = {}

    def add(self, dice: Iterable[Counted], record: RollRecord) -> None:
        """Count the next roll: its dice as counted and its record."""
        self.rolls += 1
        self.dice.update(dice)
        self.luck.add(record)
        self.seqs[record.id] = record.seq

    def summary(self) -> Summary:
        """The rolls walked so far, summarised."""
        found = self.luck.luck()
        steps = [s for s in self.bar.steps if s.moved or s.routed]
        return Summary(
            rolls=self.rolls,
            dice=Counter(self.dice),
            best=tuple(found.best(TOP)),
            worst=tuple(found.worst(TOP)),
            tallies=tuple(found.tallies()),
            throws=len(found.throws),
            uncounted=Counter(u.reason for u in found.uncounted),
            moves=len(found.moves),
            steps=tuple(steps),
            bar_moves=sum(1 for s in self.bar.steps if s.moved),
            seqs=self.seqs,
        ).then(Summary())  # keeps the seqs of what it keeps one by one, and no more


def summarised(rolls: Iterable[tuple[Iterable[Counted], RollRecord]], system: str) -> Summary:
    """The summary of `rolls` (each roll's dice as counted, and its record), oldest first."""
    walk = SummaryWalk(system)
    for dice, record in rolls:
        walk.add(dice, record)
    return walk.summary()
