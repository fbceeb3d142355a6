"""The expected cost of running n operators over the horizon an operation decided now covers.

A stage of a stream job is a queue: records arrive at a rate :math:`\\lambda(t)` with variance
:math:`\\sigma^2` per second, and :math:`n` operators of capacity :math:`c` serve them. A record
is late when its queueing delay exceeds the latency :math:`L`, i.e. while the backlog is over
:math:`L n c`. An operation decided now lands after the actuation delay :math:`D` (the old count
:math:`n_0` serves meanwhile), then stops processing for the restart :math:`P`, and the new count
serves after it. Holding :math:`n_0` starts nothing. Each candidate count is priced over the same
horizon, :math:`H = D + P + T` with :math:`T` = ``AFTER``:

.. math:: \\text{cost}(n) = p_{\\text{op}} \\int_0^H n(t)\\,dt
          + p_{\\text{late}} \\Big(\\int_0^H \\Pr[\\text{late at } t]\\,dt + S_H\\Big)
          + p_{\\text{operation}} [n \\ne n_0]

where :math:`S_H` (the terminal term) is the late seconds the mean backlog left at :math:`H`
still costs while the count drains it. :math:`\\Pr[\\text{late at } t]` is Harrison's law of a
reflected Brownian motion with drift :math:`m = \\lambda - C` started at :math:`q`:

.. math:: \\Pr[Q_t > x] = \\bar\\Phi\\Big(\\frac{x - q - m t}{s_t}\\Big)
          + e^{2 m x / \\sigma^2}\\,\\Phi\\Big(\\frac{-x - q - m t}{s_t}\\Big)

whose :math:`t \\to \\infty` limit, :math:`e^{2 m x / \\sigma^2}` for :math:`m < 0`, is the
stationary chance of a delay over :math:`L` (the headroom's tail). Within a restart nothing is
served: a record is late once the pause left plus the backlog at the new capacity exceeds
:math:`L`, a normal tail. :math:`s_t^2 = \\sigma^2 t + s_\\mu^2 t^2` adds the level's own
standard error :math:`s_\\mu` (the level is a rate the filter estimated, not the truth). The
arrival rate follows the level's slope :math:`g` until an operation decided now could land,
:math:`D + P`, and stays there after (a later decision can follow further).

The integrals are sums over a few points per segment (``_points``): tens of microseconds per
decision for a handful of candidates (benchmarks/decision.py measures it). Pure: time enters
only as the durations passed in.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.special import log_ndtr, ndtr

# Seconds after an operation lands over which the counts are compared: how long a decision is
# expected to stand, and the time a backlog left is to be drained in. Flink's autoscaler
# drains a backlog within job.autoscaler.catch-up.duration, 5 minutes by default.
AFTER = 300.0
# Seconds over which the samples' recent excess over the filtered level is averaged, and over
# which it is expected to fade: the default filter follows a step within 13 s (median) to 16 s
# (95th percentile) on benchmarks.default, so a deviation it has not followed yet lasts
# about that long, whether it turns out to be a change (the level then takes it over) or a
# spike (it ends).
EXCESS = 15.0
# The points the integrals are summed over: two in the actuation delay, two in the restart, five
# after landing (finer first, where the restart's backlog drains). A point's time is
# landing × _IN_DELAY + restart × _IN_RESTART + AFTER × _AFTER_SHARE, its weight likewise.
_EDGES = np.array([0.0, 0.05, 0.15, 0.35, 0.65, 1.0])
_HALVES = np.array([0.25, 0.75])
_DELAY = np.array([1.0, 1.0, 0, 0, 0, 0, 0, 0, 0])  # the point lies in the delay
_RESTART = np.array([0, 0, 1.0, 1.0, 0, 0, 0, 0, 0])  # in the restart
_SERVED = 1.0 - _DELAY - _RESTART  # after the restart
_IN_DELAY = np.concatenate((_HALVES, np.ones(7)))
_IN_RESTART = np.concatenate(([0.0, 0.0], _HALVES, np.ones(5)))
_AFTER_SHARE = np.concatenate((np.zeros(4), (_EDGES[:-1] + _EDGES[1:]) / 2.0))
_WEIGHT_DELAY = _DELAY / 2.0
_WEIGHT_RESTART = _RESTART / 2.0
_WEIGHT_AFTER = np.concatenate((np.zeros(4), np.diff(_EDGES)))
# Seconds of the pause left at each point of the restart, as shares of the restart.
_PAUSE_LEFT = np.concatenate(([0.0, 0.0], 1.0 - _HALVES, np.zeros(5)))


@dataclasses.dataclass(frozen=True)
class Outlook:
    """What is known of a stage when it decides; rates in records/s, times in seconds.

    Attributes
    ----------
    level, level_error
        The arrival rate's estimate and its standard error.
    excess
        How far the recent samples ran above the level, records/s (``EXCESS``): a change the
        filter has not followed yet, expected to fade over ``EXCESS`` seconds.
    slope
        The level's rate of change, records/s per second (followed until an operation lands).
    variance
        The arrivals' variance per second, records²/s (per second, whatever the sampling).
    backlog
        Records waiting now.
    running
        Operators running now.
    landing
        Seconds until an operation decided now would land (the actuation delay, less the time a
        pending one has already waited).
    restart
        Seconds an operation stops processing once it lands.
    """

    level: float
    level_error: float
    excess: float
    slope: float
    variance: float
    backlog: float
    running: int
    landing: float
    restart: float


@dataclasses.dataclass(frozen=True)
class Prices:
    """What the user pays, in one unit of their choice (operator-seconds by default).

    ``late`` prices a second of a record's delay over ``latency``; ``operation`` one scaling
    operation beyond its restart (which the model prices as late seconds itself).
    """

    capacity: float
    latency: float
    operator: float
    late: float
    operation: float


@dataclasses.dataclass(frozen=True)
class Costs:
    """The expected cost terms of each candidate, in the prices' unit (arrays, one per count).

    ``late_seconds`` holds the terminal term's seconds as well; ``total`` sums the priced terms.
    """

    operators: np.ndarray
    operator_cost: np.ndarray
    late_seconds: np.ndarray
    late_cost: np.ndarray
    operation_cost: np.ndarray
    total: np.ndarray
    horizon: float

    def terms(self, index: int) -> dict[str, float | int]:
        """The terms of one candidate, JSON-ready."""
        return {
            "operators": int(self.operators[index]),
            "operator_cost": round(float(self.operator_cost[index]), 3),
            "late_seconds": round(float(self.late_seconds[index]), 3),
            "late_cost": round(float(self.late_cost[index]), 3),
            "operation_cost": round(float(self.operation_cost[index]), 3),
            "total": round(float(self.total[index]), 3),
        }


def expected_costs(outlook: Outlook, prices: Prices, candidates: np.ndarray) -> Costs:
    """The expected cost of each count in ``candidates`` (integers >= 0) over the horizon.

    >>> prices = Prices(capacity=50.0, latency=10.0, operator=1.0, late=50.0, operation=30.0)
    >>> calm = Outlook(level=380.0, level_error=5.0, excess=0.0, slope=0.0, variance=60.0**2,
    ...                backlog=0.0, running=8, landing=0.0, restart=8.0)
    >>> costs = expected_costs(calm, prices, np.array([8, 9, 10]))
    >>> [round(x) for x in costs.total]
    [3120, 2880, 3170]
    """
    c, latency = prices.capacity, prices.latency
    variance = max(outlook.variance, 1e-12 * c * c)
    n0, landing, restart = outlook.running, outlook.landing, outlook.restart
    ahead = landing + restart  # the level's slope is followed until then
    horizon = ahead + AFTER
    counts = np.asarray(candidates, dtype=float)
    change = counts != n0
    times = landing * _IN_DELAY + restart * _IN_RESTART + AFTER * _AFTER_SHARE
    weights = landing * _WEIGHT_DELAY + restart * _WEIGHT_RESTART + AFTER * _WEIGHT_AFTER
    arrived = _arrived(outlook, np.append(times, (landing, ahead, horizon)), ahead)
    by_landing, by_horizon = arrived[-3], arrived[-1]
    arrived = arrived[:-3]
    rate = _rate(outlook, np.append(times, horizon), ahead)
    spread = np.sqrt(variance * times + outlook.level_error**2 * times * times) + 1e-9 * c

    # Capacity, mean backlog and the backlog at which a record is late, at each (count, point):
    # n0 until an operation lands, nothing during its restart, the count after; n0 throughout
    # when holding. The backlog an operation finds when it lands is reflected at 0.
    held = n0 * c
    capacity = counts[:, None] * c
    found = max(outlook.backlog + by_landing - held * landing, 0.0)
    held_mean = outlook.backlog + arrived - held * times
    served = capacity * np.maximum(times - ahead, 0.0)
    op_mean = np.where(_DELAY > 0, held_mean, found + arrived - by_landing - served)
    room = np.maximum(latency - restart * _PAUSE_LEFT, 0.0)
    op_threshold = np.where(_DELAY > 0, held, capacity) * room
    op_running = held * _DELAY + capacity * _SERVED
    rows = change[:, None]
    mean = np.where(rows, op_mean, held_mean)
    threshold = np.where(rows, op_threshold, latency * held)
    drift = rate[:-1] - np.where(rows, op_running, held)
    free = ndtr((mean - threshold) / spread)
    # The reflection's term, e^{2mx/σ²} Φ(...), in logs (the exponential alone overflows);
    # none within a restart, where nothing is served and a record is late once the pause left
    # plus the backlog at the new capacity exceeds the latency.
    reflected = np.exp(
        np.minimum(2.0 * drift * threshold / variance + log_ndtr((-threshold - mean) / spread), 0)
    )
    late_share = np.where(
        rows & (_RESTART > 0), np.where(room > 0, free, 1.0), np.minimum(free + reflected, 1.0)
    )
    late = late_share @ weights

    # The backlog left at the horizon, drained at the spare capacity after it (at most AFTER s).
    final = np.where(change, counts * c, held)
    left = np.where(
        change,
        found + by_horizon - by_landing - final * AFTER,
        outlook.backlog + by_horizon - held * horizon,
    )
    over = np.maximum(left - latency * final, 0.0)
    spare = final - rate[-1]
    terminal = np.where(spare > 0.0, np.minimum(over / np.maximum(spare, 1e-12), AFTER), AFTER)
    late_seconds = late + np.where(over > 0.0, terminal, 0.0)

    operator_seconds = np.where(change, n0 * landing + counts * (restart + AFTER), n0 * horizon)
    operator_cost = prices.operator * operator_seconds
    late_cost = prices.late * late_seconds
    operation_cost = np.where(change, prices.operation, 0.0)
    total = operator_cost + late_cost + operation_cost
    return Costs(
        counts.astype(int), operator_cost, late_seconds, late_cost, operation_cost, total, horizon
    )


def _rate(outlook: Outlook, times: np.ndarray, ahead: float) -> np.ndarray:
    """The expected arrival rate at ``times``: the level, along its slope until ``ahead``, and
    the excess fading over ``EXCESS`` seconds."""
    slope = max(outlook.slope, 0.0)
    fading = outlook.excess * np.exp(-times / EXCESS)
    rate: np.ndarray = outlook.level + slope * np.minimum(times, ahead) + fading
    return rate


def _arrived(outlook: Outlook, times: np.ndarray, ahead: float) -> np.ndarray:
    """Records expected to arrive from now to ``times`` (the integral of ``_rate``)."""
    slope = max(outlook.slope, 0.0)
    along = np.where(
        times <= ahead, times * times / 2.0, ahead * ahead / 2.0 + ahead * (times - ahead)
    )
    fading = outlook.excess * EXCESS * (1.0 - np.exp(-times / EXCESS))
    return outlook.level * times + slope * along + fading
