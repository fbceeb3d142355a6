"""The service's database: streams, their Scaler state and their decisions, in one SQLite file.

This module is all the service knows of SQL. Its interface is the ``Storage`` class and the two
value types it returns, small on purpose, so that a PostgreSQL class with the same methods can
serve several replicas later. It stores and reads; what the values mean is ``service.streams``'s
business.

Schema (``PRAGMA user_version`` = 1)::

    streams    id TEXT PRIMARY KEY, spec TEXT (Scaler.spec, JSON), initial_operators INTEGER,
               state TEXT (Scaler.state_dict(), JSON), operators INTEGER (after the last
               decision), t REAL (of the last decision, NULL before any), retained INTEGER
               (rows in decisions), revision TEXT (new on every write)
    decisions  stream TEXT, t REAL, volume REAL, filtered REAL, previous INTEGER,
               operators INTEGER, action TEXT, reason TEXT; PRIMARY KEY (stream, t)

Each applied sample has exactly one decision, and a decision holds its sample (``t``,
``volume``), so one row per applied sample stores both.

The file is in WAL mode: readers never block the writer, and each write is one short
``BEGIN IMMEDIATE`` transaction; writes wait for each other (SQLite has one writer at a time),
for the length of a commit. With ``fsync=False`` (SQLite ``synchronous=NORMAL``) a commit
survives the process being killed; only an operating-system crash or power loss can undo the
last commits. ``fsync=True`` (``synchronous=FULL``) makes commits survive those too, at the
cost of a disk flush per commit.

>>> import tempfile
>>> from pathlib import Path
>>> from scaling import Decision
>>> storage = Storage(Path(tempfile.mkdtemp()) / "steadyscale.db")
>>> storage.put_stream("orders", {"filter": {"name": "raw"}}, 1, {"t": None})
True
>>> decision = Decision(0.0, 120.0, 120.0, 1, 3, "up", "filtered 120.0 needs 3 > 1")
>>> revision = storage.append("orders", storage.get_stream("orders").revision, [decision],
...                           {"t": 0.0}, retention=1000)
>>> storage.latest_decision("orders") == decision
True
>>> storage.close()
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scaling import Decision

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS streams (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    initial_operators INTEGER NOT NULL,
    state TEXT NOT NULL,
    operators INTEGER NOT NULL,
    t REAL,
    retained INTEGER NOT NULL,
    revision TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS decisions (
    stream TEXT NOT NULL,
    t REAL NOT NULL,
    volume REAL NOT NULL,
    filtered REAL NOT NULL,
    previous INTEGER NOT NULL,
    operators INTEGER NOT NULL,
    action TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (stream, t)
) WITHOUT ROWID;
"""

_STREAM_COLUMNS = "id, spec, initial_operators, operators, t, revision"
_DECISION_COLUMNS = "t, volume, filtered, previous, operators, action, reason"
# Keep IN (...) lists well under SQLite's limit on bound parameters.
_CHUNK = 500


@dataclass(frozen=True)
class StoredStream:
    """A stream as stored: its configuration and where it stands.

    ``spec`` is the Scaler's ``spec``; ``operators`` and ``t`` are those of the last decision
    (``initial_operators`` and ``None`` before the first sample); ``revision`` changes on every
    write, so a writer can tell whether the stream changed since it read it.
    """

    id: str
    spec: dict[str, Any]
    initial_operators: int
    operators: int
    t: float | None
    revision: str


class StaleRevision(Exception):
    """The stream changed, or was removed, since the revision given was read."""


