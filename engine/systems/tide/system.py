"""Seed 000 as a rule system: Marks readings, opposed reply chains, and the Tide bar."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from tidetower.engine import params as p
from tidetower.engine.chances import Odds
from tidetower.engine.describe import Description, read_fields
from tidetower.engine.dice import DieKind, Roll
from tidetower.engine.rules import (
    BarState,
    JSONValue,
    Motion,
    Outcome,
    PracticeTurn,
    RollContext,
    RollRecord,
    RuleError,
    RuleSystem,
    Side,
)
from tidetower.engine.systems import register
from tidetower.engine.systems.tide.declare import (
    AWAITS_REPLY,
    DESCRIPTION,
    MODES,
    OWN_FIELDS,
    entered_marks,
    linked,
    tier,
)
from tidetower.engine.systems.tide.marks import TIERS, MarksRule, read_marks
from tidetower.engine.systems.tide.odds import declared_marks, omen_bands, tide_directions
from tidetower.engine.systems.tide.practice import practice_turn
from tidetower.engine.systems.tide.story import story_turn
from tidetower.engine.systems.tide.track import TideTrack


@dataclass(frozen=True)
class TideScene:
    """The Tide system's state: the track, the side names and the Marks rule."""

    track: TideTrack
    label_a: str = "A"
    label_b: str = "B"
    marks_rule: MarksRule = field(default_factory=MarksRule)

    def label(self, side: Side) -> str:
        """The table's name for a side."""
        return self.label_a if side == "a" else self.label_b


def scene_from_settings(settings: Mapping[str, JSONValue]) -> TideScene:
    """A fresh scene from GM settings; unknown keys are an error, not ignored."""
    s: Any = read_fields(DESCRIPTION.settings, settings, "Tide setting(s)")
    track = TideTrack(s["weight_a"], s["weight_b"], s["size"], s["footing"])
    rule = MarksRule(s["marks_rule"], s["marks_threshold"], s["marks_step"])
    return TideScene(track, s["label_a"], s["label_b"], rule)


@dataclass(frozen=True)
class ThrowRead:
    """What one throw shows under seed 000: its Marks and the d20 Omen, if one was thrown."""

    marks: int
    omen: int | None
    scored: tuple[int, ...] = ()
    """Where the dice that scored Marks lie in the throw (none when Marks were entered)."""
    omen_at: int | None = None
    """Where the Omen die lies in the throw."""


def read_throw(context: RollContext, roll: Roll, rule: MarksRule) -> ThrowRead:
    """Marks (read from the tier dice, or entered by the GM), the Omen of a throw, and
    which of its dice scored."""
    stray = [d for d in roll.dice if d.kind not in (*TIERS, DieKind.D20)]
    if stray:
        raise RuleError(
            f"{stray[0].kind.value} is not part of a Tide roll: "
            "throw tier dice (d6/d8/d12) and at most one d20 Omen",
            field="dice",
        )
    omens = roll.faces(DieKind.D20)
    if len(omens) > 1:
        raise RuleError(
            f"{len(omens)} d20 in one throw: only one Omen die may be thrown", field="dice"
        )
    omen = omens[0] if omens else None
    omen_at = next((i for i, d in enumerate(roll.dice) if d.kind is DieKind.D20), None)
    marks = entered_marks(context)
    if marks is not None:
        return ThrowRead(marks, omen, omen_at=omen_at)
    pool = [d for d in roll.dice if d.kind in TIERS]
    _check_pool(context, pool)
    scored = tuple(
        i for i, d in enumerate(roll.dice) if d.kind in TIERS and rule.marks_for_face(d.face)
    )
    return ThrowRead(read_marks((d.face for d in pool), rule), omen, scored, omen_at)


def _check_pool(context: RollContext, pool: list[Any]) -> None:
    if not pool:
        raise RuleError(
            "no tier dice (d6/d8/d12) were read and no Marks were entered", field="dice"
        )
    kinds = {d.kind for d in pool}
    declared = tier(context)
    if len(kinds) > 1 or (declared is not None and kinds != {declared}):
        wanted = declared.value if declared else "one tier"
        shown = ", ".join(sorted(k.value for k in kinds))
        raise RuleError(
            f"the pool was declared as {wanted} but the tray shows {shown}", field="dice"
        )
    if context.pool is not None and len(pool) != context.pool:
        raise RuleError(
            f"the pool was declared as {context.pool} dice but the tray shows {len(pool)}",
            field="dice",
        )


