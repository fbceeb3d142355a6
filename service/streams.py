"""Streams: one Scaler each, fed batch by batch, durably, one batch at a time per stream.

``StreamService`` is what the routes call. For a batch of samples it

1. takes the stream's lock (batches of one stream are applied one after the other; other
   streams have locks of their own and never wait for this one);
2. takes the stream's Scaler from its cache, or builds it from the stored spec and state;
3. checks the whole batch before applying any of it: times strictly increase; a sample at or
   before the last applied ``t`` is a duplicate only if a stored sample has the same ``t``,
   volume and reports (it is acknowledged and not applied again), otherwise the batch is
   refused (``SampleConflict``);
4. feeds the new samples to the Scaler and stores the decisions (and, every so many samples,
   the Scaler's state: ``service.checkpoints``) in one transaction, conditional on the stream
   being unchanged in the database since its Scaler was loaded.

The database is the truth; the cache (the ``cache_size`` streams used last) only saves
rebuilding the Scaler for every batch. Another replica, or another process on the same file,
may have written to the stream since its Scaler was cached: the commit is conditional on the
stream's revision being the one the Scaler was loaded at, so a stale Scaler's decisions are
never stored (the commit stores nothing, and the batch is redone on the stored state), and an
answer that stores nothing (a batch of duplicates, a refusal) is given only after one small
read confirms that revision: a cache that ran behind would answer a resent batch with an old
operator count. If anything fails after the Scaler has seen a sample, the cache entry is
dropped, so the next batch starts again from the stored state. After ``_ATTEMPTS`` races in a
row with other writers the batch is refused with 503 (``StreamContended``), nothing of it
stored.

A batch the Scaler cannot follow (its filter or policy refuses a value it computed, or a
decision, or the state a checkpoint would write, is not finite) is refused whole (422,
``UnfollowableSample``) before anything is stored: a non-finite state, once stored, could
never be loaded again. The Scaler advances its filter before its policy checks the filtered
value, so the Scaler is rebuilt from the stored checkpoint and samples after a refused batch.

``put`` with the configuration a stream already has changes nothing; another configuration
replaces the stream (and forgets its state and history) only when asked (``reset=True``),
otherwise it is refused (409): a deployment that PUTs its configuration at every start must
not erase its streams.

Duplicates are recognised as long as the sample is retained (the newest ``retention`` samples
of the stream); an older sample sent again is refused like any other late sample.

>>> import tempfile
>>> from pathlib import Path
>>> from service.models import Sample, StreamConfig
>>> from service.storage import Storage
>>> service = StreamService(Storage(Path(tempfile.mkdtemp()) / "db"), retention=1000,
...                         max_batch=100)
>>> config = StreamConfig.model_validate({"filter": {"name": "raw"},
...                                       "policy": {"capacity": 50.0}})
>>> service.put("orders", config)[1]
'created'
>>> batch = [Sample(t=0.0, volume=120.0), Sample(t=1.0, volume=260.0)]
>>> [d.operators for d in service.post_samples("orders", batch).decisions]
[3, 6]
>>> retry = service.post_samples("orders", batch)
>>> retry.accepted, retry.duplicates, retry.operators
(0, 2, 6)
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from starlette.concurrency import run_in_threadpool

from scaling import Decision
from service.batches import check_increasing, first_new
from service.budget import WORK_BUDGET
from service.checkpoints import CheckpointPolicy
from service.errors import (
    BatchTooCostly,
    BatchTooLarge,
    ConfigConflict,
    NoDecision,
    SampleConflict,
    StreamContended,
    StreamLocked,
    StreamNotFound,
    Unavailable,
    UnfollowableSample,
)
from service.metrics import Metrics
from service.models import Sample, StreamConfig
from service.pull.errors import NotPolled, PushRefused
from service.rows import NonFiniteState, StoredStream
from service.scaler_cache import CACHE_SIZE, CachedScaler, ScalerCache
from service.scalers import decide, per_operator, usable_scaler
from service.store import LOCK_TIMEOUT, StaleRevision, StorageBusy, StorageUnavailable, Store

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


class StreamService:
    """The streams of one ``storage``, each with its own lock and cached Scaler.

    ``retention`` decisions are kept per stream; batches above ``max_batch`` samples are
    refused, and so are batches estimated to cost more than ``work_budget`` CPU seconds
    (``service.budget``); ``post_samples_async`` applies batches of up to ``inline_batch``
    samples on the event loop; the Scalers of the ``cache_size`` streams used last stay in
    memory; their states are written as ``checkpoints`` say, at least every ``retention``
    samples. ``metrics``, when given, follows every decision.
    """

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

    def check(self, config: StreamConfig) -> None:
        """Raise ``InvalidInput`` naming each bad field of a configuration no stream could
        use, as ``put`` would; store nothing."""
        usable_scaler(config, self.work_budget)

    def put(
        self, stream_id: str, config: StreamConfig, *, reset: bool = False
    ) -> tuple[StoredStream, Literal["created", "unchanged", "replaced"]]:
        """Create the stream; keep it as it is if it has this configuration; replace it
        (state and history start afresh) only with ``reset``. Raises ``InvalidInput`` naming
        each bad field (and a configuration that cannot take ``BATCH_IN_BUDGET`` samples
        within ``work_budget``), ``ConfigConflict`` for another configuration without
        ``reset``."""
        scaler = usable_scaler(config, self.work_budget)
        spec = scaler.spec
        if config.source is not None:
            # Stored beside the Scaler's spec: a PUT with another source is another config.
            spec = {**spec, "source": config.source.model_dump()}
        with self.lock(stream_id):
            outcome = self.storage.put_stream(
                stream_id, spec, config.operators, scaler.state_dict(), replace=reset
            )
            if outcome == "different":
                raise ConfigConflict(stream_id)
            if outcome != "unchanged":
                self._forget(stream_id)
                if self._metrics is not None:
                    if outcome == "replaced":
                        self._metrics.forget(stream_id)
                    self._metrics.created(stream_id, per_operator(scaler.spec))
            return self.get(stream_id), outcome

    def get(self, stream_id: str) -> StoredStream:
        """The stream; raises ``StreamNotFound``."""
        stream = self.storage.get_stream(stream_id)
        if stream is None:
            raise StreamNotFound(stream_id)
        return stream

    def list_streams(self, after: str | None = None, limit: int = -1) -> list[StoredStream]:
        """The first ``limit`` streams (all when negative) with ids after ``after``, by id."""
        return self.storage.list_streams(after, limit)

    def delete(self, stream_id: str) -> StoredStream:
        """Remove the stream and its history; returns it as it was. Raises
        ``StreamNotFound``."""
        with self.lock(stream_id):
            stream = self.get(stream_id)
            self._forget(stream_id)
            self.storage.delete_stream(stream_id)
            if self._metrics is not None:
                self._metrics.forget(stream_id)
        return stream

    def post_samples(
        self, stream_id: str, samples: Sequence[Sample], *, wait: bool = True, pulled: bool = False
    ) -> BatchResult:
        """Apply a batch atomically; see the module docstring.

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

    def latest(self, stream_id: str) -> Decision:
        """The stream's last decision; raises ``StreamNotFound`` or ``NoDecision``."""
        decision = self.storage.latest_decision(stream_id)
        if decision is None:
            self.get(stream_id)
            raise NoDecision(stream_id)
        return decision

    def history(self, stream_id: str, since: float | None, limit: int) -> list[Decision]:
        """Up to ``limit`` retained decisions with ``t > since``, oldest first; raises
        ``StreamNotFound``."""
        decisions = self.storage.history(stream_id, since, limit)
        if not decisions:
            self.get(stream_id)
        return decisions

    def _current(self, stream_id: str, loaded: CachedScaler) -> bool:
        """Whether the database still holds the stream at ``loaded``'s revision (one small
        read); if not, the cache entry is dropped."""
        if self.storage.revision(stream_id) == loaded.revision:
            return True
        self._forget(stream_id)
        return False

    def _forget(self, stream_id: str) -> None:
        """Drop the stream's cached Scaler: the next batch starts from the stored state."""
        self.scalers.forget(stream_id)
