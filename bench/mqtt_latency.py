"""Benchmark: 10 towers and 100 LED-bar subscribers on one local broker.

Latency is from just before a tower records a roll (engine + SQLite write + MQTT) to the
first frame each subscribed ledbar node renders for the bar that roll made. The towers run
in this process, the subscribers in `--procs` other processes (as on other devices; the
monotonic clock is shared). Prints median, p95, p99 and max.
Run: /work/venv/bin/python bench/mqtt_latency.py [--broker amqtt]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.table import Table
from tidetower.mqtt.broker import EmbeddedBroker
from tidetower.mqtt.ledbar.node import LedbarNode
from tidetower.mqtt.ledbar.strip import Frame
from tidetower.mqtt.payloads import BarPayload
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.settings import MqttSettings

# Each roll's d20 Omen moves the marker one step toward B, so the position names the roll.
OMEN = Roll((Die(DieKind.D8, 5), Die(DieKind.D20, 20)), "bench")
LINKED = RollContext(actor="bench", side="a", mode="unopposed", params={"tide_linked": True})
START = 2


class Stopwatch:
    """A renderer that notes when each bar position is first drawn."""

    def __init__(self) -> None:
        self.drawn: dict[int, float] = {}

    def show(self, frame: Frame, bar: BarPayload) -> None:
        self.drawn.setdefault(bar.position, time.perf_counter())

    def settle(self, bar: BarPayload) -> None:
        """Nothing to do."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_mosquitto(folder: Path, port: int, ws_port: int) -> subprocess.Popen[bytes]:
    config = folder / "mosquitto.conf"
    config.write_text(
        f"user root\nallow_anonymous true\nmax_queued_messages 10000\n"
        f"set_tcp_nodelay true\n"
        f"listener {port} 127.0.0.1\nlistener {ws_port} 127.0.0.1\n"
        "protocol websockets\n"
    )
    binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    process = subprocess.Popen([binary, "-c", str(config)], stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return process
        except OSError:
            time.sleep(0.02)
    raise SystemExit("mosquitto did not start")


def run_tower(
    publisher: TablePublisher, rolls: int, pace: float, started: dict[int, float]
) -> None:
    for _ in range(rolls):
        before = time.perf_counter()
        record = publisher.record(OMEN, context=LINKED)
        started[record.outcome.motions[-1].after] = before
        time.sleep(pace)


def subscribers(
    settings: list[MqttSettings], names: list[tuple[str, int]], ready: Any, done: Any, out: Any
) -> None:
    """A subscriber process: ledbar nodes with stopwatches until `done` is set."""
    by_table = {s.table: s for s in settings}
    nodes = []
    for table, n in names:
        node = LedbarNode(by_table[table].model_copy(update={"client_id": f"led-{table}-{n}"}))
        watch = Stopwatch()
        node.renderers.append(watch)
        nodes.append((table, node.start(), watch))
    ready.set()
    done.wait()
    for _, node, _ in nodes:
        node.stop()
    out.put([(table, watch.drawn) for table, _, watch in nodes])


def start_subscribers(
    settings: list[MqttSettings], count: int, procs: int
) -> tuple[Any, Any, list[Any]]:
    """`count` ledbar nodes spread over `procs` processes; returns (done, out, workers)."""
    names = [(s.table, n) for n in range(count // len(settings)) for s in settings]
    spawn = multiprocessing.get_context("spawn")
    done, out = spawn.Event(), spawn.Queue()
    workers, ready = [], []
    for k in range(procs):
        ready.append(spawn.Event())
        workers.append(
            spawn.Process(
                target=subscribers, args=(settings, names[k::procs], ready[-1], done, out)
            )
        )
        workers[-1].start()
    for event in ready:
        event.wait(60)
    return done, out, workers


def measure(
    settings: list[MqttSettings], folder: Path, count: int, rolls: int, pace: float, procs: int
) -> list[float]:
    towers = [TablePublisher(Table(folder / f"{s.table}.db"), s).start() for s in settings]
    for tower in towers:
        tower.table.reset_tracker({"weight_a": START, "weight_b": rolls + 10})
    done, out, workers = start_subscribers(settings, count, procs)
    time.sleep(2.0)  # every node has drawn the retained bar
    started: dict[str, dict[int, float]] = {s.table: {} for s in settings}
    threads = [
        threading.Thread(target=run_tower, args=(t, rolls, pace, started[s.table]))
        for t, s in zip(towers, settings, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    time.sleep(2.0)
    done.set()
    drawn = [pair for _ in workers for pair in out.get(timeout=60)]
    for worker in workers:
        worker.join(30)
    for tower in towers:
        tower.stop()
    return [
        watch[p] - t0 for table, watch in drawn for p, t0 in started[table].items() if p in watch
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--broker", choices=["mosquitto", "amqtt"], default="mosquitto")
    parser.add_argument("--towers", type=int, default=10)
    parser.add_argument("--subscribers", type=int, default=100)
    parser.add_argument("--rolls", type=int, default=30, help="rolls per tower")
    parser.add_argument("--pace", type=float, default=0.1, help="seconds between rolls")
    parser.add_argument("--procs", type=int, default=2, help="subscriber processes")
    args = parser.parse_args()
    port, ws_port = free_port(), free_port()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        base = MqttSettings(host="127.0.0.1", port=port, ws_port=ws_port)
        if args.broker == "mosquitto":
            process = start_mosquitto(folder, port, ws_port)
            stop = process.terminate
        else:
            stop = EmbeddedBroker(base.model_copy(update={"host": None})).start().stop
        try:
            settings = [base.model_copy(update={"table": f"bench{i}"}) for i in range(args.towers)]
            latencies = measure(
                settings, folder, args.subscribers, args.rolls, args.pace, args.procs
            )
        finally:
            stop()
    report(args, latencies)


def report(args: argparse.Namespace, latencies: list[float]) -> None:
    expected = args.rolls * args.towers * (args.subscribers // args.towers)
    ms = sorted(1000 * x for x in latencies)
    p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"broker={args.broker} towers={args.towers} subscribers={args.subscribers} "
        f"rolls/tower={args.rolls} pace={args.pace}s cpus={os.cpu_count()} load={load}"
    )
    print(
        f"renders {len(ms)} of {expected}: median {statistics.median(ms):.1f} ms, "
        f"p95 {p95:.1f} ms, p99 {p99:.1f} ms, max {ms[-1]:.1f} ms "
        f"({'meets' if p99 < 50 else 'misses'} the p99 < 50 ms target)"
    )


if __name__ == "__main__":
    main()
