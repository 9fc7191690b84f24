"""A year of play on one store (issue 37): `tidetower stats luck` and the tower started on it.

Builds a store of `--rolls` Tide throws (four d8 and a d20 read by the camera each, a d20
typed now and then, as `bench/stats.py` throws them) in 52 weekly set-ups with the engine's
session and the store's own format, cached under the temporary folder by its parameters.
Then, each as a process of its own: `tidetower stats luck --store S` (wall time and peak
RSS), and `tidetower run --sim --gm person` on a copy of the store, publishing to a Mosquitto
this bench starts: the seconds from its start until it answers a command (`reread`, sent
again every 0.1 s until a reply comes), until its first `stats` arrives, the size of that
payload, and the tower's peak RSS by then and a few seconds later.

The store measured is one a tower of this version has started on once, so it keeps the
summary of its older rolls (`primed`); the bare store's one-off summary is timed as it is made.

    .venv/bin/python bench/year_of_play.py [--rolls 50000] [--repeat 3] [--settle 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import queue
import random
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from stats import START, WEEK, throw

from tidetower.engine import session as pure
from tidetower.engine.codec import dump
from tidetower.engine.digest import DIGEST_VERSION
from tidetower.engine.session import SessionState
from tidetower.engine.store import SessionStore
from tidetower.firmware.sim_dice import sim_dice_home, teach_sim_dice
from tidetower.mqtt.mosquitto import mosquitto_binary

WEEKS = 52
TIDETOWER = str(Path(sys.executable).with_name("tidetower"))
CACHE = Path(tempfile.gettempdir()) / "tidetower-bench"
FORMAT = 1
"""Bumped when the store this bench builds changes, so a cached one is built again."""


def build(path: Path, rolls: int, seed: int) -> None:
    """`rolls` throws over WEEKS weekly set-ups, stored as `SessionStore.save` stores them
    (each week's throws resolved on a session holding only that week: no throw of the Tide
    refers to an earlier one, so the outcome is the same and the build is not quadratic)."""
    rng = random.Random(seed)
    state = pure.new_session("year", "tide", None)
    with SessionStore(path) as store:
        for week in range(WEEKS):
            state = pure.reset_tracker(
                dataclasses.replace(state, history=()), {}, START + week * WEEK
            )
            for i in range(rolls * (week + 1) // WEEKS - rolls * week // WEEKS):
                state = throw(state, rng, START + week * WEEK + 30.0 * i)
            _append(store, state)
        _save_session(store, state)


def _append(store: SessionStore, state: SessionState) -> None:
    """The week's rolls written in the store's own format (the rows `save` writes)."""
    rows = [(r.seq, r.id, json.dumps(dump(r))) for r in state.history]
    with sqlite3.connect(store.path) as db:
        db.executemany("INSERT INTO rolls VALUES (?, ?, ?)", rows)


def _save_session(store: SessionStore, state: SessionState) -> None:
    """The session row as `save` writes it, its rolls already in the store."""
    store._saved_seqs = {r.seq for r in state.history}  # the rows are written: keep them
    store.save(state)


def cached_store(rolls: int, seed: int) -> Path:
    """The store of these parameters, built once into the bench's cache folder."""
    path = CACHE / f"year-{rolls}-seed{seed}-v{FORMAT}.db"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        began = time.perf_counter()
        partial = path.with_suffix(".partial.db")
        for old in CACHE.glob(partial.name + "*"):
            old.unlink()
        build(partial, rolls, seed)
        with sqlite3.connect(partial) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        partial.rename(path)
        for side in CACHE.glob(partial.name + "*"):
            side.unlink()  # the WAL emptied above, and the claim's lock file
        print(f"built {path} in {time.perf_counter() - began:.0f} s")
    return path


def primed(store: Path) -> Path:
    """A copy of `store` a tower of this version has started on once: it keeps the summary
    of the rolls before its latest `table.RECENT` (engine/digest.py). Made once, in this
    process, and the time that first start's summary took printed (the one-off cost of an
    upgrade: a tower started on the bare store pays it at its first `stats`)."""
    from tidetower.engine.table import RECENT, Table
    from tidetower.mqtt.stats import SessionStats, kept_before

    path = store.with_name(store.stem + f"-primed-v{DIGEST_VERSION}.db")
    if not path.exists():
        partial = path.with_suffix(".partial.db")
        shutil.copy(store, partial)
        began = time.perf_counter()
        with Table(partial, recent=RECENT) as table:
            SessionStats(kept_before(table.store, print)).payload(table.state)
        print(f"summary kept in {time.perf_counter() - began:.1f} s (once, after an upgrade)")
        partial.rename(path)
        for side in CACHE.glob(partial.name + "*"):
            side.unlink()
    return path


