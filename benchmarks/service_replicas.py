"""Replicas on one database (``benchmarks.service --only replicas``; issue 15).

One replica on SQLite, one on PostgreSQL, two on one PostgreSQL, in one run: 100 streams,
1-sample and 100-sample batches, 8 client threads spread over the replicas, the setups
interleaved in ``rounds`` rounds; samples/s (median of the rounds), p99, the CPU the replicas
and the machine used. PostgreSQL is ``database_url``'s, else a server started from the local
binaries as the tests do (tests/service/conftest.py). Target: two replicas deliver more than
one on the same database.

    .venv/bin/python -m benchmarks.service --only replicas --seconds 5 --rounds 5
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np

from benchmarks.served import STREAM, Served, cpu_seconds
from benchmarks.service_throughput import Result, drive


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
