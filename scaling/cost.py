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
# Quadrature over the window after landing: the ends of its sub-intervals as shares of AFTER
# (finer first, where the restart's backlog drains), and the midpoint of each.
_EDGES = np.array([0.0, 0.05, 0.15, 0.35, 0.65, 1.0])
_MIDS = (_EDGES[:-1] + _EDGES[1:]) / 2.0
_WIDTHS = np.diff(_EDGES)
# Points within the actuation delay and within the restart, as shares of each (midpoints).
_HALVES = np.array([0.25, 0.75])


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


def _late(
    x: np.ndarray, mean: np.ndarray, spread: np.ndarray, drift: np.ndarray, variance: float
) -> np.ndarray:
    """Harrison's ``Pr[Q > x]`` of a reflected Brownian queue whose free path is N(mean, spread²)."""
    free = ndtr((mean - x) / spread)
    # The reflection's term, e^{2mx/σ²} Φ(...), in logs: the exponential alone overflows.
    reflected = np.exp(np.minimum(2.0 * drift * x / variance + log_ndtr((-x - mean) / spread), 0.0))
    return np.minimum(free + reflected, 1.0)


def expected_costs(outlook: Outlook, prices: Prices, candidates: np.ndarray) -> Costs:
    """The expected cost of each count in ``candidates`` (integers >= 0) over the horizon.

    >>> prices = Prices(capacity=50.0, latency=10.0, operator=1.0, late=50.0, operation=30.0)
    >>> calm = Outlook(level=380.0, level_error=5.0, excess=0.0, slope=0.0, variance=60.0**2,
    ...                backlog=0.0, running=8, landing=0.0, restart=8.0)
    >>> costs = expected_costs(calm, prices, np.array([8, 9, 10]))
    >>> [round(x) for x in costs.total]  # 8 is never late; 9 and 10 add operator-seconds and 30
    [2464, 2802, 3110]
    """
    c, latency = prices.capacity, prices.latency
    variance = max(outlook.variance, 1e-12 * c * c)
    n0, landing, restart = outlook.running, outlook.landing, outlook.restart
    ahead = landing + restart  # the level's slope is followed until then
    after = AFTER
    horizon = landing + restart + after
    candidates = np.asarray(candidates, dtype=float)
    change = candidates != n0

    # Absolute times of the points and their weights: delay, restart, after landing.
    times = np.concatenate(
        (landing * _HALVES, landing + restart * _HALVES, ahead + after * _MIDS)
    )
    weights = np.concatenate(
        (np.full(2, landing / 2.0), np.full(2, restart / 2.0), after * _WIDTHS)
    )
    rate = _rate(outlook, times, ahead)
    arrived = _arrived(outlook, times, ahead)
    spread = np.sqrt(variance * times + outlook.level_error**2 * times * times) + 1e-9 * c

    # Holding n0 for the whole horizon, from the backlog there is now.
    held = n0 * c
    hold_late = _late(
        np.full_like(times, latency * held),
        outlook.backlog + arrived - held * times,
        spread,
        rate - held,
        variance,
    )

    # An operation: n0 until it lands, nothing during the restart, the candidate after.
    before = outlook.backlog + arrived[:2] - held * times[:2]
    by_landing, by_ahead, by_horizon = _arrived(outlook, np.array([landing, ahead, horizon]), ahead)
    at_landing = max(outlook.backlog + by_landing - held * landing, 0.0)
    capacity = candidates[:, None] * c
    mean_restart = at_landing + arrived[2:4] - by_landing
    left = restart * (1.0 - _HALVES)  # pause left at each restart point
    room = np.maximum(latency - left, 0.0)
    restart_late = np.where(
        room > 0.0, ndtr((mean_restart - room * capacity) / spread[2:4]), 1.0
    )
    at_restart_end = at_landing + by_ahead - by_landing
    served = times[4:] - ahead
    mean_after = at_restart_end + arrived[4:] - by_ahead - capacity * served
    after_late = _late(latency * capacity, mean_after, spread[4:], rate[4:] - capacity, variance)
    op_late = np.concatenate(
        (
            np.broadcast_to(_late(latency * held, before, spread[:2], rate[:2] - held, variance),
                            (len(candidates), 2)),
            restart_late,
            after_late,
        ),
        axis=1,
    )
    late = np.where(change[:, None], op_late, hold_late[None, :]) @ weights

    # The backlog left at the horizon, drained at the spare capacity after it (at most AFTER s).
    final_rate = float(_rate(outlook, np.array([horizon]), ahead)[0])
    left_held = outlook.backlog + by_horizon - held * horizon
    left_op = at_restart_end + by_horizon - by_ahead - capacity[:, 0] * after
    backlog_left = np.maximum(np.where(change, left_op, left_held), 0.0)
    final_capacity = np.where(change, candidates * c, held)
    excess = np.maximum(backlog_left - latency * final_capacity, 0.0)
    spare = final_capacity - final_rate
    terminal = np.where(
        excess > 0.0, np.where(spare > 0.0, np.minimum(excess / np.maximum(spare, 1e-12), after),
                               after), 0.0
    )
    late_seconds = late + terminal

    operator_seconds = np.where(change, n0 * landing + candidates * (restart + after),
                                n0 * horizon)
    operator_cost = prices.operator * operator_seconds
    late_cost = prices.late * late_seconds
    operation_cost = np.where(change, prices.operation, 0.0)
    total = operator_cost + late_cost + operation_cost
    return Costs(
        candidates.astype(int), operator_cost, late_seconds, late_cost, operation_cost, total,
        horizon,
    )


def _rate(outlook: Outlook, times: np.ndarray, ahead: float) -> np.ndarray:
    """The expected arrival rate at ``times``: the level, along its slope until ``ahead``, and
    the excess fading over ``EXCESS`` seconds."""
    slope = max(outlook.slope, 0.0)
    fading = outlook.excess * np.exp(-times / EXCESS)
    return outlook.level + slope * np.minimum(times, ahead) + fading


def _arrived(outlook: Outlook, times: np.ndarray, ahead: float) -> np.ndarray:
    """Records expected to arrive from now to ``times`` (the integral of ``_rate``)."""
    slope = max(outlook.slope, 0.0)
    along = np.where(
        times <= ahead, times * times / 2.0, ahead * ahead / 2.0 + ahead * (times - ahead)
    )
    fading = outlook.excess * EXCESS * (1.0 - np.exp(-times / EXCESS))
    return outlook.level * times + slope * along + fading
