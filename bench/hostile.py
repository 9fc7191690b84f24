"""Red-team figures for memory (issue 26): each part runs in a memory cgroup of 2 GiB, a Pi
4's, and says whether it was refused, its peak memory and whether anything was OOM-killed.

- `tidetower read` of an 82 KB JPEG whose header says 30000x30000, and of a PNG that says
  32000x32000;
- a tower on its own LAN Mosquitto (`tidetower run --config` with `lan`) while a guest sends
  a 200 MB publish, once and then ten at once; the GM is answered after each.

Needs root and a cgroup v1 or v2 memory controller (a container's own root will do).
Run: python bench/hostile.py
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cv2
import numpy as np
import paho.mqtt.client as paho

LIMIT = 2 << 30
CGROUP = Path("/sys/fs/cgroup/memory")
TOWER = [sys.executable, "-m", "tidetower.firmware.cli"]


@contextmanager
def cgroup(name: str) -> Iterator[Path]:
    """A cgroup v1 memory group of LIMIT bytes, removed after."""
    group = CGROUP / f"tidetower-bench-{name}-{os.getpid()}"
    group.mkdir()
    (group / "memory.limit_in_bytes").write_text(str(LIMIT))
    try:
        yield group
    finally:
        for pid in (group / "cgroup.procs").read_text().split():
            os.kill(int(pid), 9)
        time.sleep(0.2)
        group.rmdir()


def _peak(group: Path) -> str:
    peak = int((group / "memory.max_usage_in_bytes").read_text()) / (1 << 20)
    control = (group / "memory.oom_control").read_text()
    kills = next((line.split()[1] for line in control.splitlines() if "oom_kill " in line), "0")
    return f"peak {peak:.0f} MiB, OOM kills {kills}"


def _spawn(group: Path, command: list[str], **kwargs: object) -> subprocess.Popen[str]:
    """Start a command inside the group (it joins before it runs)."""
    procs = str(group / "cgroup.procs")

    def join() -> None:
        Path(procs).write_text(str(os.getpid()))

    return subprocess.Popen(command, preexec_fn=join, text=True, **kwargs)  # type: ignore[call-overload]


def _declaring(extension: str, side: int, folder: Path) -> Path:
    """A small real picture whose header is made to say side x side."""
    data = bytearray(cv2.imencode(extension, np.full((64, 64, 3), 90, np.uint8))[1].tobytes())
    if extension == ".png":
        data[16:24] = struct.pack(">II", side, side)
    else:
        at = data.index(b"\xff\xc0")
        data[at + 5 : at + 9] = struct.pack(">HH", side, side)
    path = folder / f"huge{extension}"
    path.write_bytes(bytes(data) + b"\0" * 80_000)
    return path


def pictures(folder: Path) -> None:
    for extension, side in ((".jpg", 30000), (".png", 32000)):
        path = _declaring(extension, side, folder)
        with cgroup("read") as group:
            read = _spawn(
                group, [*TOWER, "read", str(path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
            )
            said, _ = read.communicate(timeout=600)
            refused = read.returncode != 0 and f"{side}x{side}" in said
            verdict = "refused" if refused else "NOT refused"
            size = path.stat().st_size // 1000
            print(f"read {size} KB {extension} saying {side}x{side}: {verdict}", end=" ")
            print(f"(exit {read.returncode}), {_peak(group)}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _big_publish(port: int, size: int) -> int:
    """A raw guest that declares a `size`-byte PUBLISH and sends it; bytes sent before cut."""
    guest = socket.create_connection(("127.0.0.1", port), 20)
    body = b"\x00\x04MQTT\x04\x02\x00\x3c\x00\x03big"
    guest.sendall(bytes([0x10, len(body)]) + body)
    guest.recv(4)
    length, left = b"", size
    while True:
        left, digit = divmod(left, 128)
        length += bytes([digit | (0x80 if left else 0)])
        if not left:
            break
    sent, chunk = 0, b"x" * (1 << 20)
    try:
        guest.sendall(bytes([0x30]) + length)
        while sent < size:
            guest.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass
    guest.close()
    return sent


def _at_once(port: int, guests: int) -> list[int]:
    """`guests` 200 MB publishes at the same time; the bytes each got through."""
    sent: list[int] = []
    threads = [
        threading.Thread(target=lambda: sent.append(_big_publish(port, 200_000_000)))
        for _ in range(guests)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sent


def _gm_answers(port: int, token: str) -> bool:
    """The GM sends a Tide and hears the tower's answer."""
    answered = threading.Event()
    gm = paho.Client(paho.CallbackAPIVersion.VERSION2, "bench-gm")
    gm.username_pw_set("gm", token)
    gm.on_message = lambda _c, _u, m: answered.set() if b'"gm-1"' in m.payload else None
    gm.connect("127.0.0.1", port)
    gm.subscribe("tidetower/main/cmd/result", 1)
    gm.loop_start()
    time.sleep(0.5)
    gm.publish("tidetower/main/cmd/setup", json.dumps({"id": "gm-1", "weight_a": 4}), 1)
    ok = answered.wait(20)
    gm.loop_stop()
    gm.disconnect()
    return ok


def publishes(folder: Path) -> None:
    port, ws_port = _free_port(), _free_port()
    config = folder / "tower.toml"
    config.write_text(
        f'[table]\nstore = "{folder / "s.db"}"\n[camera]\nsource = "simulated"\n'
        f'[mqtt]\nlan = true\nbind = "127.0.0.1"\nport = {port}\nws_port = {ws_port}\n'
    )
    with cgroup("tower") as group:
        tower = _spawn(
            group,
            [*TOWER, "run", "--config", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        while not (folder / "gm-token").exists() or not _listening(port):
            time.sleep(0.2)
        token = (folder / "gm-token").read_text().strip()
        for guests in (1, 10):
            sent = _at_once(port, guests)
            alive = "alive" if tower.poll() is None else "DEAD"
            print(f"{guests} guest(s) x 200 MB publish: each cut off after at most", end=" ")
            print(f"{max(sent) / 1e6:.1f} MB; tower {alive},", end=" ")
            print(f"GM answered: {_gm_answers(port, token)}; {_peak(group)}")
        tower.terminate()
        tower.wait(30)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        pictures(Path(folder))
        publishes(Path(folder))


if __name__ == "__main__":
    main()
