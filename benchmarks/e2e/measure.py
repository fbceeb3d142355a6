"""What a run did, from what Spark itself reports: its event log, never a policy's decisions.

Spark writes every listener event to its event log (``spark.eventLog.enabled``): executors
added and removed (``SparkListenerExecutorAdded`` / ``Removed``, with their times), tasks
(``SparkListenerTaskEnd``, with the executor and finish time) and every micro-batch's
progress (``QueryProgressEvent``: its trigger's start, its duration, the offsets it read).
From those, over the run's window (the schedule's start to its end):

* **executor-seconds**: the time each executor was registered, summed;
* **operations**: changes of the executor count, where additions (or removals) less than
  ``OPERATION_GAP`` seconds apart are one change: one request registers its executors one by
  one, over seconds. ``changes`` counts every executor added or removed;
* **latency per batch**: its commit (trigger start + ``triggerExecution``) less the arrival of
  its oldest row (``workload.arrival_times``), the longest any of its rows waited; p50 and p99
  over the batches that read rows, the drain after the window included;
* **late seconds**: the seconds of arrivals whose rows were committed more than ``latency``
  after they arrived (the union, over the batches, of the arrival times of their late rows);
* **rows in** (the rows the batches read, by their offsets) and **rows out** (what the sink
  holds), and whether each id from 0 to rows in - 1 is there exactly once.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.e2e.job import Run
from benchmarks.e2e.workload import Schedule, arrival_times

# Seconds within which executors added (or removed) one after another are one operation: a
# request for three executors registers them over several seconds on a busy machine.
OPERATION_GAP = 10.0
_PROGRESS = "org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent"


@dataclass(frozen=True)
class Batch:
    """One micro-batch: trigger start and commit (epoch s), the ids ``[first, end)`` it read."""

    started: float
    committed: float
    first: int
    end: int


@dataclass(frozen=True)
class EventLog:
    """One application's log: executors as ``(id, added, removed)`` (epoch s; removed is the
    application's end for those still running), when each executor's first task ended (a new
    executor's first task starts its Python worker: only then does it add capacity), and the
    batches of every query by name."""

    executors: list[tuple[str, float, float]]
    first_task: dict[str, float]
    batches: dict[str, list[Batch]]


def read_event_log(folder: Path) -> EventLog:
    """Read the one event log Spark wrote under ``folder``."""
    (path,) = [p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")]
    added: dict[str, float] = {}
    removed: dict[str, float] = {}
    first_task: dict[str, float] = {}
    batches: dict[str, list[Batch]] = defaultdict(list)
    end = 0.0
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            event = json.loads(line)
            kind = event["Event"]
            if "Timestamp" in event:
                end = max(end, event["Timestamp"] / 1000.0)
            if kind == "SparkListenerExecutorAdded":
                added[event["Executor ID"]] = event["Timestamp"] / 1000.0
            elif kind == "SparkListenerExecutorRemoved":
                removed[event["Executor ID"]] = event["Timestamp"] / 1000.0
            elif kind == "SparkListenerTaskEnd":
                info = event["Task Info"]
                first_task.setdefault(info["Executor ID"], info["Finish Time"] / 1000.0)
            elif kind == _PROGRESS:
                batch = _batch(event["progress"])
                if batch is not None:
                    batches[event["progress"]["name"]].append(batch)
    end = max([end, *added.values(), *removed.values()])
    executors = [(name, at, removed.get(name, end)) for name, at in added.items()]
    return EventLog(executors, first_task, dict(batches))


def _batch(progress: dict[str, Any]) -> Batch | None:
    source = (progress.get("sources") or [{}])[0]
    if source.get("endOffset") is None:
        return None
    started = datetime.fromisoformat(progress["timestamp"]).timestamp()
    took = progress["durationMs"]["triggerExecution"] / 1000.0
    first = 0 if source.get("startOffset") is None else _rows(source["startOffset"])
    return Batch(started, started + took, first, _rows(source["endOffset"]))


def _rows(offset: object) -> int:
    value = json.loads(offset) if isinstance(offset, str) else offset
    return int(value["rows"] if isinstance(value, dict) else value)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Measured:
    """A run's figures (see the module docstring) and its timelines for the figure."""

    executor_seconds: float
    operations: int
    changes: int
    p50_latency_s: float
    p99_latency_s: float
    late_seconds: float
    rows_in: int
    rows_out: int
    exactly_once: bool
    steps: list[tuple[float, int]]  # (seconds since the start, executors from then on)
    latencies: list[tuple[float, float]]  # (commit, seconds since the start; latency, s)
    startup: list[float]  # s from registration to first task's end, executors added in window


def measure(log: EventLog, run: Run, schedule: Schedule, latency: float) -> Measured:
    """The figures of ``run`` (one query of the application ``log`` records)."""
    start, end = run.start, run.end
    seconds = sum(max(0.0, min(gone, end) - max(at, start)) for _, at, gone in log.executors)
    moves = sorted(
        [(at, +1) for _, at, _ in log.executors if start < at <= end]
        + [(gone, -1) for _, _, gone in log.executors if start < gone <= end]
    )
    batches = [b for b in log.batches.get(run.query, []) if b.end > b.first]
    firsts = arrival_times(schedule, np.array([b.first for b in batches], dtype=float))
    lasts = arrival_times(schedule, np.array([b.end - 1 for b in batches], dtype=float))
    commits = np.array([b.committed for b in batches]) - start
    waits = commits - firsts
    late = [(a, min(z, c - latency)) for a, z, c in zip(firsts, lasts, commits, strict=True)]
    ids = run.sink.ids()
    rows_in = max((b.end for b in batches), default=0)
    read = sum(b.end - b.first for b in batches)
    unique = np.unique(ids)
    exactly_once = read == rows_in == ids.size == unique.size and (
        rows_in == 0 or (unique[0] == 0 and unique[-1] == rows_in - 1)
    )
    startup = [
        log.first_task[name] - at
        for name, at, _ in log.executors
        if start < at <= end and name in log.first_task
    ]
    return Measured(
        executor_seconds=seconds,
        operations=_operations(moves),
        changes=len(moves),
        p50_latency_s=float(np.percentile(waits, 50)) if waits.size else float("nan"),
        p99_latency_s=float(np.percentile(waits, 99)) if waits.size else float("nan"),
        late_seconds=_union_length(late),
        rows_in=rows_in,
        rows_out=int(ids.size),
        exactly_once=bool(exactly_once),
        steps=_steps(log, start, run.stopped),
        latencies=list(zip(commits.tolist(), waits.tolist(), strict=True)),
        startup=startup,
    )


def _operations(moves: list[tuple[float, int]]) -> int:
    """Runs of moves in one direction, each less than ``OPERATION_GAP`` after the last."""
    count, last = 0, (float("-inf"), 0)
    for at, way in moves:
        if way != last[1] or at - last[0] >= OPERATION_GAP:
            count += 1
        last = (at, way)
    return count


def _union_length(spans: Iterable[tuple[float, float]]) -> float:
    """Total length of the union of the intervals ``(low, high)`` (empty ones skipped)."""
    total, reach = 0.0, float("-inf")
    for low, high in sorted(span for span in spans if span[1] > span[0]):
        if high > reach:
            total += high - max(low, reach)
            reach = high
    return total


def _steps(log: EventLog, start: float, stop: float) -> list[tuple[float, int]]:
    """The executor count from ``start`` to ``stop``, as (seconds since start, count) at each
    change, starting with the count at ``start``."""
    times = sorted(
        {t for _, at, gone in log.executors for t in (at, gone) if start < t < stop} | {start}
    )
    counts = [sum(at <= t < gone for _, at, gone in log.executors) for t in times]
    return [(t - start, count) for t, count in zip(times, counts, strict=True)]
