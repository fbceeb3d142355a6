"""A live Spark streaming source whose volume you choose: ``VolumeSource`` ("steadyscale-volume").

It emits rows ``(id long)`` with consecutive ids from 0, at a rate in rows per second that
either follows a schedule or is read from a control file at every trigger, so that an
autoscaler can be watched (and tested) against a volume that changes while the query runs:

* ``schedule``: ``"rate:seconds,rate:seconds,..."``, e.g. ``"100:30,400:60,100:60"`` is 100
  rows/s for 30 s, then 400 for 60 s, then 100 (the last rate holds after the schedule);
* ``control``: the path of a file holding one number, the rate from now on (rewrite it to
  change the volume); it wins over ``schedule``.

Rows are due as time passes: at each trigger the source adds ``rate × seconds since the
previous trigger`` to its end offset, so ``inputRowsPerSecond`` reports the rate. Offsets are
row counts, ``{"rows": n}``; a batch reads ids ``[start, end)`` split over ``partitions``
tasks (default 4), so a sink can check that every id arrives exactly once. With
``max_rows_per_batch`` a batch reads at most that many rows (Spark's admission control, like
Kafka's ``maxOffsetsPerTrigger``): the rest wait, and the source reports the latest offset
due, so that the query's progress shows how far it is behind (``latestOffset`` less
``endOffset``, the backlog ``scaling.spark`` feeds to the Scaler). The rate is
volume only: reading a row costs next to nothing unless ``cost_us`` (busy microseconds per
row) is set, which makes more rows need more executors. ``hold_us`` does the same without
burning the host's CPU: a task sleeps ``hold_us`` microseconds per row it reads, once, so an
executor's task slot handles a known number of rows per second and several executors fit on
few cores (``benchmarks.spark_e2e``). ``start`` (epoch seconds) pins the schedule's second 0
to a moment of the wall clock, so that the arrival time of every row is known outside the
source (row ``k`` is due once ``scheduled_rows`` reaches ``k + 1``); by default it is when the
reader starts.

Register it, then read it::

    spark.dataSource.register(VolumeSource)
    df = spark.readStream.format("steadyscale-volume").option("schedule", "100:30,400:60").load()

PySpark's Python data sources exchange rows in Arrow: they need ``pyarrow`` on the driver and
the executors.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows
from pyspark.sql.types import StructType


def parse_schedule(text: str) -> list[tuple[float, float]]:
    """``"rate:seconds,..."`` as ``[(rate, seconds), ...]``; ``ValueError`` naming the bad part.

    >>> parse_schedule("100:30, 400:60")
    [(100.0, 30.0), (400.0, 60.0)]
    """
    steps = []
    for part in text.split(","):
        rate, _, seconds = part.strip().partition(":")
        try:
            step = (float(rate), float(seconds))
        except ValueError:
            step = (-1.0, -1.0)
        if not (step[0] >= 0 and step[1] > 0):
            raise ValueError(
                f"schedule part {part.strip()!r} is not allowed: write rate:seconds with a rate "
                ">= 0 rows/s and a duration > 0 s, parts separated by commas"
            )
        steps.append(step)
    return steps


def _whole(text: str) -> int:
    """An option's whole number; 0 (refused by the caller) when it is not one."""
    try:
        return int(text)
    except ValueError:
        return 0


def scheduled_rows(schedule: Sequence[tuple[float, float]], elapsed: float) -> float:
    """Rows due ``elapsed`` seconds after the start: the integral of the scheduled rate.

    >>> scheduled_rows([(100.0, 30.0), (400.0, 60.0)], 40.0)
    7000.0
    >>> scheduled_rows([(100.0, 30.0), (400.0, 60.0)], 100.0)  # 400 rows/s hold on
    31000.0
    """
    rows, start = 0.0, 0.0
    for rate, seconds in schedule:
        rows += rate * max(0.0, min(elapsed, start + seconds) - start)
        start += seconds
    return rows + schedule[-1][0] * max(0.0, elapsed - start)


class VolumeSource(DataSource):
    """The data source; options ``schedule``, ``control``, ``partitions``, ``cost_us``,
    ``hold_us``, ``max_rows_per_batch``, ``start``."""

    @classmethod
    def name(cls) -> str:
        return "steadyscale-volume"

    def schema(self) -> str:
        return "id long"

    def streamReader(self, schema: StructType) -> VolumeReader:
        return VolumeReader(self.options)


class VolumeReader(DataSourceStreamReader):
    """Plans batches in the driver; ``read`` runs on the executors."""

    def __init__(self, options: Any) -> None:
        self.control = options.get("control")
        schedule = options.get("schedule")
        if self.control is None and schedule is None:
            raise ValueError(
                "steadyscale-volume needs option schedule ('rate:seconds,...') or control "
                "(path of a file holding the rate)"
            )
        self.schedule = None if schedule is None else parse_schedule(schedule)
        self.partition_count = int(options.get("partitions", "4"))
        self.cost_us = float(options.get("cost_us", "0"))
        self.hold_us = float(options.get("hold_us", "0"))
        most = options.get("max_rows_per_batch")
        self.max_rows = None if most is None else _whole(most)
        bad_limit = self.max_rows is not None and self.max_rows < 1
        if self.partition_count < 1 or self.cost_us < 0 or self.hold_us < 0 or bad_limit:
            raise ValueError(
                f"partitions={self.partition_count} / cost_us={self.cost_us} / "
                f"hold_us={self.hold_us} / max_rows_per_batch={most} are not allowed: "
                "partitions must be >= 1, cost_us and hold_us >= 0 and max_rows_per_batch >= 1 "
                "(or left out: no limit)"
            )
        start = options.get("start")
        # The schedule's second 0 on the monotonic clock: ``start`` moved from the wall clock.
        ahead = 0.0 if start is None else float(start) - time.time()
        self._started = time.monotonic() + ahead
        self._due = 0.0
        self._last = self._started

    def initialOffset(self) -> dict[str, int]:
        return {"rows": 0}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadAllAvailable() if self.max_rows is None else ReadMaxRows(self.max_rows)

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        now = time.monotonic()
        if self.control is not None:
            self._due += self._control_rate() * (now - self._last)
        else:
            assert self.schedule is not None
            self._due = scheduled_rows(self.schedule, now - self._started)
        self._last = now
        # A query restarted from a checkpoint starts past what this reader has counted.
        self._due = max(self._due, float(start["rows"]))
        if isinstance(limit, ReadMaxRows):
            return {"rows": min(int(self._due), start["rows"] + limit.max_rows)}
        return {"rows": int(self._due)}

    def reportLatestOffset(self) -> dict[str, int]:
        return {"rows": int(self._due)}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[InputPartition]:
        first, last = start["rows"], end["rows"]
        size = -(-(last - first) // self.partition_count)
        return [
            InputPartition((low, min(low + size, last))) for low in range(first, last, size or 1)
        ]

    def read(self, partition: InputPartition) -> Iterator[tuple[int]]:
        low, high = partition.value
        if self.hold_us:
            time.sleep((high - low) * self.hold_us / 1e6)
        for row in range(low, high):
            if self.cost_us:
                deadline = time.perf_counter() + self.cost_us / 1e6
                while time.perf_counter() < deadline:
                    pass
            yield (row,)

    def commit(self, end: dict[str, int]) -> None:
        pass

    def _control_rate(self) -> float:
        text = Path(self.control).read_text(encoding="utf-8").strip()
        rate = float(text)
        if not rate >= 0:
            raise ValueError(f"control file {self.control}: rate {text!r} must be >= 0 rows/s")
        return rate
