"""A simulated Tide table: side A opens a Tide-linked exchange, side B replies to it.

Each throw is a pool of one tier with the d20 Omen; a routed side's Tide is set up afresh.
Options: `tiers` (the tiers a pool is drawn from; repeat one to draw it more often) and
`omen` (false: no d20).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from tidetower.engine import params as p
from tidetower.engine.dice import DieError, DieKind
from tidetower.engine.rules import JSONValue, PracticeTurn, RollContext, RollRecord, RuleError
from tidetower.engine.systems.tide.marks import check_tier
from tidetower.engine.systems.tide.track import TideTrack

TIER_MIX: tuple[DieKind, ...] = (DieKind.D6, DieKind.D6, DieKind.D8, DieKind.D12)
"""The tiers a practice pool is drawn from: a d6 pool half the time."""


def _tiers(options: Mapping[str, JSONValue]) -> tuple[DieKind, ...]:
    """The `tiers` option as tier dice, or the usual mix."""
    named = options.get("tiers")
    if named is None:
        return TIER_MIX
    if not isinstance(named, list | tuple) or not named:
        raise RuleError(f"tiers must be a list of tier dice, got {named!r}", field="tiers")
    try:
        return tuple(check_tier(DieKind.parse(str(tier))) for tier in named)
    except DieError as error:
        raise RuleError(str(error), field="tiers") from None


def _context(last: RollRecord | None) -> RollContext:
    """A's Tide-linked opening, or B's reply when the last Tide roll awaits one."""
    if last is not None and last.outcome.facts.get("awaiting_reply"):
        return RollContext(actor="Side B", side="b", reply_to=last.id)
    return RollContext(actor="Side A", side="a", mode="tide", params={"tide_linked": True})


def practice_turn(
    track: TideTrack,
    last: RollRecord | None,
    rng: random.Random,
    options: Mapping[str, JSONValue],
) -> PracticeTurn:
    """The next exchange's throw, after setting up a new Tide once a side has routed."""
    tier = rng.choice(_tiers(options))
    dice = (tier,) * rng.randint(2, 5)
    if "omen" not in options or p.flag(options, "omen"):
        dice += (DieKind.D20,)
    if track.routed is None:
        return PracticeTurn(_context(last), dice)
    fresh = {
        "weight_a": track.weight_a,
        "weight_b": track.weight_b,
        "size": track.size,
        "footing": track.footing,
    }
    return PracticeTurn(_context(None), dice, reset=fresh)
