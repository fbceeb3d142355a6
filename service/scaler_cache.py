"""The Scalers of the streams used last, kept in memory between batches.

The database is the truth; a cached Scaler only saves rebuilding it from the stored spec,
checkpoint and samples since (``service.checkpoints``) for every batch. ``StreamService``
checks it against the stored revision where that matters (see ``service.streams``) and drops
it whenever a batch fails after the Scaler has seen a sample.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from filters.base import MissingDependency
from scaling import Scaler
from service.budget import sample_seconds
from service.checkpoints import replay
from service.errors import StoredConfigUnreadable, StoredFilterMissing, StreamNotFound
from service.scalers import missing_error
from service.store import Store

# Streams whose Scaler stays cached (about 10 KB each); the rest are rebuilt from storage.
CACHE_SIZE = 1024


@dataclass
class CachedScaler:
    """A stream's Scaler as of the stored ``revision``, whose last applied sample is at
    ``last_t``; ``pending`` samples were applied after its last checkpoint, written at
    ``written`` (Unix seconds)."""

    scaler: Scaler
    revision: str
    last_t: float | None
    # Estimated CPU seconds per sample (service.budget), for the work budget of a batch.
    estimate: float
    # Seconds per sample of the last batches (filtering and commit); None before the first.
    cost: float | None = None
    # Whether the stream polls a source (service.pull): then it takes polled samples only.
    pulled: bool = False
    pending: int = 0
    written: float = 0.0

    def committed(self, revision: str, last_t: float, count: int, checkpoint: float | None) -> None:
        """A batch of ``count`` samples up to ``last_t`` was stored at ``revision``, with a
        checkpoint written at ``checkpoint`` (Unix seconds) or without one (``None``)."""
        self.revision, self.last_t = revision, last_t
        if checkpoint is None:
            self.pending += count
        else:
            self.pending, self.written = 0, checkpoint

    def measured(self, seconds_per_sample: float) -> None:
        """Fold a batch's cost per sample into ``cost`` (halving the weight of the past)."""
        previous = self.cost
        self.cost = (
            seconds_per_sample if previous is None else 0.5 * (previous + seconds_per_sample)
        )


class ScalerCache:
    """The Scalers of the ``size`` streams used last, least recently used evicted first;
    safe to share between threads."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._guard = threading.Lock()
        self._entries: OrderedDict[str, CachedScaler] = OrderedDict()

    def peek(self, stream_id: str) -> CachedScaler | None:
        """The stream's entry, if cached, without counting it as used."""
        with self._guard:
            return self._entries.get(stream_id)

    def load(self, storage: Store, stream_id: str) -> tuple[CachedScaler, bool]:
        """The stream's cached Scaler, or one built from ``storage`` (then cached); and whether
        it was read from storage just now. Raises ``StreamNotFound``."""
        with self._guard:
            entry = self._entries.get(stream_id)
            if entry is not None:
                self._entries.move_to_end(stream_id)
                return entry, False
        stored = storage.load(stream_id)
        if stored is None:
            raise StreamNotFound(stream_id)
        stream, checkpoint = stored
        # A stream's source is stored beside its Scaler's spec, not part of it.
        spec = {key: value for key, value in stream.spec.items() if key != "source"}
        try:
            scaler = Scaler.from_spec(spec, stream.initial_operators)
        except ValueError as error:  # a spec from before the cost model it cannot map
            raise StoredConfigUnreadable(stream_id, error) from None
        except MissingDependency as missing:
            raise StoredFilterMissing(stream_id, missing_error("filter", missing)) from None
        scaler.load_state_dict(checkpoint.state)
        replay(stream_id, scaler, checkpoint.after)
        entry = CachedScaler(
            scaler,
            stream.revision,
            stream.t,
            sample_seconds(spec),
            pulled="source" in stream.spec,
            pending=len(checkpoint.after),
            written=checkpoint.written,
        )
        with self._guard:
            self._entries[stream_id] = entry
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return entry, True

    def forget(self, stream_id: str) -> None:
        """Drop the stream's entry: its next batch starts from the stored state."""
        with self._guard:
            self._entries.pop(stream_id, None)

    def __len__(self) -> int:
        return len(self._entries)
