"""Online robust estimate of the white-noise level of a series."""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections import deque
from typing import Any

from filters.base import check_number

# 1.4826 turns a median absolute deviation into a Gaussian standard deviation; a difference of
# two samples carries the noise twice, hence the sqrt(2).
_SCALE = 1.4826 / math.sqrt(2.0)


class NoiseEstimator:
    """Standard deviation of the white noise on a series, from its recent first differences.

    .. math:: d_t = v_t - v_{t-1}, \\qquad
              \\hat\\sigma = \\frac{1.4826}{\\sqrt 2}\\,
              \\operatorname{median}_i \\lvert d_i - \\operatorname{median}_j d_j \\rvert

    over the last ``window`` differences. Differencing removes the level, so a piecewise-constant
    load with white noise of deviation :math:`\\sigma` gives differences of deviation
    :math:`\\sigma\\sqrt 2`; the medians ignore the few differences that straddle a jump, as
    long as fewer than half of the window do. A slope adds a constant to every difference and
    does not bias the estimate either. Noise-free input estimates 0, and so does a window more
    than half of whose differences are exactly 0: after a constant stretch (an idle stream at 0)
    the estimate stays 0 until noise fills half the window again.

    The estimate is ``None`` until ``min_differences`` (8) differences are in. The differences
    are also kept sorted, so an update costs one insertion, one deletion and a bisection for
    the middle of two sorted runs of distances, which are never built (about 2 us for
    ``window=120``, against 8 us building and merging them and 12 us for two plain sorts).

    Parameters
    ----------
    window
        Number of most recent differences used, an integer >= 8.

    >>> jumps = NoiseEstimator(window=8)
    >>> [jumps.update(v) for v in (10.0, 10.0, 10.0, 10.0, 50.0, 50.0, 50.0, 50.0, 50.0)][-2:]
    [None, 0.0]
    >>> noisy = NoiseEstimator(window=8)
    >>> for volume in (10.0, 13.0, 9.0, 12.0, 10.0, 11.0, 8.0, 12.0, 10.0):
    ...     sigma = noisy.update(volume)
    >>> round(sigma, 3)
    3.145
    """

    min_differences = 8

    def __init__(self, window: int = 120) -> None:
        check_number("NoiseEstimator", "window", window, minimum=self.min_differences, integer=True)
        self.window = window
        self.reset()

    def reset(self) -> None:
        """Forget every sample seen."""
        self._previous: float | None = None
        self._differences: deque[float] = deque()
        self._ordered: list[float] = []
        self._sigma: float | None = None
        self._taken = 0  # where the last estimate's bisection ended: _median_distance's hint

    @property
    def sigma(self) -> float | None:
        """The current estimate, or ``None`` while fewer than ``min_differences`` are in."""
        return self._sigma

    @property
    def rough(self) -> float | None:
        """A warm-up stand-in for ``sigma``: the RMS of the differences so far over sqrt(2).

        ``sigma`` itself while it exists; ``None`` before the first difference. Not robust: a
        jump among the first few samples inflates it, which errs on the side of smoothing.
        """
        if self._sigma is not None or not self._differences:
            return self._sigma
        return math.sqrt(sum(d * d for d in self._differences) / (2 * len(self._differences)))

    def update(self, x: float) -> float | None:
        """Take one finite sample and return the current estimate of the noise deviation."""
        if self._previous is not None:
            difference = x - self._previous
            if len(self._differences) == self.window:
                oldest = self._differences.popleft()
                del self._ordered[bisect_left(self._ordered, oldest)]
            self._differences.append(difference)
            insort(self._ordered, difference)
        self._previous = x
        self._sigma = self._estimate()
        return self._sigma

    def _estimate(self) -> float | None:
        ordered = self._ordered
        if len(ordered) < self.min_differences:
            return None
        distance, self._taken = _median_distance(ordered, sorted_median(ordered), self._taken)
        return _SCALE * distance

    def state_dict(self) -> dict[str, Any]:
        """The window and the learned state, as JSON-serialisable values."""
        return {
            "window": self.window,
            "previous": self._previous,
            "differences": list(self._differences),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue exactly from ``state_dict()``; ``ValueError`` and no change if it is invalid."""
        if not isinstance(state, dict) or set(state) != {"window", "previous", "differences"}:
            raise ValueError(
                "state must be a dict with the keys 'differences', 'previous', 'window'"
            )
        if state["window"] != self.window:
            raise ValueError(f"state was taken with window={state['window']!r}, not {self.window}")
        previous, differences = state["previous"], state["differences"]
        if previous is not None and not _is_finite_number(previous):
            raise ValueError(f"previous={previous!r} is not allowed: it must be null or finite")
        if (
            not isinstance(differences, list)
            or len(differences) > self.window
            or (previous is None and differences)
            or not all(_is_finite_number(d) for d in differences)
        ):
            raise ValueError(
                f"differences={differences!r} is not allowed: it must be a list of at most "
                f"window={self.window} finite numbers, empty while previous is null"
            )
        self._previous = None if previous is None else float(previous)
        self._differences = deque(float(d) for d in differences)
        self._ordered = sorted(self._differences)
        self._sigma = self._estimate()


def sorted_median(ordered: list[float]) -> float:
    """The median of ``ordered``, a non-empty list in ascending order (of an even count, the
    mean of the middle two)."""
    half = len(ordered) // 2
    return ordered[half] if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2


def _median_distance(ordered: list[float], centre: float, hint: int = 0) -> tuple[float, int]:
    """``sorted_median(sorted([centre - d for d in reversed(ordered[:half])]
    + [d - centre for d in ordered[half:]]))``, bit for bit, in O(log n) and without a list;
    and ``taken`` (below), for the next call's ``hint``.

    ``centre`` is the median of ``ordered``, ``half = len(ordered) // 2``. The distances to it
    are two ascending runs, ``below(i) = centre - ordered[half - 1 - i]`` (``i < half``) and
    ``above(j) = ordered[half + j] - centre`` (``j < len(ordered) - half``), and their stable
    merge (``sorted``, ``below`` first on ties) puts ``taken`` of ``below`` and
    ``half - taken`` of ``above`` before its middle. ``taken`` is the first ``i`` whose
    ``below(i)`` comes after ``above(half - 1 - i)``, found by bisection; the middle is the
    first of ``below(taken)`` and ``above(half - taken)``, and for an even count the
    element before it the last of ``below(taken - 1)`` and ``above(half - 1 - taken)``.
    Each distance is the same subtraction as in the lists, so the median is the same float.

    Whether ``below(i)`` comes after ``above(half - 1 - i)`` changes once as ``i`` grows
    (``below`` ascends, ``above`` read backwards descends), so ``taken`` is the one ``i``
    where it does, whichever way it is found. ``hint``, the last update's ``taken``, mostly
    still is: two comparisons confirm it, instead of the bisection's six steps (window 120).
    """
    size = len(ordered)
    half = size // 2
    # below(i) and above(half - 1 - i) read ordered[last_below - i] and ordered[last_above - i]:
    # worked out once, not at each of the bisection's steps (1.2 K of an update's 16 K
    # instructions; issue 32).
    last_below, last_above = half - 1, 2 * half - 1
    low, high = 0, half
    if hint <= half:  # one step each side of the last taken: it, or the side it moved to
        if 0 < hint and centre - ordered[half - hint] > ordered[2 * half - hint] - centre:
            high = hint - 1  # below(hint - 1) comes after its pair already
        elif (
            hint == half
            or centre - ordered[last_below - hint] > ordered[last_above - hint] - centre
        ):
            low = high = hint
        else:
            low = hint + 1
    while low < high:
        taken = (low + high) // 2
        if centre - ordered[last_below - taken] <= ordered[last_above - taken] - centre:
            low = taken + 1
        else:
            high = taken
    taken = low
    # above(half - taken) exists unless taken = 0 and the count is even.
    after = ordered[2 * half - taken] - centre if 2 * half - taken < size else math.inf
    if taken < half and centre - ordered[half - 1 - taken] <= after:
        after = centre - ordered[half - 1 - taken]
    if size % 2:
        return after, taken
    if taken == 0:
        before_middle = ordered[2 * half - 1] - centre
    elif taken == half:
        before_middle = centre - ordered[0]
    else:
        below = centre - ordered[half - taken]
        above = ordered[2 * half - 1 - taken] - centre
        before_middle = above if below <= above else below
    return (before_middle + after) / 2, taken


def _is_finite_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
