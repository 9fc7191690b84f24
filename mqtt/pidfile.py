"""The tower's Mosquitto never outlives the tower: it is told to stop when the tower dies,
and a start stops one an earlier tower left behind.

Mosquitto is started with Linux's parent-death signal (SIGTERM), so a tower killed with
`kill -9` takes it along; its process id is also kept in a pidfile beside its config, so a
start that finds one still running (a parent-death signal lost, a tower from before) stops
it, having checked that it is that Mosquitto and no other program.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
"""prctl(2)'s option: the signal a process gets when the thread that started it ends."""
STOP_SECONDS = 5.0
"""How long a leftover Mosquitto may take to stop after SIGTERM before it is killed."""


def parent_death_signal() -> Callable[[], None]:
    """What a child runs before it becomes Mosquitto: ask Linux for SIGTERM when the tower
    dies, and stop at once if the tower is already gone (it died while forking)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    tower = os.getpid()

    def arm() -> None:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != tower:
            os._exit(1)

    return arm


def keep_pid(pidfile: Path, pid: int) -> None:
    """Note the running Mosquitto's process id, readable by its owner only."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    with os.fdopen(os.open(pidfile, flags, 0o600), "w", encoding="ascii") as file:
        file.write(f"{pid}\n")


def forget_pid(pidfile: Path) -> None:
    """Remove the pidfile: Mosquitto was stopped on purpose."""
    with contextlib.suppress(FileNotFoundError):
        pidfile.unlink()


def stop_leftover(pidfile: Path, config: Path) -> int | None:
    """Stop the Mosquitto the pidfile names if it still runs `config` (an earlier tower's,
    left behind); returns its process id, or None when there was none. Any other program
    that has taken that process id since is left alone."""
    pid = _kept_pid(pidfile)
    if pid is None or not _runs_config(pid, config):
        forget_pid(pidfile)
        return None
    log.warning("stopping the Mosquitto an earlier tower left running (pid %d)", pid)
    for stop in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, stop)
        if _gone(pid, STOP_SECONDS):
            break
    forget_pid(pidfile)
    return pid


def _kept_pid(pidfile: Path) -> int | None:
    """The process id in the pidfile, or None when there is none that makes sense."""
    try:
        text = pidfile.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() and int(text) > 1 else None


def _runs_config(pid: int, config: Path) -> bool:
    """True when process `pid` is a Mosquitto started with `config`."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    named = bool(words) and Path(os.fsdecode(words[0])).name == "mosquitto"
    return named and os.fsencode(str(config)) in words


def _gone(pid: int, timeout: float) -> bool:
    """Wait up to `timeout` seconds for process `pid` to end (a zombie has ended)."""
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _alive(pid: int) -> bool:
    """True while process `pid` exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]
