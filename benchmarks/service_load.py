"""Loading a stream after a crash (``benchmarks.service --only load``; issue 32).

A stream's Scaler state is written every N samples (the setting ``checkpoint_samples``;
``service.checkpoints``); loading the stream reads the last checkpoint and replays the samples
applied after it. The most a load replays is what a crash leaves just before the next
checkpoint: N - 1 samples (fewer where the Scaler's estimated cost caps the interval). For
each filter and N this makes exactly that: a `steadyscale serve` takes ``HISTORY`` samples
(checkpointed), then one batch that stops one sample short of the next checkpoint, and is
SIGKILLed. Then, on the files it left:

* ``load``: the stream loaded in process, as a restarted service does on its first batch
  (``ScalerCache.load``: the reads, the state, the replay), ``REPEATS`` times with nothing
  cached; the median and the slowest wall time, and the median CPU time (on a machine shared
  with other work, wall time also counts the waits for a core);
* ``first POST``: a restarted server's first 1-sample POST to the stream (the load, the sample,
  HTTP), and its second, for comparison.

Target: load <= 50 ms at the largest N the setting allows (``MAX_CHECKPOINT_SAMPLES``).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from benchmarks.served import DEFAULT_STREAM, STREAM, Served
from service.budget import sample_seconds
from service.checkpoints import MAX_CHECKPOINT_SAMPLES, CheckpointPolicy
from service.models import StreamConfig
from service.scaler_cache import ScalerCache
from service.scalers import build_scaler
from service.storage import Storage

SIZES = (1, 10, 100, MAX_CHECKPOINT_SAMPLES)
CONFIGS = {"tvd": STREAM, "default (changepoint)": DEFAULT_STREAM}
# Samples the stream takes, in batches that each write a checkpoint, before the one a crash
# cuts short.
HISTORY = 2000
REPEATS = 7


def samples(start: int, count: int) -> list[dict[str, float]]:
    rng = np.random.default_rng(start)
    volumes = np.clip(300.0 + rng.normal(0.0, 60.0, count), 0.0, None)
    return [{"t": float(start + i), "volume": float(v)} for i, v in enumerate(volumes)]


def measure(
    config: dict[str, Any], size: int
) -> tuple[int, list[float], list[float], float, float]:
    """Samples replayed, the in-process load wall and CPU times, the first and second POST
    after a restart (seconds), for a stream of ``config`` checkpointed every ``size``
    samples."""
    env = {"STEADYSCALE_CHECKPOINT_SAMPLES": str(size)}
    spec = build_scaler(StreamConfig.model_validate(config)).spec
    interval = CheckpointPolicy(size).interval(sample_seconds(spec))
    with tempfile.TemporaryDirectory() as data:
        path = Path(data) / "data"
        server = Served(path, env)
        with httpx.Client(base_url=server.url, timeout=120) as http:
            http.put("/v1/streams/s", json=config).raise_for_status()
            step = max(interval, 100)  # each reaches the interval: a checkpoint
            for start in range(0, HISTORY, step):
                batch = {"samples": samples(start, step)}
                http.post("/v1/streams/s/samples", json=batch).raise_for_status()
            end = len(range(0, HISTORY, step)) * step
            if interval > 1:  # one short of the next checkpoint
                last = {"samples": samples(end, interval - 1)}
                http.post("/v1/streams/s/samples", json=last).raise_for_status()
        server.kill()
        storage = Storage(path / "steadyscale.db")
        loads, cpu = [], []
        for _ in range(REPEATS):
            began, used = time.perf_counter(), time.process_time()
            entry, _ = ScalerCache().load(storage, "s")
            loads.append(time.perf_counter() - began)
            cpu.append(time.process_time() - used)
        storage.close()
        replayed = entry.pending
        restarted = Served(path, env)
        posts = []
        with httpx.Client(base_url=restarted.url, timeout=120) as http:
            for t in (end + interval, end + interval + 1):
                one = {"samples": [{"t": float(t), "volume": 300.0}]}
                began = time.perf_counter()
                http.post("/v1/streams/s/samples", json=one).raise_for_status()
                posts.append(time.perf_counter() - began)
        restarted.__exit__()
    return replayed, loads, cpu, posts[0], posts[1]


def crash_load() -> None:
    """The table, filter by N, and the verdict at the largest N."""
    print(f"{'filter':22s} {'N':>5s} {'replayed':>8s} {'load ms':>8s} {'slowest':>8s} "
          f"{'CPU ms':>7s} {'1st POST ms':>11s} {'2nd POST ms':>11s}")  # fmt: skip
    worst = worst_cpu = 0.0
    for name, config in CONFIGS.items():
        for size in SIZES:
            replayed, loads, cpu, first, second = measure(config, size)
            median, used = float(np.median(loads)), float(np.median(cpu))
            if size == MAX_CHECKPOINT_SAMPLES:
                worst, worst_cpu = max(worst, median), max(worst_cpu, used)
            slowest = max(loads) * 1000
            print(f"{name:22s} {size:5d} {replayed:8d} {median * 1000:8.1f} {slowest:8.1f} "
                  f"{used * 1000:7.1f} {first * 1000:11.1f} {second * 1000:11.1f}")  # fmt: skip
    verdict = "met" if worst <= 0.05 else "NOT met"
    print(f"loading a stream after a crash at the largest N allowed ({MAX_CHECKPOINT_SAMPLES}): "
          f"{worst * 1000:.1f} ms "
          f"(median wall time, the slower filter; {worst_cpu * 1000:.1f} ms of CPU); "
          f"target <= 50 ms: {verdict}")  # fmt: skip
