"""Pull mode end to end: a real Prometheus scrapes a real exporter, and a real ``steadyscale
serve`` (uvicorn, its own process) polls that Prometheus over HTTP.

The exporter (``tests.service.pull.exporter``) serves known values that change every few
seconds; Prometheus (Debian's ``prometheus`` package, which ``make test-tools`` installs when
it can; ``STEADYSCALE_PROMETHEUS_BIN`` names another binary) scrapes it every second. The
test checks that the stream's history holds, at each evaluation time once, exactly what
Prometheus evaluates there; that the decisions are those of one Scaler fed those samples;
that with Prometheus stopped the stream reports failures, stores nothing, answers no 5xx and
falls back after ``fallback.failures``; and that polling recovers by itself when Prometheus
returns. Marked ``prometheus`` (``make test-fast`` leaves it out); where no binary is found,
the session header says "prometheus: NOT TESTED" and why, and the test is skipped with that
reason.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from scaling import Scaler
from tests.not_tested import not_tested
from tests.service.pull.exporter import values_at
from tests.service.test_server import Server

T = TypeVar("T")

pytestmark = pytest.mark.prometheus


def prometheus_binary() -> tuple[str | None, str]:
    """The ``prometheus`` server binary, or ``None`` and why not."""
    given = os.environ.get("STEADYSCALE_PROMETHEUS_BIN")
    found = given if given and Path(given).exists() else shutil.which("prometheus")
    if found is None:
        where = given or "PATH"
        return None, (
            f"no prometheus server binary on {where}: install Debian's prometheus package "
            "(make test-tools does, as root), or set STEADYSCALE_PROMETHEUS_BIN"
        )
    return found, ""


def report_header() -> str:
    found, why = prometheus_binary()
    if found is None:
        return f"prometheus: NOT TESTED, {why}"
    return f"prometheus: the pull tests start {found}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(check: Callable[[], T | None], seconds: float, what: str) -> T:
    deadline = time.monotonic() + seconds
    while True:
        try:
            found = check()
        except (httpx.TransportError, ValueError):  # not up yet: refused, or not JSON yet
            found = None
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"within {seconds} s: {what}")
        time.sleep(0.2)


class Prometheus:
    """A Prometheus server scraping ``target`` every second, its data in ``directory``."""

    def __init__(self, binary: str, directory: Path, target: int) -> None:
        self.binary, self.directory = binary, directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = directory / "prometheus.yml"
        self.config.write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            "  - job_name: exporter\n"
            f"    static_configs: [{{targets: ['127.0.0.1:{target}']}}]\n"
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [self.binary, f"--config.file={self.config}",
                   f"--storage.tsdb.path={self.directory / 'data'}",
                   f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"]  # fmt: skip
        self.process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
        wait_for(lambda: self.value("up") == 1.0, 30, "Prometheus scraped the exporter")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def value(self, query: str, at: float | None = None) -> float | None:
        params: dict[str, Any] = {"query": query}
        if at is not None:
            params["time"] = f"{at:.3f}"
        body = httpx.get(f"{self.url}/api/v1/query", params=params, timeout=5).json()
        result = body["data"]["result"]
        return float(result[0]["value"][1]) if result else None


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[Prometheus]:
    binary, why = prometheus_binary()
    if binary is None:
        not_tested("prometheus", why)
    port = free_port()
    exporter = subprocess.Popen([sys.executable, "-m", "tests.service.pull.exporter", str(port)])
    server = Prometheus(binary, tmp_path, port)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        exporter.terminate()
        exporter.wait(timeout=10)


SOURCE = {
    "prometheus": {
        "volume": "sum(pull_test_volume)",
        "running": "sum(pull_test_running)",
        "interval": 1,
    },
    "fallback": {"failures": 3, "operators": 7},
}
SPEC = {"filter": {"name": "raw"}, "policy": {"capacity": 50}}


def history(client: httpx.Client) -> list[dict[str, Any]]:
    decisions: list[dict[str, Any]] = client.get("/v1/streams/orders/history").json()["decisions"]
    return decisions


def health(client: httpx.Client) -> dict[str, Any]:
    answer: dict[str, Any] = client.get("/v1/streams/orders").json()["source_health"]
    return answer


def at_least(client: httpx.Client, count: int) -> list[dict[str, Any]] | None:
    decisions = history(client)
    return decisions if len(decisions) >= count else None


def failed(client: httpx.Client, count: int) -> dict[str, Any] | None:
    state = health(client)
    return state if state["failures"] >= count else None


def test_a_real_prometheus_polled_by_a_real_server(prometheus: Prometheus, tmp_path: Path) -> None:
    server = Server(tmp_path / "service", env={"STEADYSCALE_PROMETHEUS_URL": prometheus.url})
    try:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            put = client.put("/v1/streams/orders", json={**SPEC, "source": SOURCE})
            assert put.status_code == 201, put.text
            polled = wait_for(lambda: at_least(client, 6), 30, "6 polls")

            # Each sample is what Prometheus evaluates at its time, once per evaluation time.
            times = [d["t"] for d in polled]
            assert times == sorted(set(times)) and all(t == int(t) for t in times)
            for decision in polled:
                t = decision["t"]
                assert decision["volume"] == prometheus.value("sum(pull_test_volume)", t)
                assert decision["running"] == prometheus.value("sum(pull_test_running)", t)
                assert decision["volume"] in {values_at(s)["pull_test_volume"] for s in range(20)}
            # The decisions follow: those of one Scaler fed the same samples.
            scaler = Scaler.from_spec(SPEC)
            expected = [scaler.observe(d["volume"], d["t"], running=d["running"]) for d in polled]
            assert [d["operators"] for d in polled] == [e.operators for e in expected]
            assert [d["reason"] for d in polled] == [e.reason for e in expected]

            # Prometheus stops: failures are reported, nothing is stored, no 5xx, then fallback.
            prometheus.stop()
            failing = wait_for(lambda: failed(client, 3), 15, "3 failed polls")
            assert "cannot be reached" in failing["last_error"] and failing["fallback"] == 7
            stalled = history(client)
            paths = ["/v1/streams/orders", "/v1/streams/orders/decision", "/metrics",
                     "/v1/streams/orders/metric", "/v1/streams/orders/history"]  # fmt: skip
            assert all(client.get(path).status_code == 200 for path in paths)
            decision = client.get("/v1/streams/orders/decision").json()
            assert decision["operators"] == 7 and decision["reason"].startswith("fallback: ")
            assert decision["code"] == "Fallback"
            assert decision["t"] == stalled[-1]["t"]
            metrics = client.get("/metrics").text
            assert 'steadyscale_source_failures_total{stream="orders"}' in metrics
            assert 'steadyscale_source_last_success_timestamp_seconds{stream="orders"}' in metrics

            # Prometheus returns: polling recovers by itself, the fallback ends.
            prometheus.start()
            wait_for(lambda: health(client)["failures"] == 0, 20, "a poll succeeded again")
            recovered = history(client)
            assert recovered[: len(stalled)] == stalled and len(recovered) > len(stalled)
            outage = [d["t"] for d in recovered[len(stalled) :]]
            assert outage[0] > stalled[-1]["t"] + 3  # the failed times are not filled in
            times = [d["t"] for d in recovered]
            assert times == sorted(set(times))
            assert client.get("/v1/streams/orders/decision").json()["reason"][:9] != "fallback:"
    finally:
        server.stop()


def polls_itself(server: Server) -> bool:
    """Whether this replica's own poller stored a sample of the stream (its /metrics has the
    stream's last-success series; health it only read from the database makes none)."""
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    return 'steadyscale_source_last_success_timestamp_seconds{stream="orders"}' in text


