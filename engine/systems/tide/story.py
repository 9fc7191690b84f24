"""Seed 000's worked example, "the Emperor's column", as practice turns a demo plays.

Each beat is an opening throw and the reply to it; the harassment goes on, beat after beat,
until the column is nearly broken and Zhao makes his last cut, or a side routs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tidetower.engine.dice import DieKind
from tidetower.engine.rules import JSONValue, PracticeTurn, RollContext, RollRecord, Side
from tidetower.engine.systems.tide.track import TideTrack

TITLE = "the Emperor's column"
"""The story's name, as the Tide's Description gives it."""
COLUMN: dict[str, JSONValue] = {
    "weight_a": 6,
    "weight_b": 12,
    "size": "battle",
    "footing": "severe-a",
    "label_a": "Imperial",
    "label_b": "Mongol",
}
INTRO = (
    "Noon on the steppe road. Zhao's outriders report horse-archers who stay out of reach "
    "and shoot.\nSetup: Imperial 6 v Mongol 12, Battle (3 Marks per step), severe footing "
    "against the column."
)


@dataclass(frozen=True)
class Throw:
    """One actor's throw in a beat: who, for which side, the pool, and the d20 Omen."""

    actor: str
    side: Side
    dice: int
    tier: DieKind
    omen: bool = False

    def kinds(self) -> tuple[DieKind, ...]:
        """The dice thrown."""
        return (self.tier,) * self.dice + ((DieKind.D20,) if self.omen else ())


@dataclass(frozen=True)
class Beat:
    """One step of the story: narration, an opening throw and the reply to it."""

    title: str
    narration: str
    opening: Throw
    reply: Throw
    linked: bool


ZHAO = Throw("Zhao", "a", 4, DieKind.D6, omen=True)
WEI = Throw("Wei", "a", 4, DieKind.D6, omen=True)
ARCHERS = Throw("Mongol horse-archers", "b", 4, DieKind.D12)
STORY = (
    Beat(
        "Zhao's first order",
        "Zhao orders the outriders to stop the chase: the pursuit would open the line. "
        "Tide-linked.",
        ZHAO,
        ARCHERS,
        True,
    ),
    Beat(
        "Wei at the litter",
        "Wei shields the Emperor's litter from a volley. Saving the Emperor is a personal "
        "objective: the bar does not care.",
        Throw("Wei", "a", 4, DieKind.D6),
        Throw("an archer", "b", 3, DieKind.D12),
        False,
    ),
    Beat(
        "Zhao holds the wash",
        "Zhao is forced back a horse-length at the wash. A local fight: personal.",
        Throw("Zhao", "a", 3, DieKind.D6),
        Throw("a lancer", "b", 3, DieKind.D12),
        False,
    ),
)
HARASSMENT = (
    Beat(
        "The harassment goes on",
        "The horse-archers stay out of reach and shoot. Zhao leads a sally to drive them "
        "off. Tide-linked.",
        ZHAO,
        ARCHERS,
        True,
    ),
    Beat(
        "The harassment goes on",
        "Wei rallies the guard around the litter to hold the column together. Tide-linked.",
        WEI,
        ARCHERS,
        True,
    ),
)
LAST_CUT = Beat(
    "Zhao's last cut",
    "Zhao, boxed in at the wash and surrounded, cuts at the ring. Strength + Slash. "
    "Tide-linked: one throw can move the bar twice.",
    Throw("Zhao", "a", 3, DieKind.D6, omen=True),
    Throw("the ring of riders", "b", 5, DieKind.D12),
    True,
)
EPILOGUE = {
    "a": "The column breaks and flees. The Tide broke the column's will, not Wei's: the "
    "Emperor can still be saved, a personal objective.",
    "b": "Against all odds the horse-archers break off and scatter.",
}


def story_turn(track: TideTrack, history: Sequence[RollRecord]) -> PracticeTurn:
    """The story's next throw: a beat's opening (set up as the column first), its reply, or
    the epilogue once a side routs."""
    if history and track.routed is not None:
        return PracticeTurn(narration=EPILOGUE[track.routed], done=True)
    if len(history) % 2:
        opening = history[-1]
        beat = _beat(len(history) // 2, track, opening)
        reply = beat.reply
        context = RollContext(reply.actor, reply.side, opening.id, pool=reply.dice)
        return PracticeTurn(_with_tier(context, reply), reply.kinds())
    beat = _beat(len(history) // 2, track, None)
    first = beat.opening
    context = RollContext(first.actor, first.side, mode="opposed", pool=first.dice)
    context = _with_tier(context, first, linked=beat.linked)
    told = f"{beat.title}\n  {beat.narration}"
    reset = None if history else COLUMN
    return PracticeTurn(context, first.kinds(), reset, INTRO + "\n\n" + told if reset else told)


def _beat(number: int, track: TideTrack, opening: RollRecord | None) -> Beat:
    """Beat `number`: the story's three, then the harassment, or the last cut once the
    column is nearly broken (for a reply: the beat its `opening` was thrown in)."""
    if number < len(STORY):
        return STORY[number]
    if opening is None:
        last_cut = track.marker <= 2
    else:
        thrown = (opening.context.actor, opening.context.pool)
        last_cut = thrown == (LAST_CUT.opening.actor, LAST_CUT.opening.dice)
    return LAST_CUT if last_cut else HARASSMENT[(number - len(STORY)) % 2]


def _with_tier(context: RollContext, throw: Throw, linked: bool = False) -> RollContext:
    """The context with the throw's tier (and Tide-linked, for an opening that moves it)."""
    params: dict[str, JSONValue] = {"tier": throw.tier.value}
    if linked:
        params["tide_linked"] = True
    return RollContext(
        context.actor, context.side, context.reply_to, context.mode, context.pool, params
    )
