"""Prometheus metrics of one app: per stream what it decided, per route how requests went.

Series (``stream`` is the stream id; ``route`` the route template, e.g.
``/v1/streams/{stream_id}/samples``, or ``unmatched``; ``method`` one of the HTTP methods the
service knows, or ``other``)::

    steadyscale_volume_tuples_per_second{stream}            raw volume of the last decision's sample
    steadyscale_filtered_volume_tuples_per_second{stream}   filtered volume of the last decision
    steadyscale_desired_operators{stream}                   operators the last decision asks for
    steadyscale_running_operators{stream}                   operators last reported running
    steadyscale_backlog_records{stream}                     backlog last reported (records waiting)
    steadyscale_operator_capacity_tuples_per_second{stream} volume one operator is planned for:
                                                            the policy's capacity
    steadyscale_scaling_operations_total{stream,direction}  decisions that scaled up / down
    steadyscale_decisions_total{code}                       decisions of every stream, by reason
                                                            code (scaling.decision.CODES)
    steadyscale_streams_untracked                           streams without series of their own
    steadyscale_http_requests_total{method,route,status}
    steadyscale_http_request_duration_seconds{method,route,status}   histogram

Every label takes a bounded set of values, whatever clients send: a made-up method is
``other``, an unknown path ``unmatched``, and only ``max_streams`` streams have series of their
own (the first by id at start-up, then new ones while there is room). A stream has at most
``SERIES_PER_STREAM`` series (six gauges, two counters), so the per-stream part of a scrape
holds at most ``SERIES_PER_STREAM * max_streams`` series (8,000 with the default setting
``stream_metrics`` of 1,000) at any number of streams. Counters have no ``_created`` series
(``disable_created_metrics``): they would double the counters' series and Prometheus does not
use them.

The gauges are restored from storage when the app starts; the counters count from then on.

>>> from scaling import Decision
>>> metrics = Metrics()
>>> metrics.created("orders", per_operator=50.0)
>>> metrics.decided("orders", [Decision(0.0, 120.0, 118.5, 1, 3, "up", "filtered 118.5 ...")])
>>> [line for line in metrics.render().decode().splitlines() if 'stream="orders"' in line][:2]
['steadyscale_filtered_volume_tuples_per_second{stream="orders"} 118.5', \
'steadyscale_desired_operators{stream="orders"} 3.0']
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from scaling import Decision
from scaling.decision import CODES

_DIRECTIONS = ("up", "down")
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

# Gauges (volume, filtered, desired, running, backlog, per-operator capacity) and scaling
# counters (up, down).
SERIES_PER_STREAM = 8

# prometheus_client's switch is for the whole process: it applies to counters and histograms
# made from here on, which are all of this module's.
disable_created_metrics()  # type: ignore[no-untyped-call]


class Metrics:
    """The metrics of one app, in a registry of its own (``registry``); per-stream series for
    at most ``max_streams`` streams."""

    def __init__(self, max_streams: int = 1000) -> None:
        self.max_streams = max_streams
        self._render_lock = threading.Lock()
        self._rendered: tuple[float, bytes] | None = None
        self._tracked: set[str] = set()
        self._untracked_count = 0
        self.registry = CollectorRegistry()
        self._untracked = Gauge(
            "steadyscale_streams_untracked",
            "Streams without series of their own (beyond the setting stream_metrics).",
            registry=self.registry,
        )
        self._filtered = Gauge(
            "steadyscale_filtered_volume_tuples_per_second",
            "Filtered input volume at the stream's last decision, tuples/s.",
            ["stream"],
            registry=self.registry,
        )
        self._operators = Gauge(
            "steadyscale_desired_operators",
            "Operators the stream's last decision asks for.",
            ["stream"],
            registry=self.registry,
        )
        self._volume = Gauge(
            "steadyscale_volume_tuples_per_second",
            "Input volume of the sample of the stream's last decision, tuples/s (unfiltered).",
            ["stream"],
            registry=self.registry,
        )
        self._running = Gauge(
            "steadyscale_running_operators",
            "Operators the stream's samples last reported running (absent until one does).",
            ["stream"],
            registry=self.registry,
        )
        self._backlog = Gauge(
            "steadyscale_backlog_records",
            "Records waiting that the stream's samples last reported (absent until one does).",
            ["stream"],
            registry=self.registry,
        )
        self._per_operator = Gauge(
            "steadyscale_operator_capacity_tuples_per_second",
            "Volume one operator of the stream is planned for: its policy's capacity, tuples/s "
            "(n operators handle n times this).",
            ["stream"],
            registry=self.registry,
        )
        self._scalings = Counter(
            "steadyscale_scaling_operations",
            "Decisions that changed the stream's operator count, by direction.",
            ["stream", "direction"],
            registry=self.registry,
        )
        self._codes = Counter(
            "steadyscale_decisions",
            "Decisions of every stream, by reason code (why the count came out as it did).",
            ["code"],
            registry=self.registry,
        )
        # Label children looked up once: labels() takes a lock and builds a key every call,
        # a tenth of a 1-sample POST's work in this module before.
        self._code_series = {code: self._codes.labels(code) for code in CODES}
        self._stream_series: dict[str, _StreamSeries] = {}
        self._stream_gauges = {
            "filtered": self._filtered,
            "operators": self._operators,
            "volume": self._volume,
            "running": self._running,
            "backlog": self._backlog,
        }
        self._request_series: dict[tuple[str, str, str], tuple[Counter, Histogram]] = {}
        self._requests = Counter(
            "steadyscale_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self._latency = Histogram(
            "steadyscale_http_request_duration_seconds",
            "Time to answer HTTP requests, by method, route template and status.",
            ["method", "route", "status"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )

    def restore(self, per_operator: Mapping[str, float], latest: Mapping[str, Decision]) -> None:
        """Start every stream's series (``per_operator``: stream -> the volume one operator is
        planned for): zero counters, gauges from its ``latest`` decision."""
        for stream_id, capacity in per_operator.items():
            self.created(stream_id, capacity)
            if stream_id in latest:
                self.decided(stream_id, [latest[stream_id]], counted=False)

    def created(self, stream_id: str, per_operator: float) -> None:
        """Start the stream's counters at zero, so their series exist before any scaling, and
        its per-operator capacity (tuples/s); or count it as untracked when ``max_streams``
        streams have series already."""
        if stream_id in self._tracked:
            return
        if len(self._tracked) >= self.max_streams:
            self._untracked_count += 1
            self._untracked.set(self._untracked_count)
            return
        self._tracked.add(stream_id)
        self._per_operator.labels(stream_id).set(per_operator)
        self._stream_series[stream_id] = _StreamSeries(
            stream_id, self._stream_gauges, self._scalings
        )

    def decided(self, stream_id: str, decisions: Sequence[Decision], counted: bool = True) -> None:
        """Count the decisions by code and, for a tracked stream, the scaling operations among
        them (unless ``counted`` is false: decisions restored, counted before); set its gauges
        to the last one."""
        if counted:
            # A dict, not a collections.Counter, and one loop below, not a generator per
            # report and direction: 3.5 us instead of 6.2 for a 1-sample batch (issue 32,
            # session 30).
            codes: dict[str, int] = {}
            for decision in decisions:
                codes[decision.code] = codes.get(decision.code, 0) + 1
            for code, count in codes.items():
                known = self._code_series.get(code)
                if known is not None:
                    known.inc(count)
        series = self._stream_series.get(stream_id)
        if series is not None:
            series.decided(decisions, counted)

    def forget(self, stream_id: str) -> None:
        """Remove the stream's series (it was deleted or replaced)."""
        if stream_id not in self._tracked:
            self._untracked_count = max(0, self._untracked_count - 1)
            self._untracked.set(self._untracked_count)
            return
        self._tracked.discard(stream_id)
        self._stream_series.pop(stream_id, None)
        gauges = (
            self._filtered,
            self._operators,
            self._volume,
            self._running,
            self._backlog,
            self._per_operator,
        )
        for gauge in gauges:
            try:
                gauge.remove(stream_id)
            except KeyError:
                pass  # no decision yet
        for direction in _DIRECTIONS:
            self._scalings.remove(stream_id, direction)

    def answered(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one HTTP request and its duration."""
        labels = (method if method in _METHODS else "other", route, str(status))
        series = self._request_series.get(labels)
        if series is None:  # bounded: every label has a bounded set of values
            series = self._requests.labels(*labels), self._latency.labels(*labels)
            self._request_series[labels] = series
        series[0].inc()
        series[1].observe(seconds)

    def render(self, max_age: float = 0.0) -> bytes:
        """Every series in the Prometheus text format; the text rendered last if it is at
        most ``max_age`` seconds old (rendering 1,000 streams' series takes about 0.1 s of
        CPU, which scrapes in a tight loop would otherwise take again and again)."""
        with self._render_lock:
            now = time.monotonic()
            if self._rendered is None or now - self._rendered[0] > max_age:
                self._rendered = (now, generate_latest(self.registry))
            return self._rendered[1]


class _StreamSeries:
    """A tracked stream's label children, each looked up on its first use (a gauge has no
    series until it is first set)."""

    def __init__(self, stream_id: str, gauges: dict[str, Gauge], scalings: Counter) -> None:
        self._stream_id, self._gauges, self._scalings = stream_id, gauges, scalings
        self._children: dict[str, Gauge | Counter] = {}
        for direction in _DIRECTIONS:  # counters start at zero, before any scaling
            self._child(direction)

    def _child(self, name: str) -> Any:
        child = self._children.get(name)
        if child is None:
            if name in _DIRECTIONS:
                child = self._scalings.labels(self._stream_id, name)
            else:
                child = self._gauges[name].labels(self._stream_id)
            self._children[name] = child
        return child

    def decided(self, decisions: Sequence[Decision], counted: bool) -> None:
        """Set the gauges to the last decision (running and backlog to the last reported);
        count the scaling operations unless ``counted`` is false."""
        last = decisions[-1]
        self._child("filtered").set(last.filtered)
        self._child("operators").set(last.operators)
        self._child("volume").set(last.volume)
        running = backlog = None  # the last reported, looked for from the last decision back
        for decision in reversed(decisions):
            if running is None:
                running = decision.running
            if backlog is None:
                backlog = decision.backlog
            if running is not None and backlog is not None:
                break
        if running is not None:
            self._child("running").set(running)
        if backlog is not None:
            self._child("backlog").set(backlog)
        if counted:
            actions: list[str] = [decision.action for decision in decisions]
            for direction in _DIRECTIONS:
                count = actions.count(direction)
                if count:
                    self._child(direction).inc(count)


class RequestMetricsMiddleware:
    """ASGI middleware timing each HTTP request into ``metrics``, by route template."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            # The router puts the matched route in the scope; unmatched paths share one label.
            route = getattr(scope.get("route"), "path", "unmatched")
            self.metrics.answered(scope["method"], route, status, time.perf_counter() - start)
