"""Expected late seconds over the intervals of a horizon, for one count: the loop a decision
spends most of its time in (``scaling.cost`` sets the intervals up, benchmarks/decision.py
measures it).

Within an interval of ``width`` seconds the mean backlog m(t) and the backlog x(t) over which
a record is late are linear in time and the spread s is taken at its middle, so
u(t) = (x(t) - m(t)) / s is linear from ``start`` to ``end`` and the share of the interval in
which a record is late, the mean of Φ(-u), integrates exactly:

.. math:: \\frac{G(\\text{end}) - G(\\text{start})}{\\text{end} - \\text{start}},
          \\qquad G(u) = u\\,\\Phi(-u) - \\varphi(u),\\quad G'(u) = -\\Phi(-u)

(Φ(-start) when the two are within 1e-9). While the count serves, the reflection's term of
Harrison's law, :math:`e^{2 (\\lambda - C) x / \\sigma^2} \\Phi((-x - m) / s)`, is added at
the middle; it is left out where its exponent is below ``NEGLIGIBLE``.

An interval is a ``Span``, what of it the count does not change, worked out once per outlook:
``(width, low_at, high_at, low_base, low_since, high_base, high_since, spread, rate,
middle_base, middle_since)``. At a count serving ``scale`` records/s, x = ``at * scale`` and
m = ``base - scale * since`` at the interval's start (``low_``), end (``high_``) and middle
(``middle_``); ``rate`` is the arrival rate at the middle, ``None`` in a restart (nothing is
served: m does not fall, ``since`` is 0, and there is no reflection at 0).

An interval whose u is at least ``FAR`` at both ends adds nothing: G is 0.0 there in floats
(Φ(-40) and φ(40) underflow), and the loop skips its two ``erfc`` and two ``exp``.

A restart's minute in which the mean backlog sits at the count's threshold (100 records at
100 records/s and a latency of 1 s; spread 10 records), then one in which it rises from 2
spreads under it to 2 over: late half of each.

>>> at = (60.0, 1.0, 1.0, 100.0, 0.0, 100.0, 0.0, 10.0, None, 0.0, 0.0)
>>> rising = (60.0, 1.0, 1.0, 80.0, 0.0, 120.0, 0.0, 10.0, None, 0.0, 0.0)
>>> late_over([at], 100.0, 0.0, 1.0), round(late_over([at, rising], 100.0, 0.0, 1.0), 9)
(30.0, 60.0)
"""

from __future__ import annotations

import math

# ln of a probability too small to move a cost (4e-18): the reflection's term is left out.
NEGLIGIBLE = -40.0
# Spreads beyond which G(u) = uΦ(-u) - φ(u) is 0.0 in floats: erfc(40 / √2) and exp(-800)
# underflow (tests/scaling/test_late.py checks it).
FAR = 40.0
_SQRT_HALF = math.sqrt(0.5)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)

Span = tuple[float, float, float, float, float, float, float, float, float | None, float, float]


def late_over(spans: list[Span], scale: float, late: float, variance: float) -> float:
    """Expected late seconds over ``spans`` at a count serving ``scale`` records/s, added to
    ``late`` (seconds; ``variance`` the arrivals', records²/s)."""
    erfc, exp = math.erfc, math.exp
    for (
        width, low_at, high_at, low_base, low_since, high_base, high_since,
        spread, rate, middle_base, middle_since,
    ) in spans:  # fmt: skip
        x = low_at * scale
        start = (x - (low_base - scale * low_since)) / spread
        end = (high_at * scale - (high_base - scale * high_since)) / spread
        if start < FAR or end < FAR:
            change = end - start
            if -1e-9 < change < 1e-9:
                late += width * (0.5 * erfc(start * _SQRT_HALF))
            else:
                late += width * (
                    (
                        end * (0.5 * erfc(end * _SQRT_HALF))
                        - exp(-0.5 * end * end) / _SQRT_2PI
                        - (
                            start * (0.5 * erfc(start * _SQRT_HALF))
                            - exp(-0.5 * start * start) / _SQRT_2PI
                        )
                    )
                    / change
                )
        if rate is None:
            continue
        exponent = 2.0 * (rate - scale) * x / variance
        if exponent < NEGLIGIBLE:
            continue
        exponent += log_ndtr((-x - (middle_base - scale * middle_since)) / spread)
        late += width * exp(0.0 if exponent > 0.0 else exponent)
    return late


def log_ndtr(z: float) -> float:
    """ln Φ(z), finite far into the lower tail (its asymptotic series beyond z = -20).

    >>> round(log_ndtr(0.0), 6), round(log_ndtr(-30.0), 2)
    (-0.693147, -454.32)
    """
    if z > -20.0:
        value = 0.5 * math.erfc(-z * _SQRT_HALF)
        return math.log(value) if value > 0.0 else -math.inf
    return -0.5 * z * z - math.log(-z) - _LOG_SQRT_2PI + math.log1p(-1.0 / (z * z))
