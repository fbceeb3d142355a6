"""The service's database in one SQLite file: the embedded default, one host.

``Storage`` keeps ``service.store.Store`` (the tables are described there, and the statements
come with it) in the file ``path``, with SQLite's schema (``_MIGRATIONS``, the version in
``PRAGMA user_version``).

The file is in WAL mode: readers never block the writer, and each write is one short
``BEGIN IMMEDIATE`` transaction; writes wait for each other (SQLite has one writer at a time),
for the length of a commit. The log is copied back into the file by checkpoints in a thread of
their own, not by the commit that fills it (``service.wal``). With ``fsync=False`` (SQLite
``synchronous=NORMAL``) a commit survives the process being killed; only an operating-system
crash or power loss can undo the last commits. ``fsync=True`` (``synchronous=FULL``) makes
commits survive those too, at the cost of a disk flush per commit.

Trouble with the file itself (another process holding the write lock past ``busy_timeout``, a
full disk, an I/O error, a read-only file) raises ``StorageUnavailable``, which the service
answers 503: the request may be retried, nothing was stored.

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

import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from pathlib import Path

from scaling import Decision
from service.migrations import migrate
from service.rows import DECISION_COLUMNS, decision_row
from service.store import StorageBusy, StorageUnavailable, Store
from service.wal import BACKSTOP_PAGES, Checkpointer

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
    # 3: each decision's reason code and record (the cost model); rows from before take the
    # code of their action (ScaledUp, ScaledDown, Steady) and no record.
    """
ALTER TABLE decisions ADD COLUMN code TEXT NOT NULL DEFAULT 'Steady';
ALTER TABLE decisions ADD COLUMN explain TEXT;
UPDATE decisions SET code = CASE action WHEN 'up' THEN 'ScaledUp' WHEN 'down' THEN 'ScaledDown'
    ELSE 'Steady' END;
""",
    # 4: the Scaler's state moves to a table of its own, written every so many samples
    # (service.checkpoints) instead of with every batch; a stream's state so far holds every
    # sample it applied. streams is rebuilt without it (DROP COLUMN needs SQLite 3.35).
    """
CREATE TABLE checkpoints (
    stream TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    t REAL,
    written REAL NOT NULL
);
INSERT INTO checkpoints (stream, state, t, written) SELECT id, state, t, 0 FROM streams;
CREATE TABLE streams_without_state (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    initial_operators INTEGER NOT NULL,
    operators INTEGER NOT NULL,
    t REAL,
    retained INTEGER NOT NULL,
    revision TEXT NOT NULL
);
INSERT INTO streams_without_state
    SELECT id, spec, initial_operators, operators, t, retained, revision FROM streams;
