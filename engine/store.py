"""The session store: SQLite in WAL mode, written in one transaction per change.

The one module of the engine that touches a disk. A process killed at any moment
(kill -9) leaves either the change before or the change after, never half of one.
"""

from __future__ import annotations

import contextlib
import errno
import json
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tidetower.engine.codec import (
    SCHEMA_VERSION,
    dump,
    dump_tracker,
)
from tidetower.engine.files import regular_if_there
from tidetower.engine.rows import (
    READ_ERRORS,
    BadRow,
    full_record,
    load_session,
    loaded,
    parsed,
    reason,
)
from tidetower.engine.rules import JSONValue
from tidetower.engine.session import SessionState
from tidetower.engine.storelock import StoreClaim, StoreHeld, claim, keep_open

T = TypeVar("T")

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
"""


SINCE = "SELECT MIN(seq) FROM rolls WHERE {valid} AND json_extract(body, '$.at') >= ?"
"""The first roll recorded at or after a time: `--since` keeps it and every roll after it in
the store's order, which a clock set back cannot reorder (docs/firmware.md)."""

READABLE = (1, 2, SCHEMA_VERSION)
"""The schemas a store may hold: older ones are upgraded as they are read (codec)."""


@dataclass(frozen=True)
class OutboxEvent:
    """An event to announce (a roll, an undo, a state change), kept until it is delivered."""

    kind: str
    body: JSONValue
    seq: int = 0


@dataclass(frozen=True)
class ParkedEvent:
    """An outbox event set aside because it cannot be published, and why; kept to retry."""

    event: OutboxEvent
    reason: str


class StoreError(RuntimeError):
    """The store cannot be opened or read; the message says which file and why."""


