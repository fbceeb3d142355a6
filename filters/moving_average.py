"""Linear smoothing: the mean of the last ``w`` samples (the paper's LS filter)."""

from __future__ import annotations

from collections import deque

from filters.base import MAX_WINDOW, Denoiser, check_number


class MovingAverage(Denoiser):
    """Causal moving average over a window of ``w`` samples.

    .. math:: \\bar v_t = \\frac{1}{\\min(w, t+1)} \\sum_{x=\\max(0, t-w+1)}^{t} v_x

    The paper's eq. (5), :math:`\\frac{1}{w}\\sum_{x=t-w}^{t} v_x`, sums ``w + 1`` samples but
    divides by ``w``, which overstates every volume by the factor ``(w + 1) / w``. We take the
    mean of the last ``w`` samples instead, and of all samples so far while fewer than ``w`` have
    arrived (warm-up). ``w = 1`` is the identity.

    A step in the input reaches the output linearly over ``w`` samples: half of it after
    ``w / 2`` samples, whatever its height. That fixed delay is why LS scales late on real edges.

    Parameters
    ----------
    w
        Window length in samples, an integer from 1 to ``MAX_WINDOW`` (10,000).

    >>> from filters import make_filter
    >>> make_filter("moving_average", w=2).filter([1.0, 3.0, 5.0, 7.0]).tolist()
    [1.0, 2.0, 4.0, 6.0]
    """

    name = "moving_average"

    def __init__(self, w: int = 10) -> None:
        check_number(self.name, "w", w, minimum=1, maximum=MAX_WINDOW, integer=True)
        self.w = w
        self.reset()

    def reset(self) -> None:
        self._window: deque[float] = deque(maxlen=int(self.w))
        self._sum = 0.0

    def _update(self, x: float) -> float:
        window = self._window
        if len(window) == window.maxlen:
            # Adding the difference keeps the sum unchanged (exactly) on constant input.
            self._sum += x - window[0]
        else:
            self._sum += x
        window.append(x)
        return self._sum / len(window)
