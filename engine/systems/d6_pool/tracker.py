"""The d6-pool table's shared tracker (seed 002): clocks, momentum flags, stress, auction.

Every change is a pure function: a D6Table in, a new D6Table out. The rule system's
modes (actions.py) call these for rolls and for GM actions; the session or MQTT
commands may call them directly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from tidetower.engine.describe import Field, read_fields
from tidetower.engine.rules import JSONValue, RuleError
from tidetower.engine.systems.d6_pool.pool import Bid, Clock, auction_winners, check_bid

TraitorThreshold = Literal["roll", "three"]
AuctionBids = Literal["open", "raise"]
MomentumSpend = Literal["success", "full"]
ZeroResistance = Literal["lowest-of-two", "cannot"]


@dataclass(frozen=True)
class D6Settings:
    """Readings a table may choose differently (docs/engine.md, "d6 pool RPG")."""

    stress_max: int = 9
    traitor_threshold: TraitorThreshold = "roll"
    auction_bids: AuctionBids = "open"
    momentum_spend: MomentumSpend = "success"
    zero_resistance: ZeroResistance = "lowest-of-two"


SETTINGS = (
    Field("stress_max", "Stress boxes", default=9, minimum=1, maximum=20),
    Field("traitor_threshold", "Traitor dice hit on", "choice", get_args(TraitorThreshold), "roll"),
    Field("auction_bids", "Auction bids", "choice", get_args(AuctionBids), "open"),
    Field("momentum_spend", "Momentum lands on", "choice", get_args(MomentumSpend), "success"),
    Field("zero_resistance", "Resisting at 0", "choice", get_args(ZeroResistance), "lowest-of-two"),
)
"""D6Settings as the set-up form shows it (declare.py's DESCRIPTION.settings): one Field each."""


def settings_from(values: Mapping[str, JSONValue]) -> D6Settings:
    """D6Settings from GM settings, read by SETTINGS; unknown keys and values are errors."""
    read: Any = read_fields(SETTINGS, values, "d6-pool setting(s)")
    return D6Settings(**read)


@dataclass(frozen=True)
class Stress:
    """One character's stress boxes filled and the conditions they carry."""

    name: str
    stress: int = 0
    conditions: int = 0


@dataclass(frozen=True)
class D6Table:
    """The d6-pool tracker: clocks, who holds momentum, stress, and an open auction."""

    settings: D6Settings = field(default_factory=D6Settings)
    clocks: tuple[Clock, ...] = ()
    momentum: tuple[str, ...] = ()
    stress: tuple[Stress, ...] = ()
    auction: tuple[Bid, ...] = ()
    bidding: bool = False

    def clock(self, name: str, field: str = "clock") -> Clock:
        """The clock called `name`, or a RuleError listing the clocks and naming `field`,
        the param that named it."""
        found = next((c for c in self.clocks if c.name == name), None)
        if found is None:
            known = ", ".join(c.name for c in self.clocks) or "none"
            raise RuleError(f"no clock called {name!r}: clocks are {known}", field=field)
        return found

    def stress_of(self, name: str) -> Stress:
        """A character's stress (zero if never marked)."""
        return next((s for s in self.stress if s.name == name), Stress(name))

    def has_momentum(self, name: str) -> bool:
        """True if `name` holds momentum."""
        return name in self.momentum


def add_clock(table: D6Table, clock: Clock) -> D6Table:
    """The table with a new clock; names are unique and a rival must exist."""
    if any(c.name == clock.name for c in table.clocks):
        raise RuleError(f"there is already a clock called {clock.name!r}", field="clock")
    if clock.rival is not None:
        table.clock(clock.rival, "rival")
    return dataclasses.replace(table, clocks=(*table.clocks, clock))


def remove_clock(table: D6Table, name: str) -> D6Table:
    """The table without the clock `name` (and without rivalries to it)."""
    table.clock(name)
    kept = tuple(
        dataclasses.replace(c, rival=None) if c.rival == name else c
        for c in table.clocks
        if c.name != name
    )
    return dataclasses.replace(table, clocks=kept)


def apply_clock(table: D6Table, name: str, segments: int) -> tuple[D6Table, dict[str, JSONValue]]:
    """Tick (or, negative, clear) a clock; facts say whether it filled and won its race."""
    before = table.clock(name)
    after = before.tick(segments)
    clocks = tuple(after if c.name == name else c for c in table.clocks)
    facts: dict[str, JSONValue] = {
        "clock": name,
        "ticked": after.filled - before.filled,
        "filled": after.filled,
        "size": after.size,
        "clock_full": after.full,
    }
    rivals = [c for c in clocks if name in (c.rival, after.rival) and c.name != name]
    if after.full and not before.full and rivals and not any(c.full for c in rivals):
        facts["won_race_against"] = [c.name for c in rivals]
    return dataclasses.replace(table, clocks=clocks), facts


def add_stress(table: D6Table, name: str, amount: int) -> tuple[D6Table, dict[str, JSONValue]]:
    """Mark (or clear, negative) stress; a filled track overwhelms: a condition, reset to 0."""
    if not name:
        raise RuleError("stress needs the character's name (actor)", field="actor")
    mark = table.stress_of(name)
    level, conditions = max(mark.stress + amount, 0), mark.conditions
    overwhelmed = level >= table.settings.stress_max
    if overwhelmed:
        level, conditions = 0, conditions + 1
    marks = (*(s for s in table.stress if s.name != name), Stress(name, level, conditions))
    facts: dict[str, JSONValue] = {
        "who": name,
        "stress_change": amount,
        "stress": level,
        "overwhelmed": overwhelmed,
        "conditions": conditions,
        "broken": conditions >= 4,
    }
    return dataclasses.replace(table, stress=tuple(sorted(marks, key=lambda s: s.name))), facts


def set_momentum(table: D6Table, name: str, held: bool) -> D6Table:
    """The table with `name` holding momentum or not (a flag: gaining twice changes nothing)."""
    others = tuple(n for n in table.momentum if n != name)
    return dataclasses.replace(table, momentum=tuple(sorted((*others, name) if held else others)))


def end_combat(table: D6Table) -> D6Table:
    """Combat is over: every momentum flag expires."""
    return dataclasses.replace(table, momentum=())


def auction_roll(table: D6Table, name: str, hits: int, sixes: int) -> D6Table:
    """A participant's secret roll joins the open auction (opening one if none is open)."""
    if table.bidding:
        raise RuleError("bidding has begun: no one may join this auction now")
    if any(b.name == name for b in table.auction):
        raise RuleError(f"{name} has already rolled in this auction", field="actor")
    return dataclasses.replace(table, auction=(*table.auction, Bid(name, hits, sixes)))


def auction_bid(table: D6Table, name: str, bid: int) -> D6Table:
    """A participant's one and only bid, checked against the table's bid rule."""
    if len(table.auction) < 3:
        raise RuleError(
            f"an auction needs three or more participants to roll first, "
            f"{len(table.auction)} have: for two, use a contest"
        )
    check_bid(table.auction, name, bid, table.settings.auction_bids)
    bids = tuple(dataclasses.replace(b, bid=bid) if b.name == name else b for b in table.auction)
    return dataclasses.replace(table, auction=bids, bidding=True)


def auction_reveal(table: D6Table) -> tuple[D6Table, dict[str, JSONValue]]:
    """Reveal hits, add bids, name the winner (or the drawn), and close the auction."""
    winners, why = auction_winners(table.auction)
    entries: list[JSONValue] = [
        {
            "name": b.name,
            "hits": b.hits,
            "bid": b.bid,
            "total": b.hits + (b.bid or 0),
            "one_bid": b.bid == 1,
            "won": b.name in winners,
        }
        for b in table.auction
    ]
    facts: dict[str, JSONValue] = {
        "entries": entries,
        "winners": list(winners),
        "draw": len(winners) > 1,
        "why": why,
    }
    return dataclasses.replace(table, auction=(), bidding=False), facts
