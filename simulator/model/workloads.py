"""Noise-free synthetic input-volume trends (tuples/s) for the simulator.

Every generator returns a float64 array with one sample every ``step`` seconds: sample ``i`` is
the volume at time ``i * step``, for ``i = 0 .. duration / step - 1``, so ``duration`` (seconds)
must be a multiple of ``step``. Random workloads draw from ``numpy.random.default_rng(seed)``:
the same seed gives the same array. All volumes are >= 0; the parameters are validated so that
they stay so. Noise is added separately (``simulator.model.noise``).

``simulator.model.catalog`` has them all by name (``make_workload``), recorded traces
(``simulator.model.traces``) included.

The shapes ``cosine``, ``random_walk``, ``increasing``, ``decreasing`` and ``convergence`` are
the workloads of Kanis (TU Delft MSc thesis, 2023, §5.4.3), moved from its 0-2.5 M rec/s scale
to the paper's 200-500 tuples/s; each docstring says what was kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from filters.base import check_number

PAPER_LOW = 200.0
PAPER_HIGH = 500.0
# Consecutive paper levels differ by at least one operator's capacity (50 tuples/s), so that
# every level change moves the number of operators needed.
PAPER_MIN_CHANGE = 50.0
PAPER_PLATEAU_SECONDS = (100, 250)
PAPER_RAMP_SECONDS = (60, 180)


def paper_workload(seed: int, duration: float = 1500.0, step: float = 1.0) -> np.ndarray:
    """The paper's setting: a trend between 200 and 500 tuples/s made of plateaus, steps and ramps.

    The paper (§5) gives the range, 200-500 tuples/s for 1,500 s at one sample per second, but
    not the trend. Its Fig. 4 shows a series of flat "segments", and TVD, the filter it favours,
    assumes a piecewise-constant signal. This trend is therefore made of plateaus; half of the
    level changes are sudden steps (where edge-preserving filters should shine and a moving
    average lags) and half are linear ramps (drift, where a piecewise-constant model staircases
    and the EKF's velocity state helps). Exactly:

    1. The first level is drawn uniformly from [200, 500].
    2. A plateau holds the level for a whole number of seconds drawn uniformly from 100..250.
    3. The next level is drawn uniformly from [200, 500], redrawn until it differs from the
       current one by at least 50 tuples/s (one operator at the paper's capacity of 50
       tuples/s, so every change matters to the scaler).
    4. The transitions alternate, starting with a step: the 1st, 3rd, 5th, ... level change is
       a sudden step (the new plateau starts right after the old one); the 2nd, 4th, ... is a
       linear ramp lasting a whole number of seconds drawn uniformly from 60..180. A ramp from
       ``a`` to ``b`` over ``[s, s + r)`` has the value ``a + (b - a) (t - s) / r`` at time
       ``t``; the next plateau starts at ``s + r``.
    5. Items 2-4 repeat until ``duration`` is covered; the last piece is cut at ``duration``.

    Over 1,500 s that gives 7 plateaus on average (6 to 9 over seeds 0-999; a plateau lasts
    175 s on average and a transition 60 s), and 3 of the 6 level changes are ramps. Every value
    lies in [200, 500].

    Parameters
    ----------
    seed
        Seed of ``numpy.random.default_rng``, an integer >= 0.
    duration
        Length in seconds, a multiple of ``step`` (default 1,500, the paper's).
    step
        Seconds between samples (default 1, the paper's).

    >>> trend = paper_workload(seed=1)
    >>> trend.shape, bool(trend.min() >= 200.0), bool(trend.max() <= 500.0)
    ((1500,), True, True)
    """
    times = _sample_times("paper_workload", duration, step)
    rng = _rng("paper_workload", seed)
    bounds: list[float] = [0.0]
    firsts: list[float] = []
    lasts: list[float] = []
    level = rng.uniform(PAPER_LOW, PAPER_HIGH)
    ramp_next = False
    while bounds[-1] < duration:
        bounds.append(bounds[-1] + int(rng.integers(*PAPER_PLATEAU_SECONDS, endpoint=True)))
        firsts.append(level)
        lasts.append(level)
        following = level
        while abs(following - level) < PAPER_MIN_CHANGE:
            following = rng.uniform(PAPER_LOW, PAPER_HIGH)
        if ramp_next:
            bounds.append(bounds[-1] + int(rng.integers(*PAPER_RAMP_SECONDS, endpoint=True)))
            firsts.append(level)
            lasts.append(following)
        level = following
        ramp_next = not ramp_next
    return _piecewise_linear(times, bounds, firsts, lasts)


def step_workload(
    levels: Sequence[float], duration_each: float | Sequence[float], step: float = 1.0
) -> np.ndarray:
    """Flat levels one after the other, each held for ``duration_each`` seconds.

    Parameters
    ----------
    levels
        The volumes (>= 0), in order.
    duration_each
        Seconds each level lasts (> 0): one number for all, or one per level. The total must be
        a multiple of ``step``; a level starting between two samples shows from the next one.
    step
        Seconds between samples.

    >>> step_workload([300.0, 450.0], duration_each=[2, 3]).tolist()
    [300.0, 300.0, 450.0, 450.0, 450.0]
    """
    name = "step_workload"
    if len(levels) == 0:
        raise ValueError(f"{name}: levels=[] is not allowed: levels must hold at least one volume")
    for index, level in enumerate(levels):
        check_number(name, f"levels[{index}]", level, minimum=0)
    if isinstance(duration_each, Sequence | np.ndarray):
        durations = list(duration_each)
        if len(durations) != len(levels):
            raise ValueError(
                f"{name}: duration_each={duration_each!r} is not allowed: it must be one number "
                f"or {len(levels)} numbers, one per level"
            )
    else:
        durations = [duration_each] * len(levels)
    for index, seconds in enumerate(durations):
        check_number(name, f"duration_each[{index}]", seconds, minimum=0, exclusive_minimum=True)
    bounds = np.concatenate([[0.0], np.cumsum(durations, dtype=float)])
    times = _sample_times(name, float(bounds[-1]), step)
    return _piecewise_linear(times, bounds.tolist(), list(levels), list(levels))


def ramp_workload(
    start: float = PAPER_LOW, end: float = PAPER_HIGH, duration: float = 1500.0, step: float = 1.0
) -> np.ndarray:
    """A straight line from ``start`` (first sample) to ``end`` (last sample).

    >>> ramp_workload(200.0, 500.0, duration=4).tolist()
    [200.0, 300.0, 400.0, 500.0]
    """
    times = _sample_times("ramp_workload", duration, step)
    check_number("ramp_workload", "start", start, minimum=0)
    check_number("ramp_workload", "end", end, minimum=0)
    return np.linspace(start, end, times.size)


def monotone_workload(
    seed: int,
    start: float = PAPER_LOW,
    end: float = PAPER_HIGH,
    duration: float = 1500.0,
    pieces: int = 10,
    step: float = 1.0,
) -> np.ndarray:
    """From ``start`` to ``end`` by random, uneven slopes: Kanis's increasing/decreasing loads.

    The run is cut into ``pieces`` equal parts. Part ``k`` changes the volume by
    ``(end - start) u_k / sum(u)``, with ``u_k`` drawn uniformly from [0, 1), linearly within
    the part. The series is monotone (non-decreasing when ``end >= start``), its first sample is
    ``start`` and its last is ``end``. Kanis's increasing run goes from 0 to 2.5 M rec/s in 140
    minutes "with random (non-linear) increases", the decreasing one back down; ``WORKLOADS``
    has them as ``"increasing"`` (200 -> 500) and ``"decreasing"`` (500 -> 200).

    >>> trend = monotone_workload(seed=3, duration=100)
    >>> float(trend[0]), float(trend[-1]), bool(np.all(np.diff(trend) >= 0))
    (200.0, 500.0, True)
    """
    times = _sample_times("monotone_workload", duration, step)
    rng = _rng("monotone_workload", seed)
    check_number("monotone_workload", "start", start, minimum=0)
    check_number("monotone_workload", "end", end, minimum=0)
    check_number("monotone_workload", "pieces", pieces, minimum=1, integer=True)
    progress = np.cumsum(rng.uniform(0.0, 1.0, int(pieces)))
    knots = start + (end - start) * np.concatenate([[0.0], progress / progress[-1]])
    return np.interp(
        np.linspace(0.0, 1.0, times.size), np.linspace(0.0, 1.0, int(pieces) + 1), knots
    )


def cosine_workload(
    mean: float = 350.0,
    amplitude: float = 150.0,
    period: float = 3600.0,
    duration: float = 1500.0,
    step: float = 1.0,
) -> np.ndarray:
    """A diurnal-style cosine that starts at its maximum: ``mean + amplitude cos(2 pi t / period)``.

    Kanis's cosine starts at the maximum and has a period of 60 minutes (the default); its
    140-minute runs see 2.3 periods, which ``period=643`` reproduces over 1,500 s. Its ±100,000
    rec/s of noise per minute is left to ``simulator.model.noise``. ``amplitude`` must not exceed
    ``mean``, so volumes stay >= 0.

    >>> cosine_workload(mean=300.0, amplitude=100.0, period=4, duration=4).round(6).tolist()
    [400.0, 300.0, 200.0, 300.0]
    """
    times = _sample_times("cosine_workload", duration, step)
    check_number("cosine_workload", "mean", mean, minimum=0)
    check_number("cosine_workload", "amplitude", amplitude, minimum=0, maximum=mean)
    check_number("cosine_workload", "period", period, minimum=0, exclusive_minimum=True)
    return mean + amplitude * np.cos(2.0 * np.pi * times / period)


def random_walk_workload(
    seed: int,
    start: float | None = None,
    step_std: float = 4.5,
    duration: float = 1500.0,
    low: float = PAPER_LOW,
    high: float = PAPER_HIGH,
    step: float = 1.0,
) -> np.ndarray:
    """A Gaussian random walk from ``start``, reflected at ``low`` and ``high``.

    Each sample adds a change drawn from ``N(0, step_std**2 * step)`` (``step_std`` is the
    standard deviation of the change over one second, whatever ``step`` is). A walk that would
    leave ``[low, high]`` is reflected back by the amount it overshoots: the series is the free
    walk folded into the band, so it never sticks at a bound.

    Kanis's walk starts in the middle of its range (1.25 M of 0-2.5 M rec/s, the default
    ``start`` here is ``(low + high) / 2``) and each minute adds a change drawn uniformly from
    ±500,000, a standard deviation of 0.2 / sqrt(3) of the range per minute, i.e.
    0.2 / sqrt(180) = 1.5 % of the range per second. On [200, 500] that is 4.47 tuples/s: the
    default ``step_std`` of 4.5 diffuses as fast, relative to the range, as Kanis's walk.

    >>> walk = random_walk_workload(seed=0)
    >>> float(walk[0]), bool(walk.min() >= 200.0), bool(walk.max() <= 500.0)
    (350.0, True, True)
    """
    name = "random_walk_workload"
    times = _sample_times(name, duration, step)
    rng = _rng(name, seed)
    check_number(name, "low", low, minimum=0)
    check_number(name, "high", high, minimum=low, exclusive_minimum=True)
    start = (low + high) / 2.0 if start is None else start
    check_number(name, "start", start, minimum=low, maximum=high)
    check_number(name, "step_std", step_std, minimum=0)
    changes = rng.normal(0.0, step_std * math.sqrt(step), times.size - 1)
    free = start - low + np.concatenate([[0.0], np.cumsum(changes)])
    band = high - low
    folded = np.mod(free, 2.0 * band)
    return low + np.minimum(folded, 2.0 * band - folded)


def spike_workload(
    base: float = 300.0,
    spike_height: float = 150.0,
    spike_every: float = 300.0,
    spike_length: float = 10.0,
    duration: float = 1500.0,
    step: float = 1.0,
) -> np.ndarray:
    """A flat ``base`` with short bursts of ``spike_height`` (negative: valleys).

    The volume is ``base + spike_height`` during ``[k spike_every, k spike_every + spike_length)``
    for ``k = 1, 2, ...`` and ``base`` otherwise: the run starts flat, and a good filter ignores
    every burst shorter than the time it takes to scale.

    >>> spike_workload(base=300.0, spike_height=100.0, spike_every=3, spike_length=1,
    ...                duration=8).tolist()
    [300.0, 300.0, 300.0, 400.0, 300.0, 300.0, 400.0, 300.0]
    """
    name = "spike_workload"
    times = _sample_times(name, duration, step)
    check_number(name, "base", base, minimum=0)
    check_number(name, "spike_height", spike_height, minimum=-base)
    check_number(name, "spike_every", spike_every, minimum=0, exclusive_minimum=True)
    check_number(
        name, "spike_length", spike_length, minimum=0, maximum=spike_every, exclusive_minimum=True
    )
    bursting = (times >= spike_every) & (np.mod(times, spike_every) < spike_length)
    return np.where(bursting, base + spike_height, base).astype(float)


def convergence_workload(
    duration: float = 1500.0, high: float = 400.0, low: float = 200.0, step: float = 1.0
) -> np.ndarray:
    """Kanis's convergence run: 0 for the first ninth, ``high`` for four ninths, then ``low``.

    Kanis holds 0 for about 10 minutes (start-up), then 2 M rec/s for 40 minutes, then 1 M for
    40 minutes, and measures how long each scaler takes to stop scaling on the constant rate.
    The stages keep those proportions, and the defaults keep the levels' share of the 2.5 M
    maximum (80 % and 40 % of 500 tuples/s).

    >>> convergence_workload(duration=9).tolist()
    [0.0, 400.0, 400.0, 400.0, 400.0, 200.0, 200.0, 200.0, 200.0]
    """
    check_number("convergence_workload", "duration", duration, minimum=0, exclusive_minimum=True)
    check_number("convergence_workload", "high", high, minimum=0)
    check_number("convergence_workload", "low", low, minimum=0)
    return step_workload(
        [0.0, high, low], [duration / 9.0, 4.0 * duration / 9.0, 4.0 * duration / 9.0], step
    )


def _sample_times(function: str, duration: float, step: float) -> np.ndarray:
    """``i * step`` for the ``duration / step`` samples of a run."""
    check_number(function, "duration", duration, minimum=0, exclusive_minimum=True)
    check_number(function, "step", step, minimum=0, exclusive_minimum=True)
    count = duration / step
    if abs(count - round(count)) > 1e-9 * count:
        raise ValueError(
            f"{function}: duration={duration!r} is not allowed: duration must be a multiple of "
            f"step={step!r}"
        )
    return np.arange(round(count)) * step


def _rng(function: str, seed: int) -> np.random.Generator:
    check_number(function, "seed", seed, minimum=0, integer=True)
    return np.random.default_rng(int(seed))


def _piecewise_linear(
    times: np.ndarray, bounds: Sequence[float], firsts: Sequence[float], lasts: Sequence[float]
) -> np.ndarray:
    """Piece ``k`` covers ``[bounds[k], bounds[k + 1])`` and runs linearly from ``firsts[k]``
    towards ``lasts[k]``; ``times`` must lie in ``[bounds[0], bounds[-1])``."""
    edges = np.asarray(bounds, dtype=float)
    piece = np.searchsorted(edges, times, side="right") - 1
    start, end = edges[piece], edges[piece + 1]
    first, last = np.asarray(firsts, dtype=float)[piece], np.asarray(lasts, dtype=float)[piece]
    values: np.ndarray = first + (last - first) * (times - start) / (end - start)
    return values
