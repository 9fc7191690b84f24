"""The bar's story over a session: where it stood before and after each throw, who moved it,
and the throw that routed a side, worked out again from the stored rolls: pure."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tidetower.engine.dice import DieError
from tidetower.engine.replay import Replay
from tidetower.engine.rules import BarState, RollRecord, RuleError, RuleSystem, Side
from tidetower.engine.systems import get_system
from tidetower.engine.who import Who, who_of


@dataclass(frozen=True)
class Step:
    """One throw on the bar: from, to, what moved it, and the side it routed (if any)."""

    who: Who
    before: int
    after: int
    causes: tuple[str, ...]
    low: int
    high: int
    """The bar's range after the throw (a set-up may change its length)."""
    routed: Side | None = None

    @property
    def moved(self) -> bool:
        """Whether the throw moved the bar: the one count of a move, the tracker's and luck's
        alike (a throw, however many steps it took; there and back again counts: 8 → 9 → 8)."""
        return self.after != self.before or bool(self.causes)


@dataclass(frozen=True)
class Barline:
    """The bar of one system over its throws: its range, sides, colours and each step."""

    system: str
    low: int
    high: int
    label_a: str
    label_b: str
    colour_a: str
    colour_b: str
    steps: tuple[Step, ...]

    @property
    def moves(self) -> int:
        """How many throws moved the bar (Step.moved)."""
        return sum(1 for step in self.steps if step.moved)


def _after(
    system: RuleSystem[Any], tracker: Any, record: RollRecord, replay: Replay
) -> BarState | None:
    """The bar after `record`, resolving it again from the tracker it met (None: cannot)."""
    try:
        after, _ = system.resolve(tracker, record.context, record.roll, replay.earlier(record))
    except (RuleError, DieError, ValueError):
        return None
    return system.bar(after)


def step_of(system: RuleSystem[Any], record: RollRecord, replay: Replay) -> tuple[BarState, Step]:
    """The bar before `record` and its step; one that cannot be resolved again moves as its
    motions say."""
    tracker = replay.tracker(record)
    before = system.bar(tracker)
    after = _after(system, tracker, record, replay)
    motions = record.outcome.motions
    causes = tuple(m.cause for m in motions if m.before != m.after)
    if after is None:
        end = motions[-1].after if motions else before.position
        return before, Step(who_of(record), before.position, end, causes, before.low, before.high)
    routed = after.routed if before.routed is None else None
    step = Step(who_of(record), before.position, after.position, causes, after.low, after.high)
    return before, dataclasses.replace(step, routed=routed)


class BarWalk:
    """The bar of one system taken one record at a time, oldest first, so a session's story
    is kept up to date roll by roll rather than resolved again from its first roll."""

    def __init__(self, system_name: str) -> None:
        """No record walked yet."""
        self.name = system_name
        self.system = get_system(system_name)
        self.replay = Replay()
        self.bars: list[BarState] = []
        self.steps: list[Step] = []

    def add(self, record: RollRecord) -> Step | None:
        """The next record's step, when it is of this system (None: not of it, or its
        tracker cannot be read again: nothing to draw)."""
        step = None
        if record.system == self.name:
            try:
                bar, step = step_of(self.system, record, self.replay)
                self.bars.append(bar)
                self.steps.append(step)
            except (RuleError, DieError, ValueError):
                step = None
        self.replay.add(record)
        return step

    def line(self) -> Barline | None:
        """The bar over the records walked; None when none is of the system."""
        if not self.bars:
            return None
        last = self.bars[-1]
        low, high = min(b.low for b in self.bars), max(b.high for b in self.bars)
        return Barline(
            self.name,
            low,
            high,
            last.label_a,
            last.label_b,
            last.colour_a,
            last.colour_b,
            tuple(self.steps),
        )


class Bars:
    """Every system's bar over the records, one walk each, oldest first: where each throw
    left the bar by its own result, and whether it moved it."""

    def __init__(self) -> None:
        """No record walked yet."""
        self.walks: dict[str, BarWalk] = {}

    def walk(self, system_name: str) -> BarWalk:
        """The walk of `system_name`'s bar (a fresh one if none of its records came yet)."""
        if system_name not in self.walks:
            self.walks[system_name] = BarWalk(system_name)
        return self.walks[system_name]

    def add(self, record: RollRecord) -> Step | None:
        """The next record's step on its system's bar (None: a system it cannot read)."""
        try:
            walk = self.walk(record.system)
        except RuleError:
            return None
        return walk.add(record)


def barline(records: Iterable[RollRecord], system_name: str) -> Barline | None:
    """The bar of `system_name` over `records` (oldest first); None when none is of it."""
    walk = BarWalk(system_name)
    for record in records:
        walk.add(record)
    return walk.line()