class SessionStore:
    """Keeps one table session on disk; `save` after every change, `load` at start-up."""

    def __init__(self, path: str | Path, wait_s: float = 0.0, read_only: bool = False) -> None:
        """Open (or create) the store and claim it as its one writer, waiting up to `wait_s`
        seconds for another writer to let go; `read_only` claims nothing and never writes,
        so it reads a store a running tower holds."""
        self.path = Path(path)
        self.read_only = read_only
        self._claim: StoreClaim | None = None
        try:
            regular_if_there(self.path)
            if read_only:
                self._db = _open_to_read(self.path)
                self._claim = keep_open(self.path)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._claim = claim(self.path, wait_s)
                self._db = _open_to_write(self.path)
        except StoreHeld as held:
            raise StoreError(str(held)) from None
        except (OSError, sqlite3.Error) as error:
            if self._claim is not None:
                self._claim.release()
            why = "the disk is full" if _disk_full(error) else error
            raise StoreError(f"cannot open session store {self.path}: {why}") from None
        # closes the file and lets go of the claim on close(), or when the store is dropped
        self._closer = weakref.finalize(self, _shut, self._db, self._claim)
        if wait_s > 0:
            self.wait_for_writers(wait_s)
        self._saved_seqs = {row[0] for row in self._db.execute("SELECT seq FROM rolls")}
        self.skipped: list[BadRow] = []
        """The stored rolls read so far that could not be, each named with why."""
        self._lock = threading.Lock()  # the publisher marks deliveries from its own thread

    def wait_for_writers(self, seconds: float) -> None:
        """How long a write waits for another process's write lock before it fails."""
        self._db.execute(f"PRAGMA busy_timeout = {round(seconds * 1000)}")

    def load(self) -> SessionState | None:
        """The stored session, or None if the store is new; a roll that cannot be read back
        is skipped and kept in `skipped`, and left in the store as it is."""
        row = self._db.execute("SELECT schema, body FROM session WHERE id = 1").fetchone()
        if row is None:
            return None
        if row[0] not in READABLE:
            raise StoreError(
                f"{self.path} holds schema {row[0]}, this tower reads {SCHEMA_VERSION}"
            )
        history = tuple(self.records(full_record))
        self._saved_seqs -= {bad.seq for bad in self.skipped}  # never deleted by a save
        try:
            body = json.loads(row[1])
            undone = tuple(full_record(r) for r in body.get("undone", []))
            return load_session(body, history, undone)
        except READ_ERRORS as error:
            raise StoreError(f"{self.path}: its session cannot be read ({reason(error)})") from None

    def records(
        self,
        build: Callable[[dict[str, Any]], T],
        since: float | None = None,
        without: Sequence[str] = (),
    ) -> Iterator[T]:
        """What `build` makes of each stored roll (as `roll_bodies` gives them), oldest
        first; a roll it cannot read, or one out of bounds, is named in `skipped`."""
        for seq, body in self.roll_rows(since, without):
            made = loaded(seq, body, build)
            if isinstance(made, BadRow):
                self.skipped.append(made)
            else:
                yield made

    def roll_bodies(
        self, since: float | None = None, without: Sequence[str] = ()
    ) -> Iterator[dict[str, Any]]:
        """The stored rolls as JSON objects, as `roll_rows` gives them, without their seqs."""
        for _, body in self.roll_rows(since, without):
            yield body

    def roll_rows(
        self, since: float | None = None, without: Sequence[str] = ()
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """The stored rolls' seqs and JSON in the store's order (`since`: from the first one
        recorded at or after it on, whatever the clock said of those after: SINCE), unchecked
        and not upgraded, one at a time: for a reader that wants speed
        over many rolls (statistics), which keeps none of them. The top-level keys named in
        `without` are left out by SQLite before Python parses the rest (a roll's `reading`,
        the camera's dice with their boxes, is half its JSON). A row that is no JSON object
        is named in `skipped`."""
        valid = "json_valid(body)"
        where = "" if since is None else f" WHERE seq >= ({SINCE.format(valid=valid)})"
        args: tuple[object, ...] = () if since is None else (since,)
        column = "body"
        if without:
            paths = ", ".join("?" for _ in without)
            column = f"CASE WHEN {valid} THEN json_remove(body, {paths}) ELSE body END"
            args = (*(f"$.{key}" for key in without), *args)
        query = f"SELECT seq, {column} FROM rolls{where} ORDER BY seq"
        for seq, text in self._db.execute(query, args):
            body = parsed(seq, text)
            if isinstance(body, BadRow):
                self.skipped.append(body)
            else:
                yield seq, body

    def save(self, state: SessionState, events: Sequence[OutboxEvent] = ()) -> None:
        """Write `state` and its events in one transaction; only changed rolls are written."""
        body = {
            "session_id": state.session_id,
            "system": state.system,
            "tracker": dump_tracker(state.system, state.tracker),
            "declared": dump(state.declared),
            "next_seq": state.next_seq,
            "actions": [dump(a) for a in state.actions],
            "undone": [dump(r) for r in state.undone],
            "set_up_after": state.set_up_after,
        }
        seqs = {r.seq for r in state.history}
        added = [r for r in state.history if r.seq not in self._saved_seqs]
        removed = self._saved_seqs - seqs
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO session VALUES (1, ?, ?)",
                (SCHEMA_VERSION, json.dumps(body)),
            )
            db.executemany("DELETE FROM rolls WHERE seq = ?", [(s,) for s in removed])
            db.executemany(
                "INSERT INTO rolls VALUES (?, ?, ?)",
                [(r.seq, r.id, json.dumps(dump(r))) for r in added],
            )
            db.executemany(
                "INSERT INTO outbox (kind, body) VALUES (?, ?)",
                [(e.kind, json.dumps(e.body)) for e in events],
            )
        self._saved_seqs = seqs

    def pending(self, limit: int = 100) -> list[OutboxEvent]:
        """Undelivered events, oldest first (set-aside ones are not among them)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, kind, body FROM outbox ORDER BY seq LIMIT ?", (limit,)
            ).fetchall()
        return [OutboxEvent(kind, _body(body), seq) for seq, kind, body in rows]

    def delivered(self, seq: int) -> None:
        """Forget an event once the broker has acknowledged it."""
        with self._transaction() as db:
            db.execute("DELETE FROM outbox WHERE seq = ?", (seq,))

    def park(self, seq: int, reason: str) -> None:
        """Set an event that cannot be published aside, with why, so that the events behind
        it go on; it is kept (`parked`) to be looked at and sent again after a fix."""
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO parked SELECT seq, kind, body, ? FROM outbox WHERE seq = ?",
                (reason, seq),
            )
            db.execute("DELETE FROM outbox WHERE seq = ?", (seq,))

    def parked(self) -> list[ParkedEvent]:
        """The events set aside, oldest first."""
        if self.read_only and not self._has("parked"):
            return []  # a store no tower of this version has opened yet sets none aside
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, kind, body, reason FROM parked ORDER BY seq"
            ).fetchall()
        return [ParkedEvent(OutboxEvent(k, _body(b), s), reason) for s, k, b, reason in rows]

    def unpark(self) -> int:
        """Put every event set aside back in the outbox, in its old place; returns how many.
        The next connect sends them, then the current state (a fix may make them sendable)."""
        with self._transaction() as db:
            moved = db.execute(
                "INSERT INTO outbox (seq, kind, body) SELECT seq, kind, body FROM parked"
            ).rowcount
            db.execute("DELETE FROM parked")
        return moved

    def _has(self, table: str) -> bool:
        with self._lock:
            found = self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone()
        return found is not None

    def _transaction(self) -> _Transaction:
        if self.read_only:
            raise StoreError(f"session store {self.path} is open read-only")
        return _Transaction(self._db, self._lock, self.path)

    def close(self) -> None:
        """Close the database file and let another process have the table."""
        with self._lock:
            self._closer()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _body(text: str) -> JSONValue:
    """A stored event's body; text that is not JSON (a damaged row) comes back as the text
    itself, which no reader takes for an event, so the publisher sets it aside."""
    try:
        body: JSONValue = json.loads(text)
    except ValueError:
        return text
    return body


def _open_to_read(path: Path) -> sqlite3.Connection:
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


def _open_to_write(path: Path) -> sqlite3.Connection:
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


def _shut(db: sqlite3.Connection, claim: StoreClaim | None) -> None:
    """Close the connection first: the claim may close the last descriptor of the file."""
    db.close()
    if claim is not None:
        claim.release()


def _disk_full(error: BaseException) -> bool:
    """Whether SQLite (SQLITE_FULL) or the OS (ENOSPC) found no room for a write."""
    if isinstance(error, sqlite3.Error):
        return (getattr(error, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_FULL
    return isinstance(error, OSError) and error.errno == errno.ENOSPC


class _Transaction:
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
            if not _disk_full(error):
                raise
            failed = error
        finally:
            self._lock.release()
        if failed is not None and _disk_full(failed):
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
