"""The service's database: what it stores, and the SQL both backends share.

``Store`` is the contract, small on purpose; it stores and reads, and what the values mean is
``service.streams``'s business. ``service.storage.Storage`` keeps it in one SQLite file (the
embedded default, one host), ``service.postgres.PostgresStorage`` in one PostgreSQL database
shared by replicas. Both run the statements written here once (``?`` for each parameter, ``%s``
for PostgreSQL's driver) and add only how they connect, start a write transaction and type
their columns; both create and upgrade their schema through ``service.migrations``, from per-version
statements, recording the version reached (SQLite's ``user_version``, a PostgreSQL table).

A batch is exactly-once, whichever replica applies it, by ``append``: the decisions, a new
revision and, now and then, a checkpoint of the Scaler's state in one transaction, conditional
on the stream still being at the revision its writer read (compare-and-set: the loser stores
nothing, ``StaleRevision``). Between checkpoints the state is not written: ``load`` reads the
last checkpoint and the samples applied after it, which the caller feeds to the Scaler again
(``service.checkpoints``); every applied sample is a row of ``decisions``, kept until a
checkpoint has taken it.

Schema (version 4)::

    streams      id TEXT PRIMARY KEY, spec TEXT (Scaler.spec, JSON), initial_operators INTEGER,
                 operators INTEGER (after the last decision), t REAL (of the last decision,
                 NULL before any), retained INTEGER (rows in decisions), revision TEXT (new on
                 every write)
    checkpoints  stream TEXT PRIMARY KEY, state TEXT (Scaler.state_dict(), JSON, once the
                 sample at t was applied), t REAL (NULL: the state the stream was created
                 with), written REAL (Unix seconds); one row per stream (version 4: the state
                 was a column of streams, written at every batch)
    decisions    stream TEXT, t REAL, volume REAL, filtered REAL, previous INTEGER,
                 operators INTEGER, action TEXT, reason TEXT, backlog REAL, running INTEGER,
                 processed REAL (the last three as the job reported them with the sample, NULL
                 when it did not), code TEXT (the reason code), explain TEXT (the decision's
                 record, JSON; NULL in rows from before version 3); PRIMARY KEY (stream, t)
    probe        what the readiness probe writes after a failed write

One row per applied sample stores it (``t``, ``volume``, what the job reported) and its decision.
"""

from __future__ import annotations

import json
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, closing, contextmanager
from pathlib import Path
from typing import Any, Literal

from scaling import Decision, same_spec
from service.rows import (
    APPLIED_COLUMNS,
    DECISION_COLUMNS,
    REPEATED,
    STREAM_COLUMNS,
    Applied,
    Checkpoint,
    StoredStream,
    decision_row,
    dumps_state,
    stored_decision,
    stored_stream,
)

# What the readiness probe writes after a failed write: room for a few small batches.
_PROBE_BYTES = 64 * 1024
_CHUNK = 500  # IN (...) lists well under the limits on bound parameters (SQLite: 32,766)
# STREAM_COLUMNS where another table of the statement has columns of the same names.
_QUALIFIED = ", ".join(f"streams.{column.strip()}" for column in STREAM_COLUMNS.split(","))
_RESPELL = "UPDATE streams SET spec = ?, revision = ? WHERE id = ?"  # the same spec, as now


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