DROP TABLE streams;
ALTER TABLE streams_without_state RENAME TO streams;
""",
]
SCHEMA_VERSION = len(_MIGRATIONS)

# sqlite3 binds None as NULL only after looking for an adapter for it: finding none registered,
# it asks for the protocol's __adapt__ and builds the AttributeError it gets, at each of the three
# NULLs of a decision row without backlog, running and processed (5 % of the instructions of a
# 100-sample POST). With this one registered it finds one at once, which gives None back, bound
# as NULL as before. sqlite3's registry is the process's: every connection binds None this way.
sqlite3.register_adapter(type(None), lambda value: value)

# Rows one INSERT statement of _insert holds: one statement of 100 rows is bound and run in one
# call, where executemany runs one statement per row (0.6 against 0.8 ms of CPU for the rows
# of a 100-sample batch); 100 rows of 13 values are 1,300 parameters, far under SQLite's
# 32,766. A batch's rows go in as many such statements as fill, the rest one by one.
_ROWS_PER_INSERT = 100
_COLUMNS = ["stream", *(name.strip() for name in DECISION_COLUMNS.split(","))]
_INSERT = f"INSERT INTO decisions ({', '.join(_COLUMNS)}) VALUES "
_ROW = "(" + ", ".join("?" for _ in _COLUMNS) + ")"
_INSERT_ONE = _INSERT + _ROW
_INSERT_FULL = _INSERT + ", ".join([_ROW] * _ROWS_PER_INSERT)


class Storage(Store):
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
        self._checkpoints = Checkpointer(self._checkpoint)
        prepare_file(path)
        try:
            self._initialise()
        except (sqlite3.Error, StorageUnavailable, RuntimeError) as error:
            self.close()
            raise OSError(f"cannot open the database {path}: {error}") from error

    def _initialise(self) -> None:
        # Switching a file to WAL needs it to itself, and while another process holds a write
        # transaction on it (a replica migrating it) SQLite answers "locked" at once instead
        # of waiting out the busy timeout: so try again, until that timeout.
        deadline = time.monotonic() + self._busy_timeout
        while True:
            try:
                with self._connection() as db:
                    db.execute("PRAGMA journal_mode=WAL")
                break
            except StorageUnavailable:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.02)
        # The version read inside the migration's transaction: a migration applies whole or
        # not at all, and processes opening the file together take turns (the second finds
        # the schema up to date). executescript would commit first, hence _execute_each.
        with self._transaction(None, wait=True) as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            migrate(str(self.path), version, _MIGRATIONS, lambda script: _execute_each(db, script))
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        """Close every connection; connections in use close when they are given back."""
        self._checkpoints.close()
        with self._guard:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    @contextmanager
    def _connection(self, wait: bool = True) -> Iterator[sqlite3.Connection]:
        """A pooled connection that waits out another process's lock for ``busy_timeout``
        seconds, or (``wait=False``) fails at once."""
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
                    factory=_Connection,
                )
                connection.execute(f"PRAGMA synchronous={self._synchronous}")
                # Checkpoints run beside the commits (service.wal); a commit's own is a backstop.
                connection.execute(f"PRAGMA wal_autocheckpoint={BACKSTOP_PAGES}")
            assert isinstance(connection, _Connection)
            if connection.waits != wait:
                # Set only when it changes: the event loop's non-waiting writes take the same
                # idle connection again and again, and two PRAGMAs were a fifth of their SQL.
                waited = int(self._busy_timeout * 1000) if wait else 0
                connection.execute(f"PRAGMA busy_timeout = {waited}")
                connection.waits = wait
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
    def _transaction(self, stream_id: str | None, wait: bool) -> Iterator[sqlite3.Connection]:
        # SQLite lets one writer at a time in, whatever the stream; queueing this process's
        # writers on a lock spares them SQLite's busy handler, which polls with sleeps of up
        # to 100 ms.
        if not self._write_lock.acquire(blocking=wait):
            raise StorageBusy(self.path)
        try:
            with self._connection(wait) as db:
                self._begin(db, wait)
                try:
                    yield db
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
        finally:
            self._write_lock.release()
        self._checkpoints.committed()

    def _checkpoint(self) -> None:
        """Copy the log's pages that no reader needs into the database file (service.wal)."""
        with self._connection() as db:
            db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        # In WAL mode a read transaction sees the database as of its first read.
        with self._connection() as db:
            db.execute("BEGIN")
            try:
                yield db
            finally:
                if db.in_transaction:
                    db.execute("ROLLBACK")

    def busy(self) -> bool:
        return self._write_lock.locked()

    def _insert(
        self, db: sqlite3.Connection, stream_id: str, decisions: Sequence[Decision]
    ) -> None:
        """``Store._insert``'s rows, ``_ROWS_PER_INSERT`` to a statement (the tests compare the
        tables both leave: ``tests/service/test_storage_insert.py``)."""
        rows = [(stream_id, *decision_row(d)) for d in decisions]
        full = len(rows) - len(rows) % _ROWS_PER_INSERT
        for start in range(0, full, _ROWS_PER_INSERT):
            chunk = rows[start : start + _ROWS_PER_INSERT]
            db.execute(_INSERT_FULL, list(chain.from_iterable(chunk)))
        if full < len(rows):
            db.executemany(_INSERT_ONE, rows[full:])

    def _begin(self, db: sqlite3.Connection, wait: bool) -> None:
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if not wait and error.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise StorageBusy(self.path) from error
            raise


class _Connection(sqlite3.Connection):
    """A connection that knows whether its busy timeout is the storage's or 0."""

    waits = True  # sqlite3.connect's timeout sets the busy timeout


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
