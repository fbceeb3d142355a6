"""How long each row must hold its task slot for an executor to handle ``capacity`` rows/s.

A row costs its slot the hold the source sleeps plus what Spark and Python spend on it (task
launch, the Python worker, the batch's planning and commit, spread over its rows). The
calibration measures that cost: the query runs on ``executors`` executors, each row holding
``1 / capacity`` seconds, with rows due faster than they can be read (``OVERLOAD``), so
every batch is full and back to back. Spark's progress reports give the rows read per second
of batch; per executor, its inverse is the slot time one row took, and what exceeds the hold is
the overhead. The hold that gives ``capacity`` is ``1 / capacity`` less that overhead; when
the overhead alone is over ``1 / capacity``, no hold can give it, and the benchmark refuses.

>>> calibration = Calibration(capacity=100.0, executors=2, probe_us=10_000.0, rate=150.0)
>>> round(calibration.overhead_us), round(calibration.hold_us)
(3333, 6667)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pyspark.sql import SparkSession

from benchmarks.e2e.job import BATCH_SECONDS, run_policy
from benchmarks.e2e.workload import Schedule

# Rows due per second, as a share of the executors' capacity: 25 % more than they can read, so
# that batches are full from the first, and the backlog left drains in a quarter of the time.
OVERLOAD = 1.25
# Batches left out at the start: the first ones start the Python workers.
SKIPPED = 2


class CannotCalibrate(ValueError):
    """The machine cannot give the capacity asked for; the message says what to change."""


@dataclass(frozen=True)
class Calibration:
    """What the calibration measured: ``rate``, rows read per second of batch by
    ``executors`` executors holding ``probe_us`` microseconds per row, for ``capacity``."""

    capacity: float
    executors: int
    probe_us: float
    rate: float

    @property
    def overhead_us(self) -> float:
        """Slot microseconds one row took beyond its hold."""
        return self.executors * 1e6 / self.rate - self.probe_us

    @property
    def hold_us(self) -> float:
        """Microseconds a row holds its slot for an executor to handle ``capacity`` rows/s."""
        return 1e6 / self.capacity - self.overhead_us

    def describe(self) -> str:
        return (
            f"calibration: {self.executors} executors holding {self.probe_us / 1000:.2f} ms per "
            f"row read {self.rate:.1f} rows/s ({self.rate / self.executors:.1f} each), so a row "
            f"costs {self.overhead_us / 1000:.2f} ms of slot time beyond its hold; hold set to "
            f"{self.hold_us / 1000:.2f} ms per row for {self.capacity:g} rows/s per executor"
        )

    def check(self) -> None:
        """``CannotCalibrate`` when no hold gives ``capacity`` on this machine."""
        if self.hold_us <= 0.0:
            most = self.executors * 1e6 / self.rate
            raise CannotCalibrate(
                f"--capacity {self.capacity:g} cannot be reached on this machine: each row costs "
                f"{self.overhead_us / 1000:.2f} ms of an executor's slot besides any hold, so one "
                f"executor handles at most {1e6 / self.overhead_us:.0f} rows/s "
                f"(measured {self.rate / self.executors:.1f} with a {most / 1000:.2f} ms slot "
                "time per row); give a lower --capacity"
            )


def calibrate(spark: SparkSession, capacity: float, executors: int, seconds: float) -> Calibration:
    """Run the overloaded query for ``seconds`` on the ``executors`` running and measure."""
    probe_us = 1e6 / capacity
    rate = OVERLOAD * capacity * executors
    steps = max(1, round(seconds / 2.0))
    schedule = Schedule(np.full(steps, rate), seconds / steps)
    most = round(capacity * executors * BATCH_SECONDS)
    run = run_policy(spark, "calibration", schedule, probe_us, most)
    return Calibration(capacity, executors, probe_us, read_rate(run.progress))


def read_rate(progress: Sequence[dict[str, Any]]) -> float:
    """Rows read per second of batch over the full batches after the first ``SKIPPED``."""
    batches = [p for p in progress if p.get("numInputRows", 0) > 0][SKIPPED:]
    rows = sum(p["numInputRows"] for p in batches)
    took = sum(p["durationMs"]["triggerExecution"] for p in batches) / 1000.0
    if not batches or took <= 0.0:
        raise CannotCalibrate(
            "calibration: the query completed no batch to measure; give a longer --calibration "
            "(seconds) or check that the cluster starts executors (--verbose)"
        )
    return rows / took
