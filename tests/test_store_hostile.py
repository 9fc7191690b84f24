"""The session store against a hostile table: other names for the store, a full disk."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from click.testing import CliRunner

from tidetower.engine.codec import dump
from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.store import SessionStore, StoreError
from tidetower.engine.table import Table
from tidetower.firmware import session_cli
from tidetower.firmware.cli import main

HOLDER = """
import sys
from tidetower.engine.table import Table
with Table(sys.argv[1]):
    print("holding", flush=True)
    sys.stdin.readline()
"""

WRITER = """
import sys
from tidetower.engine.store import StoreError
from tidetower.engine.table import Table
try:
    Table(sys.argv[1]).close()
    print("kept the store")
except StoreError as error:
    print(error)
"""


@contextlib.contextmanager
def _held(store: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process (a tower) holding the store by the name given, until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
    try:
        yield holder
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        assert holder.wait() == 0


def _another_process_writes(store: Path) -> str:
    """What another process gets when it opens the store to write: kept, or the refusal."""
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(store)], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _symlink(store: Path) -> Path:
    (store.parent / "link.db").symlink_to(store)
    return store.parent / "link.db"


def _hard_link(store: Path) -> Path:
    other = store.parent / "elsewhere"
    other.mkdir()
    (other / "same.db").hardlink_to(store)
    return other / "same.db"


def _dotted(store: Path) -> Path:
    (store.parent / "x").mkdir()
    return store.parent / "x" / ".." / store.name


OTHER_NAMES: dict[str, Callable[[Path], Path]] = {
    "symlink": _symlink,
    "hard link": _hard_link,
    "dotted path": _dotted,
}


@pytest.mark.parametrize("name", OTHER_NAMES)
def test_a_second_tower_by_another_name_is_refused(tmp_path: Path, name: str) -> None:
    store = tmp_path / "s.db"
    Table(store).close()
    other = OTHER_NAMES[name](store)
    with _held(store) as holder, pytest.raises(StoreError, match="is in use by") as refused:
        Table(other)
    assert "\n" not in str(refused.value)
    if name != "hard link":  # a hard link's holder notes itself beside its own name
        assert f"tidetower pid {holder.pid}" in str(refused.value)


def test_session_undo_by_a_symlink_leaves_the_towers_roll(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "s.db"
    with Table(store) as table:
        table.declare(RollContext(mode="unopposed", pool=2, params={"tier": "d6"}))
        table.record(Roll((Die(DieKind.D6, 6), Die(DieKind.D6, 1))))
    link = _symlink(store)
    monkeypatch.setattr(session_cli, "WAIT_FOR_WRITER_S", 0.2)
    with _held(store):
        undone = CliRunner().invoke(main, ["session", "undo", "--store", str(link)])
    assert undone.exit_code == 1 and "is in use by" in undone.output, undone.output
    with SessionStore(store, read_only=True) as kept:
        state = kept.load()
    assert state is not None and len(state.history) == 1


def test_one_process_opens_its_store_twice_and_keeps_it_till_both_close(
    tmp_path: Path,
) -> None:
    store = tmp_path / "s.db"
    first = Table(store)
    again, by_link = Table(store), Table(_symlink(store))  # the same process may reopen it
    again.close()
    by_link.close()
    assert "is in use by" in _another_process_writes(store)  # the first still holds it
    first.close()
    assert _another_process_writes(store) == "kept the store"


def test_a_reader_claims_nothing_and_outlives_the_writer_beside_it(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    Table(store).close()
    with SessionStore(_symlink(store), read_only=True) as reader:
        assert _another_process_writes(store) == "kept the store"
        Table(store).close()  # a writer of this process lets go: the reader reads on
        assert reader.load() is not None


# -- a full disk --------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real filesystem of 8 MiB (a tmpfs), to fill."""
    folder = tmp_path / "disk"
    folder.mkdir()
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(folder)],
            capture_output=True,
            text=True,
        )
    except FileNotFoundError as error:
        pytest.skip(f"a real full disk needs a small tmpfs, and there is no mount: {error}")
    if mounted.returncode != 0:
        pytest.skip(f"a real full disk needs a small tmpfs (root): {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def _fill(folder: Path) -> Path:
    """Fill the disk `folder` is on with one file, returned to be removed to free it."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError as error:
        assert error.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


def _kept(store: Path) -> tuple[Any, str]:
    """The stored session, read as a second process would, and SQLite's integrity check."""
    with SessionStore(store, read_only=True) as reader:
        state = reader.load()
    with contextlib.closing(sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True)) as db:
        (check,) = db.execute("PRAGMA integrity_check").fetchone()
    return state, check


