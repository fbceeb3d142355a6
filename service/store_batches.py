"""A batch's reads and its one write: what a stream has applied, and applying more.

``BatchStore`` is the part of ``service.store.Store`` that ``service.streams`` applies a batch
with: ``load`` (the stream, its last checkpoint and the samples applied after it, as of one
moment), ``applied_samples`` (to tell a resent sample from a conflicting one) and ``append``,
the compare-and-set that makes a batch exactly-once (see ``service.store``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from contextlib import closing
from typing import Any

from scaling import Decision
from service.database import Database, StaleRevision, new_revision
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
    stored_stream,
)

_CHUNK = 500  # IN (...) lists well under the limits on bound parameters (SQLite: 32,766)
# STREAM_COLUMNS where another table of the statement has columns of the same names.
_QUALIFIED = ", ".join(f"streams.{column.strip()}" for column in STREAM_COLUMNS.split(","))


class BatchStore(Database):
    """A batch's reads and write: ``load``, ``applied_samples`` and ``append``."""

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
        next_revision = new_revision()
        encoded = None if state is None else dumps_state(state)
        with self._writing(stream_id, wait=wait) as db:
            # The update takes the stream's row lock (PostgreSQL) before the condition is
            # checked: a racing writer waits for this one, then finds another revision.
            updated = self._run(
                db,
                "UPDATE streams SET operators = ?, t = ?, retained = retained + ?, revision = ? "
                "WHERE id = ? AND revision = ? RETURNING retained",
                (last.operators, last.t, len(decisions), next_revision, stream_id, revision),
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
        return next_revision

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
