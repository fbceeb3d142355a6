"""Gaussian noise at a given signal-to-noise ratio, the way the paper's experiments add it.

The paper (§5) adds noise "with varying signal-to-noise ratios" (0.5, 0.8, 1.0, 5.0, 10.0) but
does not say which ratio. Three definitions are offered. Each turns the noise-free ``trend``
``s`` (n samples) and the ratio ``snr`` into the standard deviation σ of white Gaussian noise,
with population statistics (divisor n): ``mean(s) = sum(s) / n``, ``mean(s²) = sum(s²) / n``,
``var(s) = mean(s²) - mean(s)²``.

=============== ===================== ==========================
``definition``  snr is                so σ is
=============== ===================== ==========================
``"power"``     mean(s²) / σ²         sqrt(mean(s²) / snr)
``"ac-power"``  var(s) / σ²           sqrt(var(s) / snr)
``"amplitude"`` mean(s) / σ           mean(s) / snr
=============== ===================== ==========================

``"power"`` (the default) is the usual power ratio, mean included (MATLAB's
``awgn(..., 'measured', 'linear')``). ``"ac-power"`` leaves the mean out, so a constant trend
gets no noise at any ratio. ``"amplitude"`` is the Rose-criterion form, which the paper's appeal
to the Rose criterion (SNR 5 to tell signal from noise) suggests. ``snr=math.inf`` means no
noise.

The noisy volume is ``max(0, s_t + σ z_t)`` with ``z_t`` standard normal from
``numpy.random.default_rng(seed)``: volumes cannot be negative. Clipping raises the mean when σ
is comparable to the volume: on a level μ the expected noisy value is
``μ Φ(μ/σ) + σ φ(μ/σ)`` (Φ, φ: the standard normal distribution and density), e.g. 488 instead
of 350 for σ = 700, with 31 % of the samples clipped. So the realised ratio differs from ``snr``
at the lowest ratios: on ``paper_workload`` the noisy mean is 22 % above the trend's at
``"power"`` SNR 0.5, 40 % at ``"amplitude"`` SNR 0.5, 10 % (power) and 9 % (amplitude) at
SNR 1.

σ in tuples/s for the paper's ratios on ``paper_workload``, averaged over seeds 0-999 (the trend
averages mean(s) = 351, RMS 360 and standard deviation 79; the standard deviation ranges from 38
to 111 between seeds, and ``"ac-power"`` follows it):

============= ======= ======= ======= ======= =======
definition    SNR 0.5 SNR 0.8 SNR 1.0 SNR 5.0 SNR 10
============= ======= ======= ======= ======= =======
power         509.4   402.7   360.2   161.1   113.9
ac-power      112.0   88.5    79.2    35.4    25.0
amplitude     702.3   438.9   351.2   70.2    35.1
============= ======= ======= ======= ======= =======

Both sets of figures come from (about 30 s)::

    .venv/bin/python -c "import numpy as np; from simulator import paper_workload, noise_std, \
    add_noise; from simulator.model.noise import DEFINITIONS; \
    ts = [paper_workload(seed=s) for s in range(1000)]; [print(d, [round(float(np.mean( \
    [noise_std(t, r, d) for t in ts])), 1) for r in (0.5, 0.8, 1.0, 5.0, 10.0)]) \
    for d in DEFINITIONS]; [print(d, r, round(100 * \
    float(np.mean([add_noise(t, r, s, d).mean() / t.mean() - 1 for s, t in enumerate(ts)])))) \
    for d, r in (('power', 0.5), ('amplitude', 0.5), ('power', 1.0), ('amplitude', 1.0))]"

>>> from simulator.model.workloads import paper_workload
>>> trend = paper_workload(seed=1)
>>> [round(noise_std(trend, 1.0, definition)) for definition in DEFINITIONS]
[326, 82, 316]
>>> noisy = add_noise(trend, snr=1.0, seed=1)
>>> noisy.shape, bool(noisy.min() >= 0.0)
((1500,), True)
"""

from __future__ import annotations

import math

import numpy as np

from filters.base import check_choice, check_number

DEFINITIONS = ("power", "ac-power", "amplitude")


