"""The service as users run it: `steadyscale serve` in its own process, spoken to over HTTP."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
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
    """A `steadyscale serve` process on a free loopback port (or on ``port``: a restarted
    replica keeps its address)."""

    def __init__(
        self,
        data_dir: Path,
        env: dict[str, str] | None = None,
        preexec_fn: Callable[[], None] | None = None,
        port: int | None = None,
        options: Sequence[str] = (),
        log: Path | None = None,
    ) -> None:
        if port is None:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
        self.port = port
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "simulator.cli", "serve", "--port", str(self.port),
                   "--data-dir", str(data_dir), "--log-level", "warning", *options]  # fmt: skip
        # With ``log``, the server's stderr goes there (options may raise its --log-level).
        with log.open("w") if log is not None else contextlib.nullcontext() as stderr:
            self.process = subprocess.Popen(
                command, env={**os.environ, **(env or {})}, preexec_fn=preexec_fn, stderr=stderr
            )
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
        assert (metric["value"], metric["operators"]) == (latest["filtered"], latest["operators"])
        text = client.get("/metrics").text
        names = {family.name for family in text_string_to_metric_families(text)}
        assert any("operators" in name for name in names)
        assert 'stream="orders"' in text
        assert client.get("/v1/streams/nope/decision").status_code == 404


def test_tokens_guard_everything_but_the_probes(tmp_path: Path) -> None:
    secured = Server(tmp_path / "data", env={"STEADYSCALE_TOKENS": "s3cret,other"})
    try:
        with httpx.Client(base_url=secured.url, timeout=10.0) as client:
            assert client.get("/healthz").status_code == 200
            assert client.get("/readyz").json() == {"status": "ready"}
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


# Issue 14: the server process under attack


def healthz_seconds(url: str, count: int = 10) -> float:
    """The slowest of ``count`` /healthz answers, seconds."""
    slowest = 0.0
    with httpx.Client(base_url=url, timeout=10.0) as client:
        for _ in range(count):
            began = time.perf_counter()
            assert client.get("/healthz").status_code == 200
            slowest = max(slowest, time.perf_counter() - began)
            time.sleep(0.02)
    return slowest


def test_another_writer_holding_the_database_is_503_and_never_stalls_the_loop(
    tmp_path: Path,
) -> None:
    """Item 9: a backup or the sqlite3 shell holds SQLite's write lock. /healthz answers at
    once; a POST answers 503 after the busy timeout, nothing stored; afterwards all is well."""
    data = tmp_path / "data"
    server = Server(data, env={"STEADYSCALE_BUSY_TIMEOUT": "1"})
    everything = samples(40)
    try:
        with httpx.Client(base_url=server.url, timeout=10.0) as client:
            client.put("/v1/streams/s1", json=STREAM)
            for sample in everything[:20]:  # cached and cheap: small batches run on the loop
                assert client.post("/v1/streams/s1/samples", json={"samples": [sample]}).is_success
            holder = sqlite3.connect(data / "steadyscale.db", isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")
            answers: list[httpx.Response] = []
            poster = threading.Thread(
                target=lambda: answers.append(
                    client.post("/v1/streams/s1/samples", json={"samples": everything[20:21]})
                )
            )
            poster.start()
            assert healthz_seconds(server.url) < 0.2
            poster.join(timeout=10)
            [refused] = answers
            assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
            assert "locked" in refused.json()["detail"]
            assert client.get("/readyz").status_code == 503  # a write is tried, and waits
            holder.execute("ROLLBACK")
            holder.close()
            assert client.get("/readyz").status_code == 200
            for sample in everything[20:]:
                assert client.post("/v1/streams/s1/samples", json={"samples": [sample]}).is_success
            got = [(d["t"], d["filtered"], d["operators"]) for d in history(client, "s1")]
    finally:
        server.stop()
    assert got == uninterrupted(everything)


def _small_disk() -> None:
    """In the server process: files may not grow past 512 KiB (a full disk, as SQLite sees
    it), and the kernel's SIGXFSZ is ignored so that writes fail instead of killing it."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (512 * 1024, resource.RLIM_INFINITY))


def test_a_full_disk_is_503_not_ready_and_loses_nothing(tmp_path: Path) -> None:
    """Item 13: writes that cannot be stored answer 503 and /readyz says not ready; once the
    disk has room again everything works; every acknowledged sample is kept, none twice."""
    data = tmp_path / "data"
    everything = samples(6000)
    batches = [everything[i : i + 200] for i in range(0, len(everything), 200)]
    server = Server(data, preexec_fn=_small_disk)
    acknowledged = 0
    try:
        with httpx.Client(base_url=server.url, timeout=10.0) as client:
            client.put("/v1/streams/s1", json=STREAM)
            for batch in batches:
                answer = client.post("/v1/streams/s1/samples", json={"samples": batch})
                if answer.status_code != 200:
                    break
                acknowledged += 1
            assert 0 < acknowledged < len(batches), "the disk never filled up"
            assert answer.status_code == 503, answer.text
            # Small batches may still fit: fill the disk up with them.
            start = acknowledged * 200
            while True:
                one = everything[start : start + 1]
                answer = client.post("/v1/streams/s1/samples", json={"samples": one})
                if answer.status_code != 200:
                    break
                start += 1
            assert answer.status_code == 503, answer.text
            not_ready = {"status": "not_ready", "reason": "StorageUnavailable"}
            assert client.get("/readyz").json() == not_ready
            assert client.get("/healthz").status_code == 200
            resource.prlimit(
                server.process.pid,
                resource.RLIMIT_FSIZE,
                (resource.RLIM_INFINITY, resource.RLIM_INFINITY),
            )
            assert client.get("/readyz").status_code == 200
            rest = everything[start:]
            for batch in [rest[i : i + 200] for i in range(0, len(rest), 200)]:
                answer = client.post("/v1/streams/s1/samples", json={"samples": batch})
                assert answer.status_code == 200, answer.text
    finally:
        server.kill()
    restarted = Server(data)
    try:
        with httpx.Client(base_url=restarted.url, timeout=10.0) as client:
            got = [(d["t"], d["filtered"], d["operators"]) for d in history(client, "s1")]
    finally:
        restarted.stop()
    assert got == uninterrupted(everything)


@pytest.mark.parametrize(
    ("arguments", "env", "message"),
    [
        (["--data-dir", "{file}"], {}, "{file}"),
        ([], {"STEADYSCALE_TOKENS": " , "}, "holds no token"),
        ([], {"STEADYSCALE_RETENTION": "100", "STEADYSCALE_MAX_BATCH": "150"}, "retention"),
        (
            ["--database-url", "postgresql://app:secret@127.0.0.1:1/steadyscale"],
            {},
            "cannot open the database postgresql://127.0.0.1:1/steadyscale: connection",
        ),
    ],
)
def test_settings_that_cannot_work_stop_the_start_with_a_message(
    tmp_path: Path, arguments: list[str], env: dict[str, str], message: str
) -> None:
    """Items 14, 15, 17: exit status 2 and one message naming the problem, no traceback."""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    arguments = [argument.format(file=blocker) for argument in arguments]
    command = [sys.executable, "-m", "simulator.cli", "serve", "--port", "0", *arguments]
    if "--data-dir" not in arguments:
        command += ["--data-dir", str(tmp_path / "data")]
    done = subprocess.run(
        command, env={**os.environ, **env}, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert message.format(file=blocker) in done.stderr
    assert "Traceback" not in done.stderr
    assert "secret" not in done.stderr
