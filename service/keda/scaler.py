"""KEDA's ``ExternalScaler`` service over the streams of the HTTP API.

The trigger's metadata key ``stream`` names the stream. Every answer comes from the stored
stream (``StreamService.get``: the operator count after its last decision, and the revision
that changes on every write), read afresh on each call, so an answer given after a batch was
acknowledged over HTTP reflects that batch, whichever replica applied it.

=====================  ====================================================================
``GetMetricSpec``      one metric, ``steadyscale-<stream>``, target 1 (``AverageValue``)
``GetMetrics``         the latest decided operator count (the configured ``operators``
                       before the first sample)
``IsActive``           operators > 0
``StreamIsActive``     the activity at once, then each change of it (polled)
``StreamMetricSpec``   the spec at once; it never changes, the stream stays open
=====================  ====================================================================

With target 1 per replica the HPA computes ``ceil(operators / 1)``: the decided count itself.

Status codes: no ``stream`` key → ``INVALID_ARGUMENT``; no such stream → ``NOT_FOUND``; a
stream with no new write for more than ``staleness`` seconds → ``UNAVAILABLE`` (metrics and
activity only; the spec does not go stale), so that the HPA holds its count and KEDA's
``fallback`` takes over after its ``failureThreshold``; a storage error → ``UNAVAILABLE`` too.

Staleness is wall-clock time on this server, because a sample's ``t`` has any origin. Nothing
stores when a write happened, so ``StreamWatch`` notes when it first sees each revision of a
stream: it reads every stream once per ``poll_interval`` and on every call. A stream's age is
therefore exact to ``poll_interval``, except right after this server starts, when a stream
counts as fresh from the start: a stream whose producer stopped before a restart goes stale
``staleness`` seconds after it, not at once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc

from service.errors import StreamNotFound
from service.keda import externalscaler_pb2 as pb
from service.keda import externalscaler_pb2_grpc as pb_grpc
from service.rows import StoredStream
from service.streams import StreamService

log = logging.getLogger(__name__)

STREAM_KEY = "stream"
# Characters of a stream id a status message quotes (ids the service takes have at most 128).
ID_CHARS = 128

if TYPE_CHECKING:
    Context = grpc.aio.ServicerContext[Any, Any]


@dataclass(frozen=True)
class Reading:
    """A stream as the scaler answers for it.

    ``operators`` is the count after the last decision, or the configured count before the
    first sample (``decided`` is then ``False``); ``age`` is the seconds since this server saw
    the stream change last.
    """

    stream: str
    operators: int
    decided: bool
    age: float


class StreamWatch:
    """The last revision of each stream seen by this server, and when it was first seen.

    ``clock`` (monotonic seconds) is a parameter so that tests can move time. Thread-safe.
    """

    def __init__(self, streams: StreamService, clock: Callable[[], float] = time.monotonic) -> None:
        self._streams = streams
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[str, float]] = {}  # id: (revision, first seen at)

    def read(self, stream_id: str) -> Reading:
        """The stream now; raises ``StreamNotFound``."""
        try:
            stream = self._streams.get(stream_id)
        except StreamNotFound:
            with self._lock:
                self._seen.pop(stream_id, None)
            raise
        now = self._clock()
        with self._lock:
            since = self._note(stream, now)
        return Reading(stream.id, stream.operators, stream.t is not None, now - since)

    def refresh(self) -> None:
        """Read every stream (one query), so that ages do not wait for the next call."""
        streams = self._streams.list_streams()
        now = self._clock()
        with self._lock:
            for stream in streams:
                self._note(stream, now)
            present = {stream.id for stream in streams}
            for gone in self._seen.keys() - present:
                del self._seen[gone]

    def _note(self, stream: StoredStream, now: float) -> float:
        """When the stream's current revision was first seen (now, if it is new)."""
        seen = self._seen.get(stream.id)
        if seen is None or seen[0] != stream.revision:
            seen = self._seen[stream.id] = (stream.revision, now)
        return seen[1]


def metric_name(stream: str) -> str:
    """The metric's name; KEDA prefixes it with the trigger's index (``s0-``)."""
    return f"steadyscale-{stream}"


