"""scaling.late: the late seconds of a count over the horizon's intervals, against the integral
written out plainly (the loop must give the same floats: decisions recorded before it was
written out stay as they were) and against quadrature."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from scaling.late import FAR, NEGLIGIBLE, Span, late_over, log_ndtr


def ndtr(z: float) -> float:
    return 0.5 * math.erfc(-z * math.sqrt(0.5))


def antiderivative(u: float) -> float:
    """G(u) = uΦ(-u) - φ(u), whose derivative is -Φ(-u)."""
    return u * ndtr(-u) - math.exp(-0.5 * u * u) / math.sqrt(2.0 * math.pi)


def integral(start: float, end: float) -> float:
    """The mean of Φ(-u) over u linear from ``start`` to ``end``."""
    if abs(end - start) < 1e-9:
        return ndtr(-start)
    return (antiderivative(end) - antiderivative(start)) / (end - start)


def plain_late(spans: list[Span], scale: float, late: float, variance: float) -> float:
    """``late_over`` one interval and one term at a time, as the model reads."""
    for width, low_at, high_at, low_base, low_since, high_base, high_since, *rest in spans:
        spread, rate, middle_base, middle_since = rest
        x_low, x_high = low_at * scale, high_at * scale
        m_low = low_base - scale * low_since
        m_high = high_base - scale * high_since
        late += width * integral((x_low - m_low) / spread, (x_high - m_high) / spread)
        if rate is None:
            continue
        exponent = 2.0 * (rate - scale) * x_low / variance
        if exponent < NEGLIGIBLE:
            continue
        m_middle = middle_base - scale * middle_since
        exponent += log_ndtr((-x_low - m_middle) / spread)
        late += width * math.exp(min(exponent, 0.0))
    return late


def random_span(rng: random.Random, paused: bool) -> Span:
    width, spread = rng.uniform(0.0, 100.0), rng.choice([1e-7, rng.uniform(0.1, 5e3)])
    low_at = rng.uniform(-60.0, 60.0) if paused else rng.uniform(0.1, 60.0)
    high_at = low_at + width if paused else low_at
    low_base, high_base = rng.uniform(-1e4, 1e5), rng.choice([0.0, rng.uniform(-1e4, 1e5)])
    if paused:
        return (width, low_at, high_at, low_base, 0.0, high_base, 0.0, spread, None, 0.0, 0.0)
    since = rng.uniform(0.0, 400.0)
    return (
        width, low_at, high_at, low_base, since, high_base, since + width, spread,
        rng.uniform(0.0, 2e3), rng.uniform(-1e4, 1e5), since + width / 2.0,
    )  # fmt: skip


def test_the_loop_gives_the_floats_of_the_integral_written_plainly() -> None:
    rng = random.Random(30)
    for _ in range(3000):
        spans = [random_span(rng, paused=rng.random() < 0.3) for _ in range(rng.randint(1, 9))]
        scale = rng.choice([0.0, rng.uniform(0.0, 2e3), rng.uniform(0.0, 1e5)])
        variance, late = rng.choice([1e-9, rng.uniform(1.0, 1e5)]), rng.uniform(0.0, 50.0)
        assert late_over(spans, scale, late, variance) == plain_late(spans, scale, late, variance)


@pytest.mark.parametrize(("start", "end"), [(-3.0, 3.0), (0.5, 2.5), (-1.0, -4.0), (2.0, 2.0)])
def test_an_interval_s_late_share_is_the_mean_chance_of_being_late(
    start: float, end: float
) -> None:
    # The share late of an interval over which the backlog is start..end spreads under the
    # threshold is the mean of Φ(-u) along it (trapezoidal rule on a fine grid).
    span = (1.0, 1.0, 1.0, 0.0, 0.0, start - end, 0.0, 1.0, None, 0.0, 0.0)
    us = np.linspace(start, end, 20001)
    chances = np.array([ndtr(-u) for u in us])
    mean = float(np.mean((chances[1:] + chances[:-1]) / 2.0))
    assert late_over([span], start, 0.0, 1.0) == pytest.approx(mean, rel=1e-8)


def test_an_interval_far_under_the_threshold_adds_exactly_nothing() -> None:
    # G is 0.0 in floats from FAR spreads on, so skipping such an interval changes no bit.
    for u in [FAR, FAR + 1e-9, 41.0, 60.0, 1e3, 1e10, 1e200]:
        assert antiderivative(u) == 0.0 and ndtr(-u) == 0.0
    far = (10.0, 1.0, 1.0, -FAR, 0.0, -50.0, 0.0, 1.0, None, 0.0, 0.0)
    assert late_over([far], 0.0, 3.0, 1.0) == 3.0


def test_the_log_of_the_normal_tail_stays_finite_and_continuous() -> None:
    # The asymptotic series takes over at -20, within 1e-7 of the direct form there.
    assert log_ndtr(-20.0 - 1e-9) == pytest.approx(log_ndtr(-20.0 + 1e-9), rel=1e-6)
    assert log_ndtr(-1e5) == pytest.approx(-0.5e10, rel=1e-6)
    assert log_ndtr(40.0) == 0.0
