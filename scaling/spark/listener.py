"""Autoscale a Spark Structured Streaming job: progress events in, executor targets out.

``ScalingListener`` is a ``StreamingQueryListener``. Each progress event of the query it follows
becomes one ``Sample``, dated when the batch ended and the event came (its trigger's start
plus ``durationMs.triggerExecution``, epoch seconds), when it is decided on: ``volume`` (the
rate records arrived: its ``inputRowsPerSecond``, plus the growth of what the sources were
behind since the last event where they report it, ``arrival_rate``), ``backlog`` (the records
waiting at its end: what the sources were behind when the batch was planned, where they say,
Kafka's ``avgOffsetsBehindLatest`` times the partitions or a source's ``latestOffset`` less its
``endOffset``, plus what arrived at that rate while the batch ran, ``waiting``) and
``processed`` (its ``processedRowsPerSecond``); the executors registered when a batch of
samples is decided are its ``running`` count. An idle event (no new data, Spark >= 3.5) is a
sample of 0. A ``Decider`` turns samples into an executor count and an ``Executors`` object
applies it:

* ``LocalDecider``: a ``Scaler`` in the driver;
* ``ServiceDecider``: a steadyscale service, which keeps the stream's state (and its decision
  history) across driver restarts; samples are posted in batches and retried until
  acknowledged, which the service makes safe (a resent sample is a duplicate, never applied
  twice).

The listener callback only puts the sample on a queue: a worker thread decides and resizes, so
a slow cluster manager or service never holds up Spark's listener bus. When the worker falls
behind, it decides on every queued sample (the filter needs them all) and resizes once, to
the last decision.

``scaling.spark.attach.autoscale`` builds the adaptor, the decider and this listener, and
registers it.
"""

from __future__ import annotations

import json
import logging
import math
import queue
import threading
from collections import deque
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pyspark.sql.streaming.listener import StreamingQueryListener

from scaling.spark.deciders import Decider, RetryLater, Sample
from scaling.spark.executors import Executors

logger = logging.getLogger(__name__)


