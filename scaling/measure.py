"""What the Scaler measures from what a job reports: the restart, the actuation delay, the slope.

Each of restart and actuation delay is kept as a short history of recent measurements, and the
estimate is their maximum, capped: what the Flink autoscaler does with restart times
(``job.autoscaler.restart.time-tracking``, FLINK-30593). A slow restart is remembered until
three newer ones replaced it or a day passed, not forever.

Restarts are kept per direction (``UP``, ``DOWN``): a Flink job restarts whichever way it is
rescaled, but a PySpark executor added stalls the batch its Python worker starts in while one
removed stops nothing (docs/spark.md), and a single history would plan every scale-down with a
scale-up's stall. A direction not measured yet is planned with the lesser of the prior and the
other direction's measurements: optimistic, so that it gets measured (a pessimistic guess is
never corrected, as an operation it prices too dear is never made), and no worse than the
job's own evidence where the prior is the longer. A measurement stored without a direction
(states from before) counts for both.
"""

from __future__ import annotations

import math

from scaling.cost import AFTER, EXCESS

# Measurements kept: Flink's job.autoscaler.history.max.count (3).
HISTORY = 3
# Seconds a measurement is kept at most: Flink's job.autoscaler.history.max.age (24 h).
MAX_AGE = 86_400.0
# Seconds an estimate is capped at: Flink's job.autoscaler.restart.time-tracking.limit (15 min).
CAP = 900.0
# Share of what it could process (its capacity, or the work there was) under which a job counts
# as restarting: half, so that a restart is told from a slow stage whatever the count.
RESTARTING = 0.5
# Seconds over which the slope of the level is smoothed: a changepoint level moves in steps,
# and a ramp shows as several of them within a minute.
SLOPE_MEMORY = 60.0

# Directions of an operation: a scale-up, a scale-down; 0 for a measurement of either (an
# actuation delay, or a restart stored before directions were).
UP, DOWN = 1, -1

History = list[list[float]]  # [t, seconds] or [t, seconds, direction], oldest first


def _counts_for(entry: list[float], direction: int) -> bool:
    return direction == 0 or len(entry) < 3 or entry[2] == direction


def recorded(history: History, t: float, seconds: float, direction: int = 0) -> History:
    """``history`` with a measurement of ``seconds`` taken at ``t`` in ``direction`` (``UP``,
    ``DOWN``, or 0 for either): the newest ``HISTORY`` of each direction, none older than
    ``MAX_AGE``, each capped at ``CAP``.

    >>> recorded([[0.0, 30.0], [10.0, 8.0], [20.0, 9.0]], 30.0, 2000.0)
    [[10.0, 8.0], [20.0, 9.0], [30.0, 900.0]]
    >>> recorded([[0.0, 25.0, UP], [10.0, 0.0, DOWN], [20.0, 0.0, DOWN]], 30.0, 0.0, DOWN)
    [[0.0, 25.0, 1], [10.0, 0.0, -1], [20.0, 0.0, -1], [30.0, 0.0, -1]]
    """
    entry = [t, min(seconds, CAP)] if direction == 0 else [t, min(seconds, CAP), direction]
    kept = [*(pair for pair in history if t - pair[0] < MAX_AGE), entry]
    newest = {id(pair) for way in (UP, DOWN) for pair in _of(kept, way)[-HISTORY:]}
    return [pair for pair in kept if id(pair) in newest]


def _of(history: History, direction: int) -> History:
    return [pair for pair in history if _counts_for(pair, direction)]


def estimate(history: History, t: float, prior: float, direction: int = 0) -> float:
    """The largest of the newest ``HISTORY`` measurements of ``history`` in ``direction``
    younger than ``MAX_AGE`` at ``t``; when none is, the lesser of ``prior`` and the other
    direction's largest; ``prior`` when there is none at all.

    >>> estimate([[10.0, 8.0], [20.0, 12.0]], 30.0, 5.0), estimate([], 30.0, 5.0)
    (12.0, 5.0)
    >>> stalls = [[10.0, 25.0, UP], [20.0, 0.0, DOWN]]
    >>> estimate(stalls, 30.0, 5.0, UP), estimate(stalls, 30.0, 5.0, DOWN)
    (25.0, 0.0)
    >>> estimate([[10.0, 25.0, UP]], 30.0, 5.0, DOWN), estimate([[10.0, 2.0, UP]], 30.0, 5.0, DOWN)
    (5.0, 2.0)
    """
    # One pass (a decision asks five times): the recent ones in the direction, and the largest
    # of all the recent ones.
    mine: list[float] = []
    largest = -math.inf
    for pair in history:
        if t - pair[0] < MAX_AGE:
            seconds = pair[1]
            if seconds > largest:
                largest = seconds
            if direction == 0 or len(pair) < 3 or pair[2] == direction:
                mine.append(seconds)
    if mine:
        return max(mine[-HISTORY:])
    return min(prior, largest) if largest > -math.inf else prior


