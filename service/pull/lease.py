"""Several replicas on one PostgreSQL: one polls each stream at a time, all tell its health.

A replica polls a stream only while it holds the stream's lease, a row of the table
``steadyscale_sources`` (stream, owner, until, health): taking or renewing it is one statement
that succeeds only if the row is this replica's or its ``until`` has passed, by the database's
clock (so replicas' clocks need not agree). The poller asks for the lease of each stream it
finds due, for 1.5 of the stream's intervals (``lease_seconds``), and so renews it at every
evaluation time. Another replica asks once per evaluation time too, and does not poll a time
whose lease it was refused; so when the owner dies, its lease has passed by the next evaluation
time but one, which the other replica takes: its first poll is at most two intervals after the
dead replica's last (for intervals from 2 s up; below, the lease keeps a 1 s margin over the
interval, and the takeover waits one more interval). A poll that races a takeover is still
applied once: the sample goes through ``StreamService.post_samples``, where a repeated
evaluation time is a duplicate.

The owner writes the stream's ``SourceHealth`` to the same row after each poll, and every
replica reads the table back every second, so that ``GET`` of a stream, its decision (the
fallback) and its metric say the same on every replica (at most a second or two behind).
The table is created here, if missing, when the first replica starts: it holds only leases and
health, which the next poll rebuilds, and no other code reads it.

With the SQLite file there is one host and no lease: every process on the file polls, and
exactly-once still holds (a repeated evaluation time is a duplicate).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg

from service.pull.health import SourceHealth
from service.store import StorageUnavailable

T = TypeVar("T")

# A lease lasts this many of the stream's intervals, and at least LEASE_MARGIN seconds more
# than one: renewed at every evaluation time, it outlives a late poll (the poller's tick, a slow
# statement), and a dead owner's lease has passed before two intervals have (from 2 s up).
LEASE_INTERVALS = 1.5
LEASE_MARGIN = 1.0


def lease_seconds(interval: float) -> float:
    """How long a stream's lease lasts from its last renewal.

    >>> lease_seconds(15.0), lease_seconds(1.0)
    (22.5, 2.0)
    """
    return max(LEASE_INTERVALS * interval, interval + LEASE_MARGIN)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS steadyscale_sources (
    stream TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    until TIMESTAMPTZ NOT NULL,
    health TEXT
)
"""
_TAKE = """
INSERT INTO steadyscale_sources (stream, owner, until)
VALUES (%s, %s, clock_timestamp() + make_interval(secs => %s))
ON CONFLICT (stream) DO UPDATE SET owner = excluded.owner, until = excluded.until
WHERE steadyscale_sources.owner = excluded.owner OR steadyscale_sources.until < clock_timestamp()
RETURNING stream
"""


class Leases:
    """This replica's leases and the shared health, on one connection of its own to ``url``."""

    def __init__(self, url: str, timeout: float = 5.0) -> None:
        self.url = url
        self.owner = uuid.uuid4().hex
        self.timeout = timeout
        self._guard = threading.Lock()
        self._db: psycopg.Connection[Any] | None = None
        self._run(lambda db: db.execute(_SCHEMA).close())

    def take(self, wanted: Sequence[tuple[str, float]]) -> set[str]:
        """The streams of ``wanted`` (stream, interval seconds) whose lease this replica holds
        now, taken or renewed for ``lease_seconds(interval)``."""

        def take_each(db: psycopg.Connection[Any]) -> set[str]:
            held = set()
            for stream_id, interval in wanted:
                row = db.execute(_TAKE, (stream_id, self.owner, lease_seconds(interval)))
                if row.fetchone() is not None:
                    held.add(stream_id)
            return held

        return self._run(take_each)

    def record(self, stream_id: str, health: SourceHealth) -> None:
        """Write the stream's health, if this replica holds its lease."""
        statement = "UPDATE steadyscale_sources SET health = %s WHERE stream = %s AND owner = %s"
        params = (health.model_dump_json(), stream_id, self.owner)
        self._run(lambda db: db.execute(statement, params).close())

    def healths(self) -> dict[str, SourceHealth]:
        """Every stream's health as its last owner wrote it."""
        statement = "SELECT stream, health FROM steadyscale_sources WHERE health IS NOT NULL"
        rows = self._run(lambda db: db.execute(statement).fetchall())
        return {stream: SourceHealth.model_validate(json.loads(text)) for stream, text in rows}

    def close(self) -> None:
        with self._guard:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """``work(connection)`` on the replica's connection, opened (again) when needed;
        PostgreSQL's trouble as ``StorageUnavailable``."""
        with self._guard:
            try:
                if self._db is None or self._db.closed:
                    self._db = psycopg.connect(
                        self.url, autocommit=True, connect_timeout=max(1, round(self.timeout))
                    )
                return work(self._db)
            except psycopg.OperationalError as error:
                if self._db is not None:
                    self._db.close()
                self._db = None
                raise StorageUnavailable("PostgreSQL (leases)", str(error).strip()) from None