class ExternalScaler(pb_grpc.ExternalScalerServicer):
    """The servicer (grpc.aio); see the module docstring for what each call answers."""

    def __init__(self, watch: StreamWatch, *, staleness: float, poll_interval: float) -> None:
        self._watch = watch
        self._staleness = staleness
        self._poll_interval = poll_interval
        self._closing = asyncio.Event()

    def close(self) -> None:
        """End the open streams (``UNAVAILABLE``, so KEDA reconnects); call it on the server's
        event loop before stopping the server, which would otherwise cancel them midway."""
        self._closing.set()

    async def GetMetricSpec(
        self, request: pb.ScaledObjectRef, context: Context
    ) -> pb.GetMetricSpecResponse:
        reading = await self._read(request, context, fresh=False)
        return _spec(reading.stream)

    async def GetMetrics(
        self, request: pb.GetMetricsRequest, context: Context
    ) -> pb.GetMetricsResponse:
        reading = await self._read(request.scaledObjectRef, context)
        value = pb.MetricValue(
            metricName=metric_name(reading.stream),
            metricValue=reading.operators,
            metricValueFloat=float(reading.operators),
        )
        return pb.GetMetricsResponse(metricValues=[value])

    async def IsActive(self, request: pb.ScaledObjectRef, context: Context) -> pb.IsActiveResponse:
        reading = await self._read(request, context)
        return pb.IsActiveResponse(result=reading.operators > 0)

    async def StreamIsActive(
        self, request: pb.ScaledObjectRef, context: Context
    ) -> AsyncIterator[pb.IsActiveResponse]:
        # Ends with the status IsActive would give once the stream is gone or stale; KEDA
        # opens it again (with a backoff). A client that leaves cancels this coroutine.
        last: bool | None = None
        while True:
            reading = await self._read(request, context)
            active = reading.operators > 0
            if active != last:
                yield pb.IsActiveResponse(result=active)
                last = active
            await self._pause(context)

    async def StreamMetricSpec(
        self, request: pb.ScaledObjectRef, context: Context
    ) -> AsyncIterator[pb.GetMetricSpecResponse]:
        # The spec is constant: sent once, as KEDA's proto asks, then the stream stays open
        # (closing it would make KEDA reopen it every 2 s) until the stream is deleted.
        reading = await self._read(request, context, fresh=False)
        yield _spec(reading.stream)
        while True:
            await self._pause(context)
            await self._read(request, context, fresh=False)

    async def _pause(self, context: Context) -> None:
        """Wait one poll interval; abort the call if the server starts closing meanwhile."""
        try:
            await asyncio.wait_for(self._closing.wait(), self._poll_interval)
        except TimeoutError:
            return
        await context.abort(grpc.StatusCode.UNAVAILABLE, "the server is shutting down")

    async def _read(
        self, request: pb.ScaledObjectRef, context: Context, *, fresh: bool = True
    ) -> Reading:
        """The stream the trigger names, or the call aborted with the status that says why."""
        stream = request.scalerMetadata.get(STREAM_KEY, "").strip()
        if not stream:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the trigger's metadata has no {STREAM_KEY!r} key: set it to the id of a "
                "steadyscale stream",
            )
        # A message quotes at most ID_CHARS of the id: grpc-message is a header, and a client
        # refuses one larger than its limit (a 3.9 MB id came back as RESOURCE_EXHAUSTED).
        shown = stream if len(stream) <= ID_CHARS else stream[:ID_CHARS] + "..."
        try:
            reading = await asyncio.to_thread(self._watch.read, stream)
        except StreamNotFound:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no stream has the id {shown!r}")
        except Exception:
            log.exception("KEDA scaler: reading stream %r failed", shown)
            await context.abort(
                grpc.StatusCode.UNAVAILABLE, "the storage did not answer; the log has details"
            )
        if fresh and reading.age > self._staleness:
            await context.abort(
                grpc.StatusCode.UNAVAILABLE,
                f"stream {shown!r} has had no new sample for {reading.age:.0f} s, more than "
                f"the staleness of {self._staleness:g} s (setting staleness)",
            )
        return reading


def _spec(stream: str) -> pb.GetMetricSpecResponse:
    spec = pb.MetricSpec(metricName=metric_name(stream), targetSize=1, targetSizeFloat=1.0)
    return pb.GetMetricSpecResponse(metricSpecs=[spec])
