"""Cycles faster than a level can follow, found in the periodogram of its residuals.

A daily cycle replayed at one recorded sample a second (nyc_taxi: 48 samples a day) moves the
volume faster than any change of level can be declared, so a level reads the cycle's mean and a
count that holds the level runs short through every peak. Under noise several times the cycle's
deviation the cycle is invisible sample by sample but not in the spectrum: its variance sits in
a few frequency bins (a fundamental and its harmonics) where the noise spreads evenly over all
of them. ``ChangePoint`` keeps the periodogram of its residuals from the recent level, averaged
over consecutive windows of ``WINDOW`` samples (O(1) per sample, one FFT per window), and asks
``cycle_variance`` whether a cycle stands out of it.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

WINDOW = 512
"""Samples per periodogram."""
# Largest cycle-test residual, in whole numbers of the step (an int32).
_LARGEST_QUANTUM = 2**31 - 1
QUANTA = 4096.0
"""Whole numbers per noise deviation (at the window's start) in which a window's residuals are
kept: a state then carries the window as 2 KB of int32 (base64), not 511 floats of 18 digits.
``benchmarks.default`` reads the same with it; 1 of the 99 compare runs of the default (a
borderline decision on increasing, SNR 1) changed."""
WINDOWS = 32
"""Periodograms averaged: a running mean until then, an exponential one after."""
# Lowest fundamental, in bins: a cycle counts when its period is at most WINDOW / 8 = 64
# samples. Slower ones are drifts that the level follows, and the leakage of steps crowds there.
_LOWEST = 8
# Harmonics summed with the fundamental (a daily profile is far from a sine), and the share of
# noise-only runs in which some candidate may pass (Bonferroni over all candidates, conservative:
# neighbouring candidates share bins).
_HARMONICS = 4
_FALSE_ALARM = 0.1
_BINS = WINDOW // 2  # bins 0 .. WINDOW/2 - 1; the Nyquist bin is left out
_MEDIAN = (_BINS - _LOWEST) // 2


def _candidates() -> list[np.ndarray]:
    """Per number of harmonics h, the bin below each harmonic of every candidate fundamental.

    Fundamentals run from ``_LOWEST`` bins in quarter-bin steps; a harmonic between two bins
    leaks into both, so each is read as the pair (k, k + 1). Rows are kept while the pair of
    the highest harmonic lies below ``_BINS``; the kept rows are a prefix of the grid.
    """
    fundamentals = np.arange(_LOWEST, _BINS, 0.25)
    return [
        below[below <= _BINS - 2]
        for below in (np.floor(h * fundamentals).astype(int) for h in range(1, _HARMONICS + 1))
    ]


_HARMONIC_BINS = _candidates()
_Z = NormalDist().inv_cdf(1.0 - _FALSE_ALARM / sum(len(bins) for bins in _HARMONIC_BINS))


def periodogram(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """The variance each frequency carries: ``2 |F_k|^2 / W^2`` for ``W = len(values)``.

    ``F`` is the FFT of the values less their mean; white noise of variance ``s^2`` gives
    ``2 s^2 / W`` in every bin, a sine of amplitude ``a`` on a bin gives ``a^2 / 2`` there.

    >>> t = np.arange(512)
    >>> power = periodogram((30.0 * np.cos(2 * np.pi * 16 * t / 512)).tolist())
    >>> round(float(power[16]), 6), round(float(power.sum() - power[16]), 6)
    (450.0, 0.0)
    """
    array = np.asarray(values, dtype=float)
    spectrum = np.fft.rfft(array - array.mean())
    power: np.ndarray = (spectrum.real**2 + spectrum.imag**2) * (2.0 / (len(array) ** 2))
    return power


def cycle_variance(power: np.ndarray, windows: float) -> float:
    """Variance of the strongest cycle that stands out of ``power``, else 0.

    ``power`` is the mean periodogram of ``windows`` consecutive windows (``periodogram``,
    ``WINDOW`` samples each). The noise floor ``f`` is its median bin from ``_LOWEST`` up,
    scaled to a mean (over ``n`` windows a bin of white noise is ``f`` times a
    Gamma(n, 1/n), whose median is about ``(n - 1/3 + 8 / 405n) / n``). For a fundamental
    with ``h`` harmonics, the sum ``S`` of its ``2h`` bins is, under noise alone,
    ``f / n`` times a Gamma(2hn, 1); a candidate counts when ``S n / f`` passes that law's
    quantile at ``1 - _FALSE_ALARM / candidates`` (Wilson-Hilferty). The variance it carries
    is ``S - 2h f``, its power above the noise; the largest of the candidates that count is
    returned.

    >>> rng = np.random.default_rng(0)
    >>> noise = [periodogram(rng.normal(0.0, 100.0, WINDOW).tolist()) for _ in range(4)]
    >>> cycle_variance(np.mean(noise, axis=0), 4.0)
    0.0
    >>> t = np.arange(WINDOW)
    >>> cycle = 60.0 * np.cos(2 * np.pi * t / 48)  # variance 1,800, under noise of 100
    >>> samples = [cycle + rng.normal(0.0, 100.0, WINDOW) for _ in range(4)]
    >>> found = cycle_variance(np.mean([periodogram(s.tolist()) for s in samples], 0), 4.0)
    >>> 1000.0 < found < 2600.0  # 1,800 within its error
    True
    """
    median = float(np.partition(power[_LOWEST:_BINS], _MEDIAN)[_MEDIAN])
    floor = median * windows / (windows - 1.0 / 3.0 + 8.0 / (405.0 * windows))
    if floor <= 0.0:
        return 0.0
    pairs = power[: _BINS - 1] + power[1:_BINS]
    sums = np.zeros(len(_HARMONIC_BINS[0]))
    best = 0.0
    for harmonics, bins in enumerate(_HARMONIC_BINS, 1):
        sums = sums[: len(bins)] + pairs[bins]
        shape = 2.0 * harmonics * windows
        threshold = shape * (1.0 - 1.0 / (9.0 * shape) + _Z / math.sqrt(9.0 * shape)) ** 3
        strongest = float(sums.max())
        if strongest * windows / floor > threshold:
            best = max(best, strongest - 2.0 * harmonics * floor)
    return best


def quantise(residual: float, step: float) -> int:
    """``residual`` in whole numbers of ``step``, within an int32: the noise may grow
    ~175,000-fold within a window, and a step of a subnormal noise is 0.

    >>> quantise(10.0, 0.25), quantise(1e12, 1e-300), quantise(-1e-320, 0.0), quantise(0.0, 0.0)
    (40, 2147483647, -2147483647, 0)
    """
    if residual == 0.0:
        return 0
    scaled = residual / step if step > 0.0 else math.copysign(math.inf, residual)
    if -_LARGEST_QUANTUM <= scaled <= _LARGEST_QUANTUM:
        return round(scaled)
    return _LARGEST_QUANTUM if scaled > 0.0 else -_LARGEST_QUANTUM


def fold(
    mean: np.ndarray, windows: float, residuals: array[int], step: float
) -> tuple[float, float]:
    """Fold a full window of ``residuals`` (whole numbers of ``step``) into the ``mean``
    periodogram of ``windows`` windows, in place, and empty the window; the new number of
    windows (at most ``WINDOWS``: a running mean until then, an exponential one after) and the
    deviation of the cycle the mean shows (0: none).
    """
    power = periodogram(np.asarray(residuals, dtype=float) * step)
    del residuals[:]
    windows = min(windows + 1.0, WINDOWS)
    mean += ((power - mean) / windows).astype(np.float32)
    return windows, math.sqrt(cycle_variance(mean.astype(float), windows))