def _throw(table: Table) -> Any:
    table.declare(RollContext(mode="unopposed", pool=2, params={"tier": "d6"}))
    return table.record(Roll((Die(DieKind.D6, 6), Die(DieKind.D6, 2))))


def test_a_full_disk_is_said_in_one_line_and_nothing_stored_is_lost(small_disk: Path) -> None:
    store = small_disk / "s.db"
    with Table(store) as table:
        kept = [_throw(table) for _ in range(3)]
        filler = _fill(small_disk)
        with pytest.raises(StoreError) as full:
            for _ in range(100):  # a last page the WAL had room in takes a roll or two
                kept.append(_throw(table))
        assert str(full.value).startswith(f"session store {store}: the disk is full")
        assert "\n" not in str(full.value)
        before, check = _kept(store)
        assert check == "ok" and before == table.state
        assert [r.id for r in before.history] == [r.id for r in kept]
        filler.unlink()
        kept.append(_throw(table))  # room again: the table carries on where it was
    after, check = _kept(store)
    assert check == "ok" and [r.id for r in after.history] == [r.id for r in kept]


TOWER = [sys.executable, "-m", "tidetower.firmware.cli", "run", "--sim", "--fast", "--json"]
TOWER += ["--no-mqtt"]
"""A simulated tower that rolls as fast as it can until SIGTERM, each roll a JSON line."""


def _lines(stream: IO[str], into: queue.Queue[str | None]) -> threading.Thread:
    """Read `stream` line by line into `into` on a thread; None once it ends."""

    def read() -> None:
        for line in stream:
            into.put(line)
        into.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


def _until(lines: queue.Queue[str | None], wanted: Callable[[str], bool], seen: list[str]) -> str:
    """The next line `wanted` picks, keeping every line read in `seen`; fails at the end."""
    while (line := lines.get()) is not None:
        seen.append(line)
        if wanted(line):
            return line
    raise AssertionError("the tower stopped first:\n" + "".join(seen))


def test_the_tower_says_its_disk_is_full_and_carries_on_once_freed(small_disk: Path) -> None:
    store = small_disk / "s.db"
    tower = subprocess.Popen(
        [*TOWER, "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert tower.stdout is not None and tower.stderr is not None
    out: queue.Queue[str | None] = queue.Queue()
    err: queue.Queue[str | None] = queue.Queue()
    readers = [_lines(tower.stdout, out), _lines(tower.stderr, err)]
    printed: list[str] = []
    said: list[str] = []
    try:
        _until(out, lambda line: line.startswith("{"), printed)  # a first roll is stored
        filler = _fill(small_disk)
        _until(err, lambda line: "the disk is full" in line, said)
        full, _ = _kept(store)  # while the disk is full the session stays as it is
        filler.unlink()
        last = full.history[-1].seq
        _until(out, lambda line: line.startswith("{") and json.loads(line)["seq"] > last, printed)
    finally:
        tower.send_signal(signal.SIGTERM)
        tower.wait()
    for reader in readers:
        reader.join()
    _drain(out, printed)
    _drain(err, said)
    assert tower.returncode == 0, "".join(said)
    assert not any("Traceback" in line for line in said), "".join(said)
    rolls = [json.loads(line) for line in printed if line.startswith("{")]
    after, check = _kept(store)
    assert check == "ok"
    assert [r["roll"] for r in rolls] == [r.id for r in after.history]  # every roll it said
    assert rolls[-1]["tide"] == dump(after.bar())


def _drain(lines: queue.Queue[str | None], into: list[str]) -> None:
    while (line := lines.get()) is not None:
        into.append(line)
