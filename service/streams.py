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

The service is in parts, by what they are for: a stream's batches (``service.stream_batches``:
``post_samples``, its call from the event loop, and what a batch returns and raises) and, here,
a stream's configuration and reads, both over the settings, locks and cached Scalers of
``service.stream_base``. ``StreamService`` puts them together; everyone imports it, ``StreamBusy``
and the event loop's batch limits (``INLINE_BATCH``, ``INLINE_SECONDS``) from here.

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

from typing import Literal

from scaling import Decision
from service.errors import ConfigConflict, NoDecision, StreamNotFound
from service.models import StreamConfig
from service.rows import StoredStream
from service.scalers import per_operator, usable_scaler
from service.stream_batches import INLINE_BATCH, INLINE_SECONDS, StreamBatches, StreamBusy

__all__ = ["INLINE_BATCH", "INLINE_SECONDS", "StreamBusy", "StreamService"]


class StreamService(StreamBatches):
    """The streams of one ``storage``, each with its own lock and cached Scaler.

    ``retention`` decisions are kept per stream; batches above ``max_batch`` samples are
    refused, and so are batches estimated to cost more than ``work_budget`` CPU seconds
    (``service.budget``); ``post_samples_async`` applies batches of up to ``inline_batch``
    samples on the event loop; the Scalers of the ``cache_size`` streams used last stay in
    memory; their states are written as ``checkpoints`` say, at least every ``retention``
    samples. ``metrics``, when given, follows every decision.
    """

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