class ScalingListener(StreamingQueryListener):
    """Feeds one streaming query's progress to ``decider`` and applies its decisions.

    Parameters
    ----------
    decider
        ``LocalDecider`` or ``ServiceDecider`` (or anything with ``decide(samples) -> int``).
    executors
        Where decisions are applied: ``SparkExecutorAdaptor`` (or a fake in tests).
    query
        Name or id of the query to follow; ``None`` follows the first query that reports
        progress and ignores the others (one executor pool, one volume series).
    max_pending
        Samples kept while the decider asks to retry later; beyond that the oldest are dropped.

    Attributes ``target`` (the last count applied, ``None`` before any), ``targets`` (the
    last 1,000 applied, as ``(t of the deciding sample, count)``), ``samples`` (samples decided
    on) and ``errors`` (the last error messages) tell what it did; ``close()`` stops the worker.
    """

    def __init__(
        self,
        decider: Decider,
        executors: Executors,
        query: str | None = None,
        max_pending: int = 10_000,
    ) -> None:
        self.decider = decider
        self.executors = executors
        self.query = query
        self.target: int | None = None
        self.targets: deque[tuple[float, int]] = deque(maxlen=1000)
        self.samples = 0
        self.errors: deque[str] = deque(maxlen=20)
        self._followed: str | None = None
        self._last_t: float | None = None  # the last sample's
        self._last_start: float | None = None  # its trigger's start (an idle event's time)
        self._last_backlog: float | None = None  # the sources' lag it reported, where they did
        self._queue: queue.Queue[Sample | None] = queue.Queue()
        self._pending: deque[Sample] = deque(maxlen=max_pending)
        self._offered = self._handled = 0
        self._progress = threading.Condition()
        self._worker = threading.Thread(target=self._run, name="steadyscale-scaler", daemon=True)
        self._worker.start()

    # Callbacks of Spark's listener bus: no waiting in here.
    def onQueryStarted(self, event: Any) -> None:
        pass

    def onQueryProgress(self, event: Any) -> None:
        progress = event.progress
        rate = progress.inputRowsPerSecond
        processed = _rate(getattr(progress, "processedRowsPerSecond", None))
        backlog = _backlog(getattr(progress, "sources", None) or ())
        took = _took(getattr(progress, "durationMs", None))
        self._offer(
            str(progress.id), progress.name, progress.timestamp, rate, backlog, processed, took
        )

    def onQueryIdle(self, event: Any) -> None:
        self._offer(str(event.id), None, event.timestamp, 0.0, None, None, 0.0)

    def onQueryTerminated(self, event: Any) -> None:
        pass

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every sample offered so far is decided and applied; False on timeout."""
        with self._progress:
            offered = self._offered
            return self._progress.wait_for(lambda: self._handled >= offered, timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Stop the worker after it has handled the samples already offered."""
        self._queue.put(None)
        self._worker.join(timeout)

    def _offer(
        self,
        query_id: str,
        name: str | None,
        timestamp: str,
        volume: float,
        backlog: float | None,
        processed: float | None,
        took: float,
    ) -> None:
        if not self._follows(query_id, name):
            return
        start = datetime.fromisoformat(timestamp).timestamp()
        t = start + took  # the batch's end, when its event comes and is decided on
        if volume is None or not math.isfinite(volume) or volume < 0:
            return  # the first trigger has no rate yet
        if self._last_t is not None and t <= self._last_t:
            return  # an idle event in the same millisecond as a progress event
        # The sources' lags are taken when batches are planned, at their triggers' starts.
        elapsed = start - (self._last_start if self._last_start is not None else start)
        volume = arrival_rate(volume, backlog, self._last_backlog, elapsed)
        self._last_t, self._last_start, self._last_backlog = t, start, backlog
        with self._progress:
            self._offered += 1
        self._queue.put(Sample(t, float(volume), waiting(backlog, volume, took), None, processed))

    def _follows(self, query_id: str, name: str | None) -> bool:
        if self.query is not None:
            return self.query in (query_id, name)
        if self._followed is None:
            self._followed = query_id
            logger.info("following streaming query %s (%s)", query_id, name)
        return query_id == self._followed

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            items = [item]
            while not self._queue.empty():
                items.append(self._queue.get_nowait())
            samples = [sample for sample in items if sample is not None]
            self._pending.extend(samples)
            if self._pending:
                self._step()
            with self._progress:
                self._handled += len(samples)
                self._progress.notify_all()
            if None in items:
                return

    def _step(self) -> None:
        # The executors registered now (read here, off Spark's listener bus) go with the oldest
        # sample not decided yet: the batch's decisions start from what runs, not from what
        # was asked (a resize may have failed or not finished); within the batch nothing is
        # resized, so the later samples continue from the Scaler's own decisions.
        try:
            running = self.executors.current()
        except Exception as error:  # decide without it
            running = None
            self._error(f"could not read the executors running: {error}")
        oldest = self._pending[0]
        if oldest.running is None and running is not None:
            self._pending[0] = oldest._replace(running=running)
        batch = list(self._pending)
        try:
            wanted = self.decider.decide(batch)
        except RetryLater as error:
            self._error(f"decision deferred, {len(batch)} samples kept: {error}")
            return
        except Exception as error:  # refused samples, or a malformed answer: drop, keep running
            self._pending.clear()
            self._error(f"{len(batch)} samples dropped: {error}")
            return
        self._pending.clear()
        self.samples += len(batch)
        if wanted == self.target:
            return
        try:
            self.target = self.executors.resize(wanted)
        except Exception as error:  # the next decision tries again
            self._error(f"resize to {wanted} failed: {error}")
            return
        self.targets.append((batch[-1][0], self.target))
        logger.info("executors: target %s (from %s samples)", self.target, len(batch))

    def _error(self, message: str) -> None:
        self.errors.append(message)
        logger.warning(message)


def arrival_rate(read: float, backlog: float | None, before: float | None, elapsed: float) -> float:
    """Records/s that arrived over the ``elapsed`` seconds since the last event: the ``read``
    rate (``inputRowsPerSecond``) plus the growth of the ``backlog`` from ``before``, when both
    are known.

    A batch reads at most what its source admits (Kafka's ``maxOffsetsPerTrigger``): once the
    query falls behind, its input rate is that cap however much arrives, and only the backlog's
    growth tells the rest. Fed the cap, a Scaler sizes for it (on the compare grid, a volume
    that a saturated job caps costs 1,058 SLA seconds against 42: docs/baselines.md).

    >>> arrival_rate(60.0, backlog=1900.0, before=1000.0, elapsed=10.0)  # 60 read, 90/s more
    150.0
    >>> arrival_rate(60.0, None, 1000.0, 10.0), arrival_rate(10.0, 0.0, 500.0, 1.0)
    (60.0, 0.0)
    """
    if backlog is None or before is None or not elapsed > 0.0:
        return read
    return max(0.0, read + (backlog - before) / elapsed)


