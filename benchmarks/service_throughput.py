"""The service's throughput against a bare endpoint, in one run (``benchmarks.service
--only throughput``).

`steadyscale serve` and a bare FastAPI app whose POST handler does nothing (the ceiling: HTTP,
JSON and the framework, no filtering, no storage), one uvicorn worker each; client threads
(http.client, keep-alive) post for ``seconds`` per scenario. With ``baseline`` (another
steadyscale checkout, e.g. ``git worktree add /tmp/base main``) its service runs every service
scenario too, right after this one's, so that both meet the same load from outside.

Targets (issue 32): 1-sample POSTs at >= 60 % of the bare endpoint's request rate with one
client, >= 50 % with four; 100-sample batches at >= 2x the baseline's samples/s.

With ``pairs`` > 0 the target scenarios then run again in that many rounds, each the two sides
one right after the other, the first side alternating from round to round (ABBA), and each
target is judged on the median of the rounds' ratios: two cores shared with the client threads
move a single run's ratio by 10 % or more (docs/benchmarks.md, session 23), and a ratio taken
within one round cancels what drifts between rounds.
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from fastapi import FastAPI

from benchmarks.served import (
    DEFAULT_STREAM,
    JSON,
    STREAM,
    Served,
    cpu_seconds,
    free_port,
    start,
    volume,
)

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
    # CPU seconds the server used meanwhile (/proc): unlike the rates, it hardly depends on
    # what else the machine runs.
    cpu: float = float("nan")

    def row(self) -> str:
        p50, p99 = np.percentile(self.latencies, [50, 99]) * 1000.0
        rate, volume = self.requests / self.seconds, self.samples / self.seconds
        return (f"{self.name:52s} {rate:9.0f} {volume:10.0f} {p50:8.2f} {p99:8.2f} "
                f"{self.cpu_per_request * 1e6:9.0f}")  # fmt: skip

    @property
    def cpu_per_request(self) -> float:
        return self.cpu / self.requests


def drive(
    name: str,
    url: str | Sequence[str],
    path_of: list[str],
    batch: int,
    threads: int,
    seconds: float,
    clock: dict[str, int] | None = None,
    rounds: int | None = None,
) -> Result:
    """``threads`` clients; thread k posts to the paths ``path_of[k::threads]`` in turn, at
    ``url`` (or, given several, at the k-th in turn: clients spread over replicas), for
    ``seconds``, or ``rounds`` times over its paths. ``clock`` holds each path's next ``t``, so
    that a later run on the same streams goes on from there."""
    urls = [url] if isinstance(url, str) else list(url)
    clock = {} if clock is None else clock
    lock = threading.Lock()
    latencies: list[float] = []
    counts = [0, 0]
    stop_at = time.perf_counter() + seconds

    def client(k: int) -> None:
        mine = path_of[k::threads]
        for path in mine:
            clock.setdefault(path, 0)
        local: list[float] = []
        sent = 0
        # http.client, keep-alive: a load generator about a quarter as heavy as httpx, which
        # shares the machine's cores with the servers it measures.
        address = httpx.URL(urls[k % len(urls)])
        connection = HTTPConnection(address.host, address.port, timeout=30.0)
        try:
            done = 0
            while (time.perf_counter() < stop_at) if rounds is None else (done < rounds):
                done += 1
                for path in mine:
                    t0 = clock[path]
                    body = {"samples": [{"t": float(t0 + i), "volume": volume(t0 + i)}
                                        for i in range(batch)]}  # fmt: skip
                    began = time.perf_counter()
                    connection.request("POST", path, json.dumps(body).encode(), JSON)
                    answer = connection.getresponse()
                    text = answer.read()
                    local.append(time.perf_counter() - began)
                    if answer.status != 200:
                        raise SystemExit(f"{path}: {answer.status} {text[:200]!r}")
                    clock[path] = t0 + batch
                    sent += 1
        finally:
            connection.close()
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


def throughput(seconds: float, baseline: Path | None = None, pairs: int = 0) -> None:
    """1-sample and 100-sample POSTs against the bare endpoint (and ``baseline``'s service),
    in one run; then ``pairs`` paired rounds of the targets' scenarios."""
    bare_port = free_port()
    with tempfile.TemporaryDirectory() as data:
        servers = {"service": Served(Path(data) / "data")}
        if baseline is not None:
            servers["baseline"] = Served(Path(data) / "baseline", code=baseline)
        app = "benchmarks.service_throughput:bare"
        ceiling = start([sys.executable, "-m", "uvicorn", app, "--port", str(bare_port),
                         "--log-level", "warning"], bare_port)  # fmt: skip
        try:
            results, cold, clocks = _scenarios(servers, ceiling.pid, bare_port, seconds)
            if pairs > 0:
                _paired(servers["service"], servers.get("baseline"), bare_port, seconds, pairs,
                        clocks)  # fmt: skip
        finally:
            ceiling.terminate()
            for server in servers.values():
                server.__exit__()
    print(f"{'scenario':52s} {'req/s':>9s} {'samples/s':>10s} {'p50 ms':>8s} {'p99 ms':>8s} "
          f"{'CPU µs/req':>9s}")  # fmt: skip
    for result in [*results, *cold]:
        print(result.row())
    by = {r.name: r for r in results}

    def rate(name: str) -> float:
        return by[name].requests / by[name].seconds

    def cpu(name: str) -> float:
        return by[name].cpu_per_request

    for label in servers:
        single = rate(f"{label}, 1 sample, 1 stream, 1 client") / rate("bare, 1 sample, 1 client")
        many = rate(f"{label}, 1 sample, 100 streams, 4 clients") / rate(
            "bare, 1 sample, 4 clients"
        )
        default = rate(f"{label}, 1 sample, the default filter, 1 client") / rate(
            "bare, 1 sample, 1 client"
        )
        print(f"{label}: 1-sample POSTs vs bare endpoint: {single:.0%} (1 client; target >= 60 %: "
              f"{'met' if single >= 0.6 else 'NOT met'}), {many:.0%} (4 clients, 100 streams; "
              f"target >= 50 %: {'met' if many >= 0.5 else 'NOT met'}); with the default filter "
              f"{default:.0%} (1 client)")  # fmt: skip
        # The same ratios from the servers' CPU per request: what they would be were the
        # server's own work all that limits the rate.
        by_cpu = [cpu(f"bare, 1 sample, {clients}") / cpu(f"{label}, 1 sample, {streams}")
                  for clients, streams in (("1 client", "1 stream, 1 client"),
                                           ("4 clients", "100 streams, 4 clients"))]  # fmt: skip
        print(f"{label}: bare endpoint's CPU per request / the service's: {by_cpu[0]:.0%} "
              f"(1 client), {by_cpu[1]:.0%} (4 clients)")  # fmt: skip
    for scenario in ("100 samples, 1 stream, 1 client", "100 samples, 100 streams, 4 clients"):
        mine = by[f"service, {scenario}"]
        line = f"{scenario}: {mine.samples / mine.seconds:,.0f} samples/s"
        if baseline is not None:
            theirs = by[f"baseline, {scenario}"]
            ratio = (mine.samples / mine.seconds) / (theirs.samples / theirs.seconds)
            line += (f", {ratio:.2f}x the baseline's {theirs.samples / theirs.seconds:,.0f}; "
                     f"target >= 2x: {'met' if ratio >= 2 else 'NOT met'}")  # fmt: skip
        print(line)


def _scenarios(
    servers: dict[str, Served], bare_pid: int, bare_port: int, seconds: float
) -> tuple[list[Result], list[Result], dict[str, dict[str, int]]]:
    """Every scenario, each server's right after the bare endpoint's of the same load."""
    bare_url = f"http://127.0.0.1:{bare_port}"

    def measured(pid: int, *args: Any) -> Result:
        used = cpu_seconds([pid])
        result = drive(*args)
        result.cpu = cpu_seconds([pid]) - used
        return result

    one = ["/v1/streams/s0/samples"]
    hundred = [f"/v1/streams/s{k}/samples" for k in range(100)]
    clocks: dict[str, dict[str, int]] = {}
    cold = []
    for label, server in servers.items():
        with httpx.Client(base_url=server.url) as http:
            for k in range(100):
                http.put(f"/v1/streams/s{k}", json=STREAM).raise_for_status()
            http.put("/v1/streams/default", json=DEFAULT_STREAM).raise_for_status()
        # Throughput is the steady state of a service that has run a while: each stream's
        # Scaler loaded and its cost known. Reaching it (the first samples of 100 streams) is
        # timed on its own.
        clocks[label] = {}
        name = f"{label}, first 10 samples of 100 streams, 1 client"
        cold.append(measured(server.process.pid, name, server.url, hundred, 1, 1, 0.0,
                             clocks[label], 10))  # fmt: skip
    results = []
    scenarios = [
        ("1 sample, 1 stream, 1 client", one, 1, 1),
        ("1 sample, 100 streams, 4 clients", hundred, 1, 4),
        ("1 sample, the default filter, 1 client", ["/v1/streams/default/samples"], 1, 1),
        ("100 samples, 1 stream, 1 client", one, 100, 1),
        ("100 samples, 100 streams, 4 clients", hundred, 100, 4),
    ]
    for name, paths, batch, threads in scenarios:
        if batch == 1 and "default" not in name:
            clients = "1 client" if threads == 1 else "4 clients"
            results.append(measured(bare_pid, f"bare, 1 sample, {clients}", bare_url,
                                    ["/bare"] * threads, 1, threads, seconds))  # fmt: skip
        for label, server in servers.items():
            results.append(measured(server.process.pid, f"{label}, {name}", server.url, paths,
                                    batch, threads, seconds, clocks[label]))  # fmt: skip
    return results, cold, clocks


def _paired(
    service: Served,
    baseline: Served | None,
    bare_port: int,
    seconds: float,
    pairs: int,
    clocks: dict[str, dict[str, int]],
) -> None:
    """``pairs`` rounds of each target's two sides, one right after the other, the first side
    alternating (ABBA); each round's ratio, and their median against the target."""
    bare_url = f"http://127.0.0.1:{bare_port}"
    one = ["/v1/streams/s0/samples"]
    hundred = [f"/v1/streams/s{k}/samples" for k in range(100)]

    def rate(url: str, clock: dict[str, int] | None, paths: list[str], batch: int,
             threads: int) -> float:  # fmt: skip
        result = drive("", url, paths, batch, threads, seconds, clock)
        return (result.samples if batch > 1 else result.requests) / result.seconds

    sides = [
        ("1-sample POSTs, 1 client, against the bare endpoint", 0.6,
         (bare_url, None, ["/bare"], 1, 1), (service.url, clocks["service"], one, 1, 1)),
        ("1-sample POSTs, 4 clients, 100 streams, against the bare endpoint", 0.5,
         (bare_url, None, ["/bare"] * 4, 1, 4), (service.url, clocks["service"], hundred, 1, 4)),
    ]  # fmt: skip
    if baseline is not None:
        for scenario, paths, threads in (("1 stream, 1 client", one, 1),
                                         ("100 streams, 4 clients", hundred, 4)):  # fmt: skip
            sides.append((f"100-sample batches, {scenario}, against the baseline", 2.0,
                          (baseline.url, clocks["baseline"], paths, 100, threads),
                          (service.url, clocks["service"], paths, 100, threads)))  # fmt: skip
    print(f"paired rounds ({pairs}, {seconds:g} s a side, first side alternating):")
    for name, target, reference, mine in sides:
        ratios = []
        for round_ in range(pairs):
            if round_ % 2 == 0:
                theirs = rate(*reference)
                ratios.append(rate(*mine) / theirs)
            else:
                ours = rate(*mine)
                ratios.append(ours / rate(*reference))
        median = float(np.median(ratios))
        print(f"  {name}: median {median:.2f} (rounds {' '.join(f'{r:.2f}' for r in ratios)}); "
              f"target >= {target:g}: {'met' if median >= target else 'NOT met'}")  # fmt: skip
