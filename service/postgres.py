"""The service's database on PostgreSQL: several replicas of the service, one database.

``PostgresStorage`` keeps ``service.store.Store`` with the same tables and statements as the
SQLite file (``Store`` brings them), through psycopg 3 and a connection pool
(psycopg_pool).
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

Schema: the same migration path as SQLite (``service.migrations.migrate``), the version in the
table ``schema_version``, under a transaction-scoped advisory lock, so replicas starting
together do not create the tables twice. DDL is transactional in PostgreSQL: a migration
applies whole or not at all.

Connection trouble (the server down or restarting, the pool exhausted for ``timeout`` seconds, a
connection cut mid-transaction) raises ``StorageUnavailable``; the service answers 503. So does
a statement the server cancels: a row lock waited for longer than ``lock_timeout``, a statement
run longer than ``statement_timeout`` (PostgreSQL's session settings of the same names). A
transaction cut before its COMMIT reached the server is rolled back by the server: nothing of
it is stored, and the client, which got a 503 or no answer, sends the batch again.
"""

from __future__ import annotations

import functools
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import Connection
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from scaling import Decision
from service.migrations import migrate
from service.rows import DECISION_COLUMNS, decision_row
from service.store import LOCK_TIMEOUT, StorageBusy, StorageUnavailable, Store

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
    """
ALTER TABLE decisions ADD COLUMN code TEXT NOT NULL DEFAULT 'Steady',
    ADD COLUMN explain TEXT;
UPDATE decisions SET code = CASE action WHEN 'up' THEN 'ScaledUp' WHEN 'down' THEN 'ScaledDown'
    ELSE 'Steady' END;
""",
    """
CREATE TABLE checkpoints (
    stream TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    t DOUBLE PRECISION,
    written DOUBLE PRECISION NOT NULL
);
INSERT INTO checkpoints (stream, state, t, written) SELECT id, state, t, 0 FROM streams;
ALTER TABLE streams DROP COLUMN state;
""",
]
SCHEMA_VERSION = len(_MIGRATIONS)

# pg_advisory_xact_lock's key for schema changes: "steadysc" in ASCII.
_MIGRATION_LOCK = 0x7374656164797363

# The INSERT of _insert: each column an array, in DECISION_COLUMNS' order.
_INSERT_COLUMNS = (
    f"INSERT INTO decisions (stream, {DECISION_COLUMNS}) SELECT %s, * FROM unnest("
    "%s::float8[], %s::float8[], %s::float8[], %s::int8[], %s::int8[], %s::text[], %s::text[], "
    "%s::float8[], %s::int8[], %s::float8[], %s::text[], %s::text[])"
)

# Seconds a statement may run, by default (the setting statement_timeout): the largest batch
# (10,000 samples) commits in well under a second.
STATEMENT_TIMEOUT = 30.0

# Seconds a pooled connection may stay idle and still be used without a check.
_CHECK_AFTER_IDLE = 1.0


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


class PostgresStorage(Store):
    """Streams, Scaler states and decisions in the PostgreSQL database at ``url``
    (``postgresql://user:password@host:port/database``), created or upgraded on opening.

    Safe to share between threads, and between processes: up to ``pool_size`` connections,
    opened on demand. A call waits at most ``timeout`` seconds for a connection (the server
    may be restarting), then raises ``StorageUnavailable``. Raises ``OSError`` when the
    database cannot be reached or its schema cannot be brought up to date on opening.
    """

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 8,
        timeout: float = 5.0,
        lock_timeout: float = LOCK_TIMEOUT,
        statement_timeout: float = STATEMENT_TIMEOUT,
    ) -> None:
        self.url = url
        self._where = _where(url)  # OSError for a URL libpq cannot read
        # PostgreSQL's own limits, per session: a statement that waits for a row lock longer
        # than lock_timeout, or runs longer than statement_timeout, is cancelled by the server
        # (an OperationalError: StorageUnavailable, 503 with Retry-After, nothing stored). Set
        # at connection start, after any options of the URL's own (a keyword would replace them).
        limits = (
            f"-c lock_timeout={round(lock_timeout * 1000)}ms "
            f"-c statement_timeout={round(statement_timeout * 1000)}ms"
        )
        given = conninfo_to_dict(url).get("options")
        options = f"{given} {limits}" if given else limits
        self._returned: weakref.WeakKeyDictionary[Connection[Any], float] = (
            weakref.WeakKeyDictionary()
        )
        self._pool: ConnectionPool[Connection[Any]] = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            timeout=timeout,
            open=False,
            # A connection the server dropped (restart, failover) is replaced before use
            # instead of failing the request that gets it; see _check_if_idle.
            check=self._check_if_idle,
            reset=self._returned_now,
            kwargs={"connect_timeout": max(1, round(timeout)), "options": options},
            name="steadyscale",
        )
        prepare_database(url, timeout=timeout)
        # Connections open in the background; a call waits for one at most ``timeout``.
        self._pool.open()

    def close(self) -> None:
        """Close the pool; calls after this raise ``RuntimeError``."""
        self._pool.close()

    def _sql(self, statement: str) -> str:
        return _pyformat(statement)

    def _insert(self, db: Any, stream_id: str, decisions: Sequence[Decision]) -> None:
        """One INSERT of the decisions as arrays, one per column: executemany sends one
        statement per row, and costs about 60 % more CPU for a batch of 100 (psycopg 3.3)."""
        columns = [list(column) for column in zip(*map(decision_row, decisions), strict=True)]
        db.execute(_INSERT_COLUMNS, (stream_id, *columns))

    def _check_if_idle(self, connection: Connection[Any]) -> None:
        """Check (one round trip) a connection idle for ``_CHECK_AFTER_IDLE`` seconds or
        more before it serves a call. One given back just now was working then: under load,
        checking every connection at every call was one round trip in four of a batch's. The
        server failing in between costs that call a 503 (nothing stored, or in doubt)."""
        returned = self._returned.get(connection)
        if returned is None or time.monotonic() - returned >= _CHECK_AFTER_IDLE:
            ConnectionPool.check_connection(connection)

    def _returned_now(self, connection: Connection[Any]) -> None:
        self._returned[connection] = time.monotonic()

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
    def _transaction(self, stream_id: str | None, wait: bool) -> Iterator[Connection[Any]]:
        with self._connection(writing=True) as db:
            if not wait and stream_id is not None:
                try:
                    db.execute(
                        "SELECT 1 FROM streams WHERE id = %s FOR UPDATE NOWAIT", (stream_id,)
                    )
                except psycopg.errors.LockNotAvailable:
                    raise StorageBusy(self._where) from None
            yield db

    @contextmanager
    def _snapshot(self) -> Iterator[Connection[Any]]:
        # READ COMMITTED takes a snapshot per statement; REPEATABLE READ one per transaction.
        with self._connection() as db:
            db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            yield db


@functools.cache
def _pyformat(statement: str) -> str:
    """``statement`` with psycopg's ``%s`` for SQLite's ``?`` (no statement holds a ``?`` or
    a ``%`` of its own)."""
    return statement.replace("?", "%s")