def waiting(behind: float | None, volume: float, took: float) -> float | None:
    """Records waiting when a batch ends: what the sources were ``behind`` when it was planned
    (beyond what it read), plus what arrived at ``volume`` records/s in the ``took`` seconds it
    ran; ``None`` where the sources do not say.

    A micro-batch reads its records when it starts: the lag its event reports leaves out every
    record that came while it ran, which the next batch reads. A query that fell behind runs
    long batches, so that is most of what waits: on the real-Spark benchmark a 9 s batch at 2
    executors reported 126 rows behind while some 3,100 had arrived as it ran
    (docs/benchmarks.md, session 26).

    >>> waiting(126.0, 350.0, 9.0), waiting(None, 350.0, 9.0)
    (3276.0, None)
    """
    return None if behind is None else behind + volume * took


def _took(durations: object) -> float:
    """Seconds a batch ran (``durationMs.triggerExecution``); 0 where Spark does not say."""
    value = durations.get("triggerExecution") if isinstance(durations, dict) else None
    if isinstance(value, int | float) and math.isfinite(value) and value > 0:
        return float(value) / 1000.0
    return 0.0


def _rate(value: object) -> float | None:
    """A reported rate, or ``None`` when Spark has none (the first trigger reports NaN)."""
    if isinstance(value, int | float) and math.isfinite(value) and value >= 0:
        return float(value)
    return None


def _backlog(sources: Sequence[Any]) -> float | None:
    """Records the query's sources are behind, summed; ``None`` when no source says.

    A Kafka source reports ``avgOffsetsBehindLatest`` over the partitions in its ``metrics``;
    times the number of partitions of the batch's ``endOffset`` that is the total lag. Any
    other source that reports the latest offset available (Spark asks those that limit what a
    batch reads: Kafka with ``maxOffsetsPerTrigger``, ``steadyscale-volume`` with
    ``max_rows_per_batch``) is behind by its ``latestOffset`` less its ``endOffset``, summed
    over the numbers the two offsets hold in the same places (``_offsets_behind``).
    """
    total, known = 0.0, False
    for source in sources:
        metrics = getattr(source, "metrics", None) or {}
        behind = _number(metrics.get("avgOffsetsBehindLatest"))
        if behind is not None:
            behind *= max(1, _partitions(getattr(source, "endOffset", None)))
        else:
            latest = _offset(getattr(source, "latestOffset", None))
            behind = _offsets_behind(latest, _offset(getattr(source, "endOffset", None)))
        if behind is not None:
            total += behind
            known = True
    return total if known else None


def _offset(value: object) -> object:
    """A reported offset: the JSON text Spark gives, parsed; ``None`` if it is not JSON."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return None


def _offsets_behind(latest: object, end: object) -> float | None:
    """How far ``end`` is behind ``latest``: their numbers' differences (at least 0) summed,
    where both hold a number at the same place; ``None`` where they share none.

    >>> _offsets_behind({"topic": {"0": 120, "1": 80}}, {"topic": {"0": 100, "1": 80}})
    20.0
    >>> _offsets_behind({"rows": 5}, None) is None
    True
    """
    if isinstance(latest, dict) and isinstance(end, dict):
        parts = [_offsets_behind(latest[key], end[key]) for key in latest.keys() & end.keys()]
        known = [part for part in parts if part is not None]
        return sum(known) if known else None
    later, earlier = _number(latest), _number(end)
    if later is None or earlier is None or isinstance(latest, bool) or isinstance(end, bool):
        return None
    return max(0.0, later - earlier)


def _number(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _partitions(end_offset: object) -> int:
    """Partitions in a Kafka ``endOffset`` (JSON ``{"topic": {"0": offset, ...}}``), else 0."""
    try:
        offsets = json.loads(end_offset) if isinstance(end_offset, str) else end_offset
    except ValueError:
        return 0
    if not isinstance(offsets, dict):
        return 0
    return sum(len(partitions) for partitions in offsets.values() if isinstance(partitions, dict))
