"""The session store: SQLite in WAL mode, written in one transaction per change.

The one module of the engine that touches a disk. A process killed at any moment
(kill -9) leaves either the change before or the change after, never half of one.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tidetower.engine.codec import SCHEMA_VERSION, dump, dump_tracker, load, load_tracker
from tidetower.engine.rules import RollContext, RollRecord
from tidetower.engine.session import SessionState

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
"""


class StoreError(RuntimeError):
    """The store cannot be opened or read; the message says which file and why."""


class SessionStore:
    """Keeps one table session on disk; `save` after every change, `load` at start-up."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as error:
            raise StoreError(f"cannot open session store {self.path}: {error}") from None
        self._saved_seqs = {row[0] for row in self._db.execute("SELECT seq FROM rolls")}

    def load(self) -> SessionState | None:
        """The stored session, or None if the store is new."""
        row = self._db.execute("SELECT schema, body FROM session WHERE id = 1").fetchone()
        if row is None:
            return None
        if row[0] != SCHEMA_VERSION:
            raise StoreError(f"{self.path} holds schema {row[0]}, this tower reads "
                             f"{SCHEMA_VERSION}")
        body = json.loads(row[1])
        rows = self._db.execute("SELECT body FROM rolls ORDER BY seq").fetchall()
        history = tuple(load(RollRecord, json.loads(r[0])) for r in rows)
        return SessionState(
            session_id=body["session_id"], system=body["system"],
            tracker=load_tracker(body["system"], body["tracker"]),
            declared=load(RollContext, body["declared"]), history=history,
            next_seq=body["next_seq"],
        )

    def save(self, state: SessionState) -> None:
        """Write `state` in one transaction: the session row and only the rolls that changed."""
        body = {"session_id": state.session_id, "system": state.system,
                "tracker": dump_tracker(state.system, state.tracker),
                "declared": dump(state.declared), "next_seq": state.next_seq}
        seqs = {r.seq for r in state.history}
        added = [r for r in state.history if r.seq not in self._saved_seqs]
        removed = self._saved_seqs - seqs
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO session VALUES (1, ?, ?)",
                       (SCHEMA_VERSION, json.dumps(body)))
            db.executemany("DELETE FROM rolls WHERE seq = ?", [(s,) for s in removed])
            db.executemany("INSERT INTO rolls VALUES (?, ?, ?)",
                           [(r.seq, r.id, json.dumps(dump(r))) for r in added])
        self._saved_seqs = seqs

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def close(self) -> None:
        """Close the database file."""
        self._db.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back if anything inside fails."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> sqlite3.Connection:
        self._db.execute("BEGIN IMMEDIATE")
        return self._db

    def __exit__(self, exc_type: Any, *rest: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
