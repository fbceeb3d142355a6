"""Throughput and latency of the decision service over loopback HTTP, against a bare endpoint.

Starts two servers in processes of their own, each one uvicorn worker: `steadyscale serve` on a
fresh SQLite directory, and a bare FastAPI app whose POST handler does nothing (the ceiling:
HTTP, JSON and the framework, no filtering and no storage). Client threads (httpx, keep-alive)
post for a fixed time per scenario; every stream gets strictly increasing t, so every sample
is accepted. Figures: requests/s, samples/s, p50 and p99 latency.

Targets on the 2-core development machine: 1-sample POSTs at >= 50 % of the bare endpoint's
request rate; >= 20,000 samples/s with 100-sample batches.

    .venv/bin/python -m benchmarks.service              # about 1 minute
    .venv/bin/python -m benchmarks.service --seconds 2  # shorter
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
from fastapi import FastAPI

STREAM = {
    "filter": {"name": "tvd"},
    "policy": {"capacity": 50.0, "min_operators": 1},
    "guards": [{"name": "hysteresis", "band": 0.02}],
    "operators": 4,
}

bare = FastAPI()


@bare.post("/bare")
async def bare_endpoint(body: dict[str, object]) -> dict[str, int]:
    """Reads the JSON body like the service does, and answers at once (async, like the
    service's routes, so that no thread hop is counted against the ceiling)."""
    return {"accepted": 0}


@dataclass
class Result:
    name: str
    requests: int
    samples: int
    seconds: float
    latencies: list[float]

    def row(self) -> str:
        p50, p99 = np.percentile(self.latencies, [50, 99]) * 1000.0
        rate, volume = self.requests / self.seconds, self.samples / self.seconds
        return f"{self.name:44s} {rate:9.0f} {volume:10.0f} {p50:8.2f} {p99:8.2f}"


def start(command: list[str], port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(command, env=os.environ.copy())
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1.0)
            return process
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"{command} did not start")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def drive(
    name: str, url: str, path_of: list[str], batch: int, threads: int, seconds: float
) -> Result:
    """``threads`` clients; thread k posts to the paths ``path_of[k::threads]`` in turn."""
    lock = threading.Lock()
    latencies: list[float] = []
    counts = [0, 0]
    stop_at = time.perf_counter() + seconds

    def client(k: int) -> None:
        mine = path_of[k::threads]
        clock = dict.fromkeys(mine, 0)
        local: list[float] = []
        sent = 0
        with httpx.Client(base_url=url, timeout=30.0) as http:
            while time.perf_counter() < stop_at:
                for path in mine:
                    t0 = clock[path]
                    body = {"samples": [{"t": float(t0 + i), "volume": 300.0 + (t0 + i) % 7}
                                        for i in range(batch)]}  # fmt: skip
                    began = time.perf_counter()
                    answer = http.post(path, json=body)
                    local.append(time.perf_counter() - began)
                    if answer.status_code != 200:
                        raise SystemExit(f"{path}: {answer.status_code} {answer.text[:200]}")
                    clock[path] = t0 + batch
                    sent += 1
        with lock:
            latencies.extend(local)
            counts[0] += sent
            counts[1] += sent * batch

    workers = [threading.Thread(target=client, args=(k,)) for k in range(threads)]
    began = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return Result(name, counts[0], counts[1], time.perf_counter() - began, latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="per scenario (%(default)s)")
    args = parser.parse_args()
    service_port, bare_port = free_port(), free_port()
    with tempfile.TemporaryDirectory() as data:
        service = start([sys.executable, "-m", "simulator.cli", "serve", "--port",
                         str(service_port), "--data-dir", str(Path(data) / "data"),
                         "--log-level", "warning"], service_port)  # fmt: skip
        ceiling = start([sys.executable, "-m", "uvicorn", "benchmarks.service:bare", "--port",
                         str(bare_port), "--log-level", "warning"], bare_port)  # fmt: skip
        try:
            url, bare_url = f"http://127.0.0.1:{service_port}", f"http://127.0.0.1:{bare_port}"
            with httpx.Client(base_url=url) as http:
                for k in range(100):
                    http.put(f"/v1/streams/s{k}", json=STREAM).raise_for_status()
            one = ["/v1/streams/s0/samples"]
            hundred = [f"/v1/streams/s{k}/samples" for k in range(100)]
            results = []
            for threads in (1, 4):
                results += [
                    drive(f"bare endpoint, 1 sample, {threads} client(s)", bare_url,
                          ["/bare"] * threads, 1, threads, args.seconds),
                    drive(f"service, 1 sample, {'1 stream' if threads == 1 else '100 streams'}, "
                          f"{threads} client(s)", url, one if threads == 1 else hundred, 1,
                          threads, args.seconds),
                ]  # fmt: skip
            results += [
                drive("service, 100 samples, 1 stream, 1 client", url, one, 100, 1, args.seconds),
                drive("service, 100 samples, 100 streams, 4 clients", url, hundred, 100, 4,
                      args.seconds),
            ]  # fmt: skip
        finally:
            service.terminate()
            ceiling.terminate()
    print(f"{'scenario':44s} {'req/s':>9s} {'samples/s':>10s} {'p50 ms':>8s} {'p99 ms':>8s}")
    for result in results:
        print(result.row())
    by = {r.name: r for r in results}

    def rate(name: str) -> float:
        return by[name].requests / by[name].seconds

    single = rate("service, 1 sample, 1 stream, 1 client(s)") / rate(
        "bare endpoint, 1 sample, 1 client(s)"
    )
    many = rate("service, 1 sample, 100 streams, 4 client(s)") / rate(
        "bare endpoint, 1 sample, 4 client(s)"
    )
    batched = max(r.samples / r.seconds for r in results if "100 samples" in r.name)
    verdict = "met" if min(single, many) >= 0.5 else "NOT met"
    print(f"1-sample POSTs vs bare endpoint: {single:.0%} (1 client), {many:.0%} (4 clients, "
          f"100 streams); target >= 50 %: {verdict}")  # fmt: skip
    print(f"100-sample batches: {batched:,.0f} samples/s; target >= 20,000: "
          f"{'met' if batched >= 20_000 else 'NOT met'}")  # fmt: skip


if __name__ == "__main__":
    main()
