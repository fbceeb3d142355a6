"""The service as users run it: `steadyscale serve` in its own process, spoken to over HTTP."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from filters import make_filter
from scaling import Scaler, ThresholdPolicy, make_guard

STREAM = {
    "filter": {"name": "tvd"},
    "policy": {"capacity": 50.0, "min_operators": 1, "max_operators": 100},
    "guards": [{"name": "hysteresis", "band": 0.02}],
    "operators": 4,
}


class Server:
    """A `steadyscale serve` process on a free loopback port."""

    def __init__(self, data_dir: Path, env: dict[str, str] | None = None) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "simulator.cli", "serve", "--port", str(self.port),
                   "--data-dir", str(data_dir), "--log-level", "warning"]  # fmt: skip
        self.process = subprocess.Popen(command, env={**os.environ, **(env or {})})
        deadline = time.monotonic() + 30.0
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                raise RuntimeError(f"steadyscale serve did not start (exit {self.process.poll()})")
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs, whatever was in flight is cut off."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = Server(tmp_path / "data")
    yield running
    running.stop()


def samples(count: int, start: int = 0, seed: int = 7) -> list[dict[str, float]]:
    rng = np.random.default_rng(seed)
    level = np.repeat(rng.uniform(200.0, 500.0, count // 50 + 1), 50)[:count]
    volumes = np.clip(level + rng.normal(0.0, 60.0, count), 0.0, None)
    return [{"t": float(start + i), "volume": float(v)} for i, v in enumerate(volumes)]


def uninterrupted(batch: list[dict[str, float]]) -> list[tuple[float, float, int]]:
    policy = ThresholdPolicy(**STREAM["policy"])  # type: ignore[arg-type]
    scaler = Scaler(
        make_filter(STREAM["filter"]),  # type: ignore[arg-type]
        policy,
        [make_guard(g) for g in STREAM["guards"]],  # type: ignore[attr-defined]
        operators=STREAM["operators"],  # type: ignore[arg-type]
    )
    decisions = [scaler.observe(s["volume"], s["t"]) for s in batch]
    return [(d.t, d.filtered, d.operators) for d in decisions]


def history(client: httpx.Client, stream: str) -> list[dict[str, Any]]:
    response = client.get(f"/v1/streams/{stream}/history", params={"limit": 100_000})
    assert response.status_code == 200, response.text
    body = response.json()
    return list(body["decisions"] if isinstance(body, dict) else body)


def test_a_real_server_answers_over_http(server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=10.0) as client:
        assert client.put("/v1/streams/orders", json=STREAM).status_code == 201
        batch = samples(120)
        answer = client.post("/v1/streams/orders/samples", json={"samples": batch})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["accepted"] == 120 and body["duplicates"] == 0
        assert [(d["t"], d["filtered"], d["operators"]) for d in body["decisions"]] == (
            uninterrupted(batch)
        )
        latest = client.get("/v1/streams/orders/decision").json()
        assert latest["t"] == 119.0 and latest["operators"] == body["operators"]
        metric = client.get("/v1/streams/orders/metric").json()
        assert metric == {"value": latest["filtered"], "operators": latest["operators"]}
        text = client.get("/metrics").text
        names = {family.name for family in text_string_to_metric_families(text)}
        assert any("operators" in name for name in names)
        assert 'stream="orders"' in text
        assert client.get("/v1/streams/nope/decision").status_code == 404


def test_tokens_guard_everything_but_healthz(tmp_path: Path) -> None:
    secured = Server(tmp_path / "data", env={"STEADYSCALE_TOKENS": "s3cret,other"})
    try:
        with httpx.Client(base_url=secured.url, timeout=10.0) as client:
            assert client.get("/healthz").status_code == 200
            assert client.get("/v1/streams").status_code == 401
            wrong = {"Authorization": "Bearer guess"}
            assert client.get("/v1/streams", headers=wrong).status_code == 401
            right = {"Authorization": "Bearer other"}
            assert client.get("/v1/streams", headers=right).status_code == 200
            assert client.get("/metrics", headers=right).status_code == 200
    finally:
        secured.stop()


def test_sigkill_mid_run_then_restart_continues_exactly(tmp_path: Path) -> None:
    """Kill the server while a client streams batches, restart it, resend what was not
    acknowledged: the stream's decisions equal one uninterrupted run's, none applied twice."""
    data = tmp_path / "data"
    everything = samples(3000)
    batches = [everything[i : i + 25] for i in range(0, len(everything), 25)]
    first = Server(data)
    acknowledged: list[int] = []
    failure: list[Exception] = []

    def stream_batches() -> None:
        with httpx.Client(base_url=first.url, timeout=10.0) as client:
            for index, batch in enumerate(batches):
                try:
                    answer = client.post("/v1/streams/s1/samples", json={"samples": batch})
                except httpx.TransportError as error:  # the server died under us
                    failure.append(error)
                    return
                assert answer.status_code == 200, answer.text
                acknowledged.append(index)

    assert httpx.put(f"{first.url}/v1/streams/s1", json=STREAM).status_code == 201
    poster = threading.Thread(target=stream_batches)
    poster.start()
    while len(acknowledged) < 30 and poster.is_alive():
        time.sleep(0.005)
    first.kill()  # with a request most likely in flight
    poster.join(timeout=30)
    assert failure, "the server was killed after the client had sent everything"
    resume = acknowledged[-1] + 1
    assert resume < len(batches)

    second = Server(data)
    try:
        with httpx.Client(base_url=second.url, timeout=10.0) as client:
            # The client cannot know whether the batch in flight was applied: it resends it.
            for batch in batches[resume:]:
                answer = client.post("/v1/streams/s1/samples", json={"samples": batch})
                assert answer.status_code == 200, answer.text
            # Resending an acknowledged batch is harmless too.
            again = client.post("/v1/streams/s1/samples", json={"samples": batches[3]}).json()
            assert again["accepted"] == 0 and again["duplicates"] == 25
            decisions = history(client, "s1")
    finally:
        second.stop()
    got = [(d["t"], d["filtered"], d["operators"]) for d in decisions]
    assert got == uninterrupted(everything)
