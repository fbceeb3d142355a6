"""`steadyscale serve` in a process of its own, for the service benchmarks
(the sections of ``benchmarks.service``: ``benchmarks.service_attack``, ``_fuzz``,
``_load``, ``_replicas``, ``_streams``, ``_throughput``)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import httpx
import numpy as np

STREAM = {
    "filter": {"name": "tvd"},
    "policy": {"capacity": 50.0, "min_operators": 1},
    "guards": [{"name": "hysteresis", "band": 0.02}],
    "operators": 4,
}
# A stream as a user who leaves the filter out gets it (changepoint + confidence).
DEFAULT_STREAM = {"policy": {"capacity": 50.0, "min_operators": 1}, "operators": 4}
JSON = {"content-type": "application/json"}
# The volumes the load posts, one per second of stream time: a level of 300 records/s with
# noise of deviation 50 (as benchmarks.service_writepath's), repeating every 4,096 s. Not a
# pattern such as 300 + t % 7, whose differences repeat: the noise estimator of a tvd filter can
# find its window unchanged there, which no noisy stream offers (session 31).
_VOLUMES: list[float] = np.random.default_rng(1).normal(300.0, 50.0, 4096).clip(0.0).tolist()


def volume(t: int) -> float:
    """The volume the load posts at second ``t`` of a stream."""
    return _VOLUMES[t % 4096]


ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start(
    command: list[str], port: int, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """``command``, until it answers /healthz on ``port``; run in ``cwd``, its packages are
    imported from there (another checkout's, for ``--baseline``)."""
    process = subprocess.Popen(command, env={**os.environ, **(env or {})}, cwd=cwd)
    deadline = time.monotonic() + 60.0
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1.0)
            return process
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"{command} did not start")


class Served:
    """`steadyscale serve` on ``data`` in a process of its own, on a free port; with ``code``,
    the steadyscale checkout there serves (another version, measured in the same run)."""

    def __init__(
        self, data: Path, env: dict[str, str] | None = None, code: Path | None = None
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "simulator.cli", "serve", "--port", str(self.port),
                   "--data-dir", str(data), "--log-level", "warning"]  # fmt: skip
        self.process = start(command, self.port, env, code)

    def __enter__(self) -> Served:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)

    def kill(self) -> None:
        """SIGKILL: a crash, whatever was in flight cut off, no shutdown hook run."""
        self.process.kill()
        self.process.wait(timeout=30)

    def memory(self, field: str = "VmRSS") -> float:
        """The server's ``VmRSS`` (or ``VmHWM``, the peak), MB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(rf"{field}:\s+(\d+) kB", status)[1]) / 1024  # type: ignore[index]

    def reset_peak(self) -> None:
        """Start ``VmHWM`` again from the current RSS (Linux: clear_refs 5)."""
        Path(f"/proc/{self.process.pid}/clear_refs").write_text("5")

    def statuses(self) -> Counter[str]:
        """Requests answered so far, by status, from the server's own counter."""
        counts: Counter[str] = Counter()
        text = httpx.get(f"{self.url}/metrics", timeout=30).text
        for match in re.finditer(
            r'^steadyscale_http_requests_total\{.*status="(\d+)"\} (\S+)$', text, re.M
        ):
            counts[match[1]] += int(float(match[2]))
        return counts


def cpu_seconds(pids: Sequence[int]) -> float:
    """CPU time (user + system) the processes ``pids`` have used so far, seconds."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")
