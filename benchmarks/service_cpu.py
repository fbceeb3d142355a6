"""The server's own CPU per POST over loopback (``benchmarks.service --only cpu``; issue 32).

One keep-alive client posts to one stream (``benchmarks.served.STREAM``) of a `steadyscale
serve` process, and the server's user + system CPU (``/proc/PID/stat``) is read around each
round of ``posts`` POSTs. With ``baseline`` (another steadyscale checkout) both serve side by
side and the rounds alternate A B B A, so that what else the machine runs weighs on both
alike; the ratio of each round pair is printed with its median. CPU, unlike a request rate,
hardly moves with the client's own share of the machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import tempfile
from http.client import HTTPConnection
from pathlib import Path

import httpx

from benchmarks.served import JSON, STREAM, Served, volume

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def post(port: int, count: int, clock: list[int], batch: int) -> None:
    """``count`` POSTs of ``batch`` samples each to stream ``s``, on one connection; ``clock``
    holds the next sample's time."""
    connection = HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for _ in range(count):
            start = clock[0]
            clock[0] += batch
            samples = [{"t": float(start + i), "volume": volume(start + i)} for i in range(batch)]
            body = json.dumps({"samples": samples}).encode()
            connection.request("POST", "/v1/streams/s/samples", body, JSON)
            answer = connection.getresponse()
            answer.read()
            if answer.status != 200:
                raise RuntimeError(f"POST answered {answer.status}")
    finally:
        connection.close()


def server_cpu(
    baseline: Path | None, posts: int = 3000, batch: int = 1, rounds: int = 10
) -> dict[str, list[float]]:
    """Microseconds of server CPU per POST, per round, for this checkout (``"this"``) and, with
    ``baseline``, that one's (``"baseline"``); printed with their medians."""
    codes: dict[str, Path | None] = {"this": None}
    if baseline is not None:
        codes["baseline"] = baseline
    figures: dict[str, list[float]] = {name: [] for name in codes}
    with tempfile.TemporaryDirectory() as data, contextlib.ExitStack() as stack:
        servers = {
            name: stack.enter_context(Served(Path(data) / name, code=code))
            for name, code in codes.items()
        }
        clocks = {name: [0] for name in codes}
        for name, served in servers.items():  # a warm stream: past its first checkpoint
            httpx.put(f"{served.url}/v1/streams/s", json=STREAM).raise_for_status()
            post(served.port, max(300, posts // 5), clocks[name], batch)
        for index in range(rounds):
            order = list(servers) if index % 2 == 0 else list(reversed(servers))
            for name in order:
                pid = servers[name].process.pid
                before = cpu_seconds(pid)
                post(servers[name].port, posts, clocks[name], batch)
                figures[name].append((cpu_seconds(pid) - before) / posts * 1e6)
    for name, values in figures.items():
        rounded = " ".join(f"{value:.0f}" for value in values)
        print(
            f"  {name:8s} median {statistics.median(values):7.1f} us of server CPU per "
            f"{batch}-sample POST ({rounded})"
        )
    if baseline is not None:
        ratios = [
            ours / theirs for ours, theirs in zip(figures["this"], figures["baseline"], strict=True)
        ]
        print(
            f"  this / baseline, by round: median {statistics.median(ratios):.3f} "
            f"({' '.join(f'{ratio:.2f}' for ratio in ratios)})"
        )
    return figures