@register
class TideSystem(RuleSystem[TideScene]):
    """Seed 000: Marks, opposed replies, and the shared Tide bar with its Omens."""

    name = "tide"
    state_type = TideScene

    def initial_state(self, settings: Mapping[str, JSONValue]) -> TideScene:
        return scene_from_settings(settings)

    def describe(self) -> Description:
        return DESCRIPTION

    def check_context(self, state: TideScene, context: RollContext) -> None:
        if context.mode:
            p.mode(context.mode, MODES)
        p.check_keys(context.params, OWN_FIELDS, "Tide field(s)")
        tier(context), entered_marks(context)  # each refuses a bad value, naming its field
        if context.pool is not None and context.pool < 0:
            raise RuleError(f"pool cannot be negative, got {context.pool}", field="pool")
        if linked(context) and context.side is None:
            raise RuleError("a Tide-linked roll needs a side ('a' or 'b')", field="side")

    def resolve(
        self,
        state: TideScene,
        context: RollContext,
        roll: Roll,
        earlier: Mapping[str, RollRecord],
    ) -> tuple[TideScene, Outcome]:
        self.check_context(state, context)
        read = read_throw(context, roll, state.marks_rule)
        if context.reply_to is not None:
            return _resolve_reply(state, context, read, earlier)
        return _resolve_opening(state, context, read)

    def bar(self, state: TideScene) -> BarState:
        track = state.track
        return BarState(
            system=self.name,
            low=0,
            high=track.length,
            position=track.marker,
            label_a=state.label_a,
            label_b=state.label_b,
            routed=track.routed,
            last_motion=track.last_motion,
        )

    def odds(
        self, state: TideScene, context: RollContext, earlier: Mapping[str, RollRecord]
    ) -> Odds | None:
        """Each Marks count of the declared pool and, when the roll can move the Tide, the
        chance it moves toward each side's collapse or holds (a Tide-linked roll is thrown
        with the d20 Omen), counted by resolving every Marks count with every Omen band."""
        marks = declared_marks(context, state.marks_rule)
        if marks is None or not _moves_tide_now(context, earlier):
            return marks
        after: dict[int, Fraction] = {}
        for count, chance in marks.distribution.items():
            for face, in_band in omen_bands(state.track).items():
                read = ThrowRead(count, face)
                if context.reply_to is None:
                    scene, _ = _resolve_opening(state, context, read)
                else:
                    scene, _ = _resolve_reply(state, context, read, earlier)
                position = scene.track.marker
                after[position] = after.get(position, Fraction(0)) + chance * in_band
        directions = tide_directions(state.track.marker, after, state.label_a, state.label_b)
        return dataclasses.replace(marks, outcomes=directions)

    def scored(self, outcome: Outcome) -> int | None:
        """The Marks the throw read, as its odds count them."""
        return p.counted(outcome.facts, "marks")

    def thrown_odds(
        self,
        state: TideScene,
        context: RollContext,
        roll: Roll,
        earlier: Mapping[str, RollRecord],
    ) -> Odds | None:
        pool = [d.kind for d in roll.dice if d.kind in TIERS]
        if tier(context) is None and pool and len(set(pool)) == 1:
            params = {**context.params, "tier": pool[0].value}
            thrown = context.pool if context.pool is not None else len(pool)
            context = dataclasses.replace(context, pool=thrown, params=params)
        return self.odds(state, context, earlier)

    def declared_dice(self, state: TideScene, context: RollContext) -> tuple[DieKind, ...] | None:
        die = tier(context)
        return None if die is None or context.pool is None else (die,) * context.pool

    def practice_turn(
        self,
        state: TideScene,
        history: Sequence[RollRecord],
        rng: random.Random,
        options: Mapping[str, JSONValue],
    ) -> PracticeTurn:
        if p.flag(options, "story"):
            return story_turn(state.track, history)
        last = history[-1] if history and history[-1].system == self.name else None
        return practice_turn(state.track, last, rng, options)


def marks_text(marks: int) -> str:
    """'1 Mark', '3 Marks'."""
    return f"{marks} Mark" + ("" if marks == 1 else "s")


def _moves_tide_now(context: RollContext, earlier: Mapping[str, RollRecord]) -> bool:
    """Whether resolving this roll can move the Tide: a reply in a linked exchange, or a
    linked roll that expects no reply (its Omen counts at once)."""
    if context.reply_to is not None:
        opening = earlier.get(context.reply_to)
        return linked(context) or (opening is not None and linked(opening.context))
    return linked(context) and context.mode not in AWAITS_REPLY


