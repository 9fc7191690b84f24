"""Seed 002's d6-pool rules as pure functions: reading a pool, outcomes, contests,
auctions, fortune rolls, resistance and clocks. The rule system (system.py, its modes
in actions.py) wraps these; exact odds are counted in odds.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from tidetower.engine.rules import RuleError

Result = Literal["bad", "partial", "full"]
RESULTS: tuple[Result, ...] = ("bad", "partial", "full")

# The likelihood ladder of fortune rolls (section 3.8): 1d6 must reach the TN.
LIKELIHOOD: dict[str, int] = {
    "certain": 1,
    "likely": 2,
    "probable": 3,
    "even": 4,
    "unlikely": 5,
    "remote": 6,
    "impossible": 7,
}
CLOCK_KINDS = ("progress", "danger")
MAX_CLOCK = 16

THRESHOLDS = (3, 4)


def check_threshold(threshold: int) -> int:
    """`threshold` if it is a hit threshold of the game (3+ skill, 4+ Strike/Defend)."""
    if threshold not in THRESHOLDS:
        raise RuleError(
            f"threshold must be 3 (skill) or 4 (Strike/Defend), got {threshold!r}",
            field="threshold",
        )
    return threshold


def check_difficulty(difficulty: int) -> int:
    """`difficulty` if it is a whole number of hits of at least 1."""
    if not isinstance(difficulty, int) or isinstance(difficulty, bool) or difficulty < 1:
        raise RuleError(
            f"difficulty must be a whole number of at least 1, got {difficulty!r}",
            field="difficulty",
        )
    return difficulty


def traitor_dice(rating: int) -> int:
    """Dice thrown at an action rating below 1: 2 - rating (rating 0 → 2 dice)."""
    return 2 - rating


@dataclass(frozen=True)
class PoolRead:
    """One action roll as the tray shows it: hits, 6s, the bonus dice of its chain."""

    rating: int
    threshold: int
    faces: tuple[int, ...]
    hits: int
    sixes: int
    bonus_dice: int

    @property
    def traitor(self) -> bool:
        """True when traitor dice were thrown (rating below 1)."""
        return self.rating < 1

    @property
    def exploded(self) -> bool:
        """True when a pair of 6s spawned at least one bonus die."""
        return self.bonus_dice > 0


def _chain_error(dice: int, faces: Sequence[int]) -> str | None:
    """Why `faces` are not `dice` pool dice plus exactly their bonus dice, or None.

    The tray is read as a set, so the chain is checked with 6s thrown as early as
    possible: the only order in which the most bonus dice can be owed.
    """
    bonus = len(faces) - dice
    if bonus < 0:
        return f"the pool is {dice} dice but the tray shows {len(faces)}"
    sixes = faces.count(6)
    first = min(sixes, dice)
    pending, unmatched, later = first // 2, first % 2, sixes - first
    for thrown in range(bonus):
        if pending == 0:
            return (
                f"{len(faces)} dice for a pool of {dice}: its pairs of 6s call for "
                f"{thrown} bonus dice, not {bonus}"
            )
        pending -= 1
        if later:
            later, unmatched = later - 1, unmatched + 1
            if unmatched == 2:
                pending, unmatched = pending + 1, 0
    if pending:
        return (
            f"the pairs of 6s call for {bonus + pending} bonus dice but the tray shows "
            f"{bonus}: throw the {pending} missing bonus dice"
        )
    return None


def check_faces(faces: Iterable[int]) -> tuple[int, ...]:
    """The faces as a tuple, if every one is a d6 face."""
    out = tuple(faces)
    for face in out:
        if not isinstance(face, int) or isinstance(face, bool) or not 1 <= face <= 6:
            raise RuleError(f"a d6 cannot show {face!r}: faces are 1..6", field="dice")
    return out


def read_pool(faces: Iterable[int], rating: int, threshold: int = 3) -> PoolRead:
    """Read an action roll at `rating` (net dice; below 1 throws 2 - rating traitor dice)."""
    shown = check_faces(faces)
    check_threshold(threshold)
    if rating < 1:
        return _read_traitor(shown, rating, threshold)
    error = _chain_error(rating, shown)
    if error:
        raise RuleError(error, field="dice")
    hits = sum(1 for f in shown if f >= threshold)
    return PoolRead(rating, threshold, shown, hits, shown.count(6), len(shown) - rating)


def _read_traitor(faces: tuple[int, ...], rating: int, threshold: int) -> PoolRead:
    """Traitor dice: one hit only if every die hits; they never explode."""
    dice = traitor_dice(rating)
    if len(faces) != dice:
        raise RuleError(
            f"rating {rating} throws {dice} traitor dice but the tray shows {len(faces)}",
            field="dice",
        )
    scored = all(f >= threshold for f in faces)
    return PoolRead(rating, threshold, faces, int(scored), faces.count(6) if scored else 0, 0)


def outcome(hits: int, difficulty: int) -> tuple[Result, int]:
    """Full (more hits than the difficulty), partial (equal) or bad, and the excess hits."""
    if hits > difficulty:
        return "full", hits - difficulty
    return ("partial" if hits == difficulty else "bad"), 0


def clock_ticks(result: Result, excess: int) -> int:
    """Segments a roll ticks on a progress or harm clock: partial 1, full 1 + excess."""
    return {"bad": 0, "partial": 1, "full": 1 + excess}[result]


def contest(a: tuple[int, int], b: tuple[int, int]) -> tuple[Literal["a", "b"] | None, int, str]:
    """Winner of a contest of (hits, 6s): more hits, then more 6s, else a draw; excess; why."""
    if a[0] != b[0]:
        winner: Literal["a", "b"] = "a" if a[0] > b[0] else "b"
        return winner, abs(a[0] - b[0]), "more hits"
    if a[1] != b[1]:
        return ("a" if a[1] > b[1] else "b"), 0, "tied on hits, more 6s"
    return None, 0, "tied on hits and 6s: a draw"


def result_rank(result: Result, excess: int) -> tuple[int, int]:
    """Sort key of results for group actions: full beats partial beats bad, then excess."""
    return RESULTS.index(result), excess


def fortune_target(likelihood: str, modifier: int = 0) -> int:
    """Target number on the likelihood ladder, shifted by the modifier (+1 → TN - 1)."""
    if likelihood not in LIKELIHOOD:
        raise RuleError(
            f"unknown likelihood {likelihood!r}: expected one of {', '.join(LIKELIHOOD)}",
            field="likelihood",
        )
    if not isinstance(modifier, int) or isinstance(modifier, bool):
        raise RuleError(f"modifier must be a whole number, got {modifier!r}", field="modifier")
    return min(max(LIKELIHOOD[likelihood] - modifier, 1), 7)


def resistance_cost(faces: Sequence[int], zero_dice: bool = False) -> int:
    """Stress a resistance roll costs: 6 - highest die; two or more 6s clear 1 (-1).

    With zero dice (attribute 0) the table throws two dice and keeps the lowest;
    such a roll never clears stress.
    """
    check_faces(faces)
    if zero_dice:
        return 6 - min(faces)
    return -1 if faces.count(6) >= 2 else 6 - max(faces)


@dataclass(frozen=True)
class Clock:
    """A progress or danger clock: `filled` of `size` segments; `rival` names its race."""

    name: str
    size: int
    filled: int = 0
    kind: str = "progress"
    rival: str | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise RuleError("a clock needs a name", field="clock")
        if not isinstance(self.size, int) or not 2 <= self.size <= MAX_CLOCK:
            raise RuleError(
                f"clock size must be 2..{MAX_CLOCK} segments, got {self.size!r}", field="size"
            )
        if not isinstance(self.filled, int) or not 0 <= self.filled <= self.size:
            raise RuleError(
                f"clock filled must be 0..{self.size}, got {self.filled!r}", field="filled"
            )
        if self.kind not in CLOCK_KINDS:
            raise RuleError(
                f"clock kind must be progress or danger, got {self.kind!r}", field="kind"
            )

    @property
    def full(self) -> bool:
        """True once every segment is filled: the obstacle is overcome or the threat lands."""
        return self.filled == self.size

    def tick(self, segments: int) -> Clock:
        """The clock after `segments` more (negative clears), kept within 0..size."""
        filled = min(max(self.filled + segments, 0), self.size)
        return Clock(self.name, self.size, filled, self.kind, self.rival)


@dataclass(frozen=True)
class Bid:
    """One participant of an auction: hidden hits, their 6s, and the bid once made."""

    name: str
    hits: int
    sixes: int = 0
    bid: int | None = None


def check_bid(bids: Sequence[Bid], name: str, bid: int, rule: str) -> None:
    """Raise RuleError unless `name` may bid `bid` now under the auction `rule`."""
    if not isinstance(bid, int) or isinstance(bid, bool) or bid < 1:
        raise RuleError(f"bid must be a whole number of at least 1, got {bid!r}", field="bid")
    entry = next((b for b in bids if b.name == name), None)
    if entry is None:
        raise RuleError(f"{name!r} has not rolled in this auction", field="actor")
    if entry.bid is not None:
        raise RuleError(
            f"{name} already bid {entry.bid}: your first bid is your only bid", field="actor"
        )
    made = [b.bid for b in bids if b.bid is not None]
    if rule == "raise" and made and bid != 1 and bid <= max(made):
        raise RuleError(
            f"bid {bid} must raise the highest bid {max(made)} or be a one-bid (1)", field="bid"
        )


def auction_winners(bids: Sequence[Bid]) -> tuple[tuple[str, ...], str]:
    """Who wins (one name, or several for a draw): highest hits + bid, then hits alone."""
    if not bids or any(b.bid is None for b in bids):
        raise RuleError("every participant must bid before the hits are revealed")
    best = max(b.hits + (b.bid or 0) for b in bids)
    tied = [b for b in bids if b.hits + (b.bid or 0) == best]
    if len(tied) == 1:
        return (tied[0].name,), f"highest total {best}"
    top = max(b.hits for b in tied)
    leaders = tuple(b.name for b in tied if b.hits == top)
    why = f"tied at {best}, " + ("more hits" if len(leaders) == 1 else "tied on hits: a draw")
    return leaders, why
