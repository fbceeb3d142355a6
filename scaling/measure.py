"""What the Scaler measures from what a job reports: the restart, the actuation delay, the slope.

Each of restart and actuation delay is kept as a short history of recent measurements, and the
estimate is their maximum, capped: what the Flink autoscaler does with restart times
(``job.autoscaler.restart.time-tracking``, FLINK-30593). A slow restart is remembered until
three newer ones replaced it or a day passed, not forever.
"""

from __future__ import annotations

import math

# Measurements kept: Flink's job.autoscaler.history.max.count (3).
HISTORY = 3
# Seconds a measurement is kept at most: Flink's job.autoscaler.history.max.age (24 h).
MAX_AGE = 86_400.0
# Seconds an estimate is capped at: Flink's job.autoscaler.restart.time-tracking.limit (15 min).
CAP = 900.0
# Share of the running capacity under which a job with work waiting counts as restarting.
RESTARTING = 0.5
# Seconds over which the slope of the level is smoothed: a changepoint level moves in steps,
# and a ramp shows as several of them within a minute.
SLOPE_MEMORY = 60.0

History = list[list[float]]  # [t, seconds] pairs, oldest first


def recorded(history: History, t: float, seconds: float) -> History:
    """``history`` with a measurement of ``seconds`` taken at ``t``: the newest ``HISTORY``,
    none older than ``MAX_AGE``, each capped at ``CAP``.

    >>> recorded([[0.0, 30.0], [10.0, 8.0], [20.0, 9.0]], 30.0, 2000.0)
    [[10.0, 8.0], [20.0, 9.0], [30.0, 900.0]]
    """
    kept = [pair for pair in history if t - pair[0] < MAX_AGE]
    return [*kept, [t, min(seconds, CAP)]][-HISTORY:]


def estimate(history: History, t: float, prior: float) -> float:
    """The largest measurement of ``history`` younger than ``MAX_AGE`` at ``t``, or ``prior``.

    >>> estimate([[10.0, 8.0], [20.0, 12.0]], 30.0, 5.0), estimate([], 30.0, 5.0)
    (12.0, 5.0)
    """
    recent = [seconds for when, seconds in history if t - when < MAX_AGE]
    return max(recent) if recent else prior


def restarting(operators: int, capacity: float, backlog: float, processed: float | None) -> bool:
    """Work was waiting but under half of the running capacity was processed.

    >>> restarting(4, 50.0, backlog=500.0, processed=0.0), restarting(4, 50.0, 500.0, 200.0)
    (True, False)
    """
    running = operators * capacity
    return processed is not None and processed < RESTARTING * running < backlog


def smoothed_slope(slope: float, change: float, elapsed: float) -> float:
    """The level's slope, records/s per second, once the level moved by ``change`` in
    ``elapsed`` seconds: its rates of change smoothed over ``SLOPE_MEMORY`` seconds.

    >>> round(smoothed_slope(0.0, 60.0, 60.0), 3), smoothed_slope(2.0, 5.0, 1e-15)  # no weight
    (0.632, 2.0)
    """
    weight = 1.0 - math.exp(-elapsed / SLOPE_MEMORY)  # 0 under 7e-15 s: no slope to take
    return slope + weight * (change / elapsed - slope) if weight > 0.0 else slope
