"""The input of ``benchmarks.spark_e2e``: a recorded trace squeezed into a rate schedule.

The rate follows a trace of ../shared/data/traces (``nyc_taxi`` by default: two days of New
York taxi passengers every 30 minutes, a daily cycle with its morning and evening peaks),
replayed so that ``DAYS`` days pass in the run's duration and rescaled linearly so that its
lowest value needs ``LOW_SHARE`` of one executor and its peak ``HIGH_SHARE`` of the largest
count. The source (``steadyscale-volume``) makes rows due at that rate, step by step; row ``k``
arrives when the integral of the rate reaches ``k + 1`` (``arrival_times``), which is how the
measurements know each row's arrival without asking the source.

>>> schedule = Schedule(np.array([10.0, 30.0]), step=2.0)
>>> schedule.text()
'10:2,30:2,0:86400'
>>> arrival_times(schedule, np.array([0, 19, 20, 79])).tolist()
[0.1, 2.0, 2.033333333333333, 4.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simulator.model.traces import replay_trace

TRACES = Path(__file__).resolve().parents[3] / "shared" / "data" / "traces"
TRACE = TRACES / "nyc_taxi.csv"
# Days of the recording replayed over the run: two daily cycles, so each policy meets a rise,
# a fall and a second rise after it has settled.
DAYS = 2.0
# Seconds of replay per step of the schedule: the source's rate is constant within a step. 2 s
# keeps the curve smooth at two triggers per step.
STEP = 2.0
# The trough needs half of one executor and the peak 92 % of the largest count: the peak then
# needs exactly every executor, and the fixed-peak run holds them all.
LOW_SHARE = 0.5
HIGH_SHARE = 0.92
# Seconds the schedule holds a rate of 0 after the run, so that the source never adds rows
# while the query drains what is left.
AFTER = 86_400


@dataclass(frozen=True)
class Schedule:
    """Rates, rows/s, one per ``step`` seconds of the run; 0 after."""

    rates: np.ndarray
    step: float

    @property
    def duration(self) -> float:
        return float(self.rates.size * self.step)

    def text(self) -> str:
        """The ``schedule`` option of ``steadyscale-volume``: ``rate:seconds,...``, then 0."""
        parts = [f"{rate:.6g}:{self.step:g}" for rate in self.rates.tolist()]
        return ",".join([*parts, f"0:{AFTER}"])

    def per_second(self) -> np.ndarray:
        """The rate at each second of the run (the queue model's one sample per second)."""
        seconds = np.arange(math.floor(self.duration))
        return self.rates[np.minimum((seconds / self.step).astype(int), self.rates.size - 1)]


def trace_schedule(
    duration: float, capacity: float, executors: int, trace: Path = TRACE
) -> tuple[Schedule, str]:
    """The schedule replaying ``trace`` over ``duration`` seconds, for ``executors`` of
    ``capacity`` rows/s each, and one sentence saying what was done to the recording."""
    steps = max(2, round(duration / STEP))
    step = duration / steps
    low, high = LOW_SHARE * capacity, HIGH_SHARE * capacity * executors
    time_scale = DAYS * 86_400.0 / duration
    replay = replay_trace(trace, step, low, high, step * steps, time_scale=time_scale)
    rates = np.round(replay.values, 1)
    return Schedule(rates, step), f"{trace.name}: {replay.describe('rows/s')}"


def arrival_times(schedule: Schedule, rows: np.ndarray) -> np.ndarray:
    """Seconds after the schedule's start at which rows ``rows`` (ids from 0) became due.

    Row ``k`` is due once ``scheduled_rows`` (the rate's integral) reaches ``k + 1``; the
    integral is linear within a step, so this is its inverse by interpolation. Rows beyond the
    schedule's total never arrive (``inf``).
    """
    due = np.concatenate([[0.0], np.cumsum(schedule.rates) * schedule.step])
    edges = np.arange(due.size) * schedule.step
    wanted = np.asarray(rows, dtype=float) + 1.0
    times = np.interp(wanted, due, edges)
    return np.where(wanted <= due[-1] + 1e-9, times, np.inf)


def needed(rate: float, capacity: float, executors: int) -> int:
    """Executors ``rate`` needs at ``capacity`` rows/s each, within 1..``executors``."""
    return min(executors, max(1, math.ceil(rate / capacity - 1e-9)))
