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

The integrals are sums over a few points per segment (``_SHARES``), in plain floats: a count's
terms cost a few microseconds, and ``scaling.choice`` prices a handful per decision
(benchmarks/decision.py measures it). Pure: time enters only as the durations passed in.
"""

from __future__ import annotations

import dataclasses
import math

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
# landing × a + restart × b + AFTER × d for its shares (a, b, d) in _SHARES; its weight likewise.
_AFTER_EDGES = (0.0, 0.05, 0.15, 0.35, 0.65, 1.0)
_SHARES = [
    (0.25, 0.0, 0.0),
    (0.75, 0.0, 0.0),
    (1.0, 0.25, 0.0),
    (1.0, 0.75, 0.0),
    *((1.0, 1.0, (low + high) / 2.0) for low, high in zip(_AFTER_EDGES, _AFTER_EDGES[1:])),
]
_WEIGHTS = [
    (0.5, 0.0, 0.0),
    (0.5, 0.0, 0.0),
    (0.0, 0.5, 0.0),
    (0.0, 0.5, 0.0),
    *((0.0, 0.0, high - low) for low, high in zip(_AFTER_EDGES, _AFTER_EDGES[1:])),
]
_IN_DELAY, _IN_RESTART, _IN_AFTER = (0, 1), (2, 3), (4, 5, 6, 7, 8)
_PAUSE_LEFT = (0.75, 0.25)  # seconds of the pause left at each restart point, shares of it
_SQRT_HALF = math.sqrt(0.5)
_NEGLIGIBLE = -40.0  # ln of a probability too small to move a cost (4e-18)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


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
class Terms:
    """The expected cost terms of one count, in the prices' unit; ``late_seconds`` includes the
    terminal term's seconds, ``total`` sums the priced terms."""

    operators: int
    operator_cost: float
    late_seconds: float
    late_cost: float
    operation_cost: float
    total: float

    def to_dict(self) -> dict[str, float | int]:
        """JSON-ready, rounded to a thousandth."""
        return {
            "operators": self.operators,
            "operator_cost": round(self.operator_cost, 3),
            "late_seconds": round(self.late_seconds, 3),
            "late_cost": round(self.late_cost, 3),
            "operation_cost": round(self.operation_cost, 3),
            "total": round(self.total, 3),
        }


