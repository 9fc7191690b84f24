"""The retained `stats`: the session's dice, the bar's story and the table's luck, on the
wire (its models and how the tower builds them from the session, engine/stats.py,
engine/barline.py and engine/luck.py doing the counting)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, Field

from tidetower.engine.barline import Step
from tidetower.engine.codec import dump
from tidetower.engine.digest import summary_before
from tidetower.engine.luck import Throw
from tidetower.engine.rules import RollRecord, Side
from tidetower.engine.session import SessionState
from tidetower.engine.stats import DieSummary, dice_of, summaries
from tidetower.engine.store import SessionStore
from tidetower.engine.summary import KEPT_STEPS, Summary, SummaryWalk
from tidetower.engine.tray import DieName
from tidetower.mqtt.payloads import Published, TrackerBody
from tidetower.mqtt.views import tracker_body

TRACK_LENGTH = KEPT_STEPS
"""The most moves `stats` carries one by one (the latest 250, some 35 kB); those before are
counted in `track.earlier`, so a year of play stays far inside a broker's packet limit (1 MiB
on the tower's own Mosquitto) and the page's memory."""


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


class EarlierMoves(BaseModel):
    """The moves of the bar before the points `stats` carries, summarised."""

    moves: int = Field(description="how many moves came before the first point")
    before_seq: int = Field(description="the seq of the first point: they all came before it")


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
        [], description="the moves, oldest first: the latest 250 (stats.TRACK_LENGTH)"
    )
    earlier: EarlierMoves | None = Field(
        None, description="the moves before the points, counted only; null: none"
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
    rolls: int = Field(description="the rolls counted: the session's whole history, stored")
    dice: list[DieStats] = Field([], description="each die thrown, by name or kind")
    track: TrackBody
    luck: LuckBody = Field(default_factory=LuckBody, description="the luck against the odds")


def stats_payload(state: SessionState) -> StatsPayload:
    """The retained `stats`: each die's fairness figures over the session's whole history,
    the bar's moves under the active system and the table's luck, worked out afresh."""
    return SessionStats().payload(state)


Older = Callable[[int], Summary]
"""The summary of a session's stored rolls before a seq."""


def kept_before(store: SessionStore, report: Callable[[str], None]) -> Older:
    """What summarises the rolls of `store` that a table does not hold: from the summary kept
    in it and the rolls after that, read read-only; kept again as it reaches further
    (engine/digest.py); a row that cannot be read is named through `report`."""
    return lambda before: summary_before(store.path, store, before, report)


class SessionStats:
    """A session's `stats` kept up to date: a state whose history extends the one counted
    last (the same rolls, new ones after them) counts only its new rolls; any other (an
    undo, another session or system) is counted again from its first roll held. The rolls
    stored before those held (`SessionState.earlier`) are summarised once, by `older`."""

    def __init__(self, older: Older | None = None) -> None:
        """Nothing counted yet; `older` reads the rolls not held (None: there are none)."""
        self._lock = threading.Lock()  # the outbox thread and a reconnect may both ask
        self._walked: _Walked | None = None
        self._older = older
        self._before: tuple[tuple[str, int], Summary] | None = None

    def payload(self, state: SessionState) -> StatsPayload:
        """The retained `stats` of `state`."""
        with self._lock:
            walked = self._walked
            if walked is None or not walked.extended_by(state):
                walked = self._walked = _Walked(state.system)
            walked.walk(state.history)
            found = self._earlier(state).then(walked.walk_summary.summary())
            return _payload(state, found)

    def _earlier(self, state: SessionState) -> Summary:
        """The summary of the rolls stored before those `state` holds, read once."""
        if not state.earlier or self._older is None:
            return Summary()
        first = state.history[0].seq if state.history else state.next_seq
        key = (state.session_id, first)
        if self._before is None or self._before[0] != key:
            self._before = (key, self._older(first))
        return self._before[1]


class _Walked:
    """The rolls of one system's session held and counted so far."""

    def __init__(self, system: str) -> None:
        self.system = system
        self.counted: tuple[RollRecord, ...] = ()
        self.walk_summary = SummaryWalk()

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
            self.walk_summary.add(dice_of(record), record)
        self.counted = history


def _payload(state: SessionState, found: Summary) -> StatsPayload:
    """The payload from the summary of the session's rolls."""
    bar = state.bar()
    points = track_points(found.steps(state.system), found.seqs)
    return StatsPayload(
        session_id=state.session_id,
        rolls=state.rolls,
        dice=[die_stats(s) for s in summaries(found.dice.elements())],
        track=TrackBody(
            low=bar.low,
            high=bar.high,
            label_a=bar.label_a,
            label_b=bar.label_b,
            colour_a=bar.colour_a,
            colour_b=bar.colour_b,
            tracker=tracker_body(dump(bar)),
            moves=found.moves_of(state.system),
            points=points,
            earlier=earlier_moves(found, state.system),
        ),
        luck=luck_body(found),
    )


LUCK_TOP = 3
"""The best and worst throws `stats` carries."""


def luck_body(found: Summary) -> LuckBody:
    """The session's luck in the shape of `tidetower stats luck --json`, a few throws each."""
    return LuckBody(
        throws=found.throws,
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
            for t in found.tallies
        ],
        best=[luck_throw(t, found.seqs) for t in found.best[:LUCK_TOP]],
        worst=[luck_throw(t, found.seqs) for t in found.worst[:LUCK_TOP]],
        uncounted=sum(found.uncounted.values()),
        reasons=[LuckReason(reason=r, count=n) for r, n in found.uncounted.items()],
        moves=found.moves,
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


def track_points(steps: Iterable[Step], seqs: Mapping[str, int]) -> list[TrackPoint]:
    """The throws that moved the bar, each from where it stood to where it was left, with the
    bar it left (its range, the side it routed): engine.barline's story of the session."""
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
        for step in steps
    ]


def earlier_moves(found: Summary, system: str) -> EarlierMoves | None:
    """What the moves of `system`'s bar before the points shown add up to (None: every
    move is shown)."""
    steps = found.steps(system)
    moved = sum(1 for step in steps if step.moved)
    if found.moves_of(system) <= moved:
        return None
    first = track_points(steps[:1], found.seqs)
    return EarlierMoves(
        moves=found.moves_of(system) - moved, before_seq=first[0].seq if first else 0
    )
