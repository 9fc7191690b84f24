"""The session store read back as hostile (issue 37): a FIFO named as the store, the modes
a store and its side files are made with, rows that cannot be loaded or are out of bounds,
a store that cannot be read at all, and a clock set back."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.store import SessionStore, StoreError
from tidetower.engine.table import Table
from tidetower.firmware.cli import main
from tidetower.mqtt.gm_cli import gm_login
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.stats import stats_payload

CLI = [sys.executable, "-m", "tidetower.firmware.cli"]
READERS = [
    ["stats", "dice"],
    ["stats", "luck"],
    ["stats", "tracker", "--out", "bar.svg"],
    ["session", "export"],
    ["session", "show"],
]


@pytest.mark.parametrize("command", READERS, ids=lambda c: " ".join(c[:2]))
def test_a_fifo_named_as_the_store_is_refused_in_one_line_never_a_hang(
    tmp_path: Path, command: list[str]
) -> None:
    fifo = tmp_path / "s.db"
    os.mkfifo(fifo)
    done = subprocess.run(
        [*CLI, *command, "--store", str(fifo)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,  # a guard only: before the fix this read blocked for ever
    )
    assert done.returncode == 1, done.stderr
    (said,) = done.stderr.strip().splitlines()
    assert said.startswith("Error: ") and str(fifo) in said
    assert said.endswith("not a regular file (a folder, pipe or device)")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_store_and_its_side_files_are_made_for_their_owner_alone(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    old = os.umask(0o022)
    try:
        with Table(store) as table:
            table.declare(RollContext(pool=2, params={"tier": "d6"}))
            table.record(Roll((Die(DieKind.D6, 6), Die(DieKind.D6, 2))))
            made = [store, *(store.with_name(store.name + s) for s in ("-wal", "-shm", ".lock"))]
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in made}
    finally:
        os.umask(old)
    assert modes == {p.name: 0o600 for p in made}


def test_a_token_others_can_read_is_warned_of_in_one_line_and_still_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token = tmp_path / "gm-token"
    token.write_text("secret\n")
    token.chmod(0o644)
    login = gm_login(MqttSettings(), token, None)
    warned = capsys.readouterr().err.strip().splitlines()
    assert login.password_file == str(token) and login.username == "gm"
    assert len(warned) == 1 and str(token) in warned[0] and "chmod 600" in warned[0]
    token.chmod(0o600)
    gm_login(MqttSettings(), token, None)
    assert capsys.readouterr().err == ""


# -- rows that cannot be read back, and stores that cannot be read at all ------------------

DEEP = "[" * 200_000 + "]" * 200_000
HOSTILE_ROWS = {
    "pool 10**6": "json_set(body, '$.context.pool', 1000000)",
    "context a list": "json_set(body, '$.context', json('[1, 2]'))",
    "200,000 deep": f"'{DEEP}'",
    "not JSON": "'not json'",
}


def _stored(path: Path) -> None:
    """A Tide store of three rolls, seq 1..3, a minute apart."""
    ticks = iter(range(1_780_000_000, 1_780_000_600, 60))
    with Table(path, "tide", clock=lambda: float(next(ticks))) as table:
        for faces in ((8, 7, 6), (1, 2, 3), (5, 6, 1)):
            table.declare(RollContext(actor="Ann", side="a", pool=3, params={"tier": "d8"}))
            table.record(Roll(tuple(Die(DieKind.D8, f) for f in faces)))


def _spoiled(path: Path, how: str) -> Path:
    """The store with roll seq 2 made hostile as `how` says (an SQL expression of `body`)."""
    _stored(path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute(f"UPDATE rolls SET body = {HOSTILE_ROWS[how]} WHERE seq = 2")
    return path


def _bytes(path: Path) -> bytes:
    """The store's bytes, with any write-ahead log beside it."""
    wal = path.with_name(path.name + "-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def _body_of(path: Path, seq: int) -> str:
    with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
        (body,) = db.execute("SELECT body FROM rolls WHERE seq = ?", (seq,)).fetchone()
    return str(body)


def _dice(out: str) -> bool:
    return sum(d["throws"] for d in json.loads(out)["dice"]) == 6


def _luck(out: str) -> bool:
    return [t["throws"] for t in json.loads(out)["tallies"]] == [2, 2]


def _export(out: str) -> bool:
    return [t["seq"] for t in json.loads(out)] == [1, 3]


GOING_ON: dict[str, tuple[list[str], Callable[[str], bool]]] = {
    "stats dice": (["stats", "dice", "--json"], _dice),
    "stats luck": (["stats", "luck", "--json"], _luck),
    "stats tracker": (["stats", "tracker", "--out", "bar.svg"], lambda out: "2 throws of" in out),
    "session export": (["session", "export", "--format", "json"], _export),
}
"""Each reader of the store, and what it says of the two rolls that can be read."""


@pytest.mark.parametrize("how", HOSTILE_ROWS)
@pytest.mark.parametrize("command", GOING_ON)
def test_a_bad_row_is_skipped_and_named_and_the_rest_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, how: str
) -> None:
    path = _spoiled(tmp_path / "s.db", how)
    before = _bytes(path)
    monkeypatch.chdir(tmp_path)
    args, rest_counted = GOING_ON[command]
    result = CliRunner().invoke(main, [*args, "--store", str(path)])
    assert result.exit_code == 0, result.output
    (said,) = result.stderr.splitlines()
    assert said.startswith("stored roll seq 2 skipped: ") and len(said) < 300
    assert rest_counted(result.stdout), result.stdout
    assert _bytes(path) == before