def restarting(
    operators: int, capacity: float, backlog: float, processed: float | None, interval: float
) -> bool | None:
    """Under half of what the job could process was processed: of the running capacity, or of
    the work there was (the records processed and those still waiting, over the ``interval``
    seconds since the last sample). A paused stage with a large count and a short queue is
    restarting too. ``None`` when there was no work at all (nothing processed, nothing
    waiting): a stage with nothing to do may be paused or not, and a restart is not over
    because a second brought no record (noisy volumes clipped at 0 do).

    >>> restarting(4, 50.0, backlog=500.0, processed=0.0, interval=1.0)
    True
    >>> restarting(4, 50.0, backlog=500.0, processed=200.0, interval=1.0)  # at capacity
    False
    >>> restarting(15, 50.0, backlog=220.0, processed=0.0, interval=1.0)  # 750/s, 220 waiting
    True
    >>> restarting(15, 50.0, backlog=0.0, processed=210.0, interval=1.0)  # all the work there was
    False
    >>> print(restarting(15, 50.0, backlog=0.0, processed=0.0, interval=1.0))  # no work: unknown
    None
    """
    if processed is None:
        return False
    could = min(operators * capacity, processed + backlog / interval)
    return None if could <= 0.0 else processed < RESTARTING * could


def level_error(spread: float, missed: float, noise: float, interval: float) -> float:
    """The level's error, records/s: the filter's standard error ``spread``, or, where larger,
    the error measured. ``missed`` is the mean square of the samples' excess over the level
    (their exponential mean over ``cost.EXCESS`` seconds, squared and averaged over
    ``cost.AFTER``); white noise of deviation ``noise`` per sample alone gives the excess a
    variance of w / (2 - w) of a sample's, w its weight per sample. A level that lags a ramp,
    or sits on a run of low samples, is known worse than its standard error says.

    >>> level_error(5.0, missed=0.0, noise=100.0, interval=1.0)  # nothing measured
    5.0
    >>> round(level_error(5.0, missed=40.0**2 + 333.0, noise=100.0, interval=1.0), 1)
    40.0
    """
    weight = -math.expm1(-interval / EXCESS)
    chance = noise * noise * weight / (2.0 - weight)
    return math.sqrt(max(spread * spread, missed - chance))


def smoothed_slope(slope: float, change: float, elapsed: float) -> float:
    """The level's slope, records/s per second, once the level moved by ``change`` in
    ``elapsed`` seconds: its rates of change smoothed over ``SLOPE_MEMORY`` seconds.

    >>> round(smoothed_slope(0.0, 60.0, 60.0), 3), smoothed_slope(2.0, 5.0, 1e-15)  # no weight
    (0.632, 2.0)
    """
    weight = 1.0 - math.exp(-elapsed / SLOPE_MEMORY)  # 0 under 7e-15 s: no slope to take
    return slope + weight * (change / elapsed - slope) if weight > 0.0 else slope


def wandered(wander: float, step: float, elapsed: float) -> float:
    """How fast the level's variance grows beyond its slope, (records/s)²/s, once it moved by
    ``step`` more than its slope says in ``elapsed`` seconds: ``step² / elapsed`` averaged over
    ``cost.AFTER`` seconds, the horizon it is priced over (``cost.Outlook.wander``). A level
    that moves in steps of ``s`` now and then wanders by the sum of ``s²`` over ``AFTER``.

    >>> round(wandered(0.0, 30.0, 1.0) * AFTER, 1)  # one step of 30 records/s: 900 over AFTER
    898.5
    >>> round(wandered(0.0, 1e12, 1e-300) * AFTER / 1e24, 6)  # step² / elapsed is no float
    1.0
    """
    weight = -math.expm1(-elapsed / AFTER)  # 0 only for elapsed ~1e-321 s: no rate to take
    if weight <= 0.0:
        return wander
    rate = step * step / elapsed
    if rate == math.inf:  # elapsed so short that the rate overflows: weight / elapsed is then
        # 1 / AFTER, and the step counts step² / AFTER (taken as inf, the wander made the
        # cost model's terms NaN: a 422 on a schema-valid batch, session 29)
        return wander + weight / elapsed * step * step - weight * wander
    return wander + weight * (rate - wander)
