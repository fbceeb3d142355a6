"""Exponentially weighted moving average."""

from __future__ import annotations

from filters.base import Denoiser, check_number


class EWMA(Denoiser):
    """Exponential smoothing, started at the first sample.

    .. math:: \\bar v_0 = v_0, \\qquad \\bar v_t = \\bar v_{t-1} + \\alpha\\,(v_t - \\bar v_{t-1})

    The weight of a sample ``k`` steps back is :math:`\\alpha(1-\\alpha)^k`; the time constant
    is about ``1 / alpha`` samples. It equals the steady-state Kalman filter of a random-walk
    level observed in white noise. ``alpha = 1`` is the identity.

    Parameters
    ----------
    alpha
        Smoothing factor, a number in (0, 1]. Smaller is smoother and slower.

    >>> from filters import make_filter
    >>> make_filter("ewma", alpha=0.5).filter([4.0, 8.0, 8.0]).tolist()
    [4.0, 6.0, 7.0]
    """

    name = "ewma"

    def __init__(self, alpha: float = 0.1) -> None:
        check_number(self.name, "alpha", alpha, minimum=0, maximum=1, exclusive_minimum=True)
        self.alpha = alpha
        self.reset()

    def reset(self) -> None:
        self._level: float | None = None

    def _update(self, x: float) -> float:
        if self._level is None:
            self._level = x
        else:
            self._level += self.alpha * (x - self._level)
        return self._level