def stats_luck(store: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of `tidetower stats luck --store S`, a process alone."""
    command = [
        sys.executable,
        "-c",
        "import resource, subprocess, sys, time; t = time.perf_counter();"
        " r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL);"
        " w = time.perf_counter() - t; assert r.returncode == 0, r.returncode;"
        " print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
        TIDETOWER,
        "stats",
        "luck",
        "--store",
        str(store),
    ]
    wall, rss_kb = subprocess.run(
        command, capture_output=True, text=True, check=True
    ).stdout.split()
    return float(wall), int(rss_kb) / 1024


def free_port() -> int:
    """A TCP port on loopback nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_mosquitto(folder: Path) -> tuple[subprocess.Popen[bytes], int]:
    """A Mosquitto of its own on a free loopback port, anonymous, nothing kept."""
    port = free_port()
    config = folder / "mosquitto.conf"
    config.write_text(f"user root\nallow_anonymous true\nlistener {port} 127.0.0.1\n")
    process = subprocess.Popen([mosquitto_binary(), "-c", str(config)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return process, port
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("mosquitto did not start")


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set so far (VmHWM), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclasses.dataclass
class TowerFigures:
    """One start of the tower on the store."""

    answered_s: float
    stats_s: float
    stats_bytes: int
    rss_mb: float
    """Peak RSS once the first `stats` is out and `settle` seconds more have passed."""


def tower_start(store: Path, port: int, settle: float, timeout: float = 120.0) -> TowerFigures:
    """Start the tower on `store`, time its first answer and `stats`, then stop it."""
    import paho.mqtt.client as mqtt

    table = f"year{os.getpid()}x{time.monotonic_ns() % 10**6}"
    base = f"tidetower/{table}"
    got: queue.Queue[tuple[str, bytes, float]] = queue.Queue()
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"bench-{table}")
    client.on_message = lambda _c, _u, m: got.put((m.topic, m.payload, time.monotonic()))
    client.connect("127.0.0.1", port)
    client.subscribe([(f"{base}/stats", 1), (f"{base}/cmd/result", 1)])
    client.loop_start()
    time.sleep(0.3)  # subscribed before the tower starts
    command = [TIDETOWER, "run", "--sim", "--gm", "person", "--realtime", "--store", str(store)]
    command += ["--broker", f"127.0.0.1:{port}", "--table", table]
    began = time.monotonic()
    tower = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        answered, stats, size = _watch(client, got, base, tower, began, timeout)
        time.sleep(settle)
        return TowerFigures(answered - began, stats - began, size, peak_rss_mb(tower.pid))
    finally:
        tower.send_signal(signal.SIGTERM)
        try:
            tower.wait(30)
        except subprocess.TimeoutExpired:
            tower.kill()
        client.loop_stop()
        client.disconnect()


def _watch(client, got, base, tower, began, timeout):  # type: ignore[no-untyped-def]
    """When the first command reply and the first `stats` came, and the stats' size."""
    answered = stats = None
    size = 0
    asked = 0
    while answered is None or stats is None:
        if time.monotonic() - began > timeout or tower.poll() is not None:
            raise RuntimeError(f"the tower gave no answer or stats (exit {tower.poll()})")
        if answered is None:
            asked += 1
            client.publish(f"{base}/cmd/reread", json.dumps({"id": f"bench-{asked}"}), qos=1)
        try:
            topic, payload, at = got.get(timeout=0.1)
        except queue.Empty:
            continue
        if topic.endswith("cmd/result") and answered is None:
            answered = at
        elif topic.endswith("/stats") and stats is None and payload:
            stats, size = at, len(payload)
    return answered, stats, size


def main() -> None:
    """Build (or find) the store, run each measure `--repeat` times, print medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--settle", type=float, default=5.0)
    args = parser.parse_args()
    teach_sim_dice(sim_dice_home())  # once per machine: not part of any start timed here
    store = primed(cached_store(args.rolls, args.seed))
    lucks = [stats_luck(store) for _ in range(args.repeat)]
    print(
        f"stats luck: median {statistics.median(w for w, _ in lucks):.2f} s,"
        f" peak RSS median {statistics.median(m for _, m in lucks):.0f} MB"
        f" (runs: {', '.join(f'{w:.2f} s' for w, _ in lucks)})"
    )
    with tempfile.TemporaryDirectory() as folder:
        broker, port = start_mosquitto(Path(folder))
        try:
            towers = []
            for n in range(args.repeat):
                copy = Path(folder) / f"tower{n}.db"
                shutil.copy(store, copy)
                towers.append(tower_start(copy, port, args.settle))
        finally:
            broker.terminate()
            broker.wait(10)
    med = statistics.median
    print(
        f"tower: answers a command {med(t.answered_s for t in towers):.2f} s,"
        f" first stats {med(t.stats_s for t in towers):.2f} s,"
        f" stats {med(t.stats_bytes for t in towers) / 1000:.0f} kB,"
        f" peak RSS {med(t.rss_mb for t in towers):.0f} MB (medians of {args.repeat};"
        f" answers {', '.join(f'{t.answered_s:.1f}' for t in towers)} s)"
    )


if __name__ == "__main__":
    main()
