"""Issue 29: how lucky was the table (`stats luck`), and the bar's story (`stats tracker`)."""

from __future__ import annotations

import gc
import hashlib
import itertools
import json
import math
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.luck import AS_EXPECTED, LUCKIER, TOO_FEW, luck, shape_of
from tidetower.engine.rules import RollContext
from tidetower.engine.session import declared_odds
from tidetower.engine.store import SessionStore
from tidetower.engine.systems import get_system, system_names
from tidetower.engine.table import Table
from tidetower.firmware.cli import main
from tidetower.firmware.luck_cli import stored_records
from tidetower.mqtt.stats import stats_payload

START = 1_780_000_000.0


def pool(actor: str, side: str, linked: bool = False) -> RollContext:
    """Three d8 at the default rule (5+ a Mark: each die a coin)."""
    params: dict[str, object] = {"tier": "d8", **({"tide_linked": True} if linked else {})}
    return RollContext(actor=actor, side=side, pool=3, params=params)  # type: ignore[arg-type]


def d8s(*faces: int, omen: int | None = None) -> Roll:
    dice = tuple(Die(DieKind.D8, f) for f in faces)
    return Roll(dice + ((Die(DieKind.D20, omen),) if omen else ()))


THROWS = [("Ann", "a", (8, 7, 6)), ("Ann", "a", (1, 2, 3)), ("Ann", "a", (5, 1, 1))]
THROWS += [("Bob", "b", (5, 6, 1))]


def _table(path: Path, throws: list[tuple[str, str, tuple[int, ...]]] = THROWS) -> None:
    ticks = itertools.count()
    with Table(path, "tide", clock=lambda: START + 60 * next(ticks)) as table:
        for actor, side, faces in throws:
            table.declare(pool(actor, side))
            table.record(d8s(*faces))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "session.db"
    _table(path)
    return path


def test_luck_per_actor_and_side_by_hand(store: Path) -> None:
    found = luck(stored_records(store, None))
    by = {(t.by, t.name): t for t in found.tallies()}
    ann = by[("actor", "Ann")]
    # each die a Mark with chance 1/2: 3d8 expect 1.5, variance 3/4 a throw
    assert (ann.throws, ann.expected, ann.rolled, ann.variance) == (3, 4.5, 4, 2.25)
    assert ann.z == pytest.approx(-0.5 / 1.5)
    assert ann.p == pytest.approx(math.erfc((1 / 3) / math.sqrt(2)))
    assert ann.verdict == TOO_FEW
    assert by[("side", "side b")].rolled == 2
    best, worst = found.best(1)[0], found.worst(1)[0]
    assert (best.who.actor, best.rolled, best.chance) == ("Ann", 3, 1 / 8)
    assert (worst.rolled, worst.below, worst.chance) == (0, 1 / 8, 1.0)
    assert best.who.at == START and worst.who.id.endswith("-2")


