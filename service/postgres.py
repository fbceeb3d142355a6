"""The service's database on PostgreSQL: several replicas of the service, one database.

``PostgresStorage`` keeps ``service.storage.Store`` with the same tables as the SQLite file
(``service.storage`` describes them), through psycopg 3 and a connection pool (psycopg_pool).
``STEADYSCALE_DATABASE_URL=postgresql://…`` (``steadyscale serve --database-url``) selects it.

Concurrency. Every transaction runs at PostgreSQL's default isolation, READ COMMITTED; what
serialises writers of one stream is the stream's row in ``streams``. ``append`` starts with
``UPDATE streams … WHERE id = %s AND revision = %s``: the update takes the row's lock, so a
second replica appending to the same stream waits for the first to commit, then PostgreSQL
evaluates the condition again on the committed row, finds another revision, and the second
replica stores nothing (``StaleRevision``; ``service.streams`` reloads the stream and redoes
the batch, which then finds its samples applied, or applies them after the other's). Writers of
different streams never wait for each other. ``put_stream`` and ``delete_stream`` also take the
stream's row first, so a batch cannot commit into a stream being replaced or removed.

Schema: the same migration path as SQLite (``service.storage.migrate``), the version in the
table ``schema_version``, under a transaction-scoped advisory lock, so replicas starting
together do not create the tables twice. DDL is transactional in PostgreSQL: a migration
applies whole or not at all.

Connection trouble (the server down or restarting, the pool exhausted for ``timeout`` seconds, a
connection cut mid-transaction) raises ``StorageUnavailable``; the service answers 503. A
transaction cut before its COMMIT reached the server is rolled back by the server: nothing of
it is stored, and the client, which got a 503 or no answer, sends the batch again.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import psycopg
from psycopg import Connection
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from scaling import Decision
from service.storage import (
    DECISION_COLUMNS,
    STREAM_COLUMNS,
    StaleRevision,
    StorageBusy,
    StorageUnavailable,
    StoredStream,
    decision_row,
    dumps_state,
    migrate,
    stored_stream,
)

# PostgreSQL's schema, version by version, as SQLite's in service.storage: the same tables and
# columns (REAL is 4 bytes in PostgreSQL, hence DOUBLE PRECISION; BIGINT for SQLite's 64-bit
# INTEGER).
_MIGRATIONS: list[str] = [
    """
CREATE TABLE streams (
    id TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    initial_operators BIGINT NOT NULL,
    state TEXT NOT NULL,
    operators BIGINT NOT NULL,
    t DOUBLE PRECISION,
    retained BIGINT NOT NULL,
    revision TEXT NOT NULL
);
CREATE TABLE probe (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    count BIGINT NOT NULL,
    headroom BYTEA
);
CREATE TABLE decisions (
    stream TEXT NOT NULL,
    t DOUBLE PRECISION NOT NULL,
    volume DOUBLE PRECISION NOT NULL,
    filtered DOUBLE PRECISION NOT NULL,
    previous BIGINT NOT NULL,
    operators BIGINT NOT NULL,
    action TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (stream, t)
);
""",
    """
ALTER TABLE decisions ADD COLUMN backlog DOUBLE PRECISION,
    ADD COLUMN running BIGINT,
    ADD COLUMN processed DOUBLE PRECISION;
