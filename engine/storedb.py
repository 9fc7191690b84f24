"""The store's SQLite file: opened to read or to write, and one transaction per change.

The connection helpers of engine/store.py, the one other module of the engine on a disk.
"""

from __future__ import annotations

import contextlib
import errno
import sqlite3
import threading
from pathlib import Path
from typing import Any

from tidetower.engine.storelock import StoreClaim

_SCHEMA = """
CREATE TABLE IF NOT EXISTS session (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    schema INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS rolls (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS parked (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS summary (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    upto INTEGER NOT NULL,
    rows TEXT NOT NULL,
    body TEXT NOT NULL
);
"""


ROWS_BEFORE = (
    "SELECT COUNT(*), MAX(seq),"
    " (SELECT id FROM rolls WHERE seq < ?1 ORDER BY seq DESC LIMIT 1)"
    " FROM rolls WHERE seq < ?1"
)
"""What the rolls before a seq are, in short: how many, the last one's seq and id. A summary
of them (engine/digest.py) is kept with it and trusted only while it still holds: an undo
reaching behind it (by a tower of an older version, say) changes it."""


class StoreError(RuntimeError):
    """The store cannot be opened or read; the message says which file and why."""


def open_to_read(path: Path) -> sqlite3.Connection:
    """A connection that never writes, to a file that must be a session store already."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        _has_tables(db, fresh=False)  # a session store, readable
    except BaseException:
        db.close()
        raise
    return db


def _has_tables(db: sqlite3.Connection, fresh: bool) -> None:
    """Refuse a file that is no session store: not SQLite, or a store missing its session or
    rolls (`fresh`: an empty file, a new store, is none)."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    missing = [t for t in ("session", "rolls") if t not in tables]
    if missing and not (fresh and not tables):
        raise sqlite3.DatabaseError(f"no {missing[0]} table: not a session store")


def open_to_write(path: Path) -> sqlite3.Connection:
    """The claimed store's connection: WAL, a full sync per commit, the tables made."""
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        _has_tables(db, fresh=True)  # before anything is written
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.executescript(_SCHEMA)
    except BaseException:
        db.close()
        raise
    return db


def shut(db: sqlite3.Connection, claim: StoreClaim | None) -> None:
    """Close the connection first: the claim may close the last descriptor of the file."""
    db.close()
    if claim is not None:
        claim.release()


def disk_full(error: BaseException) -> bool:
    """Whether SQLite (SQLITE_FULL) or the OS (ENOSPC) found no room for a write."""
    if isinstance(error, sqlite3.Error):
        return (getattr(error, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_FULL
    return isinstance(error, OSError) and error.errno == errno.ENOSPC


class Transaction:
    """BEGIN IMMEDIATE ... COMMIT under the store's lock, rolled back if anything fails; a
    full disk is said as a StoreError, the store left as it was before the transaction."""

    def __init__(self, db: sqlite3.Connection, lock: threading.Lock, path: Path) -> None:
        self._db = db
        self._lock = lock
        self._path = path

    def __enter__(self) -> sqlite3.Connection:
        self._lock.acquire()
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()  # a failed BEGIN must not leave the store locked for ever
            raise
        return self._db

    def __exit__(self, exc_type: Any, failed: BaseException | None, *rest: object) -> None:
        try:
            self._end(commit=exc_type is None)
        except sqlite3.Error as error:
            if not disk_full(error):
                raise
            failed = error
        finally:
            self._lock.release()
        if failed is not None and disk_full(failed):
            raise StoreError(
                f"session store {self._path}: the disk is full, so this change was not kept"
                " (the session is as it was)"
            ) from None

    def _end(self, commit: bool) -> None:
        try:
            if commit:
                self._db.execute("COMMIT")
            elif self._db.in_transaction:  # SQLite may have rolled back itself (a full disk)
                self._db.execute("ROLLBACK")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):  # leave no transaction open behind us
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
            raise
