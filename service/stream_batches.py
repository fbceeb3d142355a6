"""A batch applied to a stream: checked whole, fed to its Scaler, stored in one transaction.

``StreamBatches`` is the part of ``service.streams.StreamService`` that applies batches, as
``service.streams`` describes: ``post_samples``, from a worker thread or from the event loop
(``post_samples_async``, inline for a small batch of a cheap stream: ``INLINE_BATCH``,
``INLINE_SECONDS``). A batch either returns a ``BatchResult`` or raises, nothing of it stored;
``StreamBusy`` is what a caller that chose not to wait gets.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool

from scaling import Decision
from service.batches import check_increasing, first_new
from service.errors import (
    BatchTooCostly,
    BatchTooLarge,
    SampleConflict,
    StreamContended,
    StreamLocked,
    Unavailable,
    UnfollowableSample,
)
from service.models import Sample
from service.pull.errors import NotPolled, PushRefused
from service.rows import NonFiniteState
from service.scaler_cache import CachedScaler
from service.scalers import decide
from service.store import StaleRevision, StorageBusy, StorageUnavailable
from service.stream_base import StreamBase

# Batches up to this many samples may be applied on the event loop (post_samples_async), when
# the stream's last batches cost at most INLINE_SECONDS for that many samples (a slow filter,
# e.g. tvd's "mm" method, never runs on the loop).
INLINE_BATCH = 128
INLINE_SECONDS = 0.002

# A batch is redone when the stream changed in the database since its Scaler was loaded; each
# retry means another writer (a replica) committed to the stream, so a few suffice unless
# writers keep racing on one stream, which a client resending to another replica can cause.
_ATTEMPTS = 10


class StreamBusy(Exception):
    """The stream's lock (or the database's write lock) is held, and the caller chose not to
    wait."""


@dataclass(frozen=True)
class BatchResult:
    """What a batch did: ``accepted`` samples applied, ``duplicates`` acknowledged again."""

    accepted: int
    duplicates: int
    operators: int
    decisions: list[Decision]


class StreamBatches(StreamBase):
    """A stream's batches: ``post_samples``, ``post_samples_async`` and
    ``post_samples_or_503``."""

    def post_samples(
        self, stream_id: str, samples: Sequence[Sample], *, wait: bool = True, pulled: bool = False
    ) -> BatchResult:
        """Apply a batch atomically; see ``service.streams``.

        Raises ``BatchTooLarge``, ``StreamNotFound``, ``SampleConflict``,
        ``UnfollowableSample``, ``StreamContended`` or ``StreamLocked`` (the stream's lock not
        had within ``lock_timeout`` seconds), changing nothing; with ``wait=False``,
        ``StreamBusy`` instead of waiting for the stream's lock or the database's. A stream
        with a source takes only its poller's samples (``pulled``, ``service.pull``): others
        raise ``PushRefused``; a polled sample for a stream without one, ``NotPolled``.
        """
        if len(samples) > self.max_batch:
            raise BatchTooLarge(len(samples), self.max_batch)
        check_increasing(samples)
        lock = self.lock(stream_id)
        if not wait:
            if not lock.acquire(blocking=False):
                raise StreamBusy(stream_id)
        elif not lock.acquire(timeout=self.lock_timeout):
            raise StreamLocked(stream_id, self.lock_timeout)
        try:
            for _ in range(_ATTEMPTS):
                result = self._apply(stream_id, samples, wait, pulled)
                if result is not None:
                    return result
        finally:
            lock.release()
        raise StreamContended(stream_id, _ATTEMPTS)

    async def post_samples_async(self, stream_id: str, samples: Sequence[Sample]) -> BatchResult:
        """``post_samples`` from the event loop.

        A batch of at most ``inline_batch`` samples is applied right here, on the loop, when
        its stream's Scaler is cached, its last batches cost at most ``INLINE_SECONDS`` for
        that many samples, and neither the stream's lock nor the database's write lock is
        held: its work (about 0.2 ms for one sample, measured as the CPU time of the thread that
        did it, so that waiting under load does not count) costs less than the hop to a worker
        thread and back, which is what limits the rate of small batches otherwise. Everything
        else goes to the thread pool, so the loop never waits for a stream or for SQLite, nor
        works long on one batch.
        """
        inline = len(samples) <= self.inline_batch and not self.storage.busy()
        if inline and self._cheap(stream_id, len(samples)):
            try:
                return self.post_samples(stream_id, samples, wait=False)
            except StreamBusy:
                pass
            except StorageUnavailable as error:
                raise Unavailable(error) from None
        return await run_in_threadpool(self.post_samples_or_503, stream_id, samples)

    def post_samples_or_503(self, stream_id: str, samples: Sequence[Sample]) -> BatchResult:
        """``post_samples``, with storage trouble as ``Unavailable`` (503)."""
        try:
            return self.post_samples(stream_id, samples)
        except StorageUnavailable as error:
            raise Unavailable(error) from None

    def _cheap(self, stream_id: str, count: int) -> bool:
        loaded = self.scalers.peek(stream_id)
        return (
            loaded is not None and loaded.cost is not None and loaded.cost * count <= INLINE_SECONDS
        )

    def _apply(
        self, stream_id: str, samples: Sequence[Sample], wait: bool, pulled: bool = False
    ) -> BatchResult | None:
        """Apply the batch, the stream's lock held; ``None`` if the stream changed in the
        database since its Scaler was loaded (nothing applied: try again).

        A cached Scaler is used without reading the stream's revision first: the commit is
        conditional on it anyway. Only an answer that stores nothing (every sample a duplicate,
        or a refusal) is checked against the stored revision before it is given, so that it
        never comes from a cache that ran behind another writer.
        """
        loaded, fresh_from_storage = self.scalers.load(self.storage, stream_id)
        try:
            if loaded.pulled != pulled:
                raise PushRefused(stream_id) if loaded.pulled else NotPolled(stream_id)
            return self._apply_loaded(stream_id, loaded, samples, wait, fresh_from_storage)
        except (SampleConflict, UnfollowableSample, PushRefused, NotPolled):
            if fresh_from_storage or self._current(stream_id, loaded):
                raise
            return None

    def _apply_loaded(
        self,
        stream_id: str,
        loaded: CachedScaler,
        samples: Sequence[Sample],
        wait: bool,
        checked: bool,
    ) -> BatchResult | None:
        if len(samples) * loaded.estimate > self.work_budget:
            fit = int(self.work_budget / loaded.estimate)
            raise BatchTooCostly(len(samples), fit, loaded.estimate, self.work_budget)
        fresh = first_new(self.storage, stream_id, loaded.last_t, samples)
        if fresh == len(samples):
            if checked or self._current(stream_id, loaded):
                return BatchResult(0, len(samples), loaded.scaler.operators, [])
            return None
        began = time.thread_time()  # this thread's work: not the waits for the GIL or a lock
        now = time.time()
        try:
            decisions = decide(loaded.scaler, samples, fresh)
            pending = loaded.pending + len(decisions)
            replayed = loaded.pending if checked else 0  # the load just replayed them
            due = self.checkpoints.due(pending, loaded.written, now, loaded.estimate, replayed)
            revision = self.storage.append(
                stream_id,
                loaded.revision,
                decisions,
                loaded.scaler.state_dict() if due else None,
                retention=self.retention,
                wait=wait,
            )
        except StaleRevision:
            self._forget(stream_id)
            return None
        except StorageBusy:
            self._forget(stream_id)
            raise StreamBusy(stream_id) from None
        except NonFiniteState as error:
            self._forget(stream_id)
            index = len(samples) - 1
            raise UnfollowableSample(index, samples[index], str(error)) from None
        except BaseException:
            self._forget(stream_id)
            raise
        loaded.measured((time.thread_time() - began) / len(decisions))
        loaded.committed(revision, decisions[-1].t, len(decisions), now if due else None)
        if self._metrics is not None:
            self._metrics.decided(stream_id, decisions)
        return BatchResult(len(decisions), fresh, decisions[-1].operators, decisions)

    def _current(self, stream_id: str, loaded: CachedScaler) -> bool:
        """Whether the database still holds the stream at ``loaded``'s revision (one small
        read); if not, the cache entry is dropped."""
        if self.storage.revision(stream_id) == loaded.revision:
            return True
        self._forget(stream_id)
        return False
