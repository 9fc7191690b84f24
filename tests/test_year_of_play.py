"""A year of play (issue 37): a tower holds only its latest rolls, the older ones stay in the
store and are counted by the retained `stats`, which stays bounded however long the session."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tidetower.engine import digest
from tidetower.engine import session as pure
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.session import SessionState
from tidetower.engine.store import SessionStore
from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead, Reading, roll_of
from tidetower.firmware.cli import main
from tidetower.mqtt.stats import (
    TRACK_LENGTH,
    SessionStats,
    StatsPayload,
    kept_before,
    stats_payload,
)

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
    with SessionStore(path, read_only=True) as store:
        kept = SessionStats(kept_before(store, problems.append)).payload(held)
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


def _tower_stats(path: Path, recent: int, problems: list[str] | None = None) -> StatsPayload:
    """The first retained `stats` of a tower started on `path` holding its latest rolls."""
    said = [] if problems is None else problems
    with Table(path, recent=recent) as table:
        return SessionStats(kept_before(table.store, said.append)).payload(table.state)


def _copy(year: tuple[Path, SessionState], tmp_path: Path) -> Path:
    copy = tmp_path / "copy.db"
    copy.write_bytes(year[0].read_bytes())
    return copy


def _luck_text(path: Path, *args: str) -> str:
    found = CliRunner().invoke(main, ["stats", "luck", "--store", str(path), *args])
    assert found.exit_code == 0, found.output
    return found.output


def _luck_without_summary(path: Path, tmp_path: Path) -> str:
    """`stats luck` on a copy of `path` that keeps no summary: from every roll."""
    bare = tmp_path / "bare.db"
    bare.write_bytes(path.read_bytes())
    with sqlite3.connect(bare) as db:
        db.execute("DELETE FROM summary")
    return _luck_text(bare)


def test_a_tower_keeps_the_summary_in_its_store_and_reads_only_it_and_its_rolls_after(
    year: tuple[Path, SessionState], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    copy, full = _copy(year, tmp_path), stats_payload(year[1])
    assert _tower_stats(copy, 100) == full  # the first start after the upgrade reads them all
    with SessionStore(copy, read_only=True) as store:
        kept = store.kept_summary()
    assert kept is not None and kept[0] == year[1].history[-100].seq
    read: list[tuple[int, int | None]] = []
    real = digest.walked
    monkeypatch.setattr(
        digest,
        "walked",
        lambda s, first=0, before=None: read.append((first, before)) or real(s, first, before),
    )
    assert _tower_stats(copy, 100) == full
    assert read == [(kept[0], kept[0])]  # the summary kept, and not one roll before it
    assert _tower_stats(copy, 40) == full  # holding fewer: the 60 rolls between are read
    assert read[-1] == (kept[0], year[1].history[-40].seq)


def test_stats_luck_from_the_summary_kept_says_what_the_whole_history_says(
    year: tuple[Path, SessionState], tmp_path: Path
):
    copy = _copy(year, tmp_path)
    whole = _luck_text(copy)  # no summary kept yet: every roll read
    for args in (["--json"], ["--actor", "Zhao"], ["--top", "5"], ["--moves", "300"]):
        assert _luck_text(copy, *args)
    _tower_stats(copy, 100)
    with SessionStore(copy, read_only=True) as store:
        assert store.kept_summary() is not None
    assert _luck_text(copy) == whole
    assert _luck_text(copy, "--moves", "0", "--top", "1") == _luck_text(
        year[0], "--moves", "0", "--top", "1"
    )


def test_an_undo_behind_the_summary_drops_it_and_the_stats_stay_whole(
    year: tuple[Path, SessionState], tmp_path: Path
):
    copy, whole = _copy(year, tmp_path), year[1]
    reach = sum(1 for r in whole.history if r.seq > (whole.set_up_after or 0))
    assert reach >= 4, "undo must reach behind the summary"
    _tower_stats(copy, reach // 2)
    with Table(copy) as table:  # every roll held, as `session undo` holds them
        for _ in range(reach):
            table.undo()
        after = table.state
    with SessionStore(copy, read_only=True) as store:
        assert store.kept_summary() is None
    assert _tower_stats(copy, 100) == stats_payload(after)
    assert _luck_text(copy) == _luck_without_summary(copy, tmp_path)  # kept again, whole


@pytest.mark.parametrize("how", ["no table", "not JSON", "another version"])
def test_a_store_without_a_summary_or_a_bad_one_makes_it_again(
    year: tuple[Path, SessionState], tmp_path: Path, how: str
):
    copy = _copy(year, tmp_path)
    _tower_stats(copy, 100)
    with sqlite3.connect(copy) as db:
        if how == "no table":  # a store of today's schema, as the towers before this wrote it
            db.execute("DROP TABLE summary")
        else:
            body = "{" if how == "not JSON" else json.dumps({"version": 0})
            db.execute("UPDATE summary SET body = ?", (body,))
    assert _tower_stats(copy, 100) == stats_payload(year[1])
    with SessionStore(copy, read_only=True) as store:
        assert store.kept_summary() is not None


def test_a_bad_row_behind_the_summary_is_named_at_every_start_and_by_stats_luck(
    year: tuple[Path, SessionState], tmp_path: Path
):
    copy = _copy(year, tmp_path)
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE rolls SET body = 'not json' WHERE seq = 5")
    for _ in range(2):  # the summary made, then read
        problems: list[str] = []
        _tower_stats(copy, 100, problems)
        assert [p for p in problems if "seq 5" in p] == [
            "stored roll seq 5 skipped: not JSON (Expecting value: line 1 column 1 (char 0))"
        ]
    found = CliRunner().invoke(main, ["stats", "luck", "--store", str(copy)])
    assert found.exit_code == 0
    assert "stored roll seq 5 skipped: not JSON" in found.output


def test_the_old_schema_fixture_is_summarised_as_it_is_read(tmp_path: Path):
    copy = tmp_path / "old.db"
    copy.write_bytes((Path(__file__).parent / "fixtures" / "store_schema1.db").read_bytes())
    with SessionStore(copy, read_only=True) as store:
        whole = store.load()
    assert whole is not None
    kept = _tower_stats(copy, 1)
    assert kept == stats_payload(whole)
    assert _tower_stats(copy, 1) == kept


def test_a_summary_kept_survives_kill_9_whole_or_not_at_all(
    year: tuple[Path, SessionState], tmp_path: Path
):
    copy = _copy(year, tmp_path)
    script = (
        "import sys\n"
        "from tidetower.engine.table import Table\n"
        "from tidetower.mqtt.stats import SessionStats, kept_before\n"
        "t = Table(sys.argv[1], recent=100)\n"
        "print('open', flush=True)\n"
        "SessionStats(kept_before(t.store, print)).payload(t.state)\n"
        "print('kept', flush=True)\n"
        "import time; time.sleep(60)\n"
    )
    for delay in (0.0, 0.3, None):
        child = subprocess.Popen(
            [sys.executable, "-c", script, str(copy)], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None
        line = child.stdout.readline()
        while delay is None and line != "kept\n":
            line = child.stdout.readline()
        time.sleep(delay or 0.0)
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert _tower_stats(copy, 100) == stats_payload(year[1])
