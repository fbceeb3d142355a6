"""Pull mode in one app: the Prometheus client, the sources' health and the poller's task.

``open_pull`` starts them with the app (its lifespan) and stops them with it; routes reach
them as ``request.state.pull`` (``get_pull``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import weakref
from collections.abc import AsyncIterator
from typing import Literal, cast

import httpx
from prometheus_client import CollectorRegistry
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from scaling import Decision
from service.metrics import Metrics
from service.pull.health import Health, SourceHealth
from service.pull.lease import Leases
from service.pull.poller import Poller
from service.pull.prometheus import Credentials
from service.pull.settings import PullSettings
from service.pull.sources import check_source
from service.pull.spec import SourceSpec
from service.rows import StoredStream
from service.settings import Settings
from service.streams import StreamService


class Pull:
    """What the routes ask of pull mode: check a source at PUT, tell a stream's health."""

    def __init__(
        self,
        settings: PullSettings,
        client: httpx.AsyncClient,
        health: Health,
        poller: Poller | None = None,
    ) -> None:
        self.settings = settings
        self.client = client
        self.health = health
        self.poller = poller

    async def check(self, source: SourceSpec) -> None:
        """``service.pull.sources.check_source`` with this app's settings and client."""
        await check_source(source, self.settings, self.client)

    def refresh(self) -> None:
        """After a PUT: the poller reads the streams again, to poll a new source at once."""
        if self.poller is not None:
            self.poller.refresh()

    def decision(self, stream_id: str, decision: Decision) -> Decision:
        """The stream's last ``decision``, or, while its source's fallback applies, the
        fallback count in its place (said in ``reason``), as KEDA's fallback does."""
        health = self.health.status(stream_id)
        if health is None or health.fallback is None:
            return decision
        operators, last = health.fallback, decision.operators
        action: Literal["up", "down", "none"] = (
            "up" if operators > last else "down" if operators < last else "none"
        )
        reason = (
            f"fallback: {health.failures} consecutive failed polls of the source reached "
            f"fallback.failures, so fallback.operators={operators} applies until a poll "
            f"succeeds (last error: {health.last_error})"
        )
        return dataclasses.replace(
            decision,
            previous=decision.operators,
            operators=operators,
            action=action,
            reason=reason,
            code="Fallback",
        )

    def status(self, stream: StoredStream) -> SourceHealth | None:
        """The stream's source health; ``None`` for a stream without a source."""
        if "source" not in stream.spec:
            return None
        return self.health.status(stream.id) or SourceHealth()


_HEALTH: weakref.WeakKeyDictionary[CollectorRegistry, Health] = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def open_pull(
    settings: Settings, streams: StreamService, metrics: Metrics
) -> AsyncIterator[Pull]:
    """Pull mode for the app's ``streams``, polling from entry to exit; with
    ``database_url``, one replica polls each stream at a time (``service.pull.lease``)."""
    health = _HEALTH.get(metrics.registry)
    if health is None:
        # One per registry: an app started again (tests do) keeps its series, as Metrics does.
        health = _HEALTH[metrics.registry] = Health(metrics.registry, metrics.max_streams)
    leases = None
    if settings.database_url is not None:
        leases = await run_in_threadpool(Leases, settings.database_url, settings.busy_timeout)
    async with httpx.AsyncClient(auth=Credentials(settings)) as client:
        poller = Poller(streams, settings, health, client, leases=leases)
        task = asyncio.create_task(poller.run(), name="steadyscale-pull")
        try:
            yield Pull(settings, client, health, poller)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            if leases is not None:
                leases.close()


async def get_pull(request: Request) -> Pull:
    """The app's ``Pull``, opened by its lifespan."""
    return cast(Pull, request.state.pull)