def test_two_replicas_on_postgresql_poll_once_and_take_over(
    prometheus: Prometheus, postgres_url: str, tmp_path: Path
) -> None:
    """Two real servers on one PostgreSQL: one polls the stream, the other does not; the
    polling one is SIGKILLed and the other takes the stream over within two intervals, and
    every evaluation time is stored once."""
    env = {"STEADYSCALE_PROMETHEUS_URL": prometheus.url, "STEADYSCALE_DATABASE_URL": postgres_url}
    replicas = [Server(tmp_path / name, env=env) for name in ("a", "b")]
    interval = 2
    source = {"prometheus": {"volume": "sum(pull_test_volume)", "interval": interval}}
    try:
        with httpx.Client(base_url=replicas[1].url, timeout=10) as client:
            put = client.put("/v1/streams/orders", json={**SPEC, "source": source})
            assert put.status_code == 201, put.text
            wait_for(lambda: at_least(client, 3), 30, "3 polls")
        owners = [replica for replica in replicas if polls_itself(replica)]
        assert len(owners) == 1
        owner, other = owners[0], next(r for r in replicas if r is not owners[0])
        with httpx.Client(base_url=other.url, timeout=10) as client:
            assert health(client)["failures"] == 0  # the owner's health, read from PostgreSQL
            before = history(client)
            owner.kill()
            after = wait_for(lambda: at_least(client, len(before) + 3), 30, "3 polls after")
            assert polls_itself(other)
        times = [decision["t"] for decision in after]
        assert times == sorted(set(times))
        gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
        # Every evaluation time once: consecutive, but across the kill one gap, where the
        # owner's lease had to pass first. The takeover polls at most two intervals after the
        # dead owner's last poll; if it was killed during that poll (lease renewed, sample not
        # yet stored), the poll stored nothing, so three after the last stored sample.
        takeover = [gap for gap in gaps if gap != interval]
        assert len(takeover) <= 1 and set(takeover) <= {2 * interval, 3 * interval}, gaps
        for decision in after:
            assert decision["volume"] == prometheus.value("sum(pull_test_volume)", decision["t"])
    finally:
        for replica in replicas:
            replica.stop()