def noise_std(trend: np.ndarray, snr: float, definition: str = "power") -> float:
    """Standard deviation of the noise that gives ``trend`` the ratio ``snr`` (see the module).

    Parameters
    ----------
    trend
        The noise-free volumes, a one-dimensional sequence of finite numbers >= 0.
    snr
        The signal-to-noise ratio, a number > 0, or ``math.inf`` for no noise.
    definition
        ``"power"``, ``"ac-power"`` or ``"amplitude"``.

    >>> [noise_std([3.0, 4.0], 2.0, definition) for definition in DEFINITIONS]
    [2.5, 0.3535533905932738, 1.75]
    """
    return _std(_checked("noise_std", trend, snr, definition), snr, definition)


def add_noise(trend: np.ndarray, snr: float, seed: int, definition: str = "power") -> np.ndarray:
    """``trend`` plus seeded Gaussian noise at the ratio ``snr``, clipped at 0 (see the module).

    Returns a new float64 array; the same ``seed`` gives the same noise. ``snr=math.inf`` returns
    a copy of ``trend``.

    ``trend``, ``snr`` and ``definition`` as in ``noise_std``; ``seed`` seeds
    ``numpy.random.default_rng``, an integer >= 0.

    >>> add_noise([300.0, 400.0], snr=math.inf, seed=0).tolist()
    [300.0, 400.0]
    """
    values = _checked("add_noise", trend, snr, definition)
    check_number("add_noise", "seed", seed, minimum=0, integer=True)
    sigma = _std(values, snr, definition)
    noise = np.random.default_rng(int(seed)).normal(0.0, sigma, values.size)
    return np.maximum(values + noise, 0.0)


def _checked(function: str, trend: object, snr: object, definition: str) -> np.ndarray:
    """``trend`` as a float64 array, after checking it, ``snr`` and ``definition``."""
    numeric = isinstance(snr, int | float | np.integer | np.floating) and not isinstance(snr, bool)
    if not (numeric and snr > 0):  # type: ignore[operator]
        raise ValueError(
            f"{function}: snr={snr!r} is not allowed: snr must be a number > 0, or math.inf for "
            "no noise"
        )
    check_choice(function, "definition", definition, DEFINITIONS)
    values = np.asarray(trend, dtype=float)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(
            f"{function}: a trend of shape {values.shape} is not allowed: trend must be a "
            "non-empty one-dimensional sequence of volumes"
        )
    bad = np.flatnonzero(~(np.isfinite(values) & (values >= 0)))
    if bad.size:
        index = int(bad[0])
        raise ValueError(
            f"{function}: trend[{index}]={float(values[index])!r} is not allowed: volumes must be "
            "finite numbers >= 0"
        )
    return values


def _std(values: np.ndarray, snr: float, definition: str) -> float:
    if definition == "power":
        return math.sqrt(float(np.mean(values**2)) / snr)
    if definition == "ac-power":
        return math.sqrt(float(np.var(values)) / snr)
    return float(np.mean(values)) / snr


def clipped_moments(trend: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of each noisy value ``max(0, s_t + σ z_t)``, per sample.

    With :math:`a = s/σ`: mean :math:`s Φ(a) + σ φ(a)`, second moment
    :math:`(s^2 + σ^2) Φ(a) + s σ φ(a)` (the normal censored at 0). What the load of a noisy
    workload is, second by second, to whoever knows its trend and its noise
    (``simulator.experiments.known_load``).

    >>> mean, std = clipped_moments(np.array([350.0, 1e6]), 700.0)
    >>> print([round(float(m)) for m in mean], round(float(std[1])))
    [488, 1000000] 700
    """
    from scipy.stats import norm

    values = np.asarray(trend, dtype=float)
    if sigma <= 0.0:
        return values.copy(), np.zeros_like(values)
    a = values / sigma
    cdf, pdf = norm.cdf(a), norm.pdf(a)
    mean = values * cdf + sigma * pdf
    second = (values**2 + sigma**2) * cdf + values * sigma * pdf
    return mean, np.sqrt(np.maximum(second - mean**2, 0.0))
