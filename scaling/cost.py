"""The expected cost of running n operators over the horizon an operation decided now covers.

A stage of a stream job is a queue: records arrive at a rate :math:`\\lambda(t)` with variance
:math:`\\sigma^2` per second, and :math:`n` operators of capacity :math:`c` serve them. A record
is late when its queueing delay exceeds the latency :math:`L`, i.e. while the backlog is over
:math:`L n c`. An operation decided now lands after the actuation delay :math:`D` (the old count
:math:`n_0` serves meanwhile), then stops processing for the restart :math:`P`, and the new count
serves after it. Holding :math:`n_0` starts nothing, and neither does the count of a decision
that has partly landed (``Outlook.pending``): the rest of it lands after :math:`D` with no
restart or operation price of its own. Each candidate count is priced over the same
horizon, :math:`H = D + P + T`, where :math:`T` is how long the count is expected to stand
(``Outlook.tenure``: the running count's age, from ``AFTER`` up to ``LONGEST_TENURE``). Where
a scale-down's restart :math:`P_-` differs from a scale-up's (a PySpark executor removed
stops nothing; ``scaling.measure``), :math:`P` is the longer and a count below :math:`n_0`
pauses for :math:`P_-`, then serves until :math:`H`:

.. math:: \\text{cost}(n) = p_{\\text{op}} \\int_0^H n(t)\\,dt
          + p_{\\text{late}} \\Big(\\int_0^H \\Pr[\\text{late at } t]\\,dt + S_H\\Big)
          + p_{\\text{operation}} [n \\ne n_0] + C(n)

where :math:`S_H` (the terminal term) is the late seconds the mean backlog left at :math:`H`
still costs while the count drains it at its spare capacity, for up to ``AFTER`` seconds, and
then, for what is left, the seconds it takes at the count's capacity (after a later operation:
a lower bound, so that a count further behind always costs more).
:math:`\\Pr[\\text{late at } t]` is Harrison's law of a reflected Brownian motion with drift
:math:`m = \\lambda - C` started at :math:`q`:

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

The last term, :math:`C(n)`, prices the correction a later decision makes: the level is a
random walk, so a count that serves it now may not serve it later. By the reflection principle,
a level whose variance grows by :math:`w` per second beyond its slope (``wander``, measured),
from the rate :math:`r_H` the slope leads to, known to its standard error :math:`s_\\mu`,
crosses the count's capacity within the :math:`T` seconds after the operation with chance

.. math:: \\pi(n) = 2\\bar\\Phi\\Big(\\frac{n c - r_H}{\\sqrt{s_\\mu^2 + w T}}\\Big)
          \\quad (1 \\text{ when } n c \\le r_H)

and that operation then costs :math:`C(n) = \\pi(n)\\,(p_{\\text{operation}}
+ p_{\\text{late}}\\,\\ell)`, with :math:`\\ell` the late seconds an operation brings
(``Outlook.operation_late``: measured from the job's own operations, or :math:`\\max(P - L, 0)`).
Without it the model saw every count as final: it chose counts that a later operation had to
correct, and took a scale-down for the operator-seconds it saves, blind to the scale-up it
brings back (docs/baselines.md, "does the model know how late it will be?").

The integrals run over nine intervals (``Pricer``), exactly for the first term and at each
interval's middle for the reflection's, in plain floats (``scaling.late``): ``scaling.choice``
prices a handful of counts per decision, so what the intervals share across counts is worked
out once per outlook (benchmarks/decision.py measures the cost). Pure: time enters only as the
durations passed in.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

from scaling.late import Span, late_over
from scaling.outlook import Outlook
from scaling.rounding import rounded

# Seconds after an operation lands over which the counts are compared: how long a decision is
# expected to stand, at least, and the time a backlog left is to be drained in. Flink's
# autoscaler drains a backlog within job.autoscaler.catch-up.duration, 5 minutes by default.
AFTER = 300.0
# Seconds a count is expected to stand at most (the horizon's T, ``Outlook.tenure``): a count
# that has stood for τ seconds is expected to stand about τ more (Gott's Copernican argument:
# with nothing else known, the median of what remains of a life is its age), from AFTER up to
# this. With T fixed at AFTER a scale-down had to pay for its restart within 5 minutes, so a
# count raised for a surge was held for good (docs/baselines.md, session 24). Tuned: 900,
# 1,800 and 3,600 tried on the quick grid (seeds 1-3; 1,800 and 3,600 tie, its runs last
# 1,500 s) and on the traces at (20, 30) and (30, 60), seeds 1-6, where 1,800 kept the HPA's
# SLA in 2 cells more than 3,600.
LONGEST_TENURE = 1800.0

# Seconds over which the samples' recent excess over the filtered level is averaged, and over
# which it is expected to fade: the default filter follows a step within 13 s (median) to 16 s
# (95th percentile) on benchmarks.default, so a deviation it has not followed yet lasts
# about that long, whether it turns out to be a change (the level then takes it over) or a
# spike (it ends).
EXCESS = 15.0
# The intervals after an operation lands, as shares of AFTER: finer first, where the restart's
# backlog drains.
_AFTER_EDGES = (0.0, 0.05, 0.15, 0.35, 0.65, 1.0)
_AFTER_SECONDS = tuple(AFTER * share for share in _AFTER_EDGES[1:])


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


class Terms(NamedTuple):
    """The expected cost terms of one count, in the prices' unit; ``late_seconds`` includes the
    terminal term's seconds; ``correction`` is the chance that a later operation corrects the
    count within the tenure T, ``correction_cost`` that operation's expected cost (its price and
    late seconds); ``total`` sums the priced terms. (A named tuple: a search builds one per
    count it prices, several times faster than a dataclass.)"""

    operators: int
    operator_cost: float
    late_seconds: float
    late_cost: float
    operation_cost: float
    correction: float
    correction_cost: float
    total: float

    def to_dict(self) -> dict[str, float | int]:
        """JSON-ready, rounded to a thousandth."""
        return {
            "operators": self.operators,
            "operator_cost": rounded(self.operator_cost, 3),
            "late_seconds": rounded(self.late_seconds, 3),
            "late_cost": rounded(self.late_cost, 3),
            "operation_cost": rounded(self.operation_cost, 3),
            "correction": rounded(self.correction, 4),
            "correction_cost": rounded(self.correction_cost, 3),
            "total": rounded(self.total, 3),
        }


class Pricer:
    """Prices counts for one outlook: what every count shares (the intervals, the arrivals, the
    delay before an operation lands) is worked out once, and each count's terms once (``terms``).

    The horizon is cut into intervals: two in the actuation delay, two in the restart, five
    after it (``_AFTER_EDGES``). Within one, the mean backlog and the backlog at which a record
    is late are linear in time and the spread is taken at its middle, so the chance of being
    late integrates exactly (``scaling.late``): smooth in the count, with no steps for a search
    to stall on. The reflection's term is taken at the middle. Each interval is kept as what of
    it no count changes (``scaling.late.Span``): once for holding the running count, once for
    an operation; the delay before an operation lands is priced once for all of them.

    >>> prices = Prices(capacity=50.0, latency=10.0, operator=1.0, late=50.0, operation=30.0)
    >>> calm = Outlook(level=380.0, level_error=5.0, excess=0.0, slope=0.0, variance=60.0**2,
    ...                backlog=0.0, running=8, landing=0.0, restart=8.0)
    >>> pricer = Pricer(calm, prices)
    >>> [round(pricer.terms(n).total) for n in (7, 8, 9)]  # 7 falls behind; 9 costs an operator
    [33838, 2464, 2802]
    >>> wandering = Pricer(dataclasses.replace(calm, wander=20.0), prices)  # ±77/s within AFTER
    >>> [round(wandering.terms(n).correction, 2) for n in (7, 8, 9)]  # a later operation's odds
    [1.0, 0.8, 0.37]
    """

    def __init__(self, outlook: Outlook, prices: Prices) -> None:
        self.outlook, self.prices = outlook, prices
        c, latency = prices.capacity, prices.latency
        self._variance = variance = max(outlook.variance, 1e-12 * c * c)
        landing, restart = outlook.landing, outlook.restart
        down = restart if outlook.restart_down is None else outlook.restart_down
        ahead = landing + restart  # the level's slope is followed until a scale-up could land
        longest = max(restart, down)
        after = AFTER if outlook.tenure is None else outlook.tenure  # T: the count's tenure
        self.horizon = landing + longest + after
        # The arrival rate r(t) = level + g min(t, ahead) + excess e^(-t/E) and the records
        # arrived by t, its integral A(t), at the edges; at each interval's middle, with the
        # spread, in the one pass that builds the intervals (fewer lists: a decision builds a
        # Pricer or two).
        level, slope, excess = outlook.level, max(outlook.slope, 0.0), outlook.excess
        bend, faded = ahead * ahead / 2.0, excess * EXCESS
        expm1, exp, sqrt = math.expm1, math.exp, math.sqrt
        # The level's error is borne until a decision made once the filter knows the level
        # better could land: then a wrong count can be corrected, at an operation's cost.
        error2, known = outlook.level_error**2, ahead + EXCESS
        backlog = outlook.backlog

        def intervals(pause: float) -> tuple[list[Span], list[Span], list[Span], list[float]]:
            """The spans before an operation lands, holding's after, and an operation's whose
            restart lasts ``pause`` s (then its count serves until the horizon); the records
            arrived by each edge."""
            edges = [0.0, landing / 2.0, landing] if landing > 0.0 else [0.0]
            lands = len(edges) - 1  # intervals before an operation lands
            restarted = landing + pause
            if pause > 0.0:
                edges += (landing + pause / 2.0, restarted)
            pauses = len(edges) - 1  # ... and before its restart ends
            serves = after + (longest - pause)
            afters = _AFTER_SECONDS if serves == AFTER else [serves * e for e in _AFTER_EDGES[1:]]
            edges += [restarted + seconds for seconds in afters]
            by_edge = [
                level * t
                + slope * (t * t / 2.0 if t <= ahead else bend + ahead * (t - ahead))
                + faded * -expm1(-t / EXCESS)
                for t in edges
            ]
            base = max(backlog + by_edge[lands] - held * landing, 0.0) - by_edge[lands]
            # Holding, or before an operation lands, the running count serves from the backlog
            # there is now (x = L n0 c); within the restart nothing is served and the pause
            # left delays every record (x = (L - P_left) n c); after it the new count serves
            # from the backlog the restart ends with (x = L n c).
            before: list[Span] = []
            holding_spans: list[Span] = []
            change_spans: list[Span] = []
            low, start = 0.0, by_edge[0]
            for index, high in enumerate(edges[1:]):
                end = by_edge[index + 1]
                middle = (low + high) / 2.0
                fade = -middle / EXCESS
                centre = (
                    level * middle
                    + slope
                    * (
                        middle * middle / 2.0
                        if middle <= ahead
                        else bend + ahead * (middle - ahead)
                    )
                    + faded * -expm1(fade)
                )
                # min(middle, ahead) and min(middle, known), without the calls
                followed = ahead if ahead < middle else middle
                rate = level + slope * followed + excess * exp(fade)
                borne = known if known < middle else middle
                spread = sqrt(variance * middle + error2 * borne**2) + 1e-9 * c
                width = high - low
                holding = (
                    width, latency, latency, backlog + start, low, backlog + end, high, spread,
                    rate, backlog + centre, middle,
                )  # fmt: skip
                if index < lands:
                    before.append(holding)
                else:
                    holding_spans.append(holding)
                    if index < pauses:
                        change_spans.append(
                            (width, latency - restarted + low, latency - restarted + high,
                             base + start, 0.0, base + end, 0.0, spread, None, 0.0, 0.0)
                        )  # fmt: skip
                    else:
                        change_spans.append(
                            (width, latency, latency, base + start, low - restarted,
                             base + end, high - restarted, spread, rate, base + centre,
                             middle - restarted)
                        )  # fmt: skip
                low, start = high, end
            return before, holding_spans, change_spans, by_edge

        held = outlook.running * c
        before, self._holding, self._change, by_edge = intervals(restart)
        # A scale-down's restart, where it differs (``Outlook.restart_down``): its own spans;
        # its count serves longer after it, to the same horizon.
        self._down_change, self._down_serves = self._change, after + (longest - restart)
        if down != restart:
            self._down_change = intervals(down)[2]
            self._down_serves = after + (longest - down)
        self._up_serves = after + (longest - restart)
        # The rest of an operation that has partly landed (``Outlook.pending``): no restart
        # of its own, so its count serves from the landing to the horizon.
        pending = outlook.pending
        self._pending = None if pending == outlook.running else pending
        self._joined = intervals(0.0)[2] if self._pending is not None else self._change
        lands = 2 if landing > 0.0 else 0
        self._by_landing, self._by_horizon = by_edge[lands], by_edge[-1]
        self._final_rate = level + slope * ahead + excess * exp(-self.horizon / EXCESS)
        self._found = max(backlog + self._by_landing - held * landing, 0.0)
        # An operation's delay is the running count's, whichever count it then starts.
        self._before = late_over(before, held, 0.0, variance) if before else 0.0
        # The backlog left at the horizon (an operation's less its count's AFTER s of work),
        # and the operator-seconds.
        self._held, self._held_seconds = held, outlook.running * self.horizon
        self._held_left = backlog + self._by_horizon - held * self.horizon
        self._changed_left = self._found + self._by_horizon - self._by_landing
        self._landing_seconds = outlook.running * landing
        self._operating = longest + after  # seconds a count runs from the landing on
        # A later operation's correction (C(n)): the spread the level may wander by within
        # T, times sqrt(2) for erfc (2 Phi-bar(x / s) = erfc(x / (s sqrt 2))), and its price.
        self._wander = sqrt(2.0 * (error2 + max(outlook.wander, 0.0) * after)) + 1e-9 * c
        late_after = outlook.operation_late
        if late_after is None:
            late_after = max(restart - latency, 0.0)
        self._correction = prices.operation + prices.late * late_after
        self.priced: dict[int, Terms] = {}  # the counts priced so far

    def terms(self, operators: int) -> Terms:
        """The expected cost terms of running ``operators`` (an integer >= 0)."""
        terms = self.priced.get(operators)
        if terms is None:
            terms = self.priced[operators] = self._priced(operators)
        return terms

    def least(self, operators: int) -> float:
        """The least an operation to ``operators`` can cost: its operator-seconds and the
        operation, the ``total`` of its terms without the late seconds (never negative), by
        the same floating-point operations: no more than ``terms(operators).total``, whose late
        seconds and correction are never negative."""
        prices = self.prices
        operator_seconds = self._landing_seconds + operators * self._operating
        operation = 0.0 if operators == self._pending else prices.operation
        return prices.operator * operator_seconds + operation

    def _priced(self, operators: int) -> Terms:
        outlook, prices = self.outlook, self.prices
        if operators == outlook.running:  # holding: n0 serves throughout, from the backlog now
            final = self._held
            late = late_over(self._holding, final, self._before, self._variance)
            left, operator_seconds, operation = self._held_left, self._held_seconds, 0.0
        elif operators == self._pending:  # the rest of an operation under way: n0, then it
            final = operators * prices.capacity
            late = late_over(self._joined, final, self._before, self._variance)
            left = self._changed_left - final * self._operating
            operator_seconds = self._landing_seconds + operators * self._operating
            operation = 0.0
        else:  # an operation: n0 until it lands, nothing during the restart, the count after
            final = operators * prices.capacity
            up = operators > outlook.running
            spans = self._change if up else self._down_change
            late = late_over(spans, final, self._before, self._variance)
            left = self._changed_left - final * (self._up_serves if up else self._down_serves)
            operator_seconds = self._landing_seconds + operators * self._operating
            operation = prices.operation
        if late > self.horizon:  # min(late, horizon)
            late = self.horizon
        # The backlog left at the horizon: drained at the spare capacity after it, late
        # meanwhile, for up to AFTER s; what is left then waits for a later operation, and is
        # served no faster than at this count's capacity (one operator's for none). A lower
        # bound, never a cap: of two counts that cannot keep up, the one further behind costs
        # more (capped, every count under the bounds cost the same, and the fewest won).
        over = left - prices.latency * final
        if over > 0.0:
            spare = final - self._final_rate
            if spare > 0.0 and over <= spare * AFTER:
                late += over / spare
            else:
                late += AFTER + (over - spare * AFTER) / max(final, prices.capacity)
        operator_cost = prices.operator * operator_seconds
        late_cost = prices.late * late
        gap = final - self._final_rate
        correction = math.erfc(gap / self._wander) if gap > 0.0 else 1.0
        correction_cost = correction * self._correction
        return Terms(
            operators,
            operator_cost,
            late,
            late_cost,
            operation,
            correction,
            correction_cost,
            operator_cost + late_cost + operation + correction_cost,
        )
