"""A stream's rows as a whole: created, replaced, removed, read and listed.

``StreamStore`` is the part of ``service.store.Store`` that writes a stream's configuration
(its row in ``streams`` and the checkpoint it starts from) and takes every row of a stream away
with it; it reads the ``streams`` table, never the decisions.
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal

from scaling import same_spec
from service.database import Database, new_revision
from service.rows import STREAM_COLUMNS, StoredStream, dumps_state, stored_stream

_RESPELL = "UPDATE streams SET spec = ?, revision = ? WHERE id = ?"  # the same spec, as now


class StreamStore(Database):
    """The streams: ``put_stream``, ``delete_stream``, ``get_stream``, ``revision``,
    ``list_streams`` and ``stream_ids``."""

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
        revision = new_revision()
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
                        self._run(db, _RESPELL, (encoded_spec, new_revision(), stream_id))
                    return "unchanged"
                self._run(
                    db,
                    "UPDATE streams SET spec = ?, initial_operators = ?, operators = ?, "
                    "t = NULL, retained = 0, revision = ? WHERE id = ?",
                    (encoded_spec, initial_operators, initial_operators, new_revision(),
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
