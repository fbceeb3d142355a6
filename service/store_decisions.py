"""The decisions a stream has stored, read back: its last one, every stream's, a page of them.

``DecisionStore`` is the part of ``service.store.Store`` that answers for what a stream decided
(``service.streams``: ``latest`` and ``history``) and restores the metrics at start-up
(``latest_decisions``); it only reads.
"""

from __future__ import annotations

from scaling import Decision
from service.database import Database
from service.rows import DECISION_COLUMNS, stored_decision


class DecisionStore(Database):
    """The stored decisions: ``latest_decision``, ``latest_decisions`` and ``history``."""

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