class Pricer:
    """Prices counts for one outlook: what every count shares (the points, the arrivals, the
    delay before an operation lands, holding the running count) is worked out once, and each
    count's terms once (``terms``).

    >>> prices = Prices(capacity=50.0, latency=10.0, operator=1.0, late=50.0, operation=30.0)
    >>> calm = Outlook(level=380.0, level_error=5.0, excess=0.0, slope=0.0, variance=60.0**2,
    ...                backlog=0.0, running=8, landing=0.0, restart=8.0)
    >>> pricer = Pricer(calm, prices)
    >>> [round(pricer.terms(n).total) for n in (7, 8, 9)]  # 7 falls behind; 9 costs an operator
    [31334, 2464, 2802]
    """

    def __init__(self, outlook: Outlook, prices: Prices) -> None:
        self.outlook, self.prices = outlook, prices
        c = prices.capacity
        self._variance = max(outlook.variance, 1e-12 * c * c)
        landing, restart = outlook.landing, outlook.restart
        self._ahead = ahead = landing + restart  # the level's slope is followed until then
        self.horizon = ahead + AFTER
        self._times = [landing * a + restart * b + AFTER * d for a, b, d in _SHARES]
        self._weights = [landing * a + restart * b + AFTER * d for a, b, d in _WEIGHTS]
        self._weighted = [i for i, weight in enumerate(self._weights) if weight > 0.0]
        self._arrived = [_arrived(outlook, t, ahead) for t in self._times]
        self._rate = [_rate(outlook, t, ahead) for t in self._times]
        error2 = outlook.level_error**2
        self._spread = [
            math.sqrt(self._variance * t + error2 * t * t) + 1e-9 * c for t in self._times
        ]
        self._by_landing = _arrived(outlook, landing, ahead)
        self._by_horizon = _arrived(outlook, self.horizon, ahead)
        self._final_rate = _rate(outlook, self.horizon, ahead)
        held = outlook.running * c
        self._found = max(outlook.backlog + self._by_landing - held * landing, 0.0)
        # Late seconds before an operation lands: the running count serves, as when holding.
        self._before = sum(
            self._weights[i]
            * self._late(
                i,
                outlook.backlog + self._arrived[i] - held * self._times[i],
                prices.latency * held,
                held,
            )
            for i in _IN_DELAY
            if landing > 0.0
        )
        self.priced: dict[int, Terms] = {}  # the counts priced so far

    def terms(self, operators: int) -> Terms:
        """The expected cost terms of running ``operators`` (an integer >= 0)."""
        if operators not in self.priced:
            self.priced[operators] = self._priced(operators)
        return self.priced[operators]

    def _late(self, point: int, mean: float, threshold: float, capacity: float) -> float:
        """Harrison's chance that the backlog is over ``threshold`` at a point, served at
        ``capacity``, its free path N(mean, spread²)."""
        spread = self._spread[point]
        free = _ndtr((mean - threshold) / spread)
        drift = self._rate[point] - capacity
        # The reflection's term, e^{2mx/σ²} Φ(...), in logs: the exponential alone overflows.
        # Below e^-40 (or with the free term at 1) it changes nothing a decision could see.
        exponent = 2.0 * drift * threshold / self._variance
        if free >= 1.0 or exponent < _NEGLIGIBLE:
            return free
        exponent += _log_ndtr((-threshold - mean) / spread)
        return min(free + math.exp(min(exponent, 0.0)), 1.0)

    def _priced(self, operators: int) -> Terms:
        outlook, prices = self.outlook, self.prices
        c, latency, times = prices.capacity, prices.latency, self._times
        n0, held = outlook.running, outlook.running * prices.capacity
        if operators == n0:  # holding: n0 serves throughout, from the backlog there is now
            late = sum(
                self._weights[i]
                * self._late(
                    i, outlook.backlog + self._arrived[i] - held * times[i], latency * held, held
                )
                for i in self._weighted
            )
            left = outlook.backlog + self._by_horizon - held * self.horizon
            operator_seconds, operation, final = n0 * self.horizon, 0.0, held
        else:  # an operation: n0 until it lands, nothing during the restart, the count after
            capacity = operators * c
            late = self._before
            for i, left_share in zip(_IN_RESTART, _PAUSE_LEFT, strict=True):
                if outlook.restart == 0.0:
                    break
                room = latency - outlook.restart * left_share
                mean = self._found + self._arrived[i] - self._by_landing
                share = _ndtr((mean - room * capacity) / self._spread[i]) if room > 0 else 1.0
                late += self._weights[i] * share
            for i in _IN_AFTER:
                served = capacity * (times[i] - self._ahead)
                mean = self._found + self._arrived[i] - self._by_landing - served
                late += self._weights[i] * self._late(i, mean, latency * capacity, capacity)
            left = self._found + self._by_horizon - self._by_landing - capacity * AFTER
            operator_seconds = n0 * outlook.landing + operators * (outlook.restart + AFTER)
            operation, final = prices.operation, capacity
        # The backlog left at the horizon, drained at the spare capacity after it (<= AFTER s).
        over = left - latency * final
        if over > 0.0:
            spare = final - self._final_rate
            late += min(over / spare, AFTER) if spare > 0.0 else AFTER
        operator_cost = prices.operator * operator_seconds
        late_cost = prices.late * late
        return Terms(
            operators,
            operator_cost,
            late,
            late_cost,
            operation,
            operator_cost + late_cost + operation,
        )


def _ndtr(z: float) -> float:
    """Φ(z), the standard normal distribution function."""
    return 0.5 * math.erfc(-z * _SQRT_HALF)


def _log_ndtr(z: float) -> float:
    """ln Φ(z), finite far into the lower tail (its asymptotic series beyond z = -20)."""
    if z > -20.0:
        value = _ndtr(z)
        return math.log(value) if value > 0.0 else -math.inf
    return -0.5 * z * z - math.log(-z) - _LOG_SQRT_2PI + math.log1p(-1.0 / (z * z))


def _rate(outlook: Outlook, t: float, ahead: float) -> float:
    """The expected arrival rate at ``t``: the level, along its slope until ``ahead``, and the
    excess fading over ``EXCESS`` seconds."""
    slope = max(outlook.slope, 0.0)
    return outlook.level + slope * min(t, ahead) + outlook.excess * math.exp(-t / EXCESS)


def _arrived(outlook: Outlook, t: float, ahead: float) -> float:
    """Records expected to arrive from now to ``t`` (the integral of ``_rate``).

    >>> calm = Outlook(level=100.0, level_error=0.0, excess=0.0, slope=1.0, variance=1.0,
    ...                backlog=0.0, running=1, landing=0.0, restart=10.0)
    >>> _arrived(calm, 10.0, 10.0), _arrived(calm, 20.0, 10.0)
    (1050.0, 2150.0)
    """
    slope = max(outlook.slope, 0.0)
    along = t * t / 2.0 if t <= ahead else ahead * ahead / 2.0 + ahead * (t - ahead)
    fading = outlook.excess * EXCESS * -math.expm1(-t / EXCESS)
    return outlook.level * t + slope * along + fading
