"""What every part of ``service.streams.StreamService`` shares: the storage, the settings, a
lock per stream and the cache of Scalers.

``StreamBase`` sets them up from ``StreamService``'s arguments; ``service.stream_batches``
applies a batch with them, and ``service.streams`` adds a stream's configuration and reads.
"""

from __future__ import annotations

import threading
import weakref

from service.budget import WORK_BUDGET
from service.checkpoints import CheckpointPolicy
from service.metrics import Metrics
from service.scaler_cache import CACHE_SIZE, ScalerCache
from service.scalers import per_operator
from service.store import LOCK_TIMEOUT, Store


class StreamBase:
    """The storage, the settings, the locks and the Scalers of ``StreamService``: its docstring
    says what each argument means."""

    def __init__(
        self,
        storage: Store,
        *,
        retention: int,
        max_batch: int,
        inline_batch: int = 0,
        cache_size: int = CACHE_SIZE,
        metrics: Metrics | None = None,
        work_budget: float = WORK_BUDGET,
        lock_timeout: float = LOCK_TIMEOUT,
        checkpoints: CheckpointPolicy | None = None,
    ) -> None:
        self.storage = storage
        policy = CheckpointPolicy() if checkpoints is None else checkpoints
        # A sample after the checkpoint is never pruned; retention is what keeps resent
        # batches recognised, so checkpoints keep within it.
        self.checkpoints = CheckpointPolicy(min(policy.samples, retention), policy.seconds)
        self.retention = retention
        self.max_batch = max_batch
        self.work_budget = work_budget
        self.lock_timeout = lock_timeout
        self.inline_batch = inline_batch
        self._metrics = metrics
        self._guard = threading.Lock()
        self._locks: weakref.WeakValueDictionary[str, threading.Lock] = (
            weakref.WeakValueDictionary()
        )
        self.scalers = ScalerCache(cache_size)
        if metrics is not None:
            streams = {stream.id: per_operator(stream.spec) for stream in storage.list_streams()}
            metrics.restore(streams, storage.latest_decisions())

    def lock(self, stream_id: str) -> threading.Lock:
        """The lock that serialises changes to the stream (held while applying one)."""
        with self._guard:
            lock = self._locks.get(stream_id)
            if lock is None:
                lock = self._locks[stream_id] = threading.Lock()
            return lock

    def _forget(self, stream_id: str) -> None:
        """Drop the stream's cached Scaler: the next batch starts from the stored state."""
        self.scalers.forget(stream_id)