def _resolve_opening(
    state: TideScene, context: RollContext, read: ThrowRead
) -> tuple[TideScene, Outcome]:
    """A roll that replies to nothing: read its Marks; an unanswered Omen moves the bar now."""
    who = context.actor or "the roller"
    facts: dict[str, JSONValue] = {
        "marks": read.marks,
        "omen": read.omen,
        "tide_linked": linked(context),
        "scored": list(read.scored),
        "omen_die": None,
    }
    if context.mode in AWAITS_REPLY:
        facts["awaiting_reply"] = True
        return state, Outcome(f"{who}: {marks_text(read.marks)}, awaiting a reply", facts)
    track = dataclasses.replace(state.track)
    motions: list[Motion] = []
    if linked(context) and read.omen is not None:
        motion = track.apply_omen(read.omen)
        motions += [motion] if motion else []
        facts["omen_die"] = read.omen_at if motion else None
    facts["position"] = track.marker
    scene = dataclasses.replace(state, track=track)
    return scene, Outcome(
        f"{who}: {marks_text(read.marks)}" + _motion_text(motions), facts, tuple(motions)
    )


def _resolve_reply(
    state: TideScene, context: RollContext, read: ThrowRead, earlier: Mapping[str, RollRecord]
) -> tuple[TideScene, Outcome]:
    """A reply closes an exchange: margin on the Marks, and on the Tide if it is linked."""
    opening = _opening(context, earlier)
    margin = read.marks - p.whole(opening.outcome.facts, "marks")
    is_linked = linked(opening.context) or linked(context)
    winner_side = _winner_side(opening.context, context, margin, is_linked)
    winner_actor = _winner_actor(opening.context, context, margin)
    facts: dict[str, JSONValue] = {
        "marks": read.marks,
        "omen": read.omen,
        "reply_to": opening.id,
        "margin": abs(margin),
        "winner": winner_side,
        "tide_linked": is_linked,
        "winner_actor": winner_actor,
        "scored": list(read.scored),
        "omen_die": None,
    }
    track = dataclasses.replace(state.track)
    motions: list[Motion] = []
    if is_linked:
        first_reply = not any(r.context.reply_to == opening.id for r in earlier.values())
        opening_omen = p.optional_whole(opening.outcome.facts, "omen") if first_reply else None
        motions = track.exchange(winner_side, abs(margin) if winner_side else 0, opening_omen)
        if read.omen is not None:
            motion = track.apply_omen(read.omen)
            motions += [motion] if motion else []
            facts["omen_die"] = read.omen_at if motion else None
    facts["position"] = track.marker
    scene = dataclasses.replace(state, track=track)
    who = winner_actor or (scene.label(winner_side) if winner_side else "the winner")
    result = f"margin {abs(margin)} for {who}" if margin else "a tie: neither side gains"
    summary = f"{marks_text(read.marks)} in reply: {result}"
    summary += _motion_text(motions) + _where(track, is_linked)
    return scene, Outcome(summary, facts, tuple(motions))


def _opening(context: RollContext, earlier: Mapping[str, RollRecord]) -> RollRecord:
    assert context.reply_to is not None
    opening = earlier.get(context.reply_to)
    if opening is None:
        raise RuleError(f"reply to unknown roll {context.reply_to!r}", field="reply_to")
    if "marks" not in opening.outcome.facts:
        raise RuleError(f"roll {opening.id} has no Marks to reply to", field="reply_to")
    return opening


def _winner_side(
    opening: RollContext, reply: RollContext, margin: int, linked: bool
) -> Side | None:
    if linked and (opening.side is None or reply.side is None or opening.side == reply.side):
        raise RuleError(
            "a Tide-linked reply must come from the other side: "
            f"opening side {opening.side!r}, reply side {reply.side!r}",
            field="side",
        )
    if margin == 0:
        return None
    return reply.side if margin > 0 else opening.side


def _winner_actor(opening: RollContext, reply: RollContext, margin: int) -> str | None:
    if margin == 0:
        return None
    return reply.actor if margin > 0 else opening.actor


def _where(track: TideTrack, linked: bool) -> str:
    if not linked:
        return f"; personal: the bar stays at {track.marker}"
    return f"; the bar stands at {track.marker}"


def _motion_text(motions: list[Motion]) -> str:
    return "".join(f"; {m.cause}: {m.before} → {m.after}" for m in motions)
