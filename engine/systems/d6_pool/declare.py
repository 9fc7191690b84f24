"""The d6 pool's table as data (engine/describe.py): its settings, its modes and their
fields, and its clocks.

The modes are built from actions.MODES, each mode's params and whether it throws, so the
declaration the page draws is the one `check_context` takes.
"""

from __future__ import annotations

from tidetower.engine.describe import Description, Field, Mode, Tracker
from tidetower.engine.systems.d6_pool.actions import MODES
from tidetower.engine.systems.d6_pool.pool import CLOCK_KINDS, LIKELIHOOD, MAX_CLOCK, THRESHOLDS
from tidetower.engine.systems.d6_pool.tracker import SETTINGS

POOL_DEFAULTS = ("rating", "attribute")
"""Params that fall back on the declared pool when absent: a mode taking one takes `pool`."""
REPLIES = ("contest", "group")
"""Modes whose rolls may answer an opening roll (`reply_to`)."""

_POOL = (
    Field("rating", "Rating", minimum=0, maximum=12, help="action dice before bonuses"),
    Field("bonus", "Bonus dice", default=0, help="dice added (or, negative, taken away)"),
    Field("assists", "Assists", "names", help="who helps: a die and 1 stress each"),
    Field(
        "push", "Push", "choice", ("die", "difficulty"), help="2 stress: +1 die or -1 difficulty"
    ),
    Field("difficulty", "Difficulty", default=1, minimum=1, maximum=12, help="hits needed"),
    Field("action", "Action", "text", help="what is attempted; strike or defend hit on 4+"),
    Field("threshold", "Hit on", minimum=min(THRESHOLDS), maximum=max(THRESHOLDS)),
    Field("combat", "Combat", "flag", default=False, help="excess hits gain momentum"),
    Field("clock", "Clock", "text", help="the clock this roll (or GM action) ticks"),
    Field("spend_momentum", "Spend momentum", "flag", default=False, help="on a strike"),
    Field("harm", "Harm", minimum=0, help="the strike's harm level before its result"),
)
_OTHERS = (
    Field("pool", "Pool", minimum=0, maximum=24, help="the rating or attribute, in dice"),
    Field("reply_to", "Reply to", "text", help="the opening roll this one answers"),
    Field("attribute", "Attribute", minimum=0, maximum=24, help="the resistance roll's dice"),
    Field("likelihood", "Likelihood", "choice", tuple(LIKELIHOOD), "even"),
    Field("modifier", "Modifier", default=0, minimum=-3, maximum=3, help="+1 lowers the TN"),
    Field("bid", "Bid", minimum=1, help="your one bid; 1 is a one-bid"),
    Field("size", "Segments", default=4, minimum=2, maximum=MAX_CLOCK),
    Field("filled", "Filled", default=0, minimum=0, maximum=MAX_CLOCK),
    Field("kind", "Kind", "choice", CLOCK_KINDS, "progress"),
    Field("rival", "Racing", "text", help="the clock this one races"),
    Field("segments", "Segments", default=1, help="ticked (negative clears)"),
    Field("amount", "Stress", minimum=-20, maximum=20, help="marked (negative clears)"),
)


def _mode(name: str, params: tuple[str, ...], throws: bool) -> Mode:
    """A mode of actions.MODES as the description lists it, with the shared fields it uses."""
    shared: tuple[str, ...] = ("pool",) if set(params) & set(POOL_DEFAULTS) else ()
    shared += ("reply_to",) if name in REPLIES else ()
    return Mode(name, (*shared, *params), throws)


DESCRIPTION = Description(
    title="d6 pool (seed 002)",
    setup="Set up the table",
    tracker=Tracker("clocks", "clocks", position="Clock"),
    settings=SETTINGS,
    fields=(*_OTHERS[:2], *_POOL, *_OTHERS[2:]),
    modes=tuple(_mode(name, params, throws) for name, (_, params, throws) in MODES.items()),
    default_mode="action",
)