class Storage:
    """Streams, Scaler states and decisions in the SQLite file ``path`` (created with its
    directory).

    Safe to share between threads: each call takes a connection from a pool (one per
    concurrent caller at most) and gives it back.
    """

    def __init__(self, path: Path, *, fsync: bool = False) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._synchronous = "FULL" if fsync else "NORMAL"
        self._idle: list[sqlite3.Connection] = []
        self._guard = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = False
        with self._connection() as db:
            db.execute("PRAGMA journal_mode=WAL")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise RuntimeError(
                    f"{path} has schema version {version}; this steadyscale reads version "
                    f"{SCHEMA_VERSION}"
                )
            db.executescript(_SCHEMA)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        """Close every connection; connections in use close when they are given back."""
        with self._guard:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def ping(self) -> None:
        """Raise ``sqlite3.Error`` (or ``RuntimeError`` once closed) unless the database
        answers."""
        with self._connection() as db:
            db.execute("SELECT 1 FROM streams LIMIT 1").fetchall()

    def put_stream(
        self, stream_id: str, spec: dict[str, Any], initial_operators: int, state: dict[str, Any]
    ) -> bool:
        """Create the stream, or replace it and forget its decisions; ``True`` if created."""
        with self._transaction() as db:
            created = db.execute("SELECT 1 FROM streams WHERE id = ?", (stream_id,)).fetchone()
            db.execute("DELETE FROM decisions WHERE stream = ?", (stream_id,))
            db.execute(
                "INSERT OR REPLACE INTO streams VALUES (?, ?, ?, ?, ?, NULL, 0, ?)",
                (
                    stream_id,
                    json.dumps(spec),
                    initial_operators,
                    _dumps(state),
                    initial_operators,
                    uuid.uuid4().hex,
                ),
            )
        return created is None

    def delete_stream(self, stream_id: str) -> bool:
        """Remove the stream and its decisions; ``False`` if there was no such stream."""
        with self._transaction() as db:
            db.execute("DELETE FROM decisions WHERE stream = ?", (stream_id,))
            return db.execute("DELETE FROM streams WHERE id = ?", (stream_id,)).rowcount > 0

    def get_stream(self, stream_id: str) -> StoredStream | None:
        """The stream, or ``None``."""
        with self._connection() as db:
            row = db.execute(
                f"SELECT {_STREAM_COLUMNS} FROM streams WHERE id = ?", (stream_id,)
            ).fetchone()
        return None if row is None else _stream(row)

    def list_streams(self) -> list[StoredStream]:
        """Every stream, by id."""
        with self._connection() as db:
            rows = db.execute(f"SELECT {_STREAM_COLUMNS} FROM streams ORDER BY id").fetchall()
        return [_stream(row) for row in rows]

    def load(self, stream_id: str) -> tuple[StoredStream, dict[str, Any]] | None:
        """The stream and its Scaler state (as one read), or ``None``."""
        with self._connection() as db:
            row = db.execute(
                f"SELECT {_STREAM_COLUMNS}, state FROM streams WHERE id = ?", (stream_id,)
            ).fetchone()
        return None if row is None else (_stream(row[:-1]), json.loads(row[-1]))

    def applied_volumes(self, stream_id: str, times: Sequence[float]) -> dict[float, float]:
        """``{t: volume}`` of the stored samples of the stream at the given ``times``."""
        found: dict[float, float] = {}
        with self._connection() as db:
            for start in range(0, len(times), _CHUNK):
                chunk = times[start : start + _CHUNK]
                marks = ", ".join("?" * len(chunk))
                found.update(
                    db.execute(
                        f"SELECT t, volume FROM decisions WHERE stream = ? AND t IN ({marks})",
                        (stream_id, *chunk),
                    ).fetchall()
                )
        return found

    def append(
        self,
        stream_id: str,
        revision: str,
        decisions: Sequence[Decision],
        state: dict[str, Any],
        *,
        retention: int,
    ) -> str:
        """Store decisions (in increasing ``t``, after the stream's last) and the new state.

        One transaction: the decisions, the state, the pruning of all but the stream's newest
        ``retention`` decisions, and a new revision, which is returned. Raises
        ``StaleRevision``, storing nothing, unless the stream is still at ``revision``.
        """
        last = decisions[-1]
        new_revision = uuid.uuid4().hex
        with self._transaction() as db:
            updated = db.execute(
                "UPDATE streams SET state = ?, operators = ?, t = ?, retained = retained + ?, "
                "revision = ? WHERE id = ? AND revision = ? RETURNING retained",
                (
                    _dumps(state),
                    last.operators,
                    last.t,
                    len(decisions),
                    new_revision,
                    stream_id,
                    revision,
                ),
            ).fetchall()
            if not updated:
                raise StaleRevision(stream_id)
            db.executemany(
                "INSERT INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        stream_id,
                        d.t,
                        d.volume,
                        d.filtered,
                        d.previous,
                        d.operators,
                        d.action,
                        d.reason,
                    )
                    for d in decisions
                ],
            )
            excess = updated[0][0] - retention
            if excess > 0:
                db.execute(
                    "DELETE FROM decisions WHERE stream = ? AND t IN "
                    "(SELECT t FROM decisions WHERE stream = ? ORDER BY t LIMIT ?)",
                    (stream_id, stream_id, excess),
                )
                db.execute("UPDATE streams SET retained = ? WHERE id = ?", (retention, stream_id))
        return new_revision

    def latest_decision(self, stream_id: str) -> Decision | None:
        """The stream's last decision, or ``None``."""
        with self._connection() as db:
            row = db.execute(
                f"SELECT {_DECISION_COLUMNS} FROM decisions WHERE stream = ? "
                "ORDER BY t DESC LIMIT 1",
                (stream_id,),
            ).fetchone()
        return None if row is None else Decision(*row)

    def latest_decisions(self) -> dict[str, Decision]:
        """``{stream id: last decision}`` of every stream that has one."""
        with self._connection() as db:
            rows = db.execute(
                "SELECT s.id, d.t, d.volume, d.filtered, d.previous, d.operators, d.action, "
                "d.reason FROM streams s JOIN decisions d ON d.stream = s.id AND d.t = s.t"
            ).fetchall()
        return {row[0]: Decision(*row[1:]) for row in rows}

    def history(self, stream_id: str, since: float | None, limit: int) -> list[Decision]:
        """The stream's first ``limit`` stored decisions with ``t > since``, by ``t``."""
        with self._connection() as db:
            rows = db.execute(
                f"SELECT {_DECISION_COLUMNS} FROM decisions WHERE stream = ? AND t > ? "
                "ORDER BY t LIMIT ?",
                (stream_id, float("-inf") if since is None else since, limit),
            ).fetchall()
        return [Decision(*row) for row in rows]

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        with self._guard:
            if self._closed:
                raise RuntimeError(f"storage {self.path} is closed")
            connection = self._idle.pop() if self._idle else None
        if connection is None:
            connection = sqlite3.connect(
                self.path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            connection.execute(f"PRAGMA synchronous={self._synchronous}")
        try:
            yield connection
        finally:
            with self._guard:
                keep = not self._closed
                if keep:
                    self._idle.append(connection)
            if not keep:
                connection.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        # SQLite lets one writer at a time in; queueing this process's writers on a lock
        # spares them SQLite's busy handler, which polls with sleeps of up to 100 ms.
        with self._connection() as db, self._write_lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise


def _stream(row: Sequence[Any]) -> StoredStream:
    stream_id, spec, initial_operators, operators, t, revision = row
    return StoredStream(stream_id, json.loads(spec), initial_operators, operators, t, revision)


def _dumps(state: dict[str, Any]) -> str:
    return json.dumps(state, separators=(",", ":"))
