"""The retained `stats`: the session's dice, the bar's story and the table's luck, on the
wire (its models and how the tower builds them from the session, engine/stats.py,
engine/barline.py and engine/luck.py doing the counting)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, Field

from tidetower.engine.barline import Barline
from tidetower.engine.codec import dump
from tidetower.engine.luck import Luck, LuckWalk, Throw
from tidetower.engine.rules import RollRecord, Side
from tidetower.engine.session import SessionState
from tidetower.engine.stats import Counted, DieSummary, dice_of, summaries
from tidetower.engine.tray import DieName
from tidetower.mqtt.payloads import Published, TrackerBody
from tidetower.mqtt.views import tracker_body

TRACK_LENGTH = 1000
"""The most moves `stats` carries (the latest): some 170 kB, far inside a broker's packet
limit (1 MiB on the tower's own Mosquitto) however long the session."""


class FaceCount(BaseModel):
    """How often a die showed one face."""

    face: int
    count: int


class DieStats(BaseModel):
    """One die's throws this session and what they say about its fairness (the figures of
    `tidetower stats dice --json`, engine/stats.py)."""

    die: DieName = Field(description="as the camera counts: a d100 is its tens and units d10s")
    named: str | None = Field(
        None, description="the physical die, where the reader told it ('white omen', 'red d20')"
    )
    throws: int
    typed: int = Field(description="how many of its throws the GM typed or corrected")
    faces: dict[str, int] = Field(description="each face and how often it came up")
    expected: float = Field(description="how often a fair die would show each face")
    chi2: float
    df: int
    p: float = Field(description="how often a fair die would look at least this uneven")
    most: FaceCount
    least: FaceCount
    throws_needed: int = Field(description="throws that would tell a 10 % bias on one face")
    more_needed: int
    verdict: str = Field(description='in words; a small sample is "too few throws to tell"')


class TrackPoint(BaseModel):
    """One roll that moved the bar: who threw it, where the marker went and why."""

    seq: int
    id: str
    who: str = Field(description="the roll's roller, else the declared actor")
    before: int
    after: int
    cause: str = Field(description="what moved it (the causes, joined, if it moved twice)")
    routed: Side | None = Field(None, description="the side routed by this move, if any")
    low: int = Field(description="the bar's low end after the move (set-ups may change it)")
    high: int = Field(description="the bar's high end after the move")


class TrackBody(BaseModel):
    """The bar's position over the session: its range, sides and each move."""

    low: int
    high: int
    label_a: str
    label_b: str
    colour_a: str
    colour_b: str
    tracker: TrackerBody | None = Field(None, description="what it is: kind and end words")
    moves: int = Field(0, description="the moves under the active system this session")
    points: list[TrackPoint] = Field(
        [], description="the moves, oldest first: the latest 1,000 (views.TRACK_LENGTH)"
    )


class LuckTally(BaseModel):
    """One actor's or side's throws of one count: the sum the odds expected against the sum
    rolled (engine/luck.py `Tally`)."""

    by: Literal["actor", "side"]
    name: str = Field(description='the actor, or "side a", "side b", "no side"')
    counts: str = Field(description="what the odds count, in the system's own word")
    throws: int
    expected: float = Field(description="the sum the odds expected")
    rolled: int = Field(description="the sum rolled")
    z: float = Field(description="standard deviations of the sum from the sum expected")
    p: float = Field(description="two-sided chance of a sum this far out (normal approx.)")
    verdict: str = Field(description='in words; a few throws are "too few throws to tell"')


class LuckThrow(BaseModel):
    """One throw set against its odds: the luckiest or unluckiest of the session."""

    id: str
    seq: int
    who: str = Field(description="the declared actor, else the side")
    side: Side | None = None
    counts: str
    dice: str = Field(description="the throw the odds were of, as the system writes it")
    rolled: int
    label: str = Field(description="the table's name for the value rolled, else the value")
    expected: float = Field(description="what the odds expected of this throw")
    chance: float = Field(description="the chance of rolling at least as much")
    chance_at_most: float = Field(description="the chance of rolling at most as much")


class LuckReason(BaseModel):
    """Why some throws have no odds to set them against, and how many."""

    reason: str
    count: int


class LuckBody(BaseModel):
    """The session's luck against the odds, for the page's Luck panel (engine/luck.py)."""

    throws: int = Field(0, description="the throws counted against their odds")
    tallies: list[LuckTally] = Field([], description="per actor, then per side, each count")
    best: list[LuckThrow] = Field([], description="the 3 least likely to score as much")
    worst: list[LuckThrow] = Field([], description="the 3 least likely to score as little")
    uncounted: int = Field(0, description="the throws with no odds to set them against")
    reasons: list[LuckReason] = []
    moves: int = Field(0, description="the moves of the bar in these throws, any system")


class StatsPayload(Published):
    """Retained `stats`: every die's fairness figures over the session's rolls, the bar's
    moves over the session and the table's luck against the odds, for the page's Dice, "Bar
    over the session" and Luck panels."""

    session_id: str
    rolls: int = Field(description="the rolls counted: the session's whole history")
    dice: list[DieStats] = Field([], description="each die thrown, by name or kind")
    track: TrackBody
    luck: LuckBody = Field(default_factory=LuckBody, description="the luck against the odds")


def stats_payload(state: SessionState) -> StatsPayload:
    """The retained `stats`: each die's fairness figures over the session's whole history,
    the bar's moves under the active system and the table's luck, worked out afresh."""
    return SessionStats().payload(state)


class SessionStats:
    """A session's `stats` kept up to date: a state whose history extends the one counted
    last (the same rolls, new ones after them) counts only its new rolls; any other (an
    undo, another session or system) is counted again from its first roll."""

    def __init__(self) -> None:
        """Nothing counted yet."""
        self._lock = threading.Lock()  # the outbox thread and a reconnect may both ask
        self._walked: _Walked | None = None

    def payload(self, state: SessionState) -> StatsPayload:
        """The retained `stats` of `state`."""
        with self._lock:
            walked = self._walked
            if walked is None or not walked.extended_by(state):
                walked = self._walked = _Walked(state.system)
            walked.walk(state.history)
            return _payload(state, walked.dice, walked.bar.line(), walked.luck.luck())


class _Walked:
    """The rolls of one system's session counted so far: dice, luck and the bar's story."""

    def __init__(self, system: str) -> None:
        self.system = system
        self.counted: tuple[RollRecord, ...] = ()
        self.dice: list[Counted] = []
        self.luck = LuckWalk()
        self.bar = self.luck.bars.walk(system)  # one walk of the bar: the moves luck counts

    def extended_by(self, state: SessionState) -> bool:
        """Whether `state` holds the rolls counted, the very same ones, and maybe more."""
        history = state.history
        return (
            state.system == self.system
            and len(history) >= len(self.counted)
            and all(a is b for a, b in zip(self.counted, history, strict=False))
        )

    def walk(self, history: tuple[RollRecord, ...]) -> None:
        """Count the rolls of `history` after those counted."""
        for record in history[len(self.counted) :]:
            self.dice.extend(dice_of(record))
            self.luck.add(record)
        self.counted = history


def _payload(
    state: SessionState, dice: list[Counted], line: Barline | None, found: Luck
) -> StatsPayload:
    """The payload from the session's counted dice, its bar's story and its luck."""
    seqs = {r.id: r.seq for r in state.history}
    points = track_points(line, seqs)
    bar = state.bar()
    return StatsPayload(
        session_id=state.session_id,
        rolls=len(state.history),
        dice=[die_stats(s) for s in summaries(dice)],
        track=TrackBody(
            low=bar.low,
            high=bar.high,
            label_a=bar.label_a,
            label_b=bar.label_b,
            colour_a=bar.colour_a,
            colour_b=bar.colour_b,
            tracker=tracker_body(dump(bar)),
            moves=line.moves if line else 0,
            points=points[-TRACK_LENGTH:],
        ),
        luck=luck_body(found, seqs),
    )


LUCK_TOP = 3
"""The best and worst throws `stats` carries."""


def luck_body(found: Luck, seqs: Mapping[str, int]) -> LuckBody:
    """The session's luck in the shape of `tidetower stats luck --json`, a few throws each."""
    reasons = Counter(u.reason for u in found.uncounted)
    return LuckBody(
        throws=len(found.throws),
        tallies=[
            LuckTally(
                by="actor" if t.by == "actor" else "side",
                name=t.name,
                counts=t.counts,
                throws=t.throws,
                expected=t.expected,
                rolled=t.rolled,
                z=t.z,
                p=t.p,
                verdict=t.verdict,
            )
            for t in found.tallies()
        ],
        best=[luck_throw(t, seqs) for t in found.best(LUCK_TOP)],
        worst=[luck_throw(t, seqs) for t in found.worst(LUCK_TOP)],
        uncounted=len(found.uncounted),
        reasons=[LuckReason(reason=r, count=n) for r, n in reasons.items()],
        moves=len(found.moves),
    )


def luck_throw(t: Throw, seqs: Mapping[str, int]) -> LuckThrow:
    """One throw against its odds: who, which, what it scored and how likely that was."""
    return LuckThrow(
        id=t.who.id,
        seq=seqs.get(t.who.id, 0),
        who=t.who.name,
        side=t.who.side,
        counts=t.shape.counts,
        dice=t.shape.dice,
        rolled=t.rolled,
        label=t.label,
        expected=t.shape.mean,
        chance=t.chance,
        chance_at_most=t.below,
    )


def die_stats(summary: DieSummary) -> DieStats:
    """One die's figures, in the shape of `tidetower stats dice --json`."""
    (most, most_n), (least, least_n) = summary.most, summary.least
    return DieStats(
        die=summary.kind,
        named=summary.name if summary.name != summary.kind else None,
        throws=summary.throws,
        typed=summary.typed,
        faces={str(f): c for f, c in zip(summary.faces, summary.counts, strict=True)},
        expected=summary.expected,
        chi2=summary.chi2,
        df=len(summary.faces) - 1,
        p=summary.p,
        most=FaceCount(face=most, count=most_n),
        least=FaceCount(face=least, count=least_n),
        throws_needed=summary.needed,
        more_needed=max(0, summary.needed - summary.throws),
        verdict=summary.verdict,
    )


def track_points(line: Barline | None, seqs: Mapping[str, int]) -> list[TrackPoint]:
    """The throws that moved the bar, each from where it stood to where it was left, with the
    bar it left (its range, the side it routed): engine.barline's story of the session."""
    if line is None:
        return []
    return [
        TrackPoint(
            seq=seqs.get(step.who.id, 0),
            id=step.who.id,
            who=step.who.name,
            before=step.before,
            after=step.after,
            cause="; ".join(step.causes),
            routed=step.routed,
            low=step.low,
            high=step.high,
        )
        for step in line.steps
        if step.moved or step.routed
    ]
