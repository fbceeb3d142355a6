"""How each stream's source is doing: last success, last error, consecutive failures.

``Health`` keeps one ``SourceHealth`` per polled stream, in memory, as this process's poller
saw it, and the series of ``/metrics`` that follow it (in the app's registry)::

    steadyscale_source_failures_total{stream}                  polls that failed
    steadyscale_source_last_success_timestamp_seconds{stream}  evaluation time of the last
                                                               poll that gave a sample
    steadyscale_source_consecutive_failures{stream}            failed polls since the last success

At most ``max_streams`` streams get series (the first seen), like the other per-stream series.

>>> health = Health()
>>> health.failed("orders", 30.0, "connection refused")
>>> health.status("orders").failures, health.status("orders").last_error
(1, 'connection refused')
>>> health.succeeded("orders", 45.0)
>>> health.status("orders").failures, health.status("orders").last_success
(0, 45.0)
"""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, Counter, Gauge
from pydantic import BaseModel, Field

from service.pull.spec import Fallback


class SourceHealth(BaseModel):
    """A stream's source as its poller last saw it."""

    last_success: float | None = Field(
        default=None, description="Evaluation time (unix seconds) of the last successful poll."
    )
    last_error: str | None = Field(
        default=None, description="Why the last failed poll failed (Prometheus' own message, cut)."
    )
    last_error_at: float | None = Field(
        default=None, description="Evaluation time of the last failed poll."
    )
    failures: int = Field(default=0, description="Consecutive failed polls; 0 after a success.")
    fallback: int | None = Field(
        default=None,
        description="The source's fallback.operators, once the failures reached its "
        "fallback.failures: the count decided until a poll succeeds; else null.",
    )


class Health:
    """Every polled stream's ``SourceHealth``; safe to share between threads."""

    def __init__(self, registry: CollectorRegistry | None = None, max_streams: int = 1000) -> None:
        self.max_streams = max_streams
        self._guard = threading.Lock()
        self._streams: dict[str, SourceHealth] = {}
        self._tracked: set[str] = set()
        registry = registry or CollectorRegistry()
        self._failures = Counter(
            "steadyscale_source_failures",
            "Polls of the stream's source that failed (no sample stored).",
            ["stream"],
            registry=registry,
        )
        self._last_success = Gauge(
            "steadyscale_source_last_success_timestamp_seconds",
            "Evaluation time of the stream's last poll that gave a sample, unix seconds.",
            ["stream"],
            registry=registry,
        )
        self._consecutive = Gauge(
            "steadyscale_source_consecutive_failures",
            "Polls of the stream's source that failed since its last success.",
            ["stream"],
            registry=registry,
        )

    def status(self, stream_id: str) -> SourceHealth | None:
        """A copy of the stream's health, ``None`` before its first poll here."""
        with self._guard:
            health = self._streams.get(stream_id)
            return None if health is None else health.model_copy()

    def succeeded(self, stream_id: str, t: float) -> None:
        with self._guard:
            health = self._streams.setdefault(stream_id, SourceHealth())
            health.last_success, health.failures, health.fallback = t, 0, None
            if self._track(stream_id):
                self._last_success.labels(stream_id).set(t)
                self._consecutive.labels(stream_id).set(0)

    def failed(
        self, stream_id: str, t: float, message: str, fallback: Fallback | None = None
    ) -> None:
        """Count a failed poll at evaluation time ``t``; the ``fallback`` applies once the
        consecutive failures reach its ``failures``."""
        with self._guard:
            health = self._streams.setdefault(stream_id, SourceHealth())
            health.last_error, health.last_error_at = message, t
            health.failures += 1
            if fallback is not None and health.failures >= fallback.failures:
                health.fallback = fallback.operators
            if self._track(stream_id):
                self._failures.labels(stream_id).inc()
                self._consecutive.labels(stream_id).set(health.failures)

    def adopt(self, stream_id: str, health: SourceHealth) -> None:
        """Take the stream's health as another replica (its poller) reported it."""
        with self._guard:
            self._streams[stream_id] = health.model_copy()

    def forget(self, stream_id: str) -> None:
        """Drop the stream (deleted, or no longer polled here) and its series."""
        with self._guard:
            self._streams.pop(stream_id, None)
            if stream_id in self._tracked:
                self._tracked.discard(stream_id)
                for family in (self._failures, self._last_success, self._consecutive):
                    try:
                        family.remove(stream_id)
                    except KeyError:
                        pass

    def _track(self, stream_id: str) -> bool:
        if stream_id not in self._tracked and len(self._tracked) < self.max_streams:
            self._tracked.add(stream_id)
        return stream_id in self._tracked
