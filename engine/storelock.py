"""One writer per session store, whatever name the store is opened by.

A writer holds an exclusive `flock` on the database file itself, not on a file named after
the path it was given, so a symlink, a hard link or `./x/../s.db` meets the same lock; the OS
frees it if the process dies. `<store>.lock` beside the real file only notes the holder's pid.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


class StoreHeld(Exception):
    """Another process writes this store; the message says which file and who."""


@dataclass
class _Hold:
    """This process's one descriptor of a store file, and how many stores use it."""

    fd: int
    writers: int = 0
    readers: int = 0


_HOLDS: dict[tuple[int, int], _Hold] = {}
"""This process's holds, by (st_dev, st_ino). A second flock in one process conflicts with the
first, so the stores of one process that share a file share one hold (a same-process reopen
stays allowed, as before); and its descriptor is closed only when no store of the process has
the file open, since closing any descriptor drops the POSIX locks SQLite holds on it."""
_GUARD = threading.Lock()
_HERE = threading.local()
"""`inside` while this thread holds _GUARD: a store collected then (its finalizer releasing
its claim from inside the guarded code) must not wait on the guard its own thread holds."""
_LATE: list[StoreClaim] = []
"""Claims released by a finalizer while their thread held the guard, released on its way out."""


@contextlib.contextmanager
def _guarded() -> Iterator[None]:
    """Hold the guard; claims a collection released meanwhile are released on the way out."""
    with _GUARD:
        _HERE.inside = True
        try:
            yield
        finally:
            _HERE.inside = False
    while _LATE:
        try:
            late = _LATE.pop()
        except IndexError:  # another thread on its way out took the last
            break
        late.release()


class StoreClaim:
    """One store's share of its file's hold; `release` gives it up (once)."""

    def __init__(self, key: tuple[int, int], writer: bool) -> None:
        self._key: tuple[int, int] | None = key
        self._writer = writer

    def release(self) -> None:
        """Give up this store's share; the last writer of the process unlocks the file."""
        if getattr(_HERE, "inside", False):  # a finalizer run by a collection under the guard
            _LATE.append(self)
            return
        with _guarded():
            key, self._key = self._key, None
            if key is None or key not in _HOLDS:
                return
            hold = _HOLDS[key]
            if self._writer:
                hold.writers -= 1
                if hold.writers == 0:
                    fcntl.flock(hold.fd, fcntl.LOCK_UN)
            else:
                hold.readers -= 1
            _forget_if_unused(key, hold)


def claim(path: Path, wait_s: float = 0.0) -> StoreClaim:
    """Claim `path` (created if new) as this process's to write, waiting up to `wait_s`
    seconds for another process to let go; raises StoreHeld if it does not. A new store is
    made readable by its owner alone (0600): SQLite gives its -wal and -shm the same mode."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    with _guarded():
        key, hold = _shared(fd)
        try:
            if hold.writers == 0:  # waits under the guard: no other claim may interleave
                _lock(hold.fd, path, wait_s)
                _note_holder(path)
        except BaseException:
            _forget_if_unused(key, hold)
            raise
        hold.writers += 1
    return StoreClaim(key, writer=True)


def keep_open(path: Path) -> StoreClaim:
    """Keep a read-only store's file known to this process's hold, locking nothing, so that
    a writer of the same process letting go does not close the file under its reader."""
    fd = os.open(path, os.O_RDONLY)
    with _guarded():
        key, hold = _shared(fd)
        hold.readers += 1
    return StoreClaim(key, writer=False)


def _shared(fd: int) -> tuple[tuple[int, int], _Hold]:
    """The process's hold of the file `fd` is open on (made from `fd` if there is none;
    otherwise `fd` is closed, as the hold's own descriptor serves)."""
    status = os.fstat(fd)
    key = (status.st_dev, status.st_ino)
    hold = _HOLDS.get(key)
    if hold is None:
        hold = _HOLDS[key] = _Hold(fd)
    else:
        os.close(fd)
    return key, hold


def _forget_if_unused(key: tuple[int, int], hold: _Hold) -> None:
    if hold.writers + hold.readers == 0:
        del _HOLDS[key]
        os.close(hold.fd)


def _lock(fd: int, path: Path, wait_s: float) -> None:
    """Lock the file exclusively, polling up to `wait_s` (flock cannot wait with a timeout)."""
    deadline, pause = time.monotonic() + wait_s, 0.01
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise StoreHeld(
                    f"session store {path} is in use by {_holder(path)}: one tower (or "
                    "`tidetower session`) at a time; send commands over MQTT instead"
                ) from None
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.2)


def _note(path: Path) -> Path:
    real = path.resolve()
    return real.with_name(real.name + ".lock")


def _note_holder(path: Path) -> None:
    """Note this process as the holder, for the message another one gets; only a note (a
    full disk may refuse it), written in place so that it needs no new space."""
    text = f"tidetower pid {os.getpid()}".encode()
    with contextlib.suppress(OSError):
        fd = os.open(_note(path), os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.pwrite(fd, text, 0)
            os.ftruncate(fd, len(text))
        finally:
            os.close(fd)


def _holder(path: Path) -> str:
    """Who holds the store, as its note says (a holder by another name notes elsewhere)."""
    try:
        return _note(path).read_text(encoding="utf-8").strip() or "another process"
    except OSError:
        return "another process"
