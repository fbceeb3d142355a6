"""Online robust estimate of the white-noise level of a series."""

from __future__ import annotations

import math
from collections import deque
from statistics import median
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

    The estimate is ``None`` until ``min_differences`` (8) differences are in. Each update costs
    two medians of at most ``window`` floats.

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
        self._differences: deque[float] = deque(maxlen=int(self.window))
        self._sigma: float | None = None

    @property
    def sigma(self) -> float | None:
        """The current estimate, or ``None`` while fewer than ``min_differences`` are in."""
        return self._sigma

    def update(self, x: float) -> float | None:
        """Take one finite sample and return the current estimate of the noise deviation."""
        if self._previous is not None:
            self._differences.append(x - self._previous)
        self._previous = x
        self._sigma = self._estimate()
        return self._sigma

    def _estimate(self) -> float | None:
        differences = self._differences
        if len(differences) < self.min_differences:
            return None
        centre = median(differences)
        return _SCALE * median([abs(d - centre) for d in differences])

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
        self._differences = deque((float(d) for d in differences), maxlen=int(self.window))
        self._sigma = self._estimate()


def _is_finite_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
