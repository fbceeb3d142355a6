"""The level since the last change: a self-tuning, spike-robust level estimate."""

from __future__ import annotations

import math
from array import array
from collections import deque
from typing import Any

import numpy as np

from filters.base import Denoiser, check_number
from filters.changepoint_constants import (
    _CYCLE_SHARE,
    _DRIFT_LOOKS,
    _LEAST_ALLOWANCE,
    _NOISE_MEMORY,
    _RECENT,
    _TO_SIGMA,
    _WARM_UP,
    _WINSOR_DIFFERENCE,
)
from filters.changepoint_state import loadable, packed_cycle
from filters.level_statistics import (
    censored_gaussian,
    change_since,
    drift_share,
    evident_drift,
    level_spread,
)
from filters.seasonality import QUANTA, WINDOW, fold, quantise


class ChangePoint(Denoiser):
    """The mean of the samples since the last detected change of level, outliers left out.

    A moving average must choose one window: long enough to average the noise away, short
    enough to follow a change. The best window depends on the noise, which a user does not know,
    and on how long the level has been stable, which changes all the time. This filter lets the
    data choose: it averages everything since the last change it detected, so its window grows
    while the level holds and restarts when the level moves.

    Per sample :math:`x_t`, with :math:`\\mu` the current level and :math:`\\hat\\sigma` the
    noise deviation:

    1. **Noise.** :math:`\\hat\\sigma` is the mean of the winsorised absolute first differences,
       :math:`\\min(|x_t - x_{t-1}|, 3\\sqrt2\\hat\\sigma)`, over about the last 120 samples
       (a running mean while fewer have arrived, an exponential one after), scaled to a
       Gaussian deviation. Differencing removes the level and the winsorising removes the jumps
       and spikes, so neither inflates it; O(1) per sample.
    2. **Change.** Two one-sided CUSUM statistics on the residuals from the recent level
       :math:`E` (step 4), :math:`z = \\operatorname{clip}((x_t - E)/\\hat\\sigma, -c, c)`, with
       ``c`` = ``outlier``:

       .. math:: S^+ = \\max(0, S^+ + z - k), \\qquad S^- = \\max(0, S^- - z - k)

       A change is declared when either exceeds ``threshold``. The allowance :math:`k` is half
       the smallest change that matters, :math:`k = \\text{resolution} / (2\\hat\\sigma)`
       (0.5 with ``resolution=None``; from ``_LEAST_ALLOWANCE`` to ``c / 2``): at high noise
       small but relevant changes still add up, at low noise irrelevant ones do not. Every
       residual is clipped at ``c``, so a change is declared after at least
       ``threshold / (c - k)`` samples: a burst shorter than that never moves the level.
    3. **Level.** After a change, the level restarts from the samples after the most likely
       start of the change: among the last samples since the statistic that fired left 0 (at
       most 64), the suffix of at least ``threshold / outlier`` samples whose residuals from the
       old level have the largest likelihood ratio of a shifted mean (the statistic may have
       left 0 early, lifted by noise before the change). Otherwise a sample within
       ``outlier`` deviations of the recent level joins the level; one further away does not
       (it only counts as evidence of a change). Noise clipped at 0 has no low outliers, so
       there a high sample is judged against the deviation before clipping (step 5).
    4. **Drift.** A level may also move by less than the CUSUM declares. Two means of the same
       samples are kept: :math:`L`, of all :math:`n` since the change, and :math:`E`, which
       forgets with weight :math:`(1 - 1/\\text{memory})` per sample. With no drift their
       difference is noise of variance :math:`v = \\hat\\sigma^2 (\\sum w^2/(\\sum w)^2 - 1/n)`
       (``w``: the weights of :math:`E`); a drift adds :math:`\\tau^2`, estimated as the mean
       of :math:`(E - L)^2 - v` over about ``10 * memory`` samples and counted only beyond one
       standard error, :math:`v\\sqrt{2\\,\\text{memory}/\\text{samples}}`. The level is the
       posterior mean under that prior, :math:`\\mu = L + b (E - L)` with
       :math:`b = \\tau^2 / (\\tau^2 + v)`: the mean of every sample while the data show no
       drift, so a level that holds is known ever better (a fixed window wanders, and crosses
       the threshold of an operator it sits near), and the recent mean once they do.
    5. **Clipping at 0.** Volumes cannot be negative, so heavy noise is clipped at 0 and the
       mean of the samples reads above the level. With :math:`p` the share of zeros in the
       level and :math:`m` its mean, the output is the mean :math:`a\\sigma` of the Gaussian
       that, clipped at 0, gives both: :math:`a = -\\Phi^{-1}(p)`,
       :math:`\\sigma = m / (a\\Phi(a) + \\varphi(a))` (the level itself when no sample is 0).
    6. **Cycles.** A cycle with a period of at most 64 samples moves faster than a change can
       be declared. The residuals from the recent level (clipped as in step 2) go through a
       periodogram every 512 samples, averaged over up to 32 (``filters.seasonality``); once a
       fundamental and its harmonics stand out of the noise floor, the output is the level plus
       half the cycle's deviation :math:`d`, so that a count holds through most of the cycle.

    A sample ``weighed`` w (it covers w of the stream's typical sampling intervals, as a slow
    micro-batch does; at most ``threshold / outlier``, so that none declares a change alone)
    counts w times in :math:`L`, :math:`E` (which forgets per interval), the CUSUMs and the
    drift; a difference is scaled to that of two samples of weight 1 (``scaling.cadence``).

    The output is :math:`\\mu` (plus :math:`d / 2` while a cycle stands out). ``spread`` is
    the uncertainty of the volume the level stands for (``level_statistics.level_spread``): its
    standard error :math:`\\hat\\sigma \\sqrt{1/n + b^2 v / \\hat\\sigma^2}` and the variation
    the level does not follow, the lag-1 covariance of the residuals over about
    ``10 * memory`` samples. A decision uses ``spread`` as its dead band; it is ``None`` until
    the noise estimate rests on 8 differences (warm-up).

    The filter is scale-free: ``filter(a * y) == a * filter(y)`` for ``a > 0`` when
    ``resolution`` is scaled by ``a`` too (and shift-free while no sample is 0). Exactly
    constant input passes through unchanged, and a change on noise-free input is followed after
    ``threshold / (c - k)`` samples.

    Parameters
    ----------
    resolution
        The smallest change of level that matters, in volume units (a number > 0), e.g. one
        operator's capacity; ``None``: one noise deviation. The Scaler's default sets it to the
        policy's capacity.
    threshold
        CUSUM alarm threshold, in noise deviations (a number > 0). Larger: fewer false changes,
        later true ones.
    outlier
        Residuals are clipped, and samples left out of the level, beyond this many noise
        deviations (a number > 0).
    memory
        Time constant, in samples, of the recent mean that a drifting level follows and of the
        evidence of drift (a number >= 1).

    >>> import numpy as np
    >>> from filters import make_filter
    >>> rng = np.random.default_rng(0)
    >>> f = make_filter("changepoint", resolution=50.0)
    >>> level = f.filter(300.0 + rng.normal(0.0, 20.0, 200))
    >>> round(float(level[-1]), 1), round(f.spread, 2)  # 300, with a standard error of 1.4
    (300.5, 1.35)
    >>> f.update(900.0) == f.update(0.0) == float(level[-1])  # a spike, a dropout: no change
    True
    >>> f.filter(500.0 + rng.normal(0.0, 20.0, 15)).round().tolist()  # a sustained change does
    [301.0, 301.0, 301.0, 301.0, 301.0, 301.0, 301.0, 301.0, 301.0, 301.0, 301.0, 301.0, 301.0,
     301.0, 500.0]
    """

    name = "changepoint"
    reports_spread = True

    def __init__(
        self,
        resolution: float | None = None,
        threshold: float = 25.0,
        outlier: float = 3.0,
        memory: float = 80.0,
    ) -> None:
        check_number(self.name, "resolution", resolution, minimum=0, exclusive_minimum=True,
                     nullable=True)  # fmt: skip
        check_number(self.name, "threshold", threshold, minimum=0, exclusive_minimum=True)
        check_number(self.name, "outlier", outlier, minimum=0, exclusive_minimum=True)
        check_number(self.name, "memory", memory, minimum=1)
        self.resolution = resolution
        self.threshold = threshold
        self.outlier = outlier
        self.memory = memory
        self.reset()

    def reset(self) -> None:
        self._previous: float | None = None
        self._differences = 0
        self._noise = 0.0  # mean winsorised |first difference|
        self._sigma = 0.0  # the noise deviation it gives
        self._level = 0.0  # mean of the samples in the level, as observed
        self._zeros = 0.0  # share of them that are exactly 0
        self._weight = 0.0  # their weight: their number, where each weighs 1
        # The same samples, older ones forgotten: the recent level, which follows a drift.
        self._recent_level = 0.0
        self._recent_zeros = 0.0
        self._recent_weight = 0.0  # sum of the sample weights
        self._recent_weight2 = 0.0  # of their squares over the weights, for the effective count
        self._drift = 0.0  # mean excess of (recent level - level)^2 over its noise variance
        self._residual = 0.0  # the last accepted sample's residual from the recent level
        self._covariance = 0.0  # mean product of consecutive residuals
        # The CUSUM statistics, and the samples since each left 0.
        self._rise = self._rise_count = 0.0
        self._fall = self._fall_count = 0.0
        self._recent: deque[float] = deque(maxlen=_RECENT)
        self._recent_weights: deque[float] = deque(maxlen=_RECENT)  # the samples' weights
        # Residuals of the periodogram window being filled, the mean periodogram, the number
        # of windows in it, and the deviation of the cycle it shows (0: none).
        self._cycle_residuals = array("i")
        self._cycle_step = 0.0  # tuples/s per whole number of the window being filled
        self._cycle_power = np.zeros(WINDOW // 2 + 1, dtype=np.float32)
        self._cycle_windows = 0.0
        self._cycle = 0.0

    @property
    def noise(self) -> float:
        """The noise deviation estimate (0 before two samples, and on constant input)."""
        return self._sigma

    @property
    def spread(self) -> float | None:
        """Uncertainty of the volume the level stands for (its standard error and the variation
        it does not follow), volume units; ``None`` during warm-up.

        Warm-up lasts until the noise estimate rests on ``_WARM_UP`` (8) differences: before
        that, an estimate from one or two differences may be far too small, and a decision
        taken on it would follow the first samples.
        """
        if self._differences < _WARM_UP:
            return None
        mean, zeros, variance = self._blend()
        horizon = min(self._differences, _DRIFT_LOOKS * self.memory)
        return level_spread(self._sigma, mean, zeros, variance, self._covariance, horizon)

    def _weighed(self, x: float, weight: float) -> float:
        most = self.threshold / self.outlier  # no one sample declares a change alone
        return self._update(x, weight if weight < most else most)

    def _update(self, x: float, weight: float = 1.0) -> float:
        previous, weights = self._previous, self._recent_weights
        pair = weights[-1] if weights else 1.0  # the previous sample's weight
        self._previous = x
        self._recent.append(x)
        weights.append(weight)
        zero = 1.0 if x == 0.0 else 0.0
        if previous is None:
            self._restart(x * weight, weight, zero * weight)
            return x
        # Noise: the winsorised mean absolute first difference, as a Gaussian deviation; the
        # difference of two samples of other weights scaled to that of two of weight 1.
        self._differences = differences = self._differences + 1
        difference = x - previous if x > previous else previous - x
        if weight != 1.0 or pair != 1.0:
            difference *= math.sqrt(2.0 / (1.0 / weight + 1.0 / pair))
        if differences > _WARM_UP and difference > _WINSOR_DIFFERENCE * self._sigma:
            difference = _WINSOR_DIFFERENCE * self._sigma
        self._noise += (difference - self._noise) / (
            differences if differences < _NOISE_MEMORY else _NOISE_MEMORY
        )
        self._sigma = sigma = self._noise * _TO_SIGMA
        if sigma == 0.0:
            # Noise-free so far: any difference from the level is a change.
            if x != self._level:
                self._restart(x * weight, weight, zero * weight)
            return self._output()
        clip = self.outlier
        resolution = self.resolution
        allowance = 0.5 if resolution is None else resolution / (2.0 * sigma)
        if allowance < _LEAST_ALLOWANCE:
            allowance = _LEAST_ALLOWANCE
        if allowance > clip / 2.0:
            allowance = clip / 2.0
        # The CUSUMs test the recent level: a change is a departure from where the level is now.
        recent_level = self._recent_level
        z = (x - recent_level) / sigma
        z = clip if z > clip else -clip if z < -clip else z
        residuals = self._cycle_residuals
        if not residuals:
            self._cycle_step = sigma / QUANTA
        residuals.append(quantise(z * sigma, self._cycle_step))
        if len(residuals) == WINDOW:
            self._cycle_windows, self._cycle = fold(
                self._cycle_power, self._cycle_windows, residuals, self._cycle_step
            )
        # Two one-sided CUSUMs; each remembers the samples since it last left 0.
        rise = self._rise + z * weight - allowance * weight
        if rise > 0.0:
            self._rise = rise
            self._rise_count += 1.0
        elif self._rise_count:
            self._rise = self._rise_count = 0.0
        fall = self._fall - z * weight - allowance * weight
        if fall > 0.0:
            self._fall = fall
            self._fall_count += 1.0
        elif self._fall_count:
            self._fall = self._fall_count = 0.0
        threshold = self.threshold
        if rise > threshold or fall > threshold:
            count = self._rise_count if rise >= fall else self._fall_count
            kept = -int(min(count, _RECENT))
            window, covered = list(self._recent)[kept:], list(weights)[kept:]
            self._restart(*change_since(window, covered, recent_level, math.ceil(threshold / clip)))
            return self._output()
        memory = self.memory
        horizon = _DRIFT_LOOKS * memory
        keep = 1.0 - 1.0 / memory
        if weight != 1.0:
            keep **= weight
        recent = self._recent_weight * keep
        recent2 = self._recent_weight2 * keep * keep
        count = self._weight
        level = self._level
        # Clipped noise has no low outliers: leaving out high ones by sigma would bias it low.
        if -clip < z < clip or (
            z == clip
            and self._recent_zeros > 0.0
            and x - recent_level < clip * censored_gaussian(recent_level, self._recent_zeros)[1]
        ):
            residual = x - recent_level
            steps = horizon if differences > horizon else differences
            self._covariance += (residual * self._residual - self._covariance) / steps
            self._residual = residual
            count += weight
            level += (x - level) * weight / count
            recent += weight
            recent2 += weight
            recent_level += (x - recent_level) * weight / recent
            if zero or self._zeros:
                self._zeros += (zero - self._zeros) * weight / count
            if zero or self._recent_zeros:
                self._recent_zeros += (zero - self._recent_zeros) * weight / recent
            self._weight = count
            self._level = level
            self._recent_level = recent_level
        self._recent_weight = recent
        self._recent_weight2 = recent2
        # Evidence of a drift: the mean excess of (E - L)^2 over its variance without one.
        noise = recent2 / (recent * recent) - 1.0 / count
        noise = noise * sigma * sigma if noise > 0.0 else 0.0
        difference = recent_level - level
        drift = self._drift
        looks = horizon if count > horizon else count
        if weight <= looks:
            drift += (difference * difference - noise - drift) * weight / looks
        else:
            drift = difference * difference - noise
        self._drift = drift
        drift = evident_drift(drift, noise, looks / memory)
        if drift <= 0.0:
            mean, zeros = level, self._zeros
        else:
            share = drift / (drift + noise)
            mean = level + share * difference
            zeros = self._zeros + share * (self._recent_zeros - self._zeros)
        if zeros:
            mean = censored_gaussian(mean, zeros)[0]
        return mean + _CYCLE_SHARE * self._cycle

    def _export_state(self) -> dict[str, Any]:
        return packed_cycle(super()._export_state(), self._cycle_residuals, self._cycle_power)

    def _blend(self) -> tuple[float, float, float]:
        """The level, its share of zeros and its variance in units of sigma^2 (step 4,
        ``level_statistics.drift_share``)."""
        share, variance = drift_share(
            self._weight,
            self._recent_weight,
            self._recent_weight2,
            self._drift,
            min(self._weight / self.memory, _DRIFT_LOOKS),
            self._sigma,
        )
        return (
            self._level + share * (self._recent_level - self._level),
            self._zeros + share * (self._recent_zeros - self._zeros),
            variance,
        )

    def _output(self) -> float:
        mean, zeros, _ = self._blend()
        if zeros:
            mean = censored_gaussian(mean, zeros)[0]
        return mean + _CYCLE_SHARE * self._cycle

    def _import_state(self, values: dict[str, Any]) -> None:
        learned = set(self._learned())
        super()._import_state(loadable(values, learned, recent=_RECENT, to_sigma=_TO_SIGMA))

    def _restart(self, total: float, count: float, zeros: float) -> None:
        self._level = self._recent_level = total / count
        self._zeros = self._recent_zeros = zeros / count
        self._weight = self._recent_weight = self._recent_weight2 = count
        self._drift = 0.0
        # The residuals before a change was declared are its transient, not a cycle.
        del self._cycle_residuals[:]
        self._rise = self._rise_count = 0.0
        self._fall = self._fall_count = 0.0
