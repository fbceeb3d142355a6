"""End to end on a real cluster: a streaming query's volume changes, its executors follow.

``local-cluster[3,1,1024]`` is a standalone master with three one-core workers in this machine,
each executor its own JVM. The query reads ``steadyscale-volume`` at a rate the test sets
through a control file and writes Parquet; ``autoscale`` attaches a ``ScalingListener``, which
turns its progress into samples; a Scaler decides (capacity 100 rows/s per executor, 1 to 3
executors) and the adaptor resizes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery

from scaling.spark import ScalingListener, SparkExecutorAdaptor, autoscale
from scaling.spark.attach import EXECUTOR_RESTART
from scaling.spark.deciders import LocalDecider, Sample
from simulator.spark.stream_source import VolumeSource
from tests.spark_cluster import local_cluster, wait_for


@pytest.fixture(scope="module")
def cluster() -> Iterator[SparkSession]:
    with local_cluster("local-cluster[3,1,1024]", "steadyscale-autoscale-test") as session:
        yield session


def _set_rate(control: Path, rate: float) -> None:
    staged = control.with_suffix(".tmp")
    staged.write_text(f"{rate}\n", encoding="utf-8")
    os.replace(staged, control)  # the source never reads a half-written file


def _start_query(
    cluster: SparkSession, name: str, control: Path, folder: Path, **options: str
) -> StreamingQuery:
    """A query reading ``steadyscale-volume`` at the rate in ``control`` (and ``options``),
    writing Parquet under ``folder / "rows"`` every second."""
    cluster.dataSource.register(VolumeSource)
    reader = cluster.readStream.format("steadyscale-volume").option("control", str(control))
    for key, value in options.items():
        reader = reader.option(key, value)
    return (
        reader.load()
        .writeStream.queryName(name)
        .format("parquet")
        .option("path", str(folder / "rows"))
        .option("checkpointLocation", str(folder / "checkpoint"))
        .trigger(processingTime="1 second")
        .start()
    )


class _Recorded:
    """A ``LocalDecider`` that keeps every sample with the decision after it, so that a failed
    assertion prints what the Scaler saw (a rare failure must be readable from the CI log)."""

    def __init__(self, decider: LocalDecider) -> None:
        self.decider = decider
        self.seen: list[str] = []

    def decide(self, samples: list[Sample]) -> int:
        for sample in samples:
            wanted = self.decider.decide([sample])
            last = self.decider.last
            reason = last.reason[:60] if last is not None else ""
            self.seen.append(f"{sample} -> {wanted} ({reason})")
        return self.decider.scaler.operators

    def __str__(self) -> str:
        return "\n".join(self.seen[-40:])


@contextmanager
def _stopped_after(
    cluster: SparkSession, listener: ScalingListener, query: StreamingQuery
) -> Iterator[None]:
    """Stop the query and detach and close the listener when the block ends, however."""
    try:
        yield
    finally:
        query.stop()
        cluster.streams.removeListener(listener)
        listener.close()


def _check_written(cluster: SparkSession, query: StreamingQuery, folder: Path) -> None:
    """Every row of the batches the sink committed is in the Parquet sink once: ids 0 ..
    committed - 1, none twice, none missing, where ``committed`` is the source's end offset of
    the last batch in the sink's log (what a reader of the folder sees). The query's last
    progress report may lag it by a batch (stopped between the sink's commit and the report:
    7,151 rows for 7,088 reported, once in CI), so it only bounds ``committed`` from below. On
    failure the message says which ids are doubled or missing and which files hold the doubled
    ones, so that a rare failure (once, in session 8: 5,107 rows for 5,066 ids) can be read from
    the CI log."""
    reported = _rows(query.lastProgress["sources"][0]["endOffset"])
    log = folder / "rows" / "_spark_metadata"
    last = max(int(p.name.split(".")[0]) for p in log.iterdir() if p.name[0].isdigit())
    offsets = (folder / "checkpoint" / "offsets" / str(last)).read_text(encoding="utf-8")
    committed = _rows(offsets.splitlines()[2])  # "v1", the batch's metadata, then the source's
    rows = cluster.read.parquet(str(folder / "rows"))
    written = rows.agg(
        F.count("id").alias("rows"), F.countDistinct("id").alias("ids"), F.max("id").alias("top")
    ).first()
    assert written is not None
    assert committed >= reported > 0, (committed, reported)
    complete = written["rows"] == written["ids"] == committed and written["top"] == committed - 1
    assert complete, _unlike(rows, committed, written, folder)


def _rows(offset: object) -> int:
    """The row count of one of ``steadyscale-volume``'s offsets (an int, or JSON with "rows")."""
    return int(offset if isinstance(offset, int) else json.loads(str(offset))["rows"])


def _unlike(rows: DataFrame, committed: int, written: Row, folder: Path) -> str:
    """What the sink holds against the ``committed`` ids: counts, doubled ids by file, the
    first ids missing and the last batches in the sink's metadata log."""
    doubled = rows.groupBy("id").count().where("count > 1").select("id")
    by_file = (
        rows.withColumn("file", F.input_file_name())  # before the join: one source
        .join(doubled, "id")
        .groupBy("file")
        .agg(F.count("id").alias("n"), F.min("id").alias("first"), F.max("id").alias("last"))
        .collect()
    )
    ids = {row["id"] for row in rows.select("id").distinct().collect()}
    missing = sorted(set(range(committed)) - ids)
    batches = sorted(p.name for p in (folder / "rows" / "_spark_metadata").glob("*"))
    return (
        f"committed {committed} ids; the sink holds {written['rows']} rows, "
        f"{written['ids']} distinct ids, top {written['top']}; doubled ids by file "
        f"{[(r['file'].rsplit('/', 1)[-1], r['n'], r['first'], r['last']) for r in by_file]}; "
        f"missing {len(missing)} ({missing[:5]}...); sink batches {batches[-10:]}"
    )


