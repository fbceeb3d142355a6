"""Statistics of a level and its samples that the ``changepoint`` filter builds on."""

from __future__ import annotations

import math
from statistics import NormalDist

_NORMAL = NormalDist()


def change_start(samples: list[float], level: float, shortest: int) -> list[float]:
    """The samples after the most likely start of a change away from ``level``.

    The statistic left 0 when the change began or earlier (noise may have lifted it first).
    Among the suffixes of ``samples`` at least ``shortest`` long (a change is never declared
    on fewer), the one whose sum of residuals is largest relative to the square root of its
    length (the likelihood ratio of a shifted mean) is the change.
    """
    best, start, total = -1.0, 0, 0.0
    for index in range(len(samples) - 1, -1, -1):
        total += samples[index] - level
        length = len(samples) - index
        score = total * total / length
        if length >= shortest and score > best:
            best, start = score, index
    return samples[start:]


def evident_drift(drift: float, noise: float, looks: float) -> float:
    """The variance of a drift beyond one standard error of its estimate.

    ``drift`` estimates :math:`\\tau^2` as the mean over ``looks`` independent looks of
    :math:`(E - L)^2 - v`, where, without a drift, each :math:`(E - L)^2` is :math:`v`
    (``noise``) times a chi-square of one degree of freedom, variance :math:`2v^2`: the mean
    errs by :math:`v\\sqrt{2/\\text{looks}}`. Unbiased, the estimate is positive in half the runs
    of a level that holds; counted only beyond its error, noise seldom passes for a drift.

    >>> evident_drift(100.0, noise=200.0, looks=8.0)  # 100 - 200 sqrt(2/8): no evidence
    0.0
    >>> evident_drift(300.0, noise=200.0, looks=8.0)
    200.0
    """
    excess = drift - noise * math.sqrt(2.0 / looks)
    return excess if excess > 0.0 else 0.0


def censored_gaussian(observed_mean: float, zero_share: float) -> tuple[float, float]:
    """Mean and deviation of a Gaussian whose samples were clipped at 0.

    Observed: a share ``p`` of zeros and a mean ``m`` of ``max(0, x)``. With
    :math:`a = \\mu/\\sigma = -\\Phi^{-1}(p)`, :math:`m = \\sigma (a\\Phi(a) + \\varphi(a))`.
    """
    if zero_share >= 1.0:
        return 0.0, 0.0
    a = -_NORMAL.inv_cdf(zero_share)
    sigma = observed_mean / (a * _NORMAL.cdf(a) + _NORMAL.pdf(a))
    return max(a * sigma, 0.0), sigma