class Store(ABC):
    """What the service needs of a database, with every statement both backends run.

    A backend provides ``close``, ``_connection`` (a connection for reads) and
    ``_transaction`` (one write transaction); ``tests/service/test_storage.py`` runs the same
    tests against both. Every method may raise ``StorageUnavailable`` (nothing stored; the
    service answers 503). ``write_failure`` is the reason of the last failed write, ``None``
    once a write succeeds; after a failed write, ``ping`` (the readiness probe) tries a real
    write, so the service reports not ready until writes work again.
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
        existing stream is kept: ``"unchanged"`` if it has this ``spec`` (perhaps spelled as
        before, then rewritten) and ``initial_operators``, else ``"different"``. Two replicas
        creating one stream at once: one creates it, the other finds it."""
        encoded_spec, encoded_state = json.dumps(spec), dumps_state(state)
        revision = uuid.uuid4().hex
        with self._writing() as db:
            # Creates the row, or locks it (the no-op update takes its lock in the same statement,
            # so no replica deletes it in between) until this commits. Our revision back: created.
            existing = self._run(
                db,
                "INSERT INTO streams (id, spec, initial_operators, operators, t, retained, "
                "revision) VALUES (?, ?, ?, ?, NULL, 0, ?) "
                "ON CONFLICT (id) DO UPDATE SET id = streams.id "
                "RETURNING spec, initial_operators, revision",
                (stream_id, encoded_spec, initial_operators, initial_operators, revision),
            ).fetchall()[0]
            if existing[2] != revision:
                if not replace:  # a spec spelled as before (same_spec) is written as now
                    stored = json.loads(existing[0])
                    if existing[1] != initial_operators or not same_spec(stored, spec):
                        return "different"
                    if stored != spec:
                        self._run(db, _RESPELL, (encoded_spec, uuid.uuid4().hex, stream_id))
                    return "unchanged"
                self._run(
                    db,
                    "UPDATE streams SET spec = ?, initial_operators = ?, operators = ?, "
                    "t = NULL, retained = 0, revision = ? WHERE id = ?",
                    (encoded_spec, initial_operators, initial_operators, uuid.uuid4().hex,
                     stream_id),
                )  # fmt: skip
                self._run(db, "DELETE FROM decisions WHERE stream = ?", (stream_id,))
            self._run(
                db,
                "INSERT INTO checkpoints (stream, state, t, written) VALUES (?, ?, NULL, ?) "
                "ON CONFLICT (stream) DO UPDATE SET state = excluded.state, t = NULL, "
                "written = excluded.written",
                (stream_id, encoded_state, time.time()),
            )
        return "created" if existing[2] == revision else "replaced"

    def delete_stream(self, stream_id: str) -> bool:
        """Remove the stream and its decisions; ``False`` if there was no such stream."""
        with self._writing() as db:
            deleted = self._run(db, "DELETE FROM streams WHERE id = ?", (stream_id,)).rowcount
            self._run(db, "DELETE FROM decisions WHERE stream = ?", (stream_id,))
            self._run(db, "DELETE FROM checkpoints WHERE stream = ?", (stream_id,))
        return bool(deleted > 0)

    def get_stream(self, stream_id: str) -> StoredStream | None:
        """The stream, or ``None``."""
        row = self._one(f"SELECT {STREAM_COLUMNS} FROM streams WHERE id = ?", (stream_id,))
        return None if row is None else stored_stream(row)

    def revision(self, stream_id: str) -> str | None:
        """The stream's revision (``None`` if there is no such stream): one cheap read, to
        tell whether a cached Scaler is still the stored one."""
        row = self._one("SELECT revision FROM streams WHERE id = ?", (stream_id,))
        return None if row is None else str(row[0])

    def list_streams(self, after: str | None = None, limit: int = -1) -> list[StoredStream]:
        """The streams by id: the first ``limit`` (all when negative) with ids after
        ``after``."""
        statement = f"SELECT {STREAM_COLUMNS} FROM streams WHERE id > ? ORDER BY id"
        params: tuple[Any, ...] = ("" if after is None else after,)
        if limit >= 0:
            statement, params = statement + " LIMIT ?", (*params, limit)
        return [stored_stream(row) for row in self._all(statement, params)]

    def stream_ids(self) -> list[str]:
        """Every stream's id, in order."""
        return [row[0] for row in self._all("SELECT id FROM streams ORDER BY id")]

    def load(self, stream_id: str) -> tuple[StoredStream, Checkpoint] | None:
        """The stream and its last checkpoint with the samples applied after it, as of one
        moment; or ``None``."""
        with self._snapshot() as db:
            row = self._run(
                db,
                f"SELECT {_QUALIFIED}, state, checkpoints.t, written FROM streams "
                "JOIN checkpoints ON stream = id WHERE id = ?",
                (stream_id,),
            ).fetchone()
            if row is None:
                return None
            *columns, state, t, written = row
            applied = self._run(
                db,
                f"SELECT {APPLIED_COLUMNS} FROM decisions WHERE stream = ? AND t > ? ORDER BY t",
                (stream_id, float("-inf") if t is None else t),
            ).fetchall()
        after = [Applied(*values) for values in applied]
        return stored_stream(columns), Checkpoint(json.loads(state), t, written, after)

    def applied_samples(
        self, stream_id: str, times: Sequence[float]
    ) -> dict[float, tuple[Any, ...]]:
        """``{t: (the REPEATED values)}`` of the stream's samples at ``times``."""
        found: dict[float, tuple[Any, ...]] = {}
        columns = ", ".join(("t", *REPEATED))
        with self._connection() as db:
            for start in range(0, len(times), _CHUNK):
                chunk = times[start : start + _CHUNK]
                marks = ", ".join("?" * len(chunk))
                statement = f"SELECT {columns} FROM decisions WHERE stream = ? AND t IN ({marks})"
                rows = self._run(db, statement, (stream_id, *chunk)).fetchall()
                found.update((t, tuple(reported)) for t, *reported in rows)
        return found

    def append(
        self,
        stream_id: str,
        revision: str,
        decisions: Sequence[Decision],
        state: dict[str, Any] | None,
        *,
        retention: int,
        wait: bool = True,
    ) -> str:
        """Store decisions (in increasing ``t``, after the stream's last) and, unless ``state``
        is ``None``, the Scaler's state after them as the stream's checkpoint.

        One transaction: the decisions, the checkpoint, the pruning of all but the stream's
        newest ``retention`` decisions (never one after the checkpoint: it is needed to load
        the Scaler), and a new revision, which is returned. Raises ``StaleRevision``, storing
        nothing, unless the stream is still at ``revision``, and ``NonFiniteState``, storing
        nothing, if ``state`` holds NaN or ±inf. With ``wait=False``, raises ``StorageBusy``
        (storing nothing) instead of waiting for another writer.
        """
        last = decisions[-1]
        new_revision = uuid.uuid4().hex
        encoded = None if state is None else dumps_state(state)
        with self._writing(stream_id, wait=wait) as db:
            # The update takes the stream's row lock (PostgreSQL) before the condition is
            # checked: a racing writer waits for this one, then finds another revision.
            updated = self._run(
                db,
                "UPDATE streams SET operators = ?, t = ?, retained = retained + ?, revision = ? "
                "WHERE id = ? AND revision = ? RETURNING retained",
                (last.operators, last.t, len(decisions), new_revision, stream_id, revision),
            ).fetchall()
            if not updated:
                raise StaleRevision(stream_id)
            self._insert(db, stream_id, decisions)
            if encoded is not None:
                self._run(
                    db,
                    "UPDATE checkpoints SET state = ?, t = ?, written = ? WHERE stream = ?",
                    (encoded, last.t, time.time(), stream_id),
                )
            excess = updated[0][0] - retention
            if excess > 0:
                self._prune(db, stream_id, excess)
        return new_revision

    def _prune(self, db: Any, stream_id: str, excess: int) -> None:
        """Delete the stream's ``excess`` oldest decisions, of those its checkpoint has taken,
        in the open transaction ``db``."""
        deleted = self._run(
            db,
            "DELETE FROM decisions WHERE stream = ? AND t IN (SELECT t FROM decisions "
            "WHERE stream = ? AND t <= (SELECT t FROM checkpoints WHERE stream = ?) "
            "ORDER BY t LIMIT ?)",
            (stream_id, stream_id, stream_id, excess),
        ).rowcount
        if deleted > 0:
            statement = "UPDATE streams SET retained = retained - ? WHERE id = ?"
            self._run(db, statement, (deleted, stream_id))

    def latest_decision(self, stream_id: str) -> Decision | None:
        """The stream's last decision, or ``None``."""
        row = self._one(
            f"SELECT {DECISION_COLUMNS} FROM decisions WHERE stream = ? ORDER BY t DESC LIMIT 1",
            (stream_id,),
        )
        return None if row is None else stored_decision(row)

    def latest_decisions(self) -> dict[str, Decision]:
        """``{stream id: last decision}`` of every stream that has one."""
        rows = self._all(
            f"SELECT stream, {DECISION_COLUMNS} FROM decisions "
            "WHERE (stream, t) IN (SELECT id, t FROM streams)"
        )
        return {row[0]: stored_decision(row[1:]) for row in rows}

    def history(self, stream_id: str, since: float | None, limit: int) -> list[Decision]:
        """The stream's first ``limit`` stored decisions with ``t > since``, by ``t``."""
        rows = self._all(
            f"SELECT {DECISION_COLUMNS} FROM decisions WHERE stream = ? AND t > ? "
            "ORDER BY t LIMIT ?",
            (stream_id, float("-inf") if since is None else since, limit),
        )
        return [stored_decision(row) for row in rows]

    def _insert(self, db: Any, stream_id: str, decisions: Sequence[Decision]) -> None:
        """Insert the stream's ``decisions`` in the open transaction ``db``."""
        with closing(db.cursor()) as cursor:
            cursor.executemany(
                self._sql(
                    f"INSERT INTO decisions (stream, {DECISION_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                ),
                [(stream_id, *decision_row(d)) for d in decisions],
            )

    def _one(self, statement: str, params: Sequence[Any] = ()) -> Any:
        """The first row of a read, or ``None``."""
        with self._connection() as db:
            return self._run(db, statement, params).fetchone()

    def _all(self, statement: str, params: Sequence[Any] = ()) -> list[Any]:
        """Every row of a read."""
        with self._connection() as db:
            return list(self._run(db, statement, params).fetchall())
