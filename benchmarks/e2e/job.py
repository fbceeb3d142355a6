"""The job of ``benchmarks.spark_e2e``: one Structured Streaming query, run under a policy.

The query reads ``steadyscale-volume`` at the rate of a ``Schedule`` and hands every
micro-batch to a ``Sink`` (``foreachBatch``), which collects its ids in the driver, by batch
id: a batch that Spark runs again replaces its ids, as an idempotent sink would, so the ids
collected are what the sink holds. Each batch reads at most ``BATCH_SECONDS`` of the largest
count's work (the source's admission control, like Kafka's ``maxOffsetsPerTrigger``); the
rest waits in the source, which reports it as the query's backlog.

Each row holds its task's slot for ``hold_us`` microseconds, slept once per task (the
source's ``hold_us``): a task slot, one core of one executor, then handles a known number of
rows per second without burning the host's CPU, and six executors fit on two cores.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from pyspark.sql import DataFrame, SparkSession

from benchmarks.e2e.workload import Schedule
from scaling.spark import SparkExecutorAdaptor, autoscale
from scaling.spark.deciders import Sample
from simulator.spark.session import wait_for
from simulator.spark.stream_source import VolumeSource

# Tasks per micro-batch (the source's partitions). 12 split evenly over 1, 2, 3, 4 and 6
# one-core executors; 5 run it in 3 waves, as 4 do (docs/benchmarks.md says what that costs).
PARTITIONS = 12
# Seconds between two triggers (Spark's processingTime trigger).
TRIGGER = 1.0
# Most rows one batch reads, in seconds of the largest count's work: a query that falls behind
# catches up batch by batch, in batches long enough that the cost of a task beyond its hold
# (hundreds of milliseconds each on a busy 2-core machine, 12 per batch) stays a small share.
BATCH_SECONDS = 5.0
# Seconds from starting a query to its schedule's second 0: the query's first, empty,
# trigger runs before any row is due.
LEAD = 3.0
# Seconds after the schedule in which the query must have read every row it made due.
DRAIN = 180.0
# Seconds between two progress lines.
PRINT_EVERY = 20.0
# Spark settings of every run: one core per executor (without it an executor takes a whole
# worker), heaps small enough for six executors beside the driver, and Spark's event log,
# uncompressed and in one file, which is what the measurements read.
EXECUTOR_SETTINGS = {
    "spark.executor.cores": "1",
    "spark.executor.memory": "512m",
    "spark.eventLog.enabled": "true",
    "spark.eventLog.compress": "false",
    "spark.eventLog.rolling.enabled": "false",
}


def dynamic_allocation(executors: int, initial: int) -> dict[str, str]:
    """Spark's dynamic allocation as its documentation sets it up without an external shuffle
    service: shuffle tracking on, and its timeouts at their documented defaults (stated, so
    the benchmark says what it ran)."""
    return {
        "spark.dynamicAllocation.enabled": "true",
        "spark.dynamicAllocation.shuffleTracking.enabled": "true",
        "spark.dynamicAllocation.minExecutors": "1",
        "spark.dynamicAllocation.maxExecutors": str(executors),
        "spark.dynamicAllocation.initialExecutors": str(initial),
        "spark.dynamicAllocation.executorIdleTimeout": "60s",
        "spark.dynamicAllocation.schedulerBacklogTimeout": "1s",
        "spark.dynamicAllocation.sustainedSchedulerBacklogTimeout": "1s",
    }


@dataclass
class Sink:
    """``foreachBatch``: the ids each batch delivered, by batch id."""

    batches: dict[int, np.ndarray] = field(default_factory=dict)

    def __call__(self, frame: DataFrame, batch_id: int) -> None:
        ids = [row[0] for row in frame.select("id").collect()]
        self.batches[int(batch_id)] = np.array(ids, dtype=np.int64)

    def ids(self) -> np.ndarray:
        parts = list(self.batches.values())
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


@dataclass
class Run:
    """One policy's run: its query's name, the schedule's start and end (epoch seconds), when
    the query stopped, what the sink holds, whether every row due was read, the query's last
    progress reports (Spark keeps 100) and, under steadyscale, the targets it set (seconds
    since the start, count), every sample with the decision after it, and its listener's
    errors: to explain, never to measure."""

    policy: str
    query: str
    start: float
    end: float
    stopped: float = 0.0
    sink: Sink = field(default_factory=Sink)
    drained: bool = False
    progress: list[dict[str, Any]] = field(default_factory=list)
    decided: list[tuple[float, int]] = field(default_factory=list)  # steadyscale's, to explain
    decisions: list[dict[str, Any]] = field(default_factory=list)  # and each sample's
    errors: list[str] = field(default_factory=list)


class _Kept:
    """A local decider that keeps every sample with the decision made after it (the Scaler's
    code, count and reason), for ``DIR/decisions-<policy>.jsonl``."""

    def __init__(self, decider: Any) -> None:
        self.decider = decider
        self.kept: list[dict[str, Any]] = []

    def decide(self, samples: Sequence[Any]) -> int:
        for sample in samples:
            wanted = self.decider.decide([sample])
            last = self.decider.last
            self.kept.append(
                {**Sample(*sample)._asdict(), "operators": wanted}
                | ({} if last is None else {"code": last.code, "reason": last.reason})
            )
        return int(self.decider.scaler.operators)


def executors_running(spark: SparkSession) -> int:
    """Executors registered with the driver now (for the progress lines only)."""
    return int(spark.sparkContext._jsc.sc().getExecutorIds().size())  # type: ignore[union-attr]


def warm_up(spark: SparkSession, executors: int) -> None:
    """Start a Python worker on every executor: a job of 4 short tasks per executor."""
    tasks = 4 * executors
    spark.sparkContext.parallelize(range(tasks), tasks).map(lambda x: x).count()


def warm_source(spark: SparkSession, executors: int) -> None:
    """Read the source once on each of ``executors`` executors: a short query of as many
    tasks. An executor's first read of a Python data source starts its Python worker and
    imports (tens of seconds on a busy 2-core machine), which a job of plain Python tasks
    does not (``warm_up``)."""
    schedule = Schedule(np.full(2, 5.0), 2.0)
    run_policy(spark, "warm-up", schedule, 0.0, 1000, partitions=executors)


def resize(spark: SparkSession, count: int, timeout: float = 240.0) -> float:
    """Ask for ``count`` executors (dynamic allocation off) and wait until they run; returns
    the seconds it took. ``RuntimeError`` when the cluster manager does not get there."""
    adaptor = SparkExecutorAdaptor(spark, min_executors=1)
    asked = time.monotonic()
    adaptor.resize(count)
    if not wait_for(lambda: executors_running(spark) == count, timeout):
        raise RuntimeError(f"{executors_running(spark)} executors run, {count} asked for")
    return time.monotonic() - asked


class QueryFailed(RuntimeError):
    """The query stopped with an error (on a busy machine: a Python worker that did not start
    within Spark's fixed 10 s)."""


def run_policy(
    spark: SparkSession,
    policy: str,
    schedule: Schedule,
    hold_us: float,
    max_rows: int,
    spec: Mapping[str, Any] | None = None,
    attempt: int = 1,
    partitions: int = PARTITIONS,
) -> Run:
    """Run the query on ``schedule`` to its end and until it has read every row due.

    ``spec``: attach steadyscale (``autoscale``) with that spec for the run, detached after.
    Prints a line every ``PRINT_EVERY`` seconds. ``QueryFailed`` if the query fails; the
    query of ``attempt`` 2 and on is named after it, so that the event log tells them apart.
    """
    name = policy.replace("-", "_") + ("" if attempt == 1 else f"_{attempt}")
    spark.dataSource.register(VolumeSource)
    listener = None if spec is None else autoscale(spark, dict(spec), query=name)
    kept = None
    if listener is not None:
        kept = listener.decider = _Kept(listener.decider)
    start = time.time() + LEAD
    run = Run(policy, name, start, start + schedule.duration)
    checkpoint = tempfile.mkdtemp(prefix=f"steadyscale-e2e-{name}-")
    query = (
        spark.readStream.format("steadyscale-volume")
        .option("schedule", schedule.text())
        .option("partitions", str(partitions))
        .option("hold_us", f"{hold_us:.1f}")
        .option("max_rows_per_batch", str(max_rows))
        .option("start", f"{start:.6f}")
        .load()
        .writeStream.queryName(name)
        .foreachBatch(run.sink)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime=f"{TRIGGER:g} seconds")
        .start()
    )

    def caught_up() -> bool:
        """The schedule is over and the last batch read every row due: it was triggered after
        the end, or nothing came due since (the source has no new data, a trigger later)."""
        progress = query.lastProgress or {}
        source = (progress.get("sources") or [{}])[0]
        latest, end = source.get("latestOffset"), source.get("endOffset")
        if time.time() < run.end or end is None or _rows(latest) != _rows(end):
            return False
        after = datetime.fromisoformat(progress["timestamp"]).timestamp() > run.end
        idle = time.time() > run.end + 2 * TRIGGER and not query.status["isDataAvailable"]
        return after or idle

    try:
        printed = time.time()
        while not caught_up():
            if time.time() > run.end + DRAIN or query.exception() is not None:
                break
            time.sleep(1.0)
            if time.time() - printed >= PRINT_EVERY:
                printed = time.time()
                _print_line(spark, policy, schedule, query.lastProgress or {}, printed - start)
        run.drained = caught_up()
        # The last batch is committed and nothing is due: stopping interrupts no batch.
        wait_for(lambda: query.status.get("isTriggerActive") is False, 30.0, poll=0.1)
    finally:
        query.stop()
        run.stopped = time.time()
        run.progress = list(query.recentProgress)
        if listener is not None:
            spark.streams.removeListener(listener)
            listener.close()
            run.decided = [(t - start, count) for t, count in listener.targets]
            run.decisions = [{**d, "t": d["t"] - start} for d in kept.kept] if kept else []
            run.errors = list(listener.errors)
    if query.exception() is not None:
        message = str(query.exception()).splitlines()[0]
        raise QueryFailed(f"{policy}: the query failed: {message}")
    return run


def _rows(offset: object) -> int:
    """The row count of an offset as progress reports give it (JSON text or parsed)."""
    value = json.loads(offset) if isinstance(offset, str) else offset
    return int(value["rows"]) if isinstance(value, dict) else int(value)  # type: ignore[arg-type]


def _print_line(
    spark: SparkSession, policy: str, schedule: Schedule, progress: Mapping[str, Any], t: float
) -> None:
    index = min(max(int(t / schedule.step), 0), schedule.rates.size - 1)
    rate = schedule.rates[index] if t < schedule.duration else 0.0
    rows = progress.get("numInputRows", 0)
    took = (progress.get("durationMs") or {}).get("triggerExecution", 0) / 1000.0
    print(
        f"  {policy:<18} t={t:6.0f} s  due {rate:6.1f} rows/s  executors "
        f"{executors_running(spark)}  last batch {rows} rows in {took:.1f} s",
        flush=True,
    )
