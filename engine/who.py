"""Who threw a roll, and the one way the figures name a roller and a side: pure."""

from __future__ import annotations

from dataclasses import dataclass

from tidetower.engine.rules import RollRecord, Side


@dataclass(frozen=True)
class Who:
    """A throw's roller: the id, actor, side, system and time of its record."""

    id: str
    actor: str
    side: Side | None
    system: str
    at: float | None

    @property
    def for_side(self) -> bool:
        """Whether the throw is its side's and no one person's: no actor, or an actor named
        as the side is ("Side A" on side a, as the practice tables name them)."""
        return not self.actor or self.actor.casefold() == side_name(self.side)

    @property
    def name(self) -> str:
        """The roller as the figures name it: the actor, else the side ('side a')."""
        return side_name(self.side) if self.for_side else self.actor


def who_of(record: RollRecord) -> Who:
    """Who threw `record`, and when."""
    return Who(record.id, record.context.actor, record.context.side, record.system, record.at)


def side_name(side: Side | None) -> str:
    """'side a', or 'no side': the one name of a side in the figures."""
    return f"side {side}" if side else "no side"
