"""Is this die fair (issue 29): the chi-squared tail and the throws-needed figure against
textbook values and independent computations, a fair d20 rarely flagged and a loaded one
caught, dice attributed as read or typed, `tidetower stats dice` and `session export` on a
recorded store, which they never change."""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import random
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tidetower.engine.codec import dump
from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import Outcome, RollContext, RollRecord
from tidetower.engine.stats import (
    NO_SIGN,
    TOO_FEW,
    Counted,
    chi2_critical,
    chi2_sf,
    dice_of,
    dice_of_body,
    summarise,
    throws_needed,
    typed_whole,
)
from tidetower.engine.store import SessionStore
from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead, Reading, roll_of
from tidetower.firmware.cli import main
from tidetower.firmware.export import COLUMNS, cell
from tidetower.firmware.stats_cli import CAVEAT

ZHAO = RollContext(
    actor="Zhao", side="a", mode="unopposed", pool=2, params={"tide_linked": True, "tier": "d8"}
)
DAY = 86_400.0
START = datetime(2026, 11, 1, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("chi2", "df", "p"),
    [(11.07, 5, 0.05), (30.14, 19, 0.05), (3.841, 1, 0.05), (23.209, 10, 0.01), (6.635, 1, 0.01)],
)
def test_chi2_tail_matches_the_textbook_table(chi2: float, df: int, p: float) -> None:
    assert chi2_sf(chi2, df) == pytest.approx(p, abs=3e-4)


