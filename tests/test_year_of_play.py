"""A year of play (issue 37): a tower holds only its latest rolls, the older ones stay in the
store and are counted by the retained `stats`, which stays bounded however long the session."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tidetower.engine import session as pure
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.session import SessionState
from tidetower.engine.store import SessionStore
from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead, Reading, roll_of
from tidetower.mqtt.stats import TRACK_LENGTH, SessionStats, stats_payload, stored_before

POOL = RollContext(
    actor="Zhao", side="a", mode="unopposed", pool=4, params={"tide_linked": True, "tier": "d8"}
)


def _throw(state: SessionState, rng: random.Random, at: float) -> SessionState:
    """Four d8 and a d20 as the camera reads them, an omen of 1 or 20 (one that moves the
    bar, as a rule); a routed Tide is set up afresh first."""
    read = tuple(DieRead("d8", rng.randint(1, 8), (0.1 * i, 0.1, 0.2, 0.2), 0.9) for i in range(4))
    read += (DieRead("d20", rng.choice((1, 20)), (0.6, 0.5, 0.7, 0.6), 0.9, typed=at % 7 == 0),)
    if state.bar().routed:
        state = pure.reset_tracker(state, {}, at)
    return pure.record_roll(state, roll_of(Reading(read)), POOL, at=at, reading=read)[0]


@pytest.fixture(scope="module")
def year(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SessionState]:
    """A store of 700 Tide throws, and the session with all of them held."""
    path = tmp_path_factory.mktemp("year") / "year.db"
    rng = random.Random(37)
    state = pure.new_session("year", "tide", None)
    for n in range(700):
        state = _throw(state, rng, 1_000.0 + n)
    with SessionStore(path) as store:
        store.save(state)
    return path, state


def test_a_tower_holds_its_latest_rolls_and_counts_the_rest(year: tuple[Path, SessionState]):
    path, whole = year
    with SessionStore(path, read_only=True) as store:
        held = store.load(recent=100)
    assert held is not None
    assert [r.id for r in held.history] == [r.id for r in whole.history[-100:]]
    assert (held.earlier, held.rolls) == (600, 700)
    assert held.tracker == whole.tracker


def test_a_save_keeps_the_rolls_not_held_and_undo_stops_at_them(
    year: tuple[Path, SessionState], tmp_path: Path
):
    copy = tmp_path / "copy.db"
    copy.write_bytes(year[0].read_bytes())
    with Table(copy, recent=2) as table:
        table.undo()
        table.undo()
        with pytest.raises(RuleError, match="out of undo's reach"):
            table.undo()
    with SessionStore(copy, read_only=True) as store:
        after = store.load()
    assert after is not None
    assert after.rolls == len(after.history) == 698  # only the two undone rolls are gone


def test_stats_of_a_tower_holding_its_latest_rolls_count_the_whole_session(
    year: tuple[Path, SessionState],
):
    path, whole = year
    with SessionStore(path, read_only=True) as store:
        held = store.load(recent=100)
    assert held is not None
    problems: list[str] = []
    kept = SessionStats(stored_before(path, problems.append)).payload(held)
    full = stats_payload(whole)
    assert kept.rolls == full.rolls == 700
    assert kept.dice == full.dice
    assert kept.luck == full.luck
    assert kept.track.moves == full.track.moves
    assert kept.track.points == full.track.points
    assert problems == []


def test_the_retained_stats_stays_bounded_and_counts_the_moves_before_its_points(
    year: tuple[Path, SessionState],
):
    found = stats_payload(year[1])
    points, earlier = found.track.points, found.track.earlier
    assert found.track.moves > TRACK_LENGTH, "the store must move the bar more than is shown"
    assert len(points) == TRACK_LENGTH
    assert earlier is not None
    assert earlier.moves + sum(p.before != p.after or bool(p.cause) for p in points) == (
        found.track.moves
    )
    assert earlier.before_seq == points[0].seq
    assert points[-1].seq == max(p.seq for p in points)
