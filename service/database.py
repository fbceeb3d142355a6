"""The plumbing under ``service.store.Store``: connections, write transactions, the errors.

``Database`` is what a backend provides (``close``, a connection for reads, one write
transaction, a consistent snapshot) and the helpers every statement of the store runs through:
the driver's spelling of a statement (``_sql``), a read's rows (``_one``, ``_all``), a write
whose failure is remembered for the readiness probe (``_writing``, ``ping``).

What a caller may catch is here too: ``StorageUnavailable`` (nothing stored; the service
answers 503), ``StorageBusy`` (a writer the caller chose not to wait for) and ``StaleRevision``
(the stream changed since it was read: the compare-and-set of a batch lost).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

# What the readiness probe writes after a failed write: room for a few small batches.
_PROBE_BYTES = 64 * 1024


def new_revision() -> str:
    """A stream's next revision: 128 random bits as 32 hex digits, as ``uuid.uuid4().hex``
    spelled them, without building the UUID object, which cost four times the random bytes
    (4.2 against 0.8 us, once a batch; issue 32)."""
    return os.urandom(16).hex()


class StaleRevision(Exception):
    """The stream changed, or was removed, since the revision given was read."""


# Seconds a batch waits for its stream (another batch of it, or on PostgreSQL any session
# holding its row), by default (the setting lock_timeout): batches commit in milliseconds, so a
# longer wait means a stuck writer, and every waiter holds a worker thread other streams need.
LOCK_TIMEOUT = 2.0


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


class Database(ABC):
    """Connections and transactions, as the statements of ``service.store.Store`` use them.

    ``write_failure`` is the reason of the last failed write, ``None`` once a write succeeds;
    after a failed write, ``ping`` (the readiness probe) tries a real write, so the service
    reports not ready until writes work again.
    """

    write_failure: str | None = None

    @abstractmethod
    def close(self) -> None:
        """Release every connection; calls after this raise ``RuntimeError``."""

    @abstractmethod
    def _connection(self) -> AbstractContextManager[Any]:
        """A connection for reads (a DB-API connection: ``execute``, ``cursor``); the
        database's trouble as ``StorageUnavailable``."""

    @abstractmethod
    def _transaction(self, stream_id: str | None, wait: bool) -> AbstractContextManager[Any]:
        """A connection in a write transaction, committed when the block ends and rolled back
        if it raises. With ``wait=False``, ``StorageBusy`` instead of waiting for another
        writer (of the database, or of the stream ``stream_id``)."""

    @abstractmethod
    def _snapshot(self) -> AbstractContextManager[Any]:
        """A connection whose reads, until the block ends, all see the database as of one
        moment (no write committed meanwhile shows)."""

    def _sql(self, statement: str) -> str:
        """``statement`` (parameters as ``?``) as this backend's driver takes it."""
        return statement

    def _run(self, db: Any, statement: str, params: Sequence[Any] = ()) -> Any:
        """The cursor of ``statement`` run on ``db``."""
        return db.execute(self._sql(statement), params)

    @contextmanager
    def _writing(self, stream_id: str | None = None, *, wait: bool = True) -> Iterator[Any]:
        """``_transaction``, its failure remembered for the readiness probe."""
        try:
            with self._transaction(stream_id, wait) as db:
                yield db
        except StorageUnavailable as error:
            self.write_failure = error.reason
            raise
        self.write_failure = None

    def busy(self) -> bool:
        """Whether this process is writing: a write with ``wait=False`` would fail now."""
        return False

    def ping(self) -> None:
        """Raise ``StorageUnavailable`` (or ``RuntimeError`` once closed) unless the database
        answers; after a failed write, unless a write of ``_PROBE_BYTES`` succeeds now."""
        if self.write_failure is None:
            with self._connection() as db:
                self._run(db, "SELECT 1 FROM streams LIMIT 1").fetchall()
            return
        with self._writing() as db:  # more than a few samples' worth: room for a batch
            self._run(
                db,
                "INSERT INTO probe VALUES (1, 1, ?) ON CONFLICT (id) DO UPDATE "
                "SET count = probe.count + 1, headroom = excluded.headroom",
                (bytes(_PROBE_BYTES),),
            )

    def _one(self, statement: str, params: Sequence[Any] = ()) -> Any:
        """The first row of a read, or ``None``."""
        with self._connection() as db:
            return self._run(db, statement, params).fetchone()

    def _all(self, statement: str, params: Sequence[Any] = ()) -> list[Any]:
        """Every row of a read."""
        with self._connection() as db:
            return list(self._run(db, statement, params).fetchall())
