"""Total-variation denoising, exact and causal (the paper's TVD filter)."""

from __future__ import annotations

from collections import deque

import numpy as np

from filters.base import Denoiser, check_choice, check_number
from filters.tv_mm import tv_mm


class TotalVariation(Denoiser):
    """Causal total-variation denoising: the endpoint of the TVD solution on all samples so far.

    After samples :math:`y_0..y_t` the output is :math:`\\hat x_t`, the last element of

    .. math:: \\hat x = \\arg\\min_x \\tfrac12 \\lVert y - x \\rVert^2
              + \\lambda \\sum_{i<t} \\lvert x_{i+1} - x_i \\rvert

    which is what the paper computes. ``method="exact"`` (default) gets it exactly, in amortised
    O(1) work per sample, from the forward pass of Johnson's dynamic programme (Johnson 2013,
    "A dynamic programming algorithm for the fused lasso"): the cost of the best path ending at
    value ``v`` is a convex function :math:`F_t(v)`; its derivative is piecewise linear, kept as a
    list of knots (breakpoints), and

    .. math:: F_t'(v) = \\operatorname{clip}(F_{t-1}', -\\lambda, \\lambda)(v) + (v - y_t),
              \\qquad \\hat x_t = \\arg\\min_v F_t(v).

    Clipping removes every knot outside the points where :math:`F_t' = \\pm\\lambda` and adds one
    knot at each, so each knot is created once and removed once. Memory is the live knots, which
    stay few (they do not grow with the history; see ``docs/benchmarks.md``).

    ``method="mm"`` re-solves, at every sample, the TVD problem over the history (or its last
    ``window`` samples) with the majorisation-minimisation algorithm the paper used (``tv_mm``,
    ``iterations`` per solve), and outputs the last element: O(n · iterations) per sample, kept
    for fidelity comparisons only.

    Behaviour: the output is piecewise constant; a step of height ``h`` after a long flat stretch
    is followed once about ``2 * lam / h`` samples have confirmed it, so large steps are followed
    faster than small ones (a moving average's delay is fixed). ``lam = 0`` is the identity.

    Parameters
    ----------
    lam
        Regularisation weight λ ≥ 0, in volume units (tuples/s). Larger is smoother. A flat
        stretch stays flat while the noise's running sum stays inside ±λ, so λ of a few times
        ``sigma * sqrt(m)`` ignores noise over ``m``-sample stretches.
    method
        ``"exact"`` (forward dynamic programme) or ``"mm"`` (paper's iterative solver).
    window
        ``"mm"`` only: solve over the last ``window`` samples (``None``: the whole history).
    iterations
        ``"mm"`` only: MM iterations per solve.

    >>> from filters import make_filter
    >>> f = make_filter("tvd", lam=2.0)
    >>> f.filter([10.0, 10.0, 10.0, 20.0, 20.0, 20.0]).round(3).tolist()
    [10.0, 10.0, 10.0, 18.0, 19.0, 19.333]
    """

    name = "tvd"

    def __init__(
        self,
        lam: float,
        method: str = "exact",
        window: int | None = None,
        iterations: int = 100,
    ) -> None:
        check_number(self.name, "lam", lam, minimum=0)
        check_choice(self.name, "method", method, ("exact", "mm"))
        if window is not None:
            if method != "mm":
                raise ValueError(
                    f"tvd: window={window!r} is not allowed with method='exact': the exact "
                    "filter always uses the whole history; window must be None"
                )
            check_number(self.name, "window", window, minimum=2, integer=True)
        check_number(self.name, "iterations", iterations, minimum=1, integer=True)
        self.lam = lam
        self.method = method
        self.window = window
        self.iterations = iterations
        self.reset()

    def reset(self) -> None:
        if self.method == "mm":
            self._history: deque[float] = deque(maxlen=self.window)
            return
        # Samples are shifted by the first one: TVD commutes with shifts, and small numbers keep
        # the knot coefficients (sums of samples) precise over long runs.
        self._offset: float | None = None
        # Knots of the clipped message derivative G(v), sorted by position: crossing knot k
        # from left to right adds (slope[k], intercept[k]) to G's coefficients G(v) = a*v + b.
        # Left of all knots G = -bound, right of them G = +bound (bound is 0 before any sample).
        self._position: deque[float] = deque()
        self._slope: deque[float] = deque()
        self._intercept: deque[float] = deque()
        self._bound = 0.0

    def _update(self, x: float) -> float:
        if self.method == "mm":
            self._history.append(x)
            solution = tv_mm(np.fromiter(self._history, float), self.lam, self.iterations)
            return float(solution[-1])
        if self.lam == 0:
            return x
        if self._offset is None:
            self._offset = x
        return self._offset + self._step(x - self._offset)[0]

    def _step(self, y: float) -> tuple[float, float, float]:
        """Add one (shifted) sample; return the argmin and the points where F' = ∓λ.

        The two points bound the previous solution element in the backward pass of the batch
        solver: x_{t} = clip(x_{t+1}, lower_t, upper_t).
        """
        lam = float(self.lam)
        position, slope, intercept = self._position, self._slope, self._intercept
        # F'(v) = G(v) + v - y: every segment gains slope 1 and intercept -y.
        a, b = 1.0, -self._bound - y
        while position and a * position[0] + b <= -lam:
            position.popleft()
            a += slope.popleft()
            b += intercept.popleft()
        lower = (-lam - b) / a
        lower_a, lower_b = a, b
        # The argmin lies between the two clip points; walk the knots that stay.
        for index in range(len(position)):
            if a * position[index] + b >= 0.0:
                break
            a += slope[index]
            b += intercept[index]
        argmin = -b / a
        a, b = 1.0, self._bound - y
        while position and a * position[-1] + b >= lam:
            position.pop()
            a -= slope.pop()
            b -= intercept.pop()
        upper = (lam - b) / a
        # Clip F' at ±λ: G is -λ left of `lower` and +λ right of `upper`.
        position.appendleft(lower)
        slope.appendleft(lower_a)
        intercept.appendleft(lower_b + lam)
        position.append(upper)
        slope.append(-a)
        intercept.append(lam - b)
        self._bound = lam
        return argmin, lower, upper

    @property
    def knots(self) -> int:
        """Live knots held by the exact method (its memory, in units of three floats)."""
        return len(self._position) if self.method == "exact" else 0


def tv_denoise(y: np.ndarray, lam: float) -> np.ndarray:
    """Exact batch TVD of ``y`` (forward pass of ``TotalVariation``, then backtracking).

    O(n) time and memory. Not causal: element ``i`` depends on all of ``y``; its last element
    equals ``TotalVariation(lam).filter(y)[-1]``.

    >>> tv_denoise(np.array([0.0, 0.0, 10.0, 10.0]), 1.0).tolist()
    [0.5, 0.5, 9.5, 9.5]
    """
    values = np.asarray(y, dtype=float)
    if values.size == 0 or lam == 0:
        return values.copy()
    engine = TotalVariation(lam)
    offset = float(values[0])
    steps = [engine._step(v) for v in (values - offset).tolist()]
    solution = np.empty(values.size)
    current = steps[-1][0]
    solution[-1] = current
    for index in range(values.size - 2, -1, -1):
        _, lower, upper = steps[index]
        current = min(max(current, lower), upper)
        solution[index] = current
    return solution + offset