""",
]
SCHEMA_VERSION = len(_MIGRATIONS)

# pg_advisory_xact_lock's key for schema changes: "steadysc" in ASCII.
_MIGRATION_LOCK = 0x7374656164797363

# What the readiness probe writes after a failed write, as SQLite's.
_PROBE_BYTES = 64 * 1024


def prepare_database(url: str, *, timeout: float = 5.0) -> None:
    """Create the schema in the database at ``url``, or bring it up to date, on a connection of
    its own, so that a database that cannot be used says why (the server's or libpq's own
    words) before the service starts. Raises ``OSError`` naming the server and database, never
    the password.

    Replicas starting together take turns (an advisory lock held by the migration's
    transaction): the first creates the tables, the others find them.
    """
    where = _where(url)
    try:
        with psycopg.connect(url, connect_timeout=max(1, round(timeout))) as db:
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            found = db.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
            version = 0
            if found is not None and found[0]:
                row = db.execute("SELECT version FROM schema_version").fetchone()
                version = 0 if row is None else int(row[0])
            else:
                db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                db.execute("INSERT INTO schema_version VALUES (0)")
            migrate(where, version, _MIGRATIONS, lambda script: db.execute(script))
            db.execute("UPDATE schema_version SET version = %s", (SCHEMA_VERSION,))
    except (psycopg.Error, RuntimeError) as error:
        reason = " ".join(str(error).split())
        raise OSError(f"cannot open the database {where}: {reason}") from error


def _where(url: str) -> str:
    """The server and database of ``url``, for messages: never the password."""
    try:
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError as error:
        raise OSError(f"database_url is not a PostgreSQL URL libpq can read: {error}") from None
    return f"postgresql://{params.get('host', '')}:{params.get('port', '')}/" + str(
        params.get("dbname", "")
    )


class PostgresStorage:
    """Streams, Scaler states and decisions in the PostgreSQL database at ``url``
    (``postgresql://user:password@host:port/database``), created or upgraded on opening.

    Safe to share between threads, and between processes: up to ``pool_size`` connections,
    opened on demand. A call waits at most ``timeout`` seconds for a connection (the server
    may be restarting), then raises ``StorageUnavailable``. Raises ``OSError`` when the
    database cannot be reached or its schema cannot be brought up to date on opening.
    """

    def __init__(self, url: str, *, pool_size: int = 8, timeout: float = 5.0) -> None:
        self.url = url
        self.write_failure: str | None = None
        self._where = _where(url)
        self._pool: ConnectionPool[Connection[Any]] = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            timeout=timeout,
            open=False,
            # A connection the server dropped (restart, failover) is replaced before use
            # instead of failing the request that gets it.
            check=ConnectionPool.check_connection,
            kwargs={"connect_timeout": max(1, round(timeout))},
            name="steadyscale",
        )
        prepare_database(url, timeout=timeout)
        # Connections open in the background; a call waits for one at most ``timeout``.
        self._pool.open()

    def close(self) -> None:
        """Close the pool; calls after this raise ``RuntimeError``."""
        self._pool.close()

    def ping(self) -> None:
        """Raise ``StorageUnavailable`` (``RuntimeError`` once closed) unless the database
        answers; after a failed write, unless a write of ``_PROBE_BYTES`` succeeds now."""
        if self.write_failure is None:
            with self._connection() as db:
                db.execute("SELECT 1 FROM streams LIMIT 1").fetchall()
            return
        with self._transaction() as db:
            db.execute(
                "INSERT INTO probe VALUES (1, 1, %s) ON CONFLICT (id) DO UPDATE "
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
        """As ``Storage.put_stream``. Two replicas creating one stream at once: one creates
        it, the other finds it (``"unchanged"``, or ``"different"``/``"replaced"``)."""
        encoded = dumps_state(state)
        row = (stream_id, json.dumps(spec), initial_operators, encoded, initial_operators)
        revision = uuid.uuid4().hex
        with self._transaction() as db:
            # Creates the row, or locks the existing one (the no-op update takes its lock, in
            # the same statement, so a replica deleting it meanwhile cannot slip in between):
            # nothing else writes the stream until this commits. Our revision back means
            # created.
            existing = db.execute(
                "INSERT INTO streams VALUES (%s, %s, %s, %s, %s, NULL, 0, %s) "
                "ON CONFLICT (id) DO UPDATE SET id = streams.id "
                "RETURNING spec, initial_operators, revision",
                (*row, revision),
            ).fetchone()
            assert existing is not None, "INSERT ... ON CONFLICT DO UPDATE returns its row"
            if existing[2] == revision:
                return "created"
            if not replace:
                same = json.loads(existing[0]) == spec and existing[1] == initial_operators
                return "unchanged" if same else "different"
            db.execute(
                "UPDATE streams SET spec = %s, initial_operators = %s, state = %s, "
                "operators = %s, t = NULL, retained = 0, revision = %s WHERE id = %s",
                (*row[1:], uuid.uuid4().hex, stream_id),
            )
            db.execute("DELETE FROM decisions WHERE stream = %s", (stream_id,))
        return "replaced"

    def delete_stream(self, stream_id: str) -> bool:
        """Remove the stream and its decisions; ``False`` if there was no such stream."""
        with self._transaction() as db:
            deleted = db.execute("DELETE FROM streams WHERE id = %s", (stream_id,)).rowcount > 0
            db.execute("DELETE FROM decisions WHERE stream = %s", (stream_id,))
        return deleted

    def get_stream(self, stream_id: str) -> StoredStream | None:
        """The stream, or ``None``."""
        with self._connection() as db:
            row = db.execute(
                f"SELECT {STREAM_COLUMNS} FROM streams WHERE id = %s", (stream_id,)
            ).fetchone()
        return None if row is None else stored_stream(row)

    def revision(self, stream_id: str) -> str | None:
        """The stream's revision, or ``None``."""
        with self._connection() as db:
            row = db.execute("SELECT revision FROM streams WHERE id = %s", (stream_id,)).fetchone()
        return None if row is None else str(row[0])

    def list_streams(self, after: str | None = None, limit: int = -1) -> list[StoredStream]:
        """The streams by id: the first ``limit`` (all when negative) with ids after
        ``after``."""
        with self._connection() as db:
            rows = db.execute(
                f"SELECT {STREAM_COLUMNS} FROM streams WHERE id > %s ORDER BY id LIMIT %s",
                ("" if after is None else after, None if limit < 0 else limit),
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
                f"SELECT {STREAM_COLUMNS}, state FROM streams WHERE id = %s", (stream_id,)
            ).fetchone()
        return None if row is None else (stored_stream(row[:-1]), json.loads(row[-1]))

    def applied_volumes(self, stream_id: str, times: Sequence[float]) -> dict[float, float]:
        """``{t: volume}`` of the stored samples of the stream at the given ``times``."""
        with self._connection() as db:
            rows = db.execute(
                "SELECT t, volume FROM decisions WHERE stream = %s AND t = ANY(%s)",
                (stream_id, list(times)),
            ).fetchall()
        return dict(rows)

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
        """As ``Storage.append``: one transaction, conditional on ``revision`` (the module
        docstring says how racing replicas serialise). With ``wait=False``, ``StorageBusy``
        instead of waiting for another writer of the stream."""
        last = decisions[-1]
        new_revision = uuid.uuid4().hex
        encoded = dumps_state(state)
        with self._transaction() as db:
            if not wait:
                try:
                    db.execute(
                        "SELECT 1 FROM streams WHERE id = %s FOR UPDATE NOWAIT", (stream_id,)
                    )
                except psycopg.errors.LockNotAvailable:
                    raise StorageBusy(self._where) from None
            updated = db.execute(
                "UPDATE streams SET state = %s, operators = %s, t = %s, "
                "retained = retained + %s, revision = %s WHERE id = %s AND revision = %s "
                "RETURNING retained",
                (
                    encoded,
                    last.operators,
                    last.t,
                    len(decisions),
                    new_revision,
                    stream_id,
                    revision,
                ),  # fmt: skip
            ).fetchone()
            if updated is None:
                raise StaleRevision(stream_id)
            with db.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO decisions (stream, {DECISION_COLUMNS}) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [(stream_id, *decision_row(d)) for d in decisions],
                )
            excess = updated[0] - retention
            if excess > 0:
                db.execute(
                    "DELETE FROM decisions WHERE stream = %s AND t IN "
                    "(SELECT t FROM decisions WHERE stream = %s ORDER BY t LIMIT %s)",
                    (stream_id, stream_id, excess),
                )
                db.execute("UPDATE streams SET retained = %s WHERE id = %s", (retention, stream_id))
        return new_revision

    def latest_decision(self, stream_id: str) -> Decision | None:
        """The stream's last decision, or ``None``."""
        with self._connection() as db:
            row = db.execute(
                f"SELECT {DECISION_COLUMNS} FROM decisions WHERE stream = %s "
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
                f"SELECT {DECISION_COLUMNS} FROM decisions WHERE stream = %s AND t > %s "
                "ORDER BY t LIMIT %s",
                (stream_id, float("-inf") if since is None else since, limit),
            ).fetchall()
        return [Decision(*row) for row in rows]

    @contextmanager
    def _connection(self, *, writing: bool = False) -> Iterator[Connection[Any]]:
        """A pooled connection, in a transaction committed when the block ends (rolled back if
        it raises); connection trouble as ``StorageUnavailable``, ``in_doubt`` when ``writing``
        and the connection broke while committing."""
        if self._pool.closed:
            raise RuntimeError(f"storage {self._where} is closed")
        committing = False
        try:
            with self._pool.connection() as db:
                yield db
                # The pool commits when the block ends: a connection lost now leaves the
                # transaction's outcome unknown to this side.
                committing = writing
        except (psycopg.OperationalError, psycopg.InterfaceError) as error:
            # The server down, restarting or out of disk, the pool exhausted: the database's
            # trouble, not the request's. Other errors (integrity, programming) are bugs.
            reason = " ".join(str(error).split())
            raise StorageUnavailable(self._where, reason, in_doubt=committing) from error

    @contextmanager
    def _transaction(self) -> Iterator[Connection[Any]]:
        """``_connection`` for writes: a failure is remembered for the readiness probe."""
        try:
            with self._connection(writing=True) as db:
                yield db
        except StorageUnavailable as error:
            self.write_failure = error.reason
            raise
        self.write_failure = None