def _even_tail(x: float, df: int) -> float:
    """The chi-squared tail for even df in closed form: a Poisson sum."""
    half = x / 2
    return math.exp(-half) * sum(half**i / math.factorial(i) for i in range(df // 2))


def _integrated_tail(x: float, df: int) -> float:
    """The chi-squared tail by Simpson's rule on its density from 0 to x (odd df, via u²)."""
    # substitute t = u² so the density's t^(df/2 - 1) singularity at 0 goes away
    n, top = 20_000, math.sqrt(x)
    h = top / n
    k = df / 2

    def f(u: float) -> float:
        return 2 * u ** (2 * k - 1) * math.exp(-(u * u) / 2) / (2**k * math.gamma(k))

    inner = sum((4 if i % 2 else 2) * f(i * h) for i in range(1, n))
    return 1 - h / 3 * (f(0) + inner + f(top))


@pytest.mark.parametrize("df", [2, 4, 10, 20])
@pytest.mark.parametrize("x", [0.3, 2.0, 9.5, 31.0, 80.0])
def test_chi2_tail_matches_the_closed_form_for_even_df(x: float, df: int) -> None:
    assert chi2_sf(x, df) == pytest.approx(_even_tail(x, df), rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("df", [1, 3, 5, 11, 19])
@pytest.mark.parametrize("x", [0.5, 4.0, 12.0, 30.0])
def test_chi2_tail_matches_numerical_integration_for_odd_df(x: float, df: int) -> None:
    assert chi2_sf(x, df) == pytest.approx(_integrated_tail(x, df), abs=1e-8)
    if df == 1:
        assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-9)


def test_critical_values_are_the_tables() -> None:
    assert chi2_critical(1) == pytest.approx(3.841, abs=1e-3)
    assert chi2_critical(5) == pytest.approx(11.070, abs=1e-3)
    assert chi2_critical(19) == pytest.approx(30.144, abs=1e-3)


def test_throws_needed_matches_cohens_table() -> None:
    # Cohen (1988) table 7.4.6: w = 0.1, u = 1 -> N = 785; lambda = 12.83 for u = 5
    assert throws_needed(2) == 785  # a coin: w² = 0.1² / 1
    assert throws_needed(6) == pytest.approx(12.83 / (0.01 / 5), abs=5)


def test_throws_needed_catches_the_bias_four_times_in_five_by_simulation() -> None:
    faces, n = 6, throws_needed(6)
    loaded = np.full(faces, (1 - 1.1 / faces) / (faces - 1))
    loaded[-1] = 1.1 / faces
    counts = np.random.default_rng(29).multinomial(n, loaded, size=4000)
    chi2 = ((counts - n / faces) ** 2).sum(axis=1) / (n / faces)
    assert float((chi2 > chi2_critical(faces - 1)).mean()) == pytest.approx(0.8, abs=0.025)


def _d20(seed: int, weights: list[float], throws: int = 2000) -> list[Counted]:
    rng = random.Random(seed)
    return [Counted("d20", f) for f in rng.choices(range(1, 21), weights, k=throws)]


def test_a_fair_d20_is_flagged_about_one_time_in_twenty() -> None:
    flagged = sum(summarise("d20", _d20(seed, [1.0] * 20)).flagged for seed in range(200))
    assert flagged / 200 <= 0.08


def test_a_d20_showing_20_twice_as_often_is_flagged() -> None:
    weights = [1.0] * 19 + [2.0]
    found = [summarise("d20", _d20(seed, weights)) for seed in range(50)]
    assert sum(s.flagged for s in found) >= 48
    assert all(s.most[0] == 20 and s.verdict.startswith("biased at 5 % (p = ") for s in found)


def test_a_small_sample_is_too_few_throws_to_tell_never_fair() -> None:
    fair30 = [Counted("d6", 1 + i % 6) for i in range(30)]  # as even as 30 throws can be
    assert summarise("d6", fair30).verdict == TOO_FEW
    assert summarise("d20", [Counted("d20", 1 + i % 20) for i in range(30)]).verdict == TOO_FEW
    even = [Counted("d4", 1 + i % 4) for i in range(throws_needed(4))]
    assert summarise("d4", even).verdict == NO_SIGN


def _record(reading: tuple[DieRead, ...], extra: tuple[Die, ...] = ()) -> RollRecord:
    roll = Roll((*roll_of(Reading(reading)).dice, *extra))
    return RollRecord("s-1", 1, "tide", ZHAO, roll, Outcome("ok"), None, reading=reading)


def test_dice_are_attributed_by_camera_kind_and_typed_ones_marked() -> None:
    reading = (
        DieRead("d10-tens", 30, (0.1, 0.1, 0.2, 0.2), 0.9),
        DieRead("d10", 7, (0.1, 0.3, 0.2, 0.4), 0.8),
        DieRead("d10", 0, (0.7, 0.7, 0.8, 0.8), 0.8),
        DieRead("d20", 13, (0.5, 0.5, 0.6, 0.6), 1.0, typed=True),
    )
    record = _record(reading, (Die(DieKind.D100, 100), Die(DieKind.D8, 8)))
    assert dice_of(record) == (
        Counted("d10-tens", 30),
        Counted("d10", 7),
        Counted("d10", 0),
        Counted("d20", 13, typed=True),
        Counted("d10-tens", 0, typed=True),  # a d100 typed whole: its two d10s
        Counted("d10", 0, typed=True),
        Counted("d8", 8, typed=True),
    )
    assert dice_of_body(dump(record)) == dice_of(record)
    assert typed_whole("d10", 10) == (Counted("d10", 0, True),)


def _recorded(path: Path, throws: int = 40) -> None:
    """A store of `throws` rolls (two d8 read, one d20 typed), a day apart from START."""
    ticks = itertools.count()
    rng = random.Random(7)
    with Table(path, clock=lambda: START + DAY * next(ticks)) as table:
        for _ in range(throws):
            reading = (
                DieRead("d8", rng.randint(1, 8), (0.1, 0.1, 0.2, 0.2), 0.97),
                DieRead("d8", rng.randint(1, 8), (0.3, 0.1, 0.4, 0.2), 0.91),
                DieRead("d20", rng.randint(1, 20), (0.5, 0.1, 0.6, 0.2), 1.0, typed=True),
            )
            table.declare(ZHAO)
            table.record(roll_of(Reading(reading)), reading=reading)


def _fingerprint(path: Path) -> str:
    """The store file's bytes, by hash; a write-ahead log SQLite opens beside it stays empty."""
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "session.db"
    _recorded(path)
    return path


def _cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_stats_dice_counts_the_stored_dice_and_leaves_the_store_as_it_was(store: Path) -> None:
    before = _fingerprint(store)
    found = json.loads(_cli("stats", "dice", "--store", str(store), "--json"))["dice"]
    assert [(d["die"], d["throws"], d["typed"]) for d in found] == [("d8", 80, 0), ("d20", 40, 40)]
    assert all(d["verdict"] == TOO_FEW for d in found)
    since = _cli("stats", "dice", "--store", str(store), "--json", "--die", "d20", "--since",
                 "2026-11-11")  # fmt: skip
    assert [(d["die"], d["throws"]) for d in json.loads(since)["dice"]] == [("d20", 30)]
    plain = _cli("stats", "dice", "--store", str(store), "--die", "d8")
    assert "d8: 80 throws" in plain and TOO_FEW in plain and CAVEAT in plain
    assert "chi-squared" in plain and "throws to tell" in plain
    assert _fingerprint(store) == before


def test_export_round_trips_every_die_and_leaves_the_store_as_it_was(store: Path) -> None:
    before = _fingerprint(store)
    with SessionStore(store, read_only=True) as reader:
        state = reader.load()
    assert state is not None
    history, now = state.history, state.bar().position
    expected = [(r.id, d.kind.value, d.face) for r in history for d in r.roll.dice]
    rows = list(csv.DictReader(io.StringIO(_cli("session", "export", "--store", str(store)))))
    assert [(r["roll_id"], r["kind"], int(r["face"])) for r in rows] == expected
    assert {(r["kind"], r["typed"]) for r in rows} == {("d8", "false"), ("d20", "true")}
    throws = json.loads(_cli("session", "export", "--store", str(store), "--format", "json"))
    assert [(t["roll_id"], d["kind"], d["face"]) for t in throws for d in t["dice"]] == expected
    assert all(a["position_after"] == b["position_before"] for a, b in itertools.pairwise(throws))
    assert throws[-1]["position_after"] == now
    assert throws[0]["time"] == "2026-11-01T00:00:00+00:00" and throws[0]["actor"] == "Zhao"
    late = _cli("session", "export", "--store", str(store), "--format", "json", "--since",
                "2026-12-01")  # fmt: skip
    assert [t["seq"] for t in json.loads(late)] == [31 + i for i in range(10)]
    assert _fingerprint(store) == before


def test_stats_read_a_schema_1_store_without_upgrading_it(tmp_path: Path) -> None:
    fixture = Path(__file__).parent / "fixtures" / "store_schema1.db"
    copy = tmp_path / "old.db"
    shutil.copy(fixture, copy)
    before = _fingerprint(copy)
    found = json.loads(_cli("stats", "dice", "--store", str(copy), "--json"))["dice"]
    assert sum(d["throws"] for d in found) > 0
    assert _fingerprint(copy) == before


def test_stats_find_the_store_through_the_tower_config(store: Path, tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[1] / "firmware" / "tidetower.example.toml"
    text = example.read_text(encoding="utf-8")
    config = tmp_path / "tower.toml"
    config.write_text(text.replace("/var/lib/tidetower/session.db", str(store)), encoding="utf-8")
    found = json.loads(_cli("stats", "dice", "--config", str(config), "--json"))["dice"]
    assert [d["die"] for d in found] == ["d8", "d20"]


def test_every_export_column_is_documented() -> None:
    docs = (Path(__file__).resolve().parents[1] / "docs" / "firmware.md").read_text("utf-8")
    section = docs[docs.index("## Statistics and export") :]
    assert all(f"`{column}`" in section for column in COLUMNS)


def test_a_missing_or_damaged_store_is_one_clear_error(tmp_path: Path) -> None:
    missing = CliRunner().invoke(main, ["stats", "dice", "--store", str(tmp_path / "no.db")])
    assert missing.exit_code == 1 and "no session at" in missing.output
    path = tmp_path / "damaged.db"
    _recorded(path, throws=2)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE rolls SET body = 'not json' WHERE seq = 2")
    damaged = CliRunner().invoke(main, ["stats", "dice", "--store", str(path), "--json"])
    assert damaged.exit_code == 0  # a bad row is skipped and named; the rest is counted
    assert "stored roll seq 2 skipped: not JSON" in damaged.stderr
    assert [d["throws"] for d in json.loads(damaged.stdout)["dice"]] == [2, 1]


HOSTILE_ACTORS = ['=HYPERLINK("http://x","a")', "+cmd|'/c calc'!A0", "-2+3", "@SUM(A1)"]


def test_export_csv_keeps_a_formula_as_text_and_numbers_as_numbers(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Table(path, "graded-d100") as table:  # a bar that goes below 0: negative positions
        for n, actor in enumerate(HOSTILE_ACTORS * 2):
            side = "ab"[n % 2]
            table.declare(RollContext(actor=actor, side=side, mode="attack"))  # type: ignore[arg-type]
            table.record(Roll((Die(DieKind.D100, 5 + n),)))
    rows = list(csv.DictReader(io.StringIO(_cli("session", "export", "--store", str(path)))))
    assert [r["actor"] for r in rows] == ["'" + a for a in HOSTILE_ACTORS * 2]
    formulas = ("=", "+", "-", "@", "\t", "\r")
    assert not any(
        v.startswith(formulas)
        for r in rows
        for k, v in r.items()
        if k != "position_before" and k != "position_after"
    )
    positions = [r[k] for r in rows for k in ("position_before", "position_after")]
    assert any(p.startswith("-") for p in positions)  # a real number stays a number
    assert all(int(p) == float(p) for p in positions)
    throws = json.loads(_cli("session", "export", "--store", str(path), "--format", "json"))
    assert [t["actor"] for t in throws] == HOSTILE_ACTORS * 2  # JSON is no spreadsheet
    assert [cell(v) for v in ("\tx", "\rx", -3, 2.5, "x=1")] == ["'\tx", "'\rx", -3, 2.5, "x=1"]


def test_export_takes_after_from_the_roll_s_own_result_around_a_set_up(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    opening = RollContext(
        actor="Zhao", side="a", pool=2, params={"tier": "d8", "tide_linked": True}
    )
    with Table(path, "tide") as table:
        table.declare(opening)
        moved = table.record(Roll((Die(DieKind.D8, 1), Die(DieKind.D8, 1), Die(DieKind.D20, 20))))
        table.reset_tracker({})
        table.declare(opening)
        table.record(Roll((Die(DieKind.D8, 1), Die(DieKind.D8, 1))))
    assert [(m.before, m.after) for m in moved.outcome.motions] == [(8, 9)]
    throws = json.loads(_cli("session", "export", "--store", str(path), "--format", "json"))
    assert [(t["position_before"], t["position_after"]) for t in throws] == [(8, 9), (8, 8)]