def test_executors_follow_the_volume_up_and_down_and_no_row_is_lost(
    cluster: SparkSession, tmp_path: Path
) -> None:
    start = SparkExecutorAdaptor(cluster, min_executors=1, max_executors=3)
    assert wait_for(lambda: start.current() == 3, timeout=60.0)  # local-cluster starts 3
    assert start.resize(5) == 3  # within the bounds
    assert start.resize(1) == 1
    assert wait_for(lambda: start.current() == 1, timeout=30.0)

    control = tmp_path / "rate"
    _set_rate(control, 50.0)
    spec = {
        # A median of 5 triggers: two odd triggers in a row (a late one reads a doubled rate,
        # a fresh executor's first ones less) move nothing.
        "filter": {"name": "moving_median", "w": 5},
        # A late second priced at 10 operator-seconds, not the default 1,000: at 1,000 the
        # model holds 3 executors for minutes after the rate falls. It measures the query's
        # stall when executors join (20-30 s on the shared 2-core machine: no progress event
        # meanwhile) and a scale-down would pay such a stall again; this test is about the
        # executors following the decisions.
        "policy": {
            "capacity": 100.0, "min_operators": 1, "max_operators": 3, "late_price": 10.0
        },
    }  # fmt: skip
    listener = autoscale(cluster, spec, query="volume")  # what the README tells users
    assert isinstance(listener.decider, LocalDecider)
    # Executors come and go while the query runs: no restart planned (with the policy's
    # default 20 s, each operation looked 10 s late and the first 3 were held for good).
    assert listener.decider.scaler.policy.restart == EXECUTOR_RESTART == 0.0
    recorded = listener.decider = _Recorded(listener.decider)  # type: ignore[assignment]
    adaptor = listener.executors
    query = _start_query(cluster, "volume", control, tmp_path)
    with _stopped_after(cluster, listener, query):
        # Generous: the first micro-batches of a query wait on the JVM, slow on a busy machine
        # (it failed at 60 s with the load at 14, and returns as soon as they come).
        assert wait_for(lambda: listener.samples >= 5, timeout=150.0), listener.errors
        assert listener.target in (None, 1) and adaptor.current() == 1

        _set_rate(control, 250.0)  # needs ceil(250 / 100) = 3 executors
        # The listener records its target once resize() returns, and current() drops the
        # executors being removed as soon as resize() starts removing them: wait for both.
        up = wait_for(lambda: adaptor.current() == listener.target == 3, timeout=90.0)
        assert up, f"{list(listener.errors)}\n{recorded}"

        _set_rate(control, 50.0)
        down = wait_for(lambda: adaptor.current() == listener.target == 1, timeout=60.0)
        assert down, f"{list(listener.errors)}\n{recorded}"
        assert wait_for(lambda: (query.lastProgress or {}).get("batchId", 0) > 0, 10.0)
        assert query.isActive and query.exception() is None

    assert not listener.errors
    counts = [count for _, count in listener.targets]
    peak = counts.index(3)  # up to 3, then down to 1, each way without turning back
    assert counts[0] == 1 and counts[-1] == 1, f"{counts}\n{recorded}"
    assert counts[: peak + 1] == sorted(counts[: peak + 1]), f"{counts}\n{recorded}"
    assert counts[peak:] == sorted(counts[peak:], reverse=True), f"{counts}\n{recorded}"
    _check_written(cluster, query, tmp_path)  # every id once, none missing


def test_a_source_that_falls_behind_feeds_its_backlog_and_the_executors_follow(
    cluster: SparkSession, tmp_path: Path
) -> None:
    start = SparkExecutorAdaptor(cluster, min_executors=1, max_executors=3)
    # After the test above one executor runs (its last removal may still be under way); on
    # its own, this test starts from the cluster's three.
    if not wait_for(lambda: start.current() == 1, timeout=20.0):
        start.resize(1)
    assert wait_for(lambda: start.current() == 1, timeout=30.0)
    # 150 rows/s fall due, a batch reads at most 60: the query reports 60 rows/s in, one
    # executor's worth, and falls 90 rows/s further behind. Only the backlog, as the source's
    # latestOffset less its endOffset, and its growth added to the rows read (the volume the
    # listener feeds) can tell the Scaler that one executor is not enough.
    control = tmp_path / "rate"
    _set_rate(control, 150.0)
    spec = {
        "filter": {"name": "moving_median", "w": 3},
        "policy": {"capacity": 100.0, "min_operators": 1, "max_operators": 3, "catch_up": 30.0},
    }
    listener = autoscale(cluster, spec, query="behind")
    adaptor, decider = listener.executors, listener.decider
    assert isinstance(decider, LocalDecider)
    query = _start_query(cluster, "behind", control, tmp_path, max_rows_per_batch="60")
    with _stopped_after(cluster, listener, query):
        # Decided by this listener (not executors of the cluster's start still leaving).
        assert wait_for(
            lambda: (listener.target or 0) >= 2 and adaptor.current() >= 2, timeout=120.0
        ), list(listener.errors)
        last = decider.last
        assert last is not None and last.backlog is not None and last.backlog > 0.0, last
        # Fed the rows that arrive (about 150/s), not the 60/s read, one executor's worth: it
        # scales up with a backlog of under 1,000 rows (fed the 60 read, it took over 1,000).
        assert last.volume > 100.0 and last.running is not None, last
        assert query.isActive and query.exception() is None

    assert not listener.errors
    _check_written(cluster, query, tmp_path)  # every id once, none missing
