"""The gRPC server of the KEDA scaler: grpc.aio on a thread and an event loop of its own.

Its own loop, not uvicorn's: the two servers then share nothing but the ``StreamService``
(thread-safe), neither can stall the other, and the gRPC server does not depend on which
event loop uvicorn picked. grpc.aio rather than grpc's thread-pool server because KEDA keeps
a ``StreamIsActive`` open per ScaledObject: a coroutine each, where the thread-pool server
would hold a thread each.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import grpc

from service.keda import externalscaler_pb2_grpc as pb_grpc
from service.keda.scaler import ExternalScaler, StreamWatch
from service.settings import Settings
from service.streams import StreamService

log = logging.getLogger(__name__)

# Seconds between reads of every stream (ages, StreamIsActive's changes).
POLL_INTERVAL = 1.0

# Calls in progress at once, by default (the setting grpc_max_calls): KEDA keeps one
# StreamIsActive open per ScaledObject and makes a few short calls per polling interval;
# 20,000 open calls from one client cost a core (issue 32).
MAX_CALLS = 1000
# Largest message either way, bytes, by default (the setting grpc_max_message_bytes): a
# ScaledObjectRef holds two names and the trigger's metadata, well under a kilobyte.
MAX_MESSAGE_BYTES = 64 * 1024


class KedaServer:
    """KEDA's external scaler for ``streams`` on ``host:port``.

    ``start()`` returns once the port is bound (raising ``RuntimeError`` if it cannot be);
    ``stop(grace)`` lets calls in flight finish for up to ``grace`` seconds, then cancels the
    rest (open streams included) and returns once the thread has ended.
    """

    def __init__(
        self,
        streams: StreamService,
        *,
        host: str,
        port: int,
        staleness: float,
        poll_interval: float = POLL_INTERVAL,
        max_calls: int = MAX_CALLS,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self.max_calls = max_calls
        self.max_message_bytes = max_message_bytes
        self.address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self._watch = StreamWatch(streams)
        self._servicer = ExternalScaler(
            self._watch, staleness=staleness, poll_interval=poll_interval
        )
        self._poll_interval = poll_interval
        self._thread = threading.Thread(target=self._run, name="keda-grpc", daemon=True)
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._grace = 1.0

    def start(self) -> None:
        self._thread.start()
        self._started.wait()
        if self._error is not None:
            self._thread.join()
            raise RuntimeError(
                f"the KEDA scaler cannot listen on {self.address}: {self._error}"
            ) from self._error

    def stop(self, grace: float = 1.0) -> None:
        self._grace = grace
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
        self._thread.join()

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as error:  # reported by start(), or logged once serving
            if not self._started.is_set():
                self._error = error
                self._started.set()
            else:
                log.exception("the KEDA scaler stopped")

    async def _serve(self) -> None:
        # No SO_REUSEPORT (grpc's default on Linux): a second server on the same port must
        # fail to start, not share KEDA's calls with the first.
        # Calls beyond max_calls are answered RESOURCE_EXHAUSTED at once; messages either way
        # beyond max_message_bytes are refused by grpc itself.
        server = grpc.aio.server(
            options=[
                ("grpc.so_reuseport", 0),
                ("grpc.max_receive_message_length", self.max_message_bytes),
                ("grpc.max_send_message_length", self.max_message_bytes),
            ],
            maximum_concurrent_rpcs=self.max_calls,
        )
        pb_grpc.add_ExternalScalerServicer_to_server(self._servicer, server)
        server.add_insecure_port(self.address)
        await server.start()
        self._loop, self._stopping = asyncio.get_running_loop(), asyncio.Event()
        self._started.set()
        refresher = asyncio.create_task(self._refresh())
        try:
            await self._stopping.wait()
        finally:
            refresher.cancel()
            self._servicer.close()
            await server.stop(self._grace)

    async def _refresh(self) -> None:
        while True:
            try:
                await asyncio.to_thread(self._watch.refresh)
            except Exception:
                log.exception("the KEDA scaler could not read the streams")
            await asyncio.sleep(self._poll_interval)


@contextmanager
def serve_keda(settings: Settings, streams: StreamService) -> Iterator[KedaServer | None]:
    """The KEDA scaler on ``settings.host:settings.grpc_port`` while the block runs, or
    nothing when ``grpc_port`` is not set."""
    if settings.grpc_port is None:
        yield None
        return
    server = KedaServer(
        streams,
        host=settings.host,
        port=settings.grpc_port,
        staleness=settings.staleness,
        max_calls=settings.grpc_max_calls,
        max_message_bytes=settings.grpc_max_message_bytes,
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()
