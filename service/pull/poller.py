"""The loop that polls every stream with a source, and posts each poll as one sample.

Every ``TICK`` seconds the poller looks at the streams that have a source and starts a poll
for each stream that is due: its newest evaluation time, the latest multiple of its interval at
least ``poll_delay`` seconds ago, is after both the stream's last sample and the last time this
poller tried. The list of streams with a source is read from storage every
``CATALOGUE_SECONDS``, so that streams created or replaced on another replica are seen, and at
once after a PUT here (``refresh``); a stream deleted, or left without a source, is dropped at
its next poll. A poll

1. asks Prometheus each query at that evaluation time (``service.pull.prometheus``), at most
   ``poll_concurrency`` streams at once, each query within ``poll_timeout``;
2. builds a ``service.models.Sample`` with ``t`` = the evaluation time (the same validation as
   ``POST /samples``);
3. applies it through ``StreamService.post_samples``, the path of ``POST /samples``: the same
   storage and the same exactly-once. A repeated evaluation time is a duplicate, never
   applied twice (another replica, or this one after a restart, may have taken it already).

A failed poll (Prometheus down or refusing, no series, NaN, a value the sample refuses, the
database unavailable) stores nothing and is counted in ``service.pull.health``; the next
evaluation time is the next try, so the failures count evaluation times, and missed times are
not filled in later (their values would be stale). While polls fail the stream's decision is
the last one made: its count holds.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from typing import Any

import httpx
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from service.errors import SampleConflict, ServiceError, StreamNotFound
from service.models import Sample
from service.pull.catalogue import sourced_streams
from service.pull.errors import NotPolled
from service.pull.health import Health
from service.pull.lease import Leases
from service.pull.prometheus import QueryFailed, query_value
from service.pull.settings import PullSettings
from service.pull.sources import prometheus_base
from service.pull.spec import REPORTS, SourceSpec
from service.store import StorageUnavailable
from service.streams import StreamService

log = logging.getLogger("steadyscale.pull")

TICK = 0.25
CATALOGUE_SECONDS = 10.0
# With leases, the health the other replicas' pollers share is read this often.
HEALTH_SECONDS = 1.0


def evaluation_time(now: float, interval: float) -> float:
    """The latest multiple of ``interval`` at or before ``now``: the same on every replica.

    >>> evaluation_time(1000.7, 15.0), evaluation_time(15.0, 15.0)
    (990.0, 15.0)
    """
    return math.floor(now / interval) * interval


async def query_sample(
    client: httpx.AsyncClient, base: str, source: SourceSpec, at: float, timeout: float
) -> dict[str, float]:
    """``{Sample field: value}`` of the source's queries at ``at``, asked at once; raises the
    first ``QueryFailed``, the field named in its message."""
    queries = source.prometheus
    fields = [field for field in ("volume", *REPORTS) if getattr(queries, field) is not None]
    answers = await asyncio.gather(
        *(query_value(client, base, getattr(queries, field), at, timeout) for field in fields),
        return_exceptions=True,
    )
    for field, answer in zip(fields, answers, strict=True):
        if isinstance(answer, QueryFailed):
            raise QueryFailed(answer.kind, f"{field}: {answer}")
        if isinstance(answer, BaseException):
            raise answer
    return dict(zip(fields, answers, strict=True))  # type: ignore[arg-type]


class Poller:
    """Polls the sourced streams of ``streams`` into them; see the module docstring."""

    def __init__(
        self,
        streams: StreamService,
        settings: PullSettings,
        health: Health,
        client: httpx.AsyncClient,
        clock: Callable[[], float] = time.time,
        leases: Leases | None = None,
    ) -> None:
        self._streams = streams
        self._settings = settings
        self._health = health
        self._client = client
        self._clock = clock
        self._leases = leases
        self._held: set[str] = set()
        self._slots = asyncio.Semaphore(settings.poll_concurrency)
        self._sources: dict[str, tuple[SourceSpec, float | None]] = {}
        self._listed_at = -math.inf
        self._health_read_at = -math.inf
        self._tried: dict[str, float] = {}
        self._polling: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """Poll until cancelled."""
        try:
            while True:
                try:
                    await self.tick()
                except Exception:  # the loop must outlive any one bad tick
                    log.exception("polling the sources failed; trying again")
                await asyncio.sleep(TICK)
        finally:
            for task in self._polling:
                task.cancel()

    async def tick(self) -> list[asyncio.Task[None]]:
        """Start a poll for every stream that is due; returns their tasks."""
        now = self._clock()
        if now - self._listed_at >= CATALOGUE_SECONDS:
            await self._list()
            self._listed_at = now
        if self._leases is not None and now - self._health_read_at >= HEALTH_SECONDS:
            await self._read_health()
            self._health_read_at = now
        busy = {task.get_name() for task in self._polling}
        due = {}
        for stream_id, (source, last_t) in self._sources.items():
            at = evaluation_time(now - self._settings.poll_delay, source.prometheus.interval)
            new = at > self._tried.get(stream_id, -math.inf) and (last_t is None or at > last_t)
            if new and stream_id not in busy:
                due[stream_id] = (source, at)
        if self._leases is not None and due:
            held = await self._lease(due)
            due = {stream_id: due[stream_id] for stream_id in held}
        started = []
        for stream_id, (source, at) in due.items():
            self._tried[stream_id] = at
            task = asyncio.create_task(self.poll(stream_id, source, at), name=stream_id)
            self._polling.add(task)
            task.add_done_callback(self._polling.discard)
            started.append(task)
        return started

    async def _lease(self, due: dict[str, tuple[SourceSpec, float]]) -> set[str]:
        """The due streams whose lease this replica holds (taken or renewed now). An
        evaluation time whose lease another replica holds is not asked for again: one lease
        statement per stream and evaluation time, and a dead owner's stream is taken at the
        first evaluation time after its lease passed (``service.pull.lease``)."""
        assert self._leases is not None
        wanted = [(stream_id, source.prometheus.interval) for stream_id, (source, _) in due.items()]
        try:
            held = await run_in_threadpool(self._leases.take, wanted)
        except StorageUnavailable as error:
            log.warning("cannot take the sources' leases: %s", error)
            return set()
        for stream_id, (_, at) in due.items():
            if stream_id not in held:
                self._tried[stream_id] = at
        self._held = (self._held - due.keys()) | held
        return held

    def refresh(self) -> None:
        """Read the list of streams with a source again at the next tick (after a PUT)."""
        self._listed_at = -math.inf

    async def _list(self) -> None:
        try:
            stored = await run_in_threadpool(sourced_streams, self._streams.storage)
        except StorageUnavailable as error:
            log.warning("cannot list the streams to poll: %s", error)
            return
        sources = {}
        for stream in stored:
            spec: Any = stream.spec.get("source")
            if spec is not None:
                sources[stream.id] = (SourceSpec.model_validate(spec, strict=False), stream.t)
        for gone in self._sources.keys() - sources.keys():
            self._forget(gone)
        self._sources = sources

    async def _read_health(self) -> None:
        """Take the health of the streams other replicas poll, as they shared it."""
        assert self._leases is not None
        try:
            shared = await run_in_threadpool(self._leases.healths)
        except StorageUnavailable as error:
            log.warning("cannot read the sources' health: %s", error)
            return
        for stream_id, health in shared.items():
            if stream_id in self._sources and stream_id not in self._held:
                self._health.adopt(stream_id, health)

    async def poll(self, stream_id: str, source: SourceSpec, at: float) -> None:
        """Query the source at evaluation time ``at`` and apply the sample, then record how
        it went; never raises."""
        async with self._slots:
            try:
                why = await self._poll(stream_id, source, at)
            except (NotPolled, StreamNotFound):
                self._forget(stream_id)
                return
            except Exception as error:  # a bug here must not end polling, nor go unseen
                log.exception("polling %s at %s failed", stream_id, at)
                why = f"internal error ({type(error).__name__}); the server log has the details"
        if why is None:
            self._health.succeeded(stream_id, at)
            if stream_id in self._sources:
                self._sources[stream_id] = (source, at)
        else:
            self._health.failed(stream_id, at, why, source.fallback)
        await self._share(stream_id)

    async def _poll(self, stream_id: str, source: SourceSpec, at: float) -> str | None:
        """Why the poll failed, ``None`` if the stream has its sample at ``at`` now."""
        try:
            base = prometheus_base(source, self._settings)
            values = await query_sample(self._client, base, source, at, self._settings.poll_timeout)
            sample = Sample.model_validate({"t": at, **values})
            await run_in_threadpool(self._streams.post_samples, stream_id, [sample], pulled=True)
        except SampleConflict:
            # Another poller (a replica) stored this evaluation time, with values that
            # Prometheus has revised since: the stored sample stands.
            return None
        except (QueryFailed, ValueError) as error:
            return _why(error)
        except ServiceError as error:
            return error.message
        except StorageUnavailable as error:
            return str(error)
        return None

    async def _share(self, stream_id: str) -> None:
        """Write the stream's health for the other replicas (with leases)."""
        health = self._health.status(stream_id)
        if self._leases is not None and health is not None:
            try:
                await run_in_threadpool(self._leases.record, stream_id, health)
            except StorageUnavailable as error:
                log.warning("cannot share the health of %s: %s", stream_id, error)

    def _forget(self, stream_id: str) -> None:
        self._sources.pop(stream_id, None)
        self._tried.pop(stream_id, None)
        self._health.forget(stream_id)


def _why(error: Exception) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        return f"{field}={first.get('input')!r} is not allowed: {first['msg']}"
    return str(error)
