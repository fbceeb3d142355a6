"""10,000 streams on one server (``benchmarks.service --only streams``; issue 14).

``count`` streams, each with a decision. Target: /healthz p99 under 50 ms while /metrics and the
stream list are fetched in a loop; memory per idle stream bounded (the Scaler cache keeps
1,024).

    .venv/bin/python -m benchmarks.service --only streams --streams 10000
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from benchmarks.served import STREAM, Served
from service.models import Sample, StreamConfig
from service.storage import Storage
from service.streams import StreamService


def percentiles(seconds: list[float]) -> str:
    p50, p99, top = np.percentile(seconds, [50, 99, 100]) * 1000.0
    return f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {top:.1f} ms ({len(seconds)} requests)"


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
