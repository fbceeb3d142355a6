"""The decision service over loopback HTTP: throughput, bad input, fuzzing, large bodies, 10,000
streams (issue 14's targets). Every figure comes from real `steadyscale serve` processes.

Sections (``--only`` picks some; all by default):

* ``throughput`` (``benchmarks.service_throughput``): `steadyscale serve` and a bare FastAPI
  app whose POST handler does nothing (the ceiling: HTTP, JSON and the framework, no filtering,
  no storage), one uvicorn worker each; client threads (http.client, keep-alive) post for
  ``--seconds`` per scenario; with ``--baseline DIR`` another checkout's service runs the same
  scenarios in the same run. Targets (issue 32): 1-sample POSTs at >= 60 % of the bare
  endpoint's request rate with one client, >= 50 % with four; 100-sample batches at >= 2x the
  baseline's samples/s. The streams run ``tvd``; one more scenario posts to a stream with the
  default filter (``changepoint`` + ``confidence``), whose state is larger.
* ``writepath`` (``benchmarks.service_writepath``): CPU per batch of the write path alone (in
  process, no HTTP), this checkout and ``--baseline``'s.
* ``load`` (``benchmarks.service_load``): loading a stream after a crash, between two
  checkpoints, at each ``checkpoint_samples`` N up to the largest allowed. Target: <= 50 ms
  at the largest N.
* ``attack``: about 140 hand-made bad requests (bodies, values, ids, methods, headers). Target:
  no 5xx; every 4xx body names the field, the value (cut short) and what is allowed, is under
  64 KB, and leaves the stream as it was; RSS growth per request.
* ``fuzz``: ``schemathesis run`` (all phases, all checks, ``--fuzz-examples`` per operation)
  against a server; the server's own request counter gives the statuses. Target: 0 failures,
  0 responses 5xx.
* ``bodies``: 16 MiB bodies, declared and chunked, and the largest allowed bodies. Targets: a
  16 MiB body refused within 1 s; RSS growth under 100 MB for any single request.
* ``streams``: ``--streams`` streams (10,000), each with a decision. Target: /healthz p99 under
  50 ms while /metrics and the stream list are fetched in a loop; memory per idle stream
  bounded (the Scaler cache keeps 1,024).
* ``replicas`` (issue 15): one replica on SQLite, one on PostgreSQL, two on one PostgreSQL, in
  one run: 100 streams, 1-sample and 100-sample batches, 8 client threads spread over the
  replicas, the setups interleaved in ``--rounds`` rounds; samples/s (median of the rounds),
  p99, the CPU the replicas and the machine used. PostgreSQL is ``--database-url``'s, else a
  server started from the local binaries as the tests do (tests/service/conftest.py). Target:
  two replicas deliver more than one on the same database.

    .venv/bin/python -m benchmarks.service                     # everything, about 3 minutes
    .venv/bin/python -m benchmarks.service --only attack,bodies --seconds 2
    .venv/bin/python -m benchmarks.service --only replicas --seconds 5 --rounds 5
    .venv/bin/python -m benchmarks.service --only throughput --baseline /tmp/base  # vs a checkout
    .venv/bin/python -m benchmarks.service --only throughput --baseline /tmp/base --pairs 6
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from benchmarks.served import JSON, ROOT, STREAM, Served, cpu_seconds
from benchmarks.service_load import crash_load
from benchmarks.service_throughput import Result, drive, throughput
from benchmarks.service_writepath import write_path
from service.models import Sample, StreamConfig
from service.storage import Storage
from service.streams import StreamService


def percentiles(seconds: list[float]) -> str:
    p50, p99, top = np.percentile(seconds, [50, 99, 100]) * 1000.0
    return f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {top:.1f} ms ({len(seconds)} requests)"


@dataclass
class Bad:
    """One hand-made bad request."""

    label: str
    method: str
    path: str
    body: bytes | None = None
    headers: dict[str, str] | None = None


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def bad_requests() -> list[Bad]:
    """The hand-made bad requests: each sample field, policy field and filter or guard
    parameter with values of every wrong kind, ids, bodies that are not JSON, methods."""
    stream = "/v1/streams/s"
    samples = f"{stream}/samples"
    wrong: list[tuple[str, bytes]] = [
        ("NaN", b"NaN"), ("Infinity", b"Infinity"), ("-Infinity", b"-Infinity"),
        ("negative", b"-1"), ("1e155", b"1e155"), ("1e308", b"1e308"), ("1e999", b"1e999"),
        ("400 digits", b"1" + b"0" * 400), ("string", b'"12"'), ("true", b"true"),
        ("null", b"null"), ("list", b"[1]"), ("object", b'{"v": 1}'),
        ("long string", b'"' + b"x" * 100_000 + b'"'),
    ]  # fmt: skip
    bad: list[Bad] = []
    for field in ("t", "volume"):
        for name, value in wrong:
            if field == "t" and name in ("negative", "1e155"):
                continue  # a negative t is fine; 1e155 is out of range like 1e308
            other = b'"volume": 300' if field == "t" else b'"t": 1000'
            body = b'{"samples": [{' + other + b', "' + field.encode() + b'": ' + value + b"}]}"
            bad.append(Bad(f"sample {field} = {name}", "POST", samples, body, JSON))
    bad += [
        Bad("sample missing t", "POST", samples, _json({"samples": [{"volume": 1}]}), JSON),
        Bad("sample extra field", "POST", samples,
            _json({"samples": [{"t": 1000, "volume": 1, "v": 2}]}), JSON),
        Bad("samples not a list", "POST", samples, _json({"samples": 5}), JSON),
        Bad("no samples", "POST", samples, _json({}), JSON),
        Bad("20,000 bad samples", "POST", samples,
            _json({"samples": [{"t": "x", "volume": -1}] * 20_000}), JSON),
        Bad("10,001 samples", "POST", samples,
            _json({"samples": [{"t": 1000.0 + i, "volume": 1.0} for i in range(10_001)]}), JSON),
        Bad("t not increasing", "POST", samples,
            _json({"samples": [{"t": 1001, "volume": 1}, {"t": 1000, "volume": 1}]}), JSON),
        Bad("t already applied, other volume", "POST", samples,
            _json({"samples": [{"t": 0.0, "volume": 1.0}]}), JSON),
    ]  # fmt: skip
    policy_values: list[tuple[str, Any]] = [
        ("0", 0), ("-1", -1), ("1e-300", 1e-300), ("1e300", 1e300), ("10**30", 10**30),
        ("1.5", 1.5), ("string", "x"), ("true", True), ("list", [1]),
    ]  # fmt: skip
    config = {"filter": {"name": "tvd"}, "policy": {"capacity": 50}}
    for field in ("capacity", "min_operators", "max_operators"):
        for name, value in policy_values:
            if field == "capacity" and name == "1.5":
                continue  # a fine capacity
            policy = {"capacity": 50, field: value}
            body = _json({**config, "policy": policy})
            bad.append(Bad(f"policy {field} = {name}", "PUT", stream, body, JSON))
    for name, value in policy_values:
        if name != "1e-300":
            bad.append(Bad(f"operators = {name}", "PUT", stream,
                           _json({**config, "operators": value}), JSON))  # fmt: skip
    bad.append(Bad("max_operators < min_operators", "PUT", stream,
                   _json({**config, "policy": {"capacity": 50, "min_operators": 5,
                                               "max_operators": 2}}), JSON))  # fmt: skip
    filters: list[tuple[str, dict[str, Any]]] = [
        ("unknown filter", {"name": "kalman"}), ("no name", {"lam": 2}),
        ("name not a string", {"name": 5}), ("unknown parameter", {"name": "tvd", "lam_sigma": 2}),
        ("tvd lam_per_sigma = 0", {"name": "tvd", "lam_per_sigma": 0}),
        ("tvd lam = -1", {"name": "tvd", "lam": -1}),
        ("tvd lam = string", {"name": "tvd", "lam": "big"}),
        ("tvd method", {"name": "tvd", "method": "fast"}),
        ("tvd mm without window", {"name": "tvd", "lam": 1, "method": "mm"}),
        ("tvd mm iterations 100000", {"name": "tvd", "lam": 1, "method": "mm", "window": 50,
                                      "iterations": 100_000}),
        ("tvd mm window 10**6", {"name": "tvd", "lam": 1, "method": "mm", "window": 10**6}),
        ("tvd mm window 5.5", {"name": "tvd", "lam": 1, "method": "mm", "window": 5.5}),
        ("tvd window with exact", {"name": "tvd", "window": 5}),
        ("moving_average w = 0", {"name": "moving_average", "w": 0}),
        ("moving_average w = 3.5", {"name": "moving_average", "w": 3.5}),
        ("moving_average w = 10**400", {"name": "moving_average", "w": 10**400}),
        ("ewma alpha = 2", {"name": "ewma", "alpha": 2}),
        ("ewma alpha = NaN", {"name": "ewma", "alpha": float("nan")}),
        ("ekf dt = 0", {"name": "ekf", "dt": 0}),
        ("ekf observation", {"name": "ekf", "observation": "cubic"}),
        ("parameter of 100 KB", {"name": "tvd", "lam": ["x" * 100] * 1000}),
        ("parameter nested 30 deep", {"name": "tvd", "lam": json.loads("[" * 30 + "]" * 30)}),
    ]  # fmt: skip
    for name, spec in filters:
        bad.append(Bad(f"filter: {name}", "PUT", stream, _json({**config, "filter": spec}), JSON))
    guards: list[tuple[str, dict[str, Any]]] = [
        ("unknown guard", {"name": "brake"}), ("cooldown up = -1", {"name": "cooldown", "up": -1}),
        ("cooldown down = string", {"name": "cooldown", "down": "1m"}),
        ("hysteresis band = 1.5", {"name": "hysteresis", "band": 1.5}),
        ("stabilization window = -1", {"name": "stabilization", "window": -1}),
        ("max_step up = 0", {"name": "max_step", "up": 0}),
        ("max_step up = 1.5", {"name": "max_step", "up": 1.5}),
        ("filter used as guard", {"name": "tvd", "lam_per_sigma": 10.0}),
    ]  # fmt: skip
    for name, spec in guards:
        bad.append(Bad(f"guard: {name}", "PUT", stream, _json({**config, "guards": [spec]}), JSON))
    bad.append(Bad("17 guards", "PUT", stream,
                   _json({**config, "guards": [{"name": "cooldown"}] * 17}), JSON))  # fmt: skip
    bad.append(Bad("another configuration without reset", "PUT", stream,
                   _json({**STREAM, "operators": 9}), JSON))  # fmt: skip
    for stream_id in ("%2E", "%2E%2E", ".hidden", "a%20b", "x" * 129, "caf%C3%A9", "a:b", "a%00b"):
        bad.append(Bad(f"stream id {stream_id[:12]}", "PUT", f"/v1/streams/{stream_id}",
                       _json(STREAM), JSON))  # fmt: skip
        bad.append(Bad(f"stream id {stream_id[:12]} (GET)", "GET", f"/v1/streams/{stream_id}"))
    bad += [
        Bad("trailing slash", "PUT", "/v1/streams/", _json(STREAM), JSON),
        Bad("unknown path", "GET", "/v2/streams"),
        Bad("not UTF-8", "POST", samples, b'{"samples": [\xff]}', JSON),
        Bad("gzip without encoding header", "POST", samples,
            gzip.compress(b'{"samples": []}'), JSON),
        Bad("gzip", "POST", samples, gzip.compress(b'{"samples": []}'),
            {**JSON, "content-encoding": "gzip"}),
        Bad("nested 100,000 deep", "POST", samples, b"[" * 100_000 + b"]" * 100_000, JSON),
        Bad("nested 40 deep", "PUT", stream, b'{"filter": ' + b"[" * 40 + b"]" * 40 + b"}", JSON),
        Bad("duplicate keys", "POST", samples,
            b'{"samples": [{"t": 1000, "volume": 5, "volume": 7}]}', JSON),
        Bad("truncated JSON", "POST", samples, b'{"samples": [', JSON),
        Bad("empty body", "POST", samples, b"", JSON),
        Bad("JSON array body", "POST", samples, b"[1, 2]", JSON),
        Bad("JSON string body", "PUT", stream, b'"config"', JSON),
        Bad("no content type", "POST", samples, _json({"samples": []}), {}),
        Bad("text/plain", "POST", samples, _json({"samples": []}), {"content-type": "text/plain"}),
        Bad("form", "PUT", stream, b"filter=tvd",
            {"content-type": "application/x-www-form-urlencoded"}),
        Bad("history limit = 0", "GET", f"{stream}/history?limit=0"),
        Bad("history limit = 10**6", "GET", f"{stream}/history?limit=1000000"),
        Bad("history since = nan", "GET", f"{stream}/history?since=nan"),
        Bad("history since = x", "GET", f"{stream}/history?since=x"),
        Bad("list limit = 5000", "GET", "/v1/streams?limit=5000"),
        Bad("list after = ..", "GET", "/v1/streams?after=.."),
        Bad("reset = maybe", "PUT", f"{stream}?reset=maybe", _json(STREAM), JSON),
        Bad("decision of a missing stream", "GET", "/v1/streams/nope/decision"),
        Bad("samples for a missing stream", "POST", "/v1/streams/nope/samples",
            _json({"samples": [{"t": 1, "volume": 1}]}), JSON),
        Bad("delete a missing stream", "DELETE", "/v1/streams/nope"),
    ]  # fmt: skip
    for method, path in [("PATCH", stream), ("OPTIONS", stream), ("POST", stream),
                         ("TRACE", stream), ("FOO", "/healthz"), ("DELETE", "/metrics"),
                         ("PUT", samples), ("GET", samples)]:  # fmt: skip
        bad.append(Bad(f"{method} {path}", method, path))
    return bad


def _named(body: Any) -> bool:
    """Whether a Problem names each field at fault with its value and what is allowed."""
    errors = body.get("errors") if isinstance(body, dict) else None
    return bool(errors) and all(
        isinstance(error, dict) and error.get("field") and "value" in error and error.get("allowed")
        for error in errors
    )


def attack() -> None:
    """The hand-made bad requests against a server with one stream."""
    with tempfile.TemporaryDirectory() as data, Served(Path(data) / "data") as server:
        client = httpx.Client(base_url=server.url, timeout=60)
        client.put("/v1/streams/s", json=STREAM).raise_for_status()
        first = [{"t": float(t), "volume": 300.0 + t % 7} for t in range(10)]
        client.post("/v1/streams/s/samples", json={"samples": first}).raise_for_status()

        def snapshot() -> tuple[Any, ...]:
            history = client.get("/v1/streams/s/history", params={"limit": 100_000}).json()
            return client.get("/v1/streams/s").json(), history, client.get("/v1/streams").json()

        requests = bad_requests()
        statuses: Counter[int] = Counter()
        failures: list[str] = []
        largest, growth = 0, 0.0
        for bad in requests:
            before = snapshot()
            server.reset_peak()
            baseline = server.memory()
            answer = client.request(bad.method, bad.path, content=bad.body, headers=bad.headers)
            growth = max(growth, server.memory("VmHWM") - baseline)
            statuses[answer.status_code] += 1
            largest = max(largest, len(answer.content))
            body = answer.json() if answer.content else None
            if not 400 <= answer.status_code < 500:
                failures.append(f"{bad.label}: {answer.status_code}")
            elif not _named(body):
                failures.append(
                    f"{bad.label}: {answer.status_code} names no field: {answer.text[:200]}"
                )
            elif len(answer.content) >= 64 * 1024:
                failures.append(f"{bad.label}: a body of {len(answer.content)} bytes")
            if snapshot() != before:
                failures.append(f"{bad.label}: changed the stream")
        client.close()
    fivexx = sum(count for status, count in statuses.items() if status >= 500)
    print(f"hand-made bad requests: {len(requests)}; statuses "
          f"{dict(sorted(statuses.items()))}; 5xx: {fivexx}")  # fmt: skip
    print(f"largest error body: {largest:,} bytes (target < 65,536); RSS growth of the worst "
          f"request: {growth:.1f} MB")  # fmt: skip
    print(f"bodies that do not name field, value and allowed, or changed the stream: "
          f"{len(failures)}")  # fmt: skip
    for failure in failures:
        print(f"  {failure}")


def fuzz(examples: int) -> None:
    """schemathesis's command line, every phase and check, against a server."""
    config = ROOT / "tests" / "service" / "schemathesis.toml"
    with tempfile.TemporaryDirectory() as data, Served(Path(data) / "data") as server:
        command = [str(Path(sys.executable).with_name("schemathesis")), "--config-file",
                   str(config), "run", f"{server.url}/openapi.json", "--checks", "all",
                   "--max-examples", str(examples), "--seed", "14", "--no-color"]  # fmt: skip
        env = {
            **os.environ,
            "SCHEMATHESIS_HOOKS": "tests.service.fuzz_hooks",
            "PYTHONPATH": str(ROOT),
        }
        began = time.perf_counter()
        # Run from the temporary directory: schemathesis keeps a cache in ./.schemathesis.
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=data)
        seconds = time.perf_counter() - began
        statuses = server.statuses()
    summary = re.search(r"(\d+) generated, (.*)", done.stdout)
    cases = f"{summary[1]} test cases, {summary[2]}" if summary else "no summary"
    fivexx = sum(count for status, count in statuses.items() if status.startswith("5"))
    print(f"schemathesis run (seed 14, {examples} examples per operation, all phases and checks): "
          f"{cases}; exit status {done.returncode}; {seconds:.0f} s")  # fmt: skip
    print(f"requests the server answered: {sum(statuses.values()):,}; by status "
          f"{dict(sorted(statuses.items()))}; 5xx: {fivexx}")  # fmt: skip
    if done.returncode != 0:
        print(done.stdout[-4000:])


