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
:math:`L`, a normal tail. :math:`s_t^2 = \\sigma^2 t + s_\\mu^2 \\min(t, D + P + E)^2` adds the
level's own standard error :math:`s_\\mu` (the level is a rate the filter estimated, not the
truth) until a decision made once the filter has followed the level (``EXCESS`` = E seconds)
could land and correct the count. The
arrival rate follows the level's slope :math:`g` until an operation decided now could land,
:math:`D + P`, and stays there after (a later decision can follow further).

The integrals run over nine intervals (``Pricer``), exactly for the first term and at each
interval's middle for the reflection's, in plain floats: ``scaling.choice`` prices a handful
of counts per decision (benchmarks/decision.py measures the cost). Pure: time enters only as
the durations passed in.
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
# The intervals after an operation lands, as shares of AFTER: finer first, where the restart's
# backlog drains.
_AFTER_EDGES = (0.0, 0.05, 0.15, 0.35, 0.65, 1.0)
_SQRT_HALF = math.sqrt(0.5)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
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
    """Prices counts for one outlook: what every count shares (the intervals, the arrivals, the
    delay before an operation lands) is worked out once, and each count's terms once (``terms``).

    The horizon is cut into intervals: two in the actuation delay, two in the restart, five
    after it (``_AFTER_EDGES``). Within one, the mean backlog and the backlog at which a record
    is late are linear in time and the spread is taken at its middle, so the chance of being
    late integrates exactly (``_integral``): smooth in the count, with no steps for a search
    to stall on. The reflection's term is taken at the middle.

    >>> prices = Prices(capacity=50.0, latency=10.0, operator=1.0, late=50.0, operation=30.0)
    >>> calm = Outlook(level=380.0, level_error=5.0, excess=0.0, slope=0.0, variance=60.0**2,
    ...                backlog=0.0, running=8, landing=0.0, restart=8.0)
    >>> pricer = Pricer(calm, prices)
    >>> [round(pricer.terms(n).total) for n in (7, 8, 9)]  # 7 falls behind; 9 costs an operator
    [31302, 2464, 2802]
    """

    def __init__(self, outlook: Outlook, prices: Prices) -> None:
        self.outlook, self.prices = outlook, prices
        c = prices.capacity
        self._variance = max(outlook.variance, 1e-12 * c * c)
        landing, restart = outlook.landing, outlook.restart
        self._ahead = ahead = landing + restart  # the level's slope is followed until then
        self.horizon = ahead + AFTER
        delay = [landing / 2.0, landing] if landing > 0.0 else []
        pause = [landing + restart / 2.0, ahead] if restart > 0.0 else []
        after = [ahead + AFTER * share for share in _AFTER_EDGES[1:]]
        self._edges = [0.0, *delay, *pause, *after]
        self._kinds = ["delay"] * len(delay) + ["restart"] * len(pause) + ["after"] * len(after)
        middles = [
            (low + high) / 2.0 for low, high in zip(self._edges, self._edges[1:], strict=False)
        ]
        self._middles = middles
        self._arrived = [_arrived(outlook, t, ahead) for t in self._edges]
        self._arrived_middle = [_arrived(outlook, t, ahead) for t in middles]
        self._rate = [_rate(outlook, t, ahead) for t in middles]
        # The level's error is borne until a decision made once the filter knows the level
        # better could land: then a wrong count can be corrected, at an operation's cost.
        error2, known = outlook.level_error**2, ahead + EXCESS
        self._spread = [
            math.sqrt(self._variance * t + error2 * min(t, known) ** 2) + 1e-9 * c for t in middles
        ]
        self._by_landing = _arrived(outlook, landing, ahead)
        self._by_ahead = _arrived(outlook, ahead, ahead)
        self._by_horizon = self._arrived[-1]
        self._final_rate = _rate(outlook, self.horizon, ahead)
        held = outlook.running * c
        self._found = max(outlook.backlog + self._by_landing - held * landing, 0.0)
        self._before = self._late(held, held, 0.0, operation=True, until="delay")
        self.priced: dict[int, Terms] = {}  # the counts priced so far

    def terms(self, operators: int) -> Terms:
        """The expected cost terms of running ``operators`` (an integer >= 0)."""
        if operators not in self.priced:
            self.priced[operators] = self._priced(operators)
        return self.priced[operators]

    def _late(
        self, held: float, capacity: float, late: float, operation: bool, until: str | None = None
    ) -> float:
        """Expected late seconds over the intervals (those of kind ``until`` only, if given;
        an operation's delay intervals are ``_before``), added to ``late``.

        In each interval the mean backlog m(t) and the backlog x(t) over which a record is
        late: holding, or before an operation lands, the running count serves from the backlog
        there is now (x = L n0 c); within the restart nothing is served and the pause left
        delays every record (x = (L - P_left) n c); after it the new count serves from the
        backlog the restart ends with (x = L n c)."""
        latency, variance = self.prices.latency, self._variance
        backlog, found, by_landing, ahead = (
            self.outlook.backlog,
            self._found,
            self._by_landing,
            self._ahead,
        )
        edges, arrived, middles = self._edges, self._arrived, self._middles
        for index, kind in enumerate(self._kinds):
            if (until is not None and kind != until) or (
                operation and until is None and kind == "delay"
            ):
                continue
            low, high, middle = edges[index], edges[index + 1], middles[index]
            if not operation or kind == "delay":
                served, x_low = held, latency * held
                x_high, base, origin = x_low, backlog, 0.0
            elif kind == "restart":
                served, base, origin = 0.0, found - by_landing, 0.0
                x_low = (latency - ahead + low) * capacity
                x_high = (latency - ahead + high) * capacity
            else:
                served, x_low = capacity, latency * capacity
                x_high, base, origin = x_low, found - by_landing, ahead
            m_low = base + arrived[index] - served * (low - origin)
            m_high = base + arrived[index + 1] - served * (high - origin)
            spread = self._spread[index]
            late += (high - low) * _integral((x_low - m_low) / spread, (x_high - m_high) / spread)
            if operation and kind == "restart":
                continue  # nothing is served: no reflection at 0
            exponent = 2.0 * (self._rate[index] - served) * x_low / variance
            if exponent < _NEGLIGIBLE:
                continue
            m_middle = base + self._arrived_middle[index] - served * (middle - origin)
            exponent += _log_ndtr((-x_low - m_middle) / spread)
            late += (high - low) * math.exp(min(exponent, 0.0))
        return late

    def _priced(self, operators: int) -> Terms:
        outlook, prices = self.outlook, self.prices
        c, latency = prices.capacity, prices.latency
        n0, held = outlook.running, outlook.running * prices.capacity
        if operators == n0:  # holding: n0 serves throughout, from the backlog there is now
            late = min(self._late(held, held, 0.0, operation=False), self.horizon)
            left = outlook.backlog + self._by_horizon - held * self.horizon
            operator_seconds, operation, final = n0 * self.horizon, 0.0, held
        else:  # an operation: n0 until it lands, nothing during the restart, the count after
            capacity = operators * c
            late = min(self._late(held, capacity, self._before, operation=True), self.horizon)
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


def _integral(start: float, end: float) -> float:
    """The mean of Φ(-u) over u linear from ``start`` to ``end``: the share of an interval in
    which the backlog is over its threshold by ``-u`` spreads. With G(u) = uΦ(-u) - φ(u),
    d G / du = -Φ(-u), so the mean is (G(end) - G(start)) / (end - start).

    >>> round(_integral(-3.0, 3.0), 6), round(_integral(1.0, 1.0), 4)
    (0.5, 0.1587)
    """
    if abs(end - start) < 1e-9:
        return _ndtr(-start)
    return (_antiderivative(end) - _antiderivative(start)) / (end - start)


def _antiderivative(u: float) -> float:
    """G(u) = uΦ(-u) - φ(u), whose derivative is -Φ(-u)."""
    return u * _ndtr(-u) - math.exp(-0.5 * u * u) / _SQRT_2PI


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
