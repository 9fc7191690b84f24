"""The session store: SQLite in WAL mode, written in one transaction per change.

The one module of the engine that touches a disk. A process killed at any moment
(kill -9) leaves either the change before or the change after, never half of one.
"""

from __future__ import annotations

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
from tidetower.engine.storedb import (
    ROWS_BEFORE,
    Transaction,
    disk_full,
    open_to_read,
    open_to_write,
    shut,
)
from tidetower.engine.storedb import (
    StoreError as StoreError,  # where its callers have always found it
)
from tidetower.engine.storelock import StoreClaim, StoreHeld, claim, keep_open

T = TypeVar("T")


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
                self._db = open_to_read(self.path)
                self._claim = keep_open(self.path)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._claim = claim(self.path, wait_s)
                self._db = open_to_write(self.path)
        except StoreHeld as held:
            raise StoreError(str(held)) from None
        except (OSError, sqlite3.Error) as error:
            if self._claim is not None:
                self._claim.release()
            why = "the disk is full" if disk_full(error) else error
            raise StoreError(f"cannot open session store {self.path}: {why}") from None
        # closes the file and lets go of the claim on close(), or when the store is dropped
        self._closer = weakref.finalize(self, shut, self._db, self._claim)
        if wait_s > 0:
            self.wait_for_writers(wait_s)
        self._saved_seqs = {row[0] for row in self._db.execute("SELECT seq FROM rolls")}
        self.skipped: list[BadRow] = []
        """The stored rolls read so far that could not be, each named with why."""
        self._lock = threading.Lock()  # the publisher marks deliveries from its own thread

    def wait_for_writers(self, seconds: float) -> None:
        """How long a write waits for another process's write lock before it fails."""
        self._db.execute(f"PRAGMA busy_timeout = {round(seconds * 1000)}")

    def load(self, recent: int | None = None) -> SessionState | None:
        """The stored session, or None if the store is new; `recent`: only its latest rolls
        in `history`, the older ones counted in `earlier` (a year need not be in memory).
        A roll that cannot be read back is skipped, kept in `skipped`, left as it is."""
        row = self._db.execute("SELECT schema, body FROM session WHERE id = 1").fetchone()
        if row is None:
            return None
        if row[0] not in READABLE:
            raise StoreError(
                f"{self.path} holds schema {row[0]}, this tower reads {SCHEMA_VERSION}"
            )
        first = self.first_recent(recent)
        history = tuple(self.records(full_record, first=first))
        # a save deletes only the rolls it loaded and took back: never older or skipped ones
        self._saved_seqs = {s for s in self._saved_seqs if s >= first}
        self._saved_seqs -= {bad.seq for bad in self.skipped}
        try:
            body = json.loads(row[1])
            undone = tuple(full_record(r) for r in body.get("undone", []))
            earlier = self.count_before(first)
            return load_session(body, history, undone, earlier)
        except READ_ERRORS as error:
            raise StoreError(f"{self.path}: its session cannot be read ({reason(error)})") from None

    def first_recent(self, recent: int | None) -> int:
        """The seq of the first of the latest `recent` rolls (0: all of them)."""
        if recent is None:
            return 0
        query = "SELECT seq FROM rolls ORDER BY seq DESC LIMIT 1 OFFSET ?"
        row = self._db.execute(query, (max(0, recent - 1),)).fetchone()
        return 0 if row is None else int(row[0])

    def count_before(self, seq: int) -> int:
        """How many rolls are stored before `seq`."""
        found = self._db.execute("SELECT COUNT(*) FROM rolls WHERE seq < ?", (seq,)).fetchone()
        return int(found[0])

    def records(
        self,
        build: Callable[[dict[str, Any]], T],
        since: float | None = None,
        without: Sequence[str] = (),
        first: int = 0,
        before: int | None = None,
    ) -> Iterator[T]:
        """What `build` makes of each stored roll (as `roll_rows` gives them), oldest
        first; a roll it cannot read, or one out of bounds, is named in `skipped`."""
        for seq, body in self.roll_rows(since, without, first, before):
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
        self,
        since: float | None = None,
        without: Sequence[str] = (),
        first: int = 0,
        before: int | None = None,
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """The stored rolls' seqs and JSON in the store's order (`since`: from the first one
        recorded at or after it on, whatever the clock said of those after: SINCE; `first`,
        `before`: seqs from `first` on, before `before`), unchecked and not upgraded, one at
        a time: for a reader that wants speed over many rolls (statistics), which keeps none
        of them. The top-level keys named in `without` are left out by SQLite before Python
        parses the rest (a roll's `reading`, the camera's dice with their boxes, is half its
        JSON). A row that is no JSON object is named in `skipped`."""
        valid = "json_valid(body)"
        column = "body"
        args: list[object] = []
        if without:
            paths = ", ".join("?" for _ in without)
            column = f"CASE WHEN {valid} THEN json_remove(body, {paths}) ELSE body END"
            args += [f"$.{key}" for key in without]
        where = ["seq >= ?"]
        args.append(first)
        if since is not None:
            where.append(f"seq >= ({SINCE.format(valid=valid)})")
            args.append(since)
        if before is not None:
            where.append("seq < ?")
            args.append(before)
        query = f"SELECT seq, {column} FROM rolls WHERE {' AND '.join(where)} ORDER BY seq"
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
            if removed:  # a summary counting a roll taken back is wrong: made again
                db.execute("DELETE FROM summary WHERE upto > ?", (min(removed),))
            db.executemany(
                "INSERT INTO rolls VALUES (?, ?, ?)",
                [(r.seq, r.id, json.dumps(dump(r))) for r in added],
            )
            db.executemany(
                "INSERT INTO outbox (kind, body) VALUES (?, ?)",
                [(e.kind, json.dumps(e.body)) for e in events],
            )
        self._saved_seqs = seqs

    def kept_summary(self) -> tuple[int, str] | None:
        """The summary kept of the rolls before a seq, that seq and its JSON (engine/digest.py);
        None when none is kept, or the rolls before that seq changed since it was."""
        if not self._has("summary"):
            return None  # a store no tower of this version has opened yet
        row = self._db.execute("SELECT upto, rows, body FROM summary WHERE id = 1").fetchone()
        if row is None or row[1] != self._rows_before(row[0]):
            return None
        return int(row[0]), str(row[2])

    def keep_summary(self, upto: int, body: str) -> None:
        """Keep `body`, the JSON summary of the rolls before seq `upto`, in one transaction."""
        with self._transaction() as db:
            rows = self._rows_before(upto)
            db.execute("INSERT OR REPLACE INTO summary VALUES (1, ?, ?, ?)", (upto, rows, body))

    def _rows_before(self, upto: int) -> str:
        """The rolls before seq `upto` in short (storedb.ROWS_BEFORE), as text."""
        return json.dumps(self._db.execute(ROWS_BEFORE, (upto,)).fetchone())

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

    def _transaction(self) -> Transaction:
        if self.read_only:
            raise StoreError(f"session store {self.path} is open read-only")
        return Transaction(self._db, self._lock, self.path)

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