def test_a_lucky_side_and_an_ordinary_one(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    _table(
        path, [("Cy", "b", (8, 8, 8))] * 6 + [("Di", "a", (8, 1, 8)), ("Di", "a", (1, 1, 8))] * 3
    )
    by = {t.name: t for t in luck(stored_records(path, None)).tallies()}
    # Cy: 18 Marks against 9 expected, sd sqrt(4.5): z = 4.24
    assert by["Cy"].z == pytest.approx(9 / math.sqrt(4.5))
    assert by["Cy"].verdict == LUCKIER
    assert by["Di"].rolled == 9 and by["Di"].verdict == AS_EXPECTED


def test_a_system_without_odds_says_so(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Table(path, "tide-of-battle") as table:
        for side in ("a", "b"):
            table.declare(RollContext(side=side, params={"attack": 2}))  # type: ignore[arg-type]
            table.record(Roll((Die(DieKind.D6, 3), Die(DieKind.D6, 5))))
    found = luck(stored_records(path, None))
    assert found.throws == ()
    assert [u.reason for u in found.uncounted] == [
        "no odds: tide-of-battle does not count its rolls"
    ] * 2
    output = _cli("stats", "luck", "--store", str(path))
    assert "2 throws: no odds: tide-of-battle does not count its rolls" in output


def test_scored_is_a_value_its_odds_have(tmp_path: Path) -> None:
    checked = []
    for name in system_names():
        system = get_system(name)
        path = tmp_path / f"{name}.db"
        with Table(path, name) as table:
            table.declare(_a_counted_roll(name))
            odds = declared_odds(table.state)
            if odds is None:
                continue
            dice = system.declared_dice(table.state.tracker, table.state.declared)
            kinds = dice or ((DieKind.D100,) if "d100" in odds.dice else (DieKind.D6,) * 2)
            record = table.record(
                Roll(tuple(Die(k, 1 if k != DieKind.D100 else 37) for k in kinds))
            )
        assert system.scored(record.outcome) in odds.distribution, name
        assert odds.distribution[system.scored(record.outcome)] > Fraction(0)
        checked.append(name)
    assert {"tide", "d6-pool", "graded-d100", "battle-rhythm"} <= set(checked)


def _a_counted_roll(name: str) -> RollContext:
    """A declaration each system gives odds for."""
    if name == "tide":
        return pool("Ann", "a")
    if name == "d6-pool":
        return RollContext(actor="Ann", mode="action", params={"rating": 2})
    return RollContext(actor="Ann", side="a", mode="attack")


def _cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _fingerprint(path: Path) -> str:
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_cli_plain_and_json_and_the_store_unchanged(store: Path, tmp_path: Path) -> None:
    before = _fingerprint(store)
    plain = _cli("stats", "luck", "--store", str(store))
    assert "Ann: 3 throws, Marks expected 4.5, rolled 4" in plain
    assert TOO_FEW in plain and "luckiest throws:" in plain
    data = json.loads(_cli("stats", "luck", "--store", str(store), "--json", "--actor", "Bob"))
    assert [(t["name"], t["rolled"]) for t in data["tallies"]] == [("Bob", 2), ("side b", 2)]
    assert data["best"][0]["chance"] == 0.5 and data["uncounted"] == []
    assert (
        json.loads(_cli("stats", "luck", "--store", str(store), "--json", "--since", "2099-01-01"))[
            "tallies"
        ]
        == []
    )
    _cli("stats", "tracker", "--store", str(store), "--out", str(tmp_path / "bar.svg"))
    assert _fingerprint(store) == before


def test_the_tracker_picture_moves_and_rout(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Table(path, "tide") as table:
        while table.bar().routed is None:
            table.declare(pool("Ann", "a", linked=True))
            table.record(d8s(1, 1, 1, omen=20))
    moved = len(luck(stored_records(path, None)).moves)
    assert moved > 3
    out = tmp_path / "bar.svg"
    before = _fingerprint(path)
    assert f"{moved} moves" in _cli("stats", "tide", "--store", str(path), "--out", str(out))
    root = ET.fromstring(out.read_text())
    ns = "{http://www.w3.org/2000/svg}"
    moves = [c for c in root.iter(f"{ns}circle") if c.get("class") == "move"]
    assert len(moves) == moved
    assert all(c.find(f"{ns}title") is not None for c in moves)
    assert "Ann" in (moves[0].findtext(f"{ns}title") or "")
    routs = [g for g in root.iter(f"{ns}g") if g.get("class") == "rout"]
    assert len(routs) == 1
    assert "routed" in "".join(routs[0].itertext())
    assert _fingerprint(path) == before


def test_the_stored_records_leave_out_the_camera_s_reading_and_luck_is_the_same(
    store: Path,
) -> None:
    with Table(store, "tide") as table:
        history = table.state.history
    with SessionStore(store, read_only=True) as reader:
        bodies = list(reader.roll_bodies(None, ("reading",)))
        whole = list(reader.roll_bodies(None))
    assert [b["id"] for b in bodies] == [b["id"] for b in whole] == [r.id for r in history]
    assert all("reading" not in b for b in bodies)
    assert [{k: v for k, v in b.items() if k != "reading"} for b in whole] == bodies
    stored, live = luck(stored_records(store, None)), luck(history)
    assert stored.tallies() == live.tallies()
    assert [t.who for t in stored.best(4)] == [t.who for t in live.best(4)]
    assert gc.isenabled()  # the collector paused while reading, back after


def test_a_shape_s_tails_are_its_exact_sums() -> None:
    system = get_system("tide")
    odds = system.odds(system.initial_state({}), pool("Ann", "a"), {})
    assert odds is not None
    shape = shape_of(odds)
    for value, chance in odds.distribution.items():
        at_least = sum(c for v, c in odds.distribution.items() if v >= value)
        at_most = sum(c for v, c in odds.distribution.items() if v <= value)
        assert shape.at_least(value) == float(at_least) and shape.at_most(value) == float(at_most)
        assert chance > 0
    assert shape.at_least(99) == 0.0 and shape.at_most(-1) == 0.0  # off its values: summed


def test_best_and_worst_keep_the_order_of_a_full_sort(store: Path) -> None:
    found = luck(stored_records(store, None))
    assert found.best(3) == sorted(found.throws, key=lambda t: (t.chance, -t.below))[:3]
    assert found.worst(3) == sorted(found.throws, key=lambda t: (t.below, -t.chance))[:3]


def test_a_pool_left_to_the_player_is_judged_by_the_dice_thrown(tmp_path: Path) -> None:
    """The simulated table (and many a real one) declares no pool: the throw's odds are then
    those of the pool it was thrown with, as if it had been declared."""
    with Table(tmp_path / "s.db", "tide") as table:
        table.declare(RollContext(actor="Ann", side="a"))
        table.record(d8s(8, 7, 6))
        history = table.state.history
    found = luck(history)
    assert found.uncounted == () and len(found.throws) == 1
    (throw,) = found.throws
    assert (throw.rolled, throw.shape.mean) == (3, 1.5)  # 3d8 at 5+: each die a coin


def _practice(path: Path) -> None:
    """A practice Tide table (actors named as their sides): A opens, B replies; some
    throws move the bar twice (there and back: 8 → 7 → 8), some once, some not at all."""
    exchanges = [((8, 8, 8), 20, (1, 1, 1), None), ((6, 5, 1), 1, (5, 6, 2), 1)]
    exchanges += [((1, 2, 3), None, (7, 8, 1), 20), ((8, 7, 6), 20, (8, 7, 6), None)]
    with Table(path, "tide") as table:
        for a_faces, a_omen, b_faces, b_omen in exchanges:
            opening = RollContext(actor="Side A", side="a", mode="tide", pool=3,
                                  params={"tier": "d8", "tide_linked": True})  # fmt: skip
            table.declare(opening)
            first = table.record(d8s(*a_faces, omen=a_omen))
            table.declare(RollContext(actor="Side B", side="b", reply_to=first.id, pool=3,
                                      params={"tier": "d8"}))  # fmt: skip
            table.record(d8s(*b_faces, omen=b_omen))


def test_a_side_is_named_one_way_and_a_move_is_counted_one_way(tmp_path: Path) -> None:
    path = tmp_path / "practice.db"
    _practice(path)
    with SessionStore(path, read_only=True) as reader:
        state = reader.load()
    assert state is not None
    motions = [len(r.outcome.motions) for r in state.history]
    assert max(motions) == 2 and 0 in motions  # twice in one throw, and not at all
    data = json.loads(_cli("stats", "luck", "--store", str(path), "--json"))
    names = [(t["by"], t["name"]) for t in data["tallies"]]
    assert names == [("side", "side a"), ("side", "side b")]  # no "Side A" row beside it
    plain = _cli("stats", "luck", "--store", str(path))
    drawn = _cli("stats", "tracker", "--store", str(path), "--out", str(tmp_path / "b.svg"))
    moves = len(data["moves"])
    assert f"the bar moved {moves} times" in plain and f", {moves} moves" in drawn
    page = stats_payload(state)
    assert page.luck.moves == page.track.moves == moves
    assert [t.name for t in page.luck.tallies] == ["side a", "side b"]