@pytest.mark.parametrize("how", HOSTILE_ROWS)
def test_the_tower_skips_a_bad_row_names_it_and_leaves_it_as_it_is(
    tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = _spoiled(tmp_path / "s.db", how)
    kept = _body_of(path, 2)
    with caplog.at_level(logging.ERROR), Table(path, "tide") as table:
        assert [r.seq for r in table.state.history] == [1, 3]
        table.reset_tracker({})  # a set-up after it, and the retained stats made at once
        table.declare(RollContext(actor="Bo", side="b", pool=2, params={"tier": "d6"}))
        table.record(Roll((Die(DieKind.D6, 6), Die(DieKind.D6, 5))))
        stats = stats_payload(table.state)
    said = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("stored roll seq 2 skipped: ") for m in said), said
    assert stats.rolls == 3 and stats.luck.throws == 3
    assert _body_of(path, 2) == kept  # a save never deletes the row it could not read


def test_a_stored_pool_out_of_bounds_is_refused_as_a_command_s_is(tmp_path: Path) -> None:
    path = _spoiled(tmp_path / "s.db", "pool 10**6")
    with SessionStore(path, read_only=True) as reader:
        state = reader.load()
        assert state is not None and [r.seq for r in state.history] == [1, 3]
        assert [b.line() for b in reader.skipped] == [
            "stored roll seq 2 skipped: pool must be between 0 and 50, got 1000000"
        ]


def _not_sqlite(path: Path) -> None:
    path.write_bytes(b"this is no database, only text\n" * 200)


def _no_rolls(path: Path) -> None:
    _stored(path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("DROP TABLE rolls")
        db.execute("PRAGMA journal_mode=DELETE")


UNREADABLE = {"not SQLite": _not_sqlite, "no rolls table": _no_rolls}


@pytest.mark.parametrize("how", UNREADABLE)
@pytest.mark.parametrize("command", [*GOING_ON, "session show"])
def test_a_store_that_cannot_be_read_is_refused_in_one_line_and_left_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, how: str
) -> None:
    path = tmp_path / "s.db"
    UNREADABLE[how](path)
    before = _bytes(path)
    monkeypatch.chdir(tmp_path)
    args = GOING_ON[command][0] if command in GOING_ON else ["session", "show"]
    result = CliRunner().invoke(main, [*args, "--store", str(path)])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    (said,) = result.output.splitlines()
    assert said.startswith("Error: ") and str(path) in said
    with pytest.raises(StoreError) as refused:
        Table(path)  # as `tidetower run` opens it
    assert "\n" not in str(refused.value)
    assert _bytes(path) == before


def test_since_keeps_a_roll_made_after_the_clock_went_back(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    day = 86_400.0
    start = datetime(2026, 11, 1, tzinfo=UTC).timestamp()
    clock = iter([start, start + 2 * day, start - 30 * day, start + 2 * day + 60])
    with Table(path, "tide", clock=lambda: next(clock)) as table:  # the third: set back
        for _ in range(4):
            table.declare(RollContext(actor="Ann", side="a", pool=2, params={"tier": "d8"}))
            table.record(Roll((Die(DieKind.D8, 5), Die(DieKind.D8, 2))))
    since = ["--since", "2026-11-02"]
    out = CliRunner().invoke(main, ["session", "export", "--format", "json", *since,
                                    "--store", str(path)]).output  # fmt: skip
    assert [t["seq"] for t in json.loads(out)] == [2, 3, 4]
    luck = CliRunner().invoke(main, ["stats", "luck", "--json", *since, "--store", str(path)])
    assert [t["throws"] for t in json.loads(luck.output)["tallies"]] == [3, 3]
