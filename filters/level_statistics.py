"""Statistics of a level and its samples that the ``changepoint`` filter builds on."""

from __future__ import annotations

import math
from statistics import NormalDist

_NORMAL = NormalDist()
# Standard errors by which the lag-1 covariance of the residuals must exceed 0 before it
# counts as variation of the level (under pure noise it is 0, with error sigma^2 / sqrt(n)).
SIGNIFICANT = 2.0


def change_since(
    samples: list[float], weights: list[float], level: float, shortest: float
) -> tuple[float, float, float]:
    """The samples after the most likely start of a change away from ``level``, summed: their
    weighted sum, their weight and the weight of those that are 0.

    The statistic left 0 when the change began or earlier (noise may have lifted it first).
    Among the suffixes of ``samples`` whose ``weights`` (each a sample's: the typical sampling
    intervals it covers) sum to at least ``shortest`` (a change is never declared on less), the
    one whose weighted sum of residuals is largest relative to the square root of its weight
    (the likelihood ratio of a shifted mean) is the change.

    >>> change_since([100.0, 101.0, 180.0, 179.0], [1.0, 1.0, 1.0, 1.0], 100.0, 2)
    (359.0, 2.0, 0.0)
    >>> change_since([100.0, 101.0, 180.0, 179.0], [1.0, 1.0, 1.0, 2.0], 100.0, 3)  # 3 at least
    (538.0, 3.0, 0.0)
    """
    best, start, total, length = -1.0, 0, 0.0, 0.0
    for index in range(len(samples) - 1, -1, -1):
        weight = weights[index]
        total += (samples[index] - level) * weight
        length += weight
        score = total * total / length
        if length >= shortest and score > best:
            best, start = score, index
    since = list(zip(samples[start:], weights[start:], strict=True))
    return (
        sum(value * weight for value, weight in since),
        sum(weight for _, weight in since),
        sum((weight for value, weight in since if value == 0.0), 0.0),
    )


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


def drift_share(
    count: float, weight: float, weight2: float, drift: float, looks: float, sigma: float
) -> tuple[float, float]:
    """The share ``b`` of the recent level in the level, and the level's variance in sigma^2.

    The mean since the change :math:`L` (``count`` samples) and the recent level :math:`E`
    (weights summing to ``weight``, their squares to ``weight2``) carry the same noise, so under
    a constant level :math:`\\operatorname{Var}(E - L) = v\\sigma^2` with
    :math:`v = w_2/w^2 - 1/n`. A drift adds :math:`\\tau^2` to :math:`(E - L)^2`; with
    :math:`\\tau^2` estimated by ``drift`` over ``looks`` independent looks (counted beyond its
    error, ``evident_drift``), the posterior mean of the level is :math:`L + b (E - L)` with
    :math:`b = \\tau^2 / (\\tau^2 + v \\sigma^2)`, of variance :math:`1/n + b^2 v` (``E - L`` is
    uncorrelated with ``L``: both hold the same samples and the weights of ``E`` sum to 1).

    >>> drift_share(100.0, 20.0, 10.0, drift=0.0, looks=10.0, sigma=1.0)  # no drift: L, 1/n
    (0.0, 0.01)
    """
    exact = 1.0 / count
    recent_variance = weight2 / (weight * weight)
    noise = max(recent_variance - exact, 0.0) * sigma * sigma
    evident = evident_drift(drift, noise, looks)
    if evident <= 0.0:
        return 0.0, exact
    share = evident / (evident + noise)
    return share, exact + share * share * (recent_variance - exact)


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


def level_spread(
    sigma: float, mean: float, zeros: float, variance: float, covariance: float, horizon: float
) -> float:
    """The uncertainty of the volume a level stands for: the level's standard error
    (``variance`` in units of the noise's ``sigma``², which a share of ``zeros`` in the level
    says is at least that of the Gaussian clipped at 0 to ``mean``) and, in quadrature, the
    lag-1 ``covariance`` of the residuals over ``horizon`` samples beyond ``SIGNIFICANT``
    standard errors: the variation the level does not follow (pure noise leaves it at 0).

    >>> level_spread(10.0, 300.0, 0.0, 0.01, covariance=0.0, horizon=100.0)  # 10 / sqrt(100)
    1.0
    """
    if zeros > 0.0:
        sigma = max(sigma, censored_gaussian(mean, zeros)[1])
    variation = covariance - SIGNIFICANT * sigma * sigma / math.sqrt(horizon)
    return math.sqrt(sigma * sigma * variance + max(variation, 0.0))