def bodies() -> None:
    """16 MiB bodies, declared and streamed, and the largest bodies the service reads."""
    sixteen = b'{"samples": [' + b'{"t": 1, "volume": 1},' * (16 * 1024 * 1024 // 22) + b"{}]}"

    def streamed() -> Iterator[bytes]:
        for offset in range(0, len(sixteen), 64 * 1024):
            yield sixteen[offset : offset + 64 * 1024]

    limit = 1024 * 1024
    bad_batch = json.dumps({"samples": [{"t": "x", "volume": -1}] * 40_000}).encode()[: limit - 100]
    bad_batch = bad_batch[: bad_batch.rindex(b"},") + 1] + b"]}"
    good_batch = _json({"samples": [{"t": float(t), "volume": 300.0} for t in range(10_000)]})
    cases: list[tuple[str, Callable[[httpx.Client], httpx.Response]]] = [
        ("16 MiB, Content-Length", lambda http: http.post(
            "/v1/streams/s/samples", content=sixteen, headers=JSON)),
        ("16 MiB, chunked", lambda http: http.post(
            "/v1/streams/s/samples", content=streamed(), headers=JSON)),
        (f"{len(bad_batch) / 1e6:.2f} MB of bad samples", lambda http: http.post(
            "/v1/streams/s/samples", content=bad_batch, headers=JSON)),
        (f"10,000 samples ({len(good_batch) / 1e6:.2f} MB)", lambda http: http.post(
            "/v1/streams/s/samples", content=good_batch, headers=JSON)),
    ]  # fmt: skip
    with tempfile.TemporaryDirectory() as data, Served(Path(data) / "data") as server:
        with httpx.Client(base_url=server.url, timeout=120) as http:
            http.put("/v1/streams/s", json=STREAM).raise_for_status()
            print(f"{'request':32s} {'status':>6s} {'seconds':>8s} {'answer bytes':>13s} "
                  f"{'RSS growth MB':>14s}")  # fmt: skip
            for name, send in cases:
                server.reset_peak()
                baseline = server.memory()
                began = time.perf_counter()
                try:
                    answer = send(http)
                    status, size = str(answer.status_code), f"{len(answer.content):,}"
                except httpx.HTTPError as error:  # the server may close before all is sent
                    status, size = type(error).__name__[:6], "-"
                seconds = time.perf_counter() - began
                growth = server.memory("VmHWM") - baseline
                print(f"{name:32s} {status:>6s} {seconds:8.3f} {size:>13s} {growth:14.1f}")


FETCHED = ("/metrics", "/v1/streams")


def _healthz(http: httpx.Client, seconds: float) -> list[float]:
    """/healthz latencies, one request every 10 ms for ``seconds``."""
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        began = time.perf_counter()
        http.get("/healthz")
        latencies.append(time.perf_counter() - began)
        time.sleep(0.01)
    return latencies


def _fetch(url: str, target: str, stop: Any, count: Any) -> None:
    """Read ``target`` (the stream list page by page) until ``stop``; ``count`` the reads."""
    with httpx.Client(base_url=url, timeout=60) as client:
        after: str | None = None
        while not stop.is_set():
            if target == "/v1/streams":
                params = {"limit": 1000, **({"after": after} if after else {})}
                after = client.get(target, params=params).json()["next_after"]
            else:
                client.get(target)
            with count.get_lock():
                count.value += 1


def streams(count: int, seconds: float) -> None:
    """``count`` streams with a decision each: /healthz while /metrics and the list are read
    in a loop; RSS as every stream gets a sample."""
    with tempfile.TemporaryDirectory() as data:
        path = Path(data) / "data"
        # Created with the service's own code, in process: as count PUTs and POSTs would.
        service = StreamService(Storage(path / "steadyscale.db"), retention=10_000,
                                max_batch=10_000)  # fmt: skip
        config = StreamConfig.model_validate(STREAM)
        began = time.perf_counter()
        for index in range(count):
            service.put(f"s{index:05d}", config)
            service.post_samples(f"s{index:05d}", [Sample(t=0.0, volume=300.0)])
        service.storage.close()
        print(f"{count:,} streams created and decided once in {time.perf_counter() - began:.0f} s")
        with Served(path) as server:
            http = httpx.Client(base_url=server.url, timeout=60)
            started = server.memory()
            sizes: dict[str, tuple[int, float]] = {}
            for name, target in [
                ("/metrics", "/metrics"),
                ("/v1/streams page", "/v1/streams?limit=1000"),
            ]:
                t0 = time.perf_counter()
                size = len(http.get(target).content)
                sizes[name] = (size, time.perf_counter() - t0)
            # The loops run in processes of their own: in this one, their reading and decoding
            # would hold this process's GIL and be counted against /healthz.
            stop = multiprocessing.Event()
            fetched = {target: multiprocessing.Value("i", 0) for target in FETCHED}
            loops = [
                multiprocessing.Process(target=_fetch, args=(server.url, target, stop, count))
                for target, count in fetched.items()
            ]
            quiet = _healthz(http, seconds / 2)  # the machine's own noise, for comparison
            for loop in loops:
                loop.start()
            latencies = _healthz(http, seconds)
            stop.set()
            for loop in loops:
                loop.join()
            # Every stream gets a sample: the Scaler cache keeps the 1,024 used last.
            rss: list[tuple[int, float]] = [(0, server.memory())]
            for index in range(count):
                one = {"samples": [{"t": 1.0, "volume": 310.0}]}
                http.post(f"/v1/streams/s{index:05d}/samples", json=one).raise_for_status()
                if (index + 1) in (1000, count // 2, count):
                    rss.append((index + 1, server.memory()))
            http.close()
    for name, (size, took) in sizes.items():
        print(f"{name}: {size:,} bytes in {took * 1000:.0f} ms")
    print(f"/healthz while /metrics ({fetched['/metrics'].value} times) and the stream list "
          f"({fetched['/v1/streams'].value} pages of 1,000) were read in a loop for "
          f"{seconds:.0f} s: "
          f"{percentiles(latencies)}; target p99 < 50 ms: "
          f"{'met' if np.percentile(latencies, 99) < 0.05 else 'NOT met'}")  # fmt: skip
    print(f"/healthz with nothing else asked of the server: {percentiles(quiet)}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")  # fmt: skip
    print(
        f"server RSS after start {started:.0f} MB; as streams got a sample: "
        + ", ".join(f"{touched:,} streams {mb:.0f} MB" for touched, mb in rss)
    )
    per_stream = (rss[-1][1] - rss[1][1]) * 1024 / max(1, count - 1000)
    print(f"growth from 1,000 to {count:,} streams touched: {per_stream:.2f} KB per stream")


def machine_busy() -> float:
    """CPU seconds the whole machine has spent busy (not idle, not waiting for I/O)."""
    ticks = [int(field) for field in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


@dataclass
class Setup:
    """Replicas serving ``streams`` (each with its next ``t`` in ``clock``)."""

    label: str
    served: list[Served]
    streams: list[str]
    clock: dict[str, int]


def replicas(seconds: float, rounds: int, database_url: str | None) -> None:
    """One replica on SQLite, one on PostgreSQL, two on one PostgreSQL: the same load, in
    interleaved rounds (every setup runs once per round, so that load from outside the
    benchmark drifting during the run weighs on each alike); the median of the rounds."""
    from tests.service.conftest import PostgresServer, postgres_binaries

    server = None
    if database_url is None:
        binaries, why = postgres_binaries()
        if binaries is None:
            raise SystemExit(f"replicas: {why}; or give --database-url")
        server = PostgresServer(binaries)
    setups: list[Setup] = []
    runs: dict[str, list[tuple[Result, float, float]]] = {}
    load = os.getloadavg()[0]
    try:
        with tempfile.TemporaryDirectory() as data:
            # (label, replicas, on PostgreSQL): started together, idle while others run.
            configurations = [
                ("1 replica, SQLite", 1, False),
                ("1 replica, PostgreSQL", 1, True),
                ("2 replicas, PostgreSQL", 2, True),
            ]
            for number, (label, count, shared) in enumerate(configurations):
                env = {}
                if shared:
                    fresh = server.fresh_url() if server is not None else database_url
                    env["STEADYSCALE_DATABASE_URL"] = str(fresh)
                # Streams of their own per configuration (a given database is shared).
                streams = [f"/v1/streams/r{number}s{k}/samples" for k in range(100)]
                served = [Served(Path(data) / f"{number}-{index}", env) for index in range(count)]
                setups.append(Setup(label, served, streams, {}))
                with httpx.Client(base_url=served[0].url) as http:
                    for path in streams:
                        http.put(path.removesuffix("/samples"), json=STREAM).raise_for_status()
            for setup in setups:  # a first batch for every stream: Scalers cached, pools open
                drive("warm-up", [r.url for r in setup.served], setup.streams, 1, 8, 1.0,
                      setup.clock)  # fmt: skip
            for _ in range(rounds):
                for batch in (1, 100):
                    for setup in setups:
                        name = f"{setup.label}, {batch} sample(s)"
                        pids = [replica.process.pid for replica in setup.served]
                        cpu, busy = cpu_seconds(pids), machine_busy()
                        result = drive(name, [r.url for r in setup.served], setup.streams,
                                       batch, 8, seconds, setup.clock)  # fmt: skip
                        cpu, busy = cpu_seconds(pids) - cpu, machine_busy() - busy
                        runs.setdefault(name, []).append((result, cpu, busy))
    finally:
        for setup in setups:
            for replica in setup.served:
                replica.__exit__()
        if server is not None:
            server.stop()
    print(f"{'scenario (100 streams, 8 clients)':38s} {'samples/s':>9s} {'p99 ms':>7s} "
          f"{'replicas':>8s} {'machine':>7s} {'CPU/sample':>10s}  samples/s by round")  # fmt: skip
    print(f"{'':38s} {'median':>9s} {'':>7s} {'(cores)':>8s} {'(cores)':>7s} {'(µs)':>10s}")
    rates: dict[str, list[float]] = {}
    for name, measured in runs.items():
        rates[name] = [result.samples / result.seconds for result, _, _ in measured]
        latencies = [latency for result, _, _ in measured for latency in result.latencies]
        seconds_run = sum(result.seconds for result, _, _ in measured)
        samples = sum(result.samples for result, _, _ in measured)
        cores = sum(cpu for _, cpu, _ in measured) / seconds_run
        machine = sum(busy for _, _, busy in measured) / seconds_run
        per_sample = sum(cpu for _, cpu, _ in measured) / samples * 1e6
        by_round = " ".join(f"{rate:.0f}" for rate in rates[name])
        print(f"{name:38s} {np.median(rates[name]):9.0f} "
              f"{np.percentile(latencies, 99) * 1000:7.1f} {cores:8.2f} {machine:7.2f} "
              f"{per_sample:10.0f}  {by_round}")  # fmt: skip
    for batch in (1, 100):
        one = rates[f"1 replica, PostgreSQL, {batch} sample(s)"]
        two = rates[f"2 replicas, PostgreSQL, {batch} sample(s)"]
        ratios = [b / a for a, b in zip(one, two, strict=True)]
        verdict = "met" if np.median(ratios) > 1 else "NOT met"
        print(f"{batch}-sample batches, 2 replicas / 1 on PostgreSQL: median "
              f"{np.median(ratios):.2f} (rounds: {' '.join(f'{r:.2f}' for r in ratios)}); "
              f"target > 1: {verdict}")  # fmt: skip
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end")  # fmt: skip


def main() -> None:
    sections = [
        "throughput",
        "writepath",
        "load",
        "attack",
        "fuzz",
        "bodies",
        "streams",
        "replicas",
    ]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(sections), help="sections, comma-separated")
    parser.add_argument("--seconds", type=float, default=6.0, help="per scenario (%(default)s)")
    parser.add_argument("--fuzz-examples", type=int, default=100, help="(%(default)s)")
    parser.add_argument("--streams", type=int, default=10_000, help="(%(default)s)")
    parser.add_argument(
        "--database-url", help="PostgreSQL for replicas (default: a server of its own)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="replicas: (%(default)s)")
    parser.add_argument(
        "--pairs",
        type=int,
        default=0,
        help="throughput: paired rounds of the targets' scenarios after the run (%(default)s)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="throughput, writepath: another steadyscale checkout measured in the same run",
    )
    args = parser.parse_args()
    chosen = args.only.split(",")
    unknown = set(chosen) - set(sections)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose from {sections}")
    runs: dict[str, Callable[[], None]] = {
        "throughput": lambda: throughput(args.seconds, args.baseline, args.pairs),
        "writepath": lambda: write_path(args.baseline),
        "load": crash_load,
        "attack": attack,
        "fuzz": lambda: fuzz(args.fuzz_examples),
        "bodies": bodies,
        "streams": lambda: streams(args.streams, max(args.seconds, 10.0)),
        "replicas": lambda: replicas(args.seconds, args.rounds, args.database_url),
    }
    for section in sections:
        if section in chosen:
            print(f"== {section}")
            runs[section]()


if __name__ == "__main__":
    main()
