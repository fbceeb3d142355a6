"""Which streams have a source: read from the database, filtered there.

The filter runs in SQL (the stored spec's JSON names a ``"source"`` object), so that a service
with thousands of push streams and no source reads none of them each time the poller looks.
It runs its statement through the store's own read helper (``service.database.Database._all``);
it is pull mode's only query of the streams table, so it lives with pull mode.
"""

from __future__ import annotations

from service.rows import STREAM_COLUMNS, StoredStream, stored_stream
from service.store import Store

_SOURCED = f"SELECT {STREAM_COLUMNS} FROM streams WHERE spec LIKE ? ORDER BY id"


def sourced_streams(storage: Store) -> list[StoredStream]:
    """The streams whose spec names a ``source``, by id; raises ``StorageUnavailable``."""
    found = [stored_stream(row) for row in storage._all(_SOURCED, ('%"source": {%',))]
    return [stream for stream in found if "source" in stream.spec]
