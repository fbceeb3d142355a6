"""The service's database: streams, their Scaler state and their decisions.

The contract is ``Store``, small on purpose; it stores and reads, and what the values mean is
``service.streams``'s business. Two classes keep it: ``Storage`` here, one SQLite file (the
embedded default, one host), and ``service.postgres.PostgresStorage``, one PostgreSQL database
shared by several replicas of the service. Both hold the same tables, created and upgraded by
one migration path (``migrate``): each backend lists, version by version, the statements that
take its schema one version up, and records the version it reached (SQLite in
``PRAGMA user_version``, PostgreSQL in a ``schema_version`` table).

What makes a batch exactly-once, whichever replica applies it, is ``append``: the decisions,
the Scaler's new state and a new revision in one transaction, conditional on the stream still
being at the revision its writer read (a compare-and-set; the loser stores nothing and raises
``StaleRevision``).

Schema (version 2)::

    streams    id TEXT PRIMARY KEY, spec TEXT (Scaler.spec, JSON), initial_operators INTEGER,
               state TEXT (Scaler.state_dict(), JSON), operators INTEGER (after the last
               decision), t REAL (of the last decision, NULL before any), retained INTEGER
               (rows in decisions), revision TEXT (new on every write)
    decisions  stream TEXT, t REAL, volume REAL, filtered REAL, previous INTEGER,
               operators INTEGER, action TEXT, reason TEXT, backlog REAL, running INTEGER,
               processed REAL (the last three as the job reported them with the sample, NULL
               when it did not); PRIMARY KEY (stream, t)

Each applied sample has exactly one decision, and a decision holds its sample (``t``,
``volume``), so one row per applied sample stores both.

The file is in WAL mode: readers never block the writer, and each write is one short
``BEGIN IMMEDIATE`` transaction; writes wait for each other (SQLite has one writer at a time),
for the length of a commit. With ``fsync=False`` (SQLite ``synchronous=NORMAL``) a commit
survives the process being killed; only an operating-system crash or power loss can undo the
last commits. ``fsync=True`` (``synchronous=FULL``) makes commits survive those too, at the
cost of a disk flush per commit.

Trouble with the file itself (another process holding the write lock past ``busy_timeout``, a
full disk, an I/O error, a read-only file) raises ``StorageUnavailable``, which the service
answers 503: the request may be retried, nothing was stored. After a failed write, ``ping`` (the
readiness probe) tries a real write, so the service reports not ready until writes work again.

The directory is created private (0700) and the files are the owner's alone (0600): they hold
every stream's configuration and history.

>>> import tempfile
>>> from pathlib import Path
>>> from scaling import Decision
>>> storage = Storage(Path(tempfile.mkdtemp()) / "steadyscale.db")
>>> storage.put_stream("orders", {"filter": {"name": "raw"}}, 1, {"t": None})
'created'
>>> decision = Decision(0.0, 120.0, 120.0, 1, 3, "up", "filtered 120.0 needs 3 > 1")
>>> revision = storage.append("orders", storage.get_stream("orders").revision, [decision],
...                           {"t": 0.0}, retention=1000)
>>> storage.latest_decision("orders") == decision
True
>>> storage.close()
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from scaling import Decision

# SQLite's schema, version by version: _MIGRATIONS[v] takes a database from version v to v + 1.
_MIGRATIONS: list[str] = [
    """
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
CREATE TABLE IF NOT EXISTS probe (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    count INTEGER NOT NULL,
    headroom BLOB
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
""",
    # 2: what the job reported with each sample (issue 13); NULL where it did not, and in the
    # rows stored before this version.
    """
ALTER TABLE decisions ADD COLUMN backlog REAL;
ALTER TABLE decisions ADD COLUMN running INTEGER;
ALTER TABLE decisions ADD COLUMN processed REAL;
""",
]
SCHEMA_VERSION = len(_MIGRATIONS)

STREAM_COLUMNS = "id, spec, initial_operators, operators, t, revision"
# In the order of Decision's fields, so that Decision(*row) reads a row back.
DECISION_COLUMNS = (
    "t, volume, filtered, previous, operators, action, reason, backlog, running, processed"
)
# What the readiness probe writes after a failed write: room for a few small batches.
_PROBE_BYTES = 64 * 1024
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


class StorageUnavailable(Exception):
    """The database cannot be read or written now (locked by another process past the busy
    timeout, disk full, I/O error, read-only; PostgreSQL unreachable); nothing was stored.
    ``path`` is the file, or the server and database; ``reason`` is the database's.

    ``in_doubt``: the connection to a database server broke while it was committing, so the
    transaction may have been stored or not; nobody can tell until the server is asked again.
    A resent batch is safe either way: it is recognised as a duplicate if it was stored.
    """

    def __init__(self, path: Path | str, reason: str, *, in_doubt: bool = False) -> None:
        super().__init__(f"the database {path} is unavailable: {reason}")
        self.path = path
        self.reason = reason
        self.in_doubt = in_doubt


class StorageBusy(Exception):
    """Another writer holds the database, and the caller chose not to wait (``wait=False``)."""


class Store(Protocol):
    """What the service needs of a database; ``Storage`` (SQLite) and
    ``service.postgres.PostgresStorage`` keep it, and ``tests/service/test_storage.py`` runs
    the same tests against both.

    Every method may raise ``StorageUnavailable`` (nothing stored; the service answers 503).
    ``write_failure`` is the reason of the last failed write, ``None`` once a write succeeds.
    """

    write_failure: str | None

    def close(self) -> None:
        """Release every connection."""

    def ping(self) -> None:
        """Raise unless the database answers (after a failed write: unless it takes one)."""

    def put_stream(
        self,
        stream_id: str,
        spec: dict[str, Any],
        initial_operators: int,
        state: dict[str, Any],
        *,
        replace: bool = True,
    ) -> Literal["created", "unchanged", "replaced", "different"]:
        """Create or replace the stream (see ``Storage.put_stream``)."""
        ...

    def delete_stream(self, stream_id: str) -> bool:
        """Remove the stream and its decisions; ``False`` if there was none."""
        ...

    def get_stream(self, stream_id: str) -> StoredStream | None:
        """The stream, or ``None``."""
        ...

    def revision(self, stream_id: str) -> str | None:
        """The stream's revision (``None`` if there is no such stream): one cheap read, to
        tell whether a cached Scaler is still the stored one."""
        ...

    def list_streams(self, after: str | None = None, limit: int = -1) -> list[StoredStream]:
        """The first ``limit`` streams (all when negative) with ids after ``after``."""
        ...

    def stream_ids(self) -> list[str]:
        """Every stream's id, in order."""
        ...

    def load(self, stream_id: str) -> tuple[StoredStream, dict[str, Any]] | None:
        """The stream and its Scaler state, as one read, or ``None``."""
        ...

    def applied_volumes(self, stream_id: str, times: Sequence[float]) -> dict[float, float]:
        """``{t: volume}`` of the stored samples at the given ``times``."""
        ...

    def append(
        self,
        stream_id: str,
        revision: str,
        decisions: Sequence[Decision],
        state: dict[str, Any],
        *,
        retention: int,
        wait: bool = True,
    ) -> str:
        """Store decisions and state in one transaction if the stream is still at
        ``revision`` (else ``StaleRevision``); returns the new revision."""
        ...

    def latest_decision(self, stream_id: str) -> Decision | None:
        """The stream's last decision, or ``None``."""
        ...

    def latest_decisions(self) -> dict[str, Decision]:
        """``{stream id: last decision}`` of every stream that has one."""
        ...

    def history(self, stream_id: str, since: float | None, limit: int) -> list[Decision]:
        """The first ``limit`` decisions with ``t > since``, by ``t``."""
        ...


def migrate(
    where: str, found: int, migrations: Sequence[str], execute: Callable[[str], object]
) -> None:
    """Bring the database ``where`` from schema version ``found`` to ``len(migrations)``,
    running each step's script with ``execute``; the caller records the version reached, in
    the same transaction where the backend allows it.

    Raises ``RuntimeError`` for a database newer than this steadyscale: its tables may mean
    something this code does not know, so it is better not to touch it.
    """
    if found > len(migrations):
        raise RuntimeError(
            f"{where} has schema version {found}; this steadyscale reads versions up to "
            f"{len(migrations)}"
        )
    for script in migrations[found:]:
        execute(script)


class Storage:
    """Streams, Scaler states and decisions in the SQLite file ``path`` (created with its
    directory).

    Safe to share between threads: each call takes a connection from a pool (one per
    concurrent caller at most) and gives it back. A write waits at most ``busy_timeout``
    seconds for another process's write lock, then raises ``StorageUnavailable``.

    Raises ``OSError`` naming the path when the directory or the file cannot be created or
    opened, or holds a schema newer than this code's.
    """

    def __init__(self, path: Path, *, fsync: bool = False, busy_timeout: float = 5.0) -> None:
        self.path = path
        self._synchronous = "FULL" if fsync else "NORMAL"
        self._busy_timeout = busy_timeout
        self._idle: list[sqlite3.Connection] = []
        self._guard = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = False
        self.write_failure: str | None = None
        prepare_file(path)
        try:
            self._initialise()
        except (sqlite3.Error, StorageUnavailable, RuntimeError) as error:
            self.close()
            raise OSError(f"cannot open the database {path}: {error}") from error

    def _initialise(self) -> None:
        path = self.path
        with self._connection() as db:
            db.execute("PRAGMA journal_mode=WAL")
            # One transaction, the version read inside it: a migration applies whole or not at
            # all, and processes opening the file together take turns (the second finds the
            # schema up to date). executescript would commit first, hence one statement at a
            # time.
            db.execute("BEGIN IMMEDIATE")
            try:
                version = db.execute("PRAGMA user_version").fetchone()[0]
                migrate(str(path), version, _MIGRATIONS, lambda script: _execute_each(db, script))
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        """Close every connection; connections in use close when they are given back."""
        with self._guard:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def ping(self) -> None:
        """Raise ``StorageUnavailable`` (or ``RuntimeError`` once closed) unless the database
        answers; after a failed write, unless a write of ``_PROBE_BYTES`` succeeds now."""
        if self.write_failure is None:
            with self._connection() as db:
                db.execute("SELECT 1 FROM streams LIMIT 1").fetchall()
            return
        # More than a batch of a few samples writes: ready means there is room for them.
        with self._transaction() as db:
            db.execute(
                "INSERT INTO probe VALUES (1, 1, zeroblob(?)) ON CONFLICT (id) DO UPDATE "
                "SET count = count + 1, headroom = excluded.headroom",
                (_PROBE_BYTES,),
            )

    def put_stream(
        self,
        stream_id: str,
        spec: dict[str, Any],
        initial_operators: int,
        state: dict[str, Any],
        *,
        replace: bool = True,
    ) -> Literal["created", "unchanged", "replaced", "different"]:
        """Create the stream, or replace it and forget its decisions, in one transaction.

        Returns ``"created"``, or ``"replaced"`` (``replace=True``). With ``replace=False`` an
        existing stream is left as it is: ``"unchanged"`` if it has this ``spec`` and
        ``initial_operators``, else ``"different"``.
        """
        encoded = dumps_state(state)
        with self._transaction() as db:
            row = db.execute(
                "SELECT spec, initial_operators FROM streams WHERE id = ?", (stream_id,)
            ).fetchone()
            if row is not None and not replace:
                same = json.loads(row[0]) == spec and row[1] == initial_operators
                return "unchanged" if same else "different"
            db.execute("DELETE FROM decisions WHERE stream = ?", (stream_id,))
            db.execute(
                "INSERT OR REPLACE INTO streams VALUES (?, ?, ?, ?, ?, NULL, 0, ?)",
                (
                    stream_id,
                    json.dumps(spec),
                    initial_operators,
                    encoded,
                    initial_operators,
                    uuid.uuid4().hex,
                ),
            )
        return "created" if row is None else "replaced"

    def delete_stream(self, stream_id: str) -> bool:
        """Remove the stream and its decisions; ``False`` if there was no such stream."""
        with self._transaction() as db:
            deleted = db.execute("DELETE FROM streams WHERE id = ?", (stream_id,)).rowcount > 0
            db.execute("DELETE FROM decisions WHERE stream = ?", (stream_id,))
            return deleted

    def get_stream(self, stream_id: str) -> StoredStream | None:
        """The stream, or ``None``."""
        with self._connection() as db:
            row = db.execute(
                f"SELECT {STREAM_COLUMNS} FROM streams WHERE id = ?", (stream_id,)
            ).fetchone()
        return None if row is None else stored_stream(row)

    def revision(self, stream_id: str) -> str | None:
        """The stream's revision, or ``None``."""
        with self._connection() as db:
            row = db.execute("SELECT revision FROM streams WHERE id = ?", (stream_id,)).fetchone()
        return None if row is None else str(row[0])

    def list_streams(self, after: str | None = None, limit: int = -1) -> list[StoredStream]:
        """The streams by id: the first ``limit`` (all when negative) with ids after
        ``after``."""
        with self._connection() as db:
            rows = db.execute(
                f"SELECT {STREAM_COLUMNS} FROM streams WHERE id > ? ORDER BY id LIMIT ?",
                ("" if after is None else after, limit),
            ).fetchall()
        return [stored_stream(row) for row in rows]

    def stream_ids(self) -> list[str]:
        """Every stream's id, in order."""
        with self._connection() as db:
            return [row[0] for row in db.execute("SELECT id FROM streams ORDER BY id")]

    def load(self, stream_id: str) -> tuple[StoredStream, dict[str, Any]] | None:
        """The stream and its Scaler state (as one read), or ``None``."""
        with self._connection() as db:
            row = db.execute(
                f"SELECT {STREAM_COLUMNS}, state FROM streams WHERE id = ?", (stream_id,)
            ).fetchone()
        return None if row is None else (stored_stream(row[:-1]), json.loads(row[-1]))

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
        wait: bool = True,
    ) -> str:
        """Store decisions (in increasing ``t``, after the stream's last) and the new state.

        One transaction: the decisions, the state, the pruning of all but the stream's newest
        ``retention`` decisions, and a new revision, which is returned. Raises
        ``StaleRevision``, storing nothing, unless the stream is still at ``revision``, and
        ``NonFiniteState``, storing nothing, if ``state`` holds NaN or ±inf. With
        ``wait=False``, raises ``StorageBusy`` (storing nothing) instead of waiting for another
        writer, of this process or another.
        """
        last = decisions[-1]
        new_revision = uuid.uuid4().hex
        encoded = dumps_state(state)
        with self._transaction(wait=wait) as db:
            updated = db.execute(
                "UPDATE streams SET state = ?, operators = ?, t = ?, retained = retained + ?, "
                "revision = ? WHERE id = ? AND revision = ? RETURNING retained",
                (
                    encoded,
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
                f"INSERT INTO decisions (stream, {DECISION_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(stream_id, *decision_row(d)) for d in decisions],
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
                f"SELECT {DECISION_COLUMNS} FROM decisions WHERE stream = ? "
                "ORDER BY t DESC LIMIT 1",
                (stream_id,),
            ).fetchone()
        return None if row is None else Decision(*row)

    def latest_decisions(self) -> dict[str, Decision]:
        """``{stream id: last decision}`` of every stream that has one."""
        with self._connection() as db:
            rows = db.execute(
                f"SELECT stream, {DECISION_COLUMNS} FROM decisions "
                "WHERE (stream, t) IN (SELECT id, t FROM streams)"
            ).fetchall()
        return {row[0]: Decision(*row[1:]) for row in rows}

    def history(self, stream_id: str, since: float | None, limit: int) -> list[Decision]:
        """The stream's first ``limit`` stored decisions with ``t > since``, by ``t``."""
        with self._connection() as db:
            rows = db.execute(
                f"SELECT {DECISION_COLUMNS} FROM decisions WHERE stream = ? AND t > ? "
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
        try:
            if connection is None:
                connection = sqlite3.connect(
                    self.path,
                    timeout=self._busy_timeout,
                    isolation_level=None,
                    check_same_thread=False,
                )
                connection.execute(f"PRAGMA synchronous={self._synchronous}")
            yield connection
        except sqlite3.OperationalError as error:
            # Locked past the timeout, disk full, I/O error, read-only: the file's trouble,
            # not the request's. Other errors (integrity, programming) are bugs: let them out.
            raise StorageUnavailable(self.path, str(error)) from error
        finally:
            if connection is not None:
                self._give_back(connection)

    def _give_back(self, connection: sqlite3.Connection) -> None:
        with self._guard:
            keep = not self._closed
            if keep:
                self._idle.append(connection)
        if not keep:
            connection.close()

    @contextmanager
    def _transaction(self, *, wait: bool = True) -> Iterator[sqlite3.Connection]:
        # SQLite lets one writer at a time in; queueing this process's writers on a lock
        # spares them SQLite's busy handler, which polls with sleeps of up to 100 ms.
        if not self._write_lock.acquire(blocking=wait):
            raise StorageBusy(self.path)
        try:
            with self._connection() as db:
                if not wait:
                    db.execute("PRAGMA busy_timeout = 0")
                try:
                    self._begin(db, wait)
                    try:
                        yield db
                        db.execute("COMMIT")
                    except BaseException:
                        if db.in_transaction:
                            db.execute("ROLLBACK")
                        raise
                finally:
                    if not wait:
                        db.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
        except StorageUnavailable as error:
            self.write_failure = error.reason
            raise
        finally:
            self._write_lock.release()
        self.write_failure = None

    def _begin(self, db: sqlite3.Connection, wait: bool) -> None:
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if not wait and error.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise StorageBusy(self.path) from error
            raise


def prepare_file(path: Path) -> None:
    """Create ``path``'s directory (0700) and the file itself (0600) if missing; make an
    existing file 0600. SQLite gives its -wal and -shm files the database file's mode."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        os.chmod(path, 0o600)
    except OSError as error:
        raise OSError(
            f"cannot use {path} for the database: {error.strerror or error} "
            "(the data directory must be a writable directory)"
        ) from error


def _execute_each(db: sqlite3.Connection, script: str) -> None:
    """Run the statements of ``script`` (none holds a ';' of its own) in the open
    transaction."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def decision_row(decision: Decision) -> tuple[Any, ...]:
    """The values of ``DECISION_COLUMNS`` for ``decision``, as both backends store them."""
    d = decision
    return (d.t, d.volume, d.filtered, d.previous, d.operators, d.action, d.reason,
            d.backlog, d.running, d.processed)  # fmt: skip


def stored_stream(row: Sequence[Any]) -> StoredStream:
    """A ``StoredStream`` from the columns ``id, spec (JSON), initial_operators, operators, t,
    revision``, as both backends select them."""
    stream_id, spec, initial_operators, operators, t, revision = row
    return StoredStream(stream_id, json.loads(spec), initial_operators, operators, t, revision)


class NonFiniteState(ValueError):
    """A state holding NaN or ±inf: stored, it could never be loaded again."""


def dumps_state(state: dict[str, Any]) -> str:
    """``state`` as compact JSON; ``NonFiniteState`` if it holds NaN or ±inf."""
    try:
        return json.dumps(state, separators=(",", ":"), allow_nan=False)
    except ValueError as error:
        raise NonFiniteState(f"the state holds a number JSON cannot: {error}") from None
