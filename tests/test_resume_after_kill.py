"""kill -9 at any moment, start again: the same Tide position and history."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tidetower.engine.rules import RollRecord
from tidetower.engine.session import new_session, record_roll
from tidetower.engine.store import StoreError
from tidetower.engine.table import Table

# A tower that rolls as fast as it can, printing each roll only after it is stored.
TOWER = """
import sys
from tidetower.engine.dice import DieKind
from tidetower.engine.rules import RollContext
from tidetower.engine.simdice import SimulatedDice
from tidetower.engine.table import Table

table = Table(sys.argv[1], "tide", {"weight_a": 40, "weight_b": 40, "size": "small-skirmish"})
dice = SimulatedDice(int(sys.argv[2]))
while table.bar().routed is None:
    side = "a" if table.state.next_seq % 2 else "b"
    linked = {"tide_linked": True}
    table.declare(RollContext(actor=side, side=side, mode="unopposed", params=linked))
    record = table.record(dice.throw((3, DieKind.D8), (1, DieKind.D20)))
    print(record.id, table.bar().position, flush=True)
"""


def _run_and_kill(store: Path, seed: int, rolls_before_kill: int) -> list[str]:
    tower = subprocess.Popen(
        [sys.executable, "-c", TOWER, str(store), str(seed)], stdout=subprocess.PIPE, text=True
    )
    assert tower.stdout is not None
    seen = [tower.stdout.readline().split()[0] for _ in range(rolls_before_kill)]
    os.kill(tower.pid, signal.SIGKILL)
    tower.wait()
    return seen


def _replayed_position(table: Table) -> int:
    """The bar position got by replaying the stored rolls on a fresh session."""
    first = table.state.history[0].state_before
    state = new_session(
        "replay",
        "tide",
        {k: first["track"][k] for k in ("weight_a", "weight_b", "size", "footing")},
    )
    for record in table.state.history:
        state, _ = record_roll(state, record.roll, record.context)
    return int(state.tracker.track.marker)


def test_kill_minus_nine_mid_session_loses_nothing(tmp_path: Path) -> None:
    store = tmp_path / "session.db"
    for round_number, kill_after in enumerate((7, 23, 5)):
        before: tuple[RollRecord, ...] = ()
        if store.exists():
            with Table(store) as earlier:
                before = earlier.state.history
        seen = _run_and_kill(store, seed=round_number, rolls_before_kill=kill_after)
        table = Table(store)
        ids = [r.id for r in table.state.history]
        # Everything announced is there, in order, after what was there before.
        assert ids[: len(before)] == [r.id for r in before]
        assert ids[len(before) : len(before) + len(seen)] == seen
        assert [r.seq for r in table.state.history] == list(range(1, len(ids) + 1))
        assert table.bar().position == _replayed_position(table)
        assert table.state.next_seq == len(ids) + 1
        table.close()


def test_one_process_at_a_time_writes_a_table(tmp_path: Path) -> None:
    store = tmp_path / "session.db"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom tidetower.engine.table import Table\n"
            "t = Table(sys.argv[1]); print('ready', flush=True); time.sleep(60)",
            str(store),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
    try:
        with pytest.raises(StoreError, match=f"in use by tidetower pid {holder.pid}"):
            Table(store)
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    with Table(store) as table:  # the dead holder's claim went with it
        assert table.state.history == ()


COLLECTED_MID_OPEN = """
import gc, os, sys
from pathlib import Path
from tidetower.engine.store import SessionStore
folder = Path(sys.argv[1])
look = os.fstat
def collecting(fd):  # the collector runs at whatever allocation it likes: here, mid-open
    gc.collect()
    return look(fd)
gc.disable()
for n in range(3):
    left = SessionStore(folder / f"left{n}.db")
    left.me = left  # a cycle: only the collector frees it
    del left
    os.fstat = collecting
    SessionStore(folder / f"next{n}.db").close()
    os.fstat = look
print("opened them all")
"""


def test_a_store_the_collector_frees_while_another_opens_never_hangs(tmp_path: Path) -> None:
    """A store left to the garbage collector lets go of its file from a finalizer, which can
    run in the middle of another store's open in the same thread: that must not wait on
    itself (the suite once hung there, in `tidetower run` opening its store)."""
    done = subprocess.run(
        [sys.executable, "-c", COLLECTED_MID_OPEN, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,  # a bound on a hang, not a timing: the run takes about a second
    )
    assert done.returncode == 0 and "opened them all" in done.stdout, done.stderr
