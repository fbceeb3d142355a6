"""What-if replays: a stream's retained samples through another configuration, bounded.

A replay is CPU work a client asks for and nothing stores, so it is held to what the service
can afford (issue 32: 41 concurrent replays of a slow filter held every worker thread for
minutes, after their clients had given up):

* at most ``max_replays`` run at once, each in a worker thread; one more is answered 503 with
  ``Retry-After`` at once, never queued;
* its work is estimated before the first sample is fed (``service.budget``): above the setting
  ``work_budget`` it is refused with 422 naming ``limit`` and how many samples fit;
* it stops between two samples as soon as its client disconnects;
* a sample the Scaler cannot follow is refused as a POST of it would be (422,
  ``service.scalers.decide``).
"""

from __future__ import annotations

import asyncio
import threading

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from scaling import Decision
from service.budget import sample_seconds, samples_within
from service.errors import ServiceError
from service.models import FieldError, Sample, StreamConfig
from service.scalers import build_scaler, decide
from service.streams import StreamService

# Seconds between two looks at whether the client is still there: a stopped replay wastes at
# most this much CPU.
DISCONNECT_POLL = 0.1


class ReplayCancelled(ServiceError):
    """The client left; the replay stopped between two samples (503, which nobody reads)."""

    def __init__(self, stream_id: str) -> None:
        super().__init__(503, f"the client left; the replay of stream {stream_id!r} stopped")


class Replays:
    """The replays of one app: ``max_replays`` at once, each within ``work_budget`` seconds."""

    def __init__(self, max_replays: int, work_budget: float) -> None:
        self.max_replays = max_replays
        self.work_budget = work_budget
        self.running = 0

    async def replay(
        self,
        request: Request,
        streams: StreamService,
        stream_id: str,
        config: StreamConfig,
        since: float | None,
        limit: int,
    ) -> list[Decision]:
        """The decisions a fresh Scaler of ``config`` makes on the stream's samples with
        ``t > since``, the first ``limit``. Raises ``ServiceError`` (503 when busy, 422 over
        the budget or for a sample it cannot follow), ``InvalidInput`` or ``StreamNotFound``;
        ``ReplayCancelled`` when the client leaves."""
        if self.running >= self.max_replays:
            message = (
                f"{self.max_replays} what-if replays are running (setting max_replays); retry later"
            )
            raise ServiceError(503, message, headers={"Retry-After": "1"})
        self.running += 1
        cancelled = threading.Event()
        watch = asyncio.create_task(_watch(request, cancelled))
        try:
            return await run_in_threadpool(
                self._replay, streams, stream_id, config, since, limit, cancelled
            )
        finally:
            self.running -= 1
            cancelled.set()
            watch.cancel()

    def _replay(
        self,
        streams: StreamService,
        stream_id: str,
        config: StreamConfig,
        since: float | None,
        limit: int,
        cancelled: threading.Event,
    ) -> list[Decision]:
        scaler = build_scaler(config)
        history = streams.history(stream_id, since, limit)
        fit = samples_within(scaler.spec, self.work_budget)
        if len(history) > fit:
            cost = len(history) * sample_seconds(scaler.spec)
            allowed = (
                f"at most {fit} samples with this configuration: {len(history)} would take "
                f"about {cost:.3g} s of CPU, over the budget of {self.work_budget:g} s per "
                "request (setting work_budget)"
            )
            message = f"the replay is too costly: limit {allowed}"
            raise ServiceError(422, message, [FieldError.of("limit", limit, allowed, message)])
        samples = [
            Sample.model_construct(
                t=d.t, volume=d.volume, backlog=d.backlog, running=d.running, processed=d.processed
            )
            for d in history
        ]
        decisions = decide(scaler, samples, 0, cancelled)
        if cancelled.is_set():
            raise ReplayCancelled(stream_id)
        return decisions


async def _watch(request: Request, cancelled: threading.Event) -> None:
    """Set ``cancelled`` once the client has disconnected."""
    while not cancelled.is_set():
        if await request.is_disconnected():
            cancelled.set()
            return
        await asyncio.sleep(DISCONNECT_POLL)
