"""A session's figures over its rolls, summarised: each die's faces counted, the luck's
tallies, best and worst throws and reasons, each system's latest steps of the bar and its
moves counted, the latest moves: what the retained `stats` and `stats luck` need of rolls no
longer held one by one (a year of play is some 50,000), and two summaries of rolls in turn
make one: pure, records in, dataclasses out (engine/digest.py keeps one as JSON)."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tidetower.engine.barline import Step
from tidetower.engine.luck import LuckWalk, Move, Tally, Throw
from tidetower.engine.rows import BadRow
from tidetower.engine.rules import RollRecord
from tidetower.engine.stats import Counted

KEPT_STEPS = 250
"""The latest steps of each system's bar kept one by one; the moves before are counted only."""
KEPT_MOVES = 100
"""The latest moves of the bar (any system) kept one by one, as `stats luck` lists them."""
TOP = 3
"""The best and worst throws kept."""
KEPT_SKIPPED = 100
"""The rows that could not be read kept by seq and reason, to be named again; more are cut."""


def _best_key(t: Throw) -> tuple[float, float]:
    return (t.chance, -t.below)


def _worst_key(t: Throw) -> tuple[float, float]:
    return (t.below, -t.chance)


def _joined(
    first: Mapping[str, tuple[Step, ...]], then: Mapping[str, tuple[Step, ...]]
) -> dict[str, tuple[Step, ...]]:
    """Each system's steps of both, the latest KEPT_STEPS."""
    return {s: (*first.get(s, ()), *then.get(s, ()))[-KEPT_STEPS:] for s in {**first, **then}}


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
    """Why throws have no odds, and how many each, in the order first seen."""
    moves: int = 0
    """The moves of the bar in these throws, any system (luck's count)."""
    last_moves: tuple[Move, ...] = ()
    """The latest KEPT_MOVES of those moves."""
    bars: Mapping[str, tuple[Step, ...]] = field(default_factory=dict)
    """Each system's latest KEPT_STEPS steps that moved or routed its bar."""
    bar_moves: Mapping[str, int] = field(default_factory=dict)
    """The throws that moved each system's bar."""
    seqs: Mapping[str, int] = field(default_factory=dict)
    """The seq of each roll kept one by one (the steps, best and worst), by id."""
    skipped: tuple[BadRow, ...] = ()
    """The first KEPT_SKIPPED stored rows among these that could not be read, and why."""

    def steps(self, system: str) -> tuple[Step, ...]:
        """The latest steps of `system`'s bar that moved or routed it."""
        return self.bars.get(system, ())

    def moves_of(self, system: str) -> int:
        """How many throws moved `system`'s bar."""
        return self.bar_moves.get(system, 0)

    def then(self, later: Summary) -> Summary:
        """These rolls and `later`'s after them, as one summary."""
        bars = _joined(self.bars, later.bars)
        best = heapq.nsmallest(TOP, (*self.best, *later.best), key=_best_key)
        worst = heapq.nsmallest(TOP, (*self.worst, *later.worst), key=_worst_key)
        every = {**self.seqs, **later.seqs}
        kept = [s.who.id for steps in bars.values() for s in steps]
        kept += [t.who.id for t in (*best, *worst)]
        return Summary(
            rolls=self.rolls + later.rolls,
            dice=self.dice + later.dice,
            tallies=merged(self.tallies, later.tallies),
            best=tuple(best),
            worst=tuple(worst),
            throws=self.throws + later.throws,
            uncounted=self.uncounted + later.uncounted,
            moves=self.moves + later.moves,
            last_moves=(*self.last_moves, *later.last_moves)[-KEPT_MOVES:],
            bars=bars,
            bar_moves=Counter(self.bar_moves) + Counter(later.bar_moves),
            seqs={i: every[i] for i in kept if i in every},
            skipped=(*self.skipped, *later.skipped)[:KEPT_SKIPPED],
        )


def merged(first: Iterable[Tally], then: Iterable[Tally]) -> tuple[Tally, ...]:
    """Tallies of the same actor (or side) and count added up, in the order first seen: every
    actor's before every side's, as `Luck.tallies` gives them."""
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
    return tuple(sorted(sums.values(), key=lambda t: t.by != "actor"))  # a stable sort


class SummaryWalk:
    """Rolls summarised one at a time, oldest first, every system's bar followed."""

    def __init__(self) -> None:
        """No roll walked yet."""
        self.rolls = 0
        self.dice: Counter[Counted] = Counter()
        self.luck = LuckWalk()
        self.seqs: dict[str, int] = {}
        self.skipped: list[BadRow] = []

    def add(self, dice: Iterable[Counted], record: RollRecord) -> None:
        """Count the next roll: its dice as counted and its record."""
        self.rolls += 1
        self.dice.update(dice)
        self.luck.add(record)
        self.seqs[record.id] = record.seq

    def summary(self) -> Summary:
        """The rolls walked so far, summarised."""
        found = self.luck.luck()
        walks = self.luck.bars.walks
        return Summary(
            rolls=self.rolls,
            dice=Counter(self.dice),
            best=tuple(found.best(TOP)),
            worst=tuple(found.worst(TOP)),
            tallies=tuple(found.tallies()),
            throws=len(found.throws),
            uncounted=Counter(u.reason for u in found.uncounted),
            moves=len(found.moves),
            last_moves=found.moves[-KEPT_MOVES:],
            bars={s: tuple(t for t in w.steps if t.moved or t.routed) for s, w in walks.items()},
            bar_moves={s: sum(1 for t in w.steps if t.moved) for s, w in walks.items()},
            seqs=self.seqs,
            skipped=tuple(self.skipped),
        ).then(Summary())  # keeps the seqs and steps it keeps one by one, and no more


def summarised(rolls: Iterable[tuple[Iterable[Counted], RollRecord]]) -> Summary:
    """The summary of `rolls` (each roll's dice as counted, and its record), oldest first."""
    walk = SummaryWalk()
    for dice, record in rolls:
        walk.add(dice, record)
    return walk.summary()
