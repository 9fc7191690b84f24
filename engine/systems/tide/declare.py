"""The Tide's table as data: its settings, its declaration and its bar (engine/describe.py).

A declaration's Tide fields (the tier, Marks entered by the GM, Tide-linked) travel in
`RollContext.params`; these readers are the one place that takes them out.
"""

from __future__ import annotations

from tidetower.engine import params as p
from tidetower.engine.describe import Description, Field, Mode, Tracker
from tidetower.engine.dice import DieError, DieKind
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.systems.tide import story
from tidetower.engine.systems.tide.marks import MARKS_KINDS, TIERS, check_tier
from tidetower.engine.systems.tide.track import FOOTINGS, SIZES
from tidetower.engine.tray import TENS_D10

MODES = ("primitive", "unopposed", "opposed", "tide")
AWAITS_REPLY = ("opposed", "tide")
OWN_FIELDS = ("tier", "marks", "tide_linked")
"""The declaration's fields in `params`."""
MAX_WEIGHT = 100
"""The heaviest a side may weigh: the bar has room for every position it makes."""
MAX_LABEL = 40
"""The longest side name the bar and the pages show."""
_TIER_NAMES = tuple(t.value for t in TIERS)

_DECLARED = (
    Field("side", "Side", "side"),
    Field("pool", "Pool", minimum=0, maximum=50, help="how many tier dice are thrown"),
    Field("tier", "Tier", "choice", _TIER_NAMES, help="the pool's die: d6, d8 or d12"),
    Field("reply_to", "Reply to", "text", help="the opening roll this one answers"),
    Field("tide_linked", "Tide-linked", "flag", default=False, help="the roll moves the bar"),
    Field("marks", "Marks", minimum=0, maximum=100, help="Marks entered instead of read"),
)
_SETTINGS = (
    Field("weight_a", "Weight A", default=8, minimum=1, maximum=MAX_WEIGHT),
    Field("weight_b", "Weight B", default=8, minimum=2, maximum=MAX_WEIGHT),
    Field("size", "Size", "choice", SIZES, "skirmish", help="Marks of margin per Tide step"),
    Field("footing", "Footing", "choice", FOOTINGS, "equal"),
    Field("label_a", "Side A", "text", default="A", maximum=MAX_LABEL),
    Field("label_b", "Side B", "text", default="B", maximum=MAX_LABEL),
    Field("marks_rule", "Marks rule", "choice", MARKS_KINDS, "threshold"),
    Field("marks_threshold", "Marks threshold", default=5, minimum=1, maximum=100),
    Field("marks_step", "Marks step", default=4, minimum=1, maximum=MAX_WEIGHT),
)
DESCRIPTION = Description(
    title="Tide (seed 000)",
    setup="Set up the Tide",
    tracker=Tracker("two-sided", "the Tide", end="{side} collapse"),
    settings=_SETTINGS,
    fields=_DECLARED,
    modes=tuple(Mode(m, tuple(f.name for f in _DECLARED)) for m in MODES),
    toggle="tide_linked",
    story=story.TITLE,
)


def tier(context: RollContext) -> DieKind | None:
    """The declared tier die, if one was named."""
    named = context.params.get("tier")
    if named is None:
        return None
    if named == TENS_D10:
        message = f"a {named} is no tier die: with a units d10 it makes a d100"
        raise RuleError(message, field="tier")
    try:
        return check_tier(DieKind.parse(str(named)))
    except DieError as error:
        raise RuleError(str(error), field="tier") from None


def entered_marks(context: RollContext) -> int | None:
    """The Marks the GM entered instead of reading the dice, if any."""
    return p.optional_whole(context.params, "marks", minimum=0)


def linked(context: RollContext) -> bool:
    """Whether the roll moves the Tide: declared Tide-linked, or thrown in mode `tide`."""
    return p.flag(context.params, "tide_linked") or context.mode == "tide"
