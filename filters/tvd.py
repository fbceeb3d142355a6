"""Total-variation denoising, exact and causal (the paper's TVD filter), noise-adaptive weight."""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from filters.base import (
    MAX_WINDOW,
    Denoiser,
    ParameterError,
    check_choice,
    check_number,
    optional,
)
from filters.noise import NoiseEstimator, _is_finite_number
from filters.tv_mm import tv_mm

_KNOTS = ("_position", "_slope", "_intercept")

# ``method="mm"`` costs O(window * iterations) per sample. These bounds (with the window's,
# filters.base.MAX_WINDOW) keep one sample under about a second (10,000 samples x 1,000
# iterations of a banded solve), so no setting can turn a single update into minutes of work;
# fidelity checks use far less (30-300 iterations).
MAX_ITERATIONS = 1_000


class TotalVariation(Denoiser):
    """Causal total-variation denoising: the endpoint of the TVD solution on all samples so far.

    After samples :math:`y_0..y_t` the output is :math:`\\hat x_t`, the last element of

    .. math:: \\hat x = \\arg\\min_x \\tfrac12 \\lVert y - x \\rVert^2
              + \\sum_{i<t} \\lambda_i \\lvert x_{i+1} - x_i \\rvert

    with :math:`\\lambda_i = \\lambda` for a numeric ``lam`` (the paper's problem). With
    ``lam="auto"`` (default) the weight of the edge after sample ``i`` follows the noise:

    .. math:: \\lambda_i = \\texttt{lam\\_per\\_sigma} \\cdot \\hat\\sigma_i

    where :math:`\\hat\\sigma_i` is ``NoiseEstimator``'s deviation (last 120 differences) after
    samples ``0..i``; while it has fewer than 8 differences, the RMS of the differences so far
    over :math:`\\sqrt 2` (``NoiseEstimator.rough``), so that the first outputs are already
    smoothed instead of following the first, most uncertain samples. :math:`\\lambda_i` depends
    on samples ``0..i`` only, so the filter stays causal. The first two outputs are the samples.

    ``method="exact"`` (default) gets :math:`\\hat x_t` exactly, in amortised O(1) work per
    sample, from the forward pass of Johnson's dynamic programme (Johnson 2013, "A dynamic
    programming algorithm for the fused lasso"): the cost of the best path ending at value ``v``
    is a convex function :math:`F_t(v)`; its derivative is piecewise linear, kept as a list of
    knots (breakpoints), and

    .. math:: F_t'(v) = \\operatorname{clip}(F_{t-1}', -\\lambda_{t-1}, \\lambda_{t-1})(v)
              + (v - y_t), \\qquad \\hat x_t = \\arg\\min_v F_t(v).

    The clip is the derivative of :math:`\\min_u F_{t-1}(u) + \\lambda_{t-1} \\lvert v - u \\rvert`,
    the cost of crossing the edge ``(t-1, t)``, and it is applied when sample ``t-1`` arrives, so
    a weight known at that time is solved as exactly as a fixed one. Clipping removes every knot
    outside the points where :math:`F_t' = \\pm\\lambda_t` and adds one knot at each, so each
    knot is created once and removed once. Memory is the live knots, which stay few (they do not
    grow with the history; see ``docs/benchmarks.md``).

    Why :math:`\\lambda \\propto \\sigma`: the filter becomes scale-free,
    ``filter(a * y + b) == a * filter(y) + b`` for ``a > 0`` (the estimate scales with ``a``
    and ignores ``b``, and so does the solution), so units do not matter; and ``lam_per_sigma``
    means the same at any noise level: a flat stretch stays flat while the noise's running sum
    (deviation :math:`\\sigma\\sqrt m` after ``m`` samples) stays inside ±λ, i.e. for about
    ``lam_per_sigma ** 2`` samples (100 by default). After an exactly constant stretch the
    estimate is 0 and samples pass through until noise fills half the window again. The noise
    estimate costs about 4.5 µs per sample, five times the exact update itself.

    ``method="mm"`` (numeric ``lam`` only) re-solves, at every sample, the TVD problem over the
    history (or its last ``window`` samples) with the majorisation-minimisation algorithm the
    paper used (``tv_mm``, ``iterations`` per solve), and outputs the last element:
    O(n · iterations) per sample, kept for fidelity comparisons only.

    Behaviour: the output is piecewise constant; a step of height ``h`` after a long flat stretch
    is followed once about ``2 * lam / h`` samples have confirmed it, so large steps are followed
    faster than small ones (a moving average's delay is fixed). ``lam = 0`` is the identity.

    Parameters
    ----------
    lam
        ``"auto"`` (default, exact method only): the weight above. Or a fixed weight λ ≥ 0, in
        volume units (tuples/s): λ of a few times ``sigma * sqrt(m)`` ignores noise over
        ``m``-sample stretches. Larger is smoother.
    lam_per_sigma
        ``"auto"`` only: λ in units of the estimated noise deviation, a number > 0.
    method
        ``"exact"`` (forward dynamic programme) or ``"mm"`` (paper's iterative solver).
    window
        ``"mm"`` only: solve over the last ``window`` samples, 2 to ``MAX_WINDOW`` (``None``:
        the whole history).
    iterations
        ``"mm"`` only: MM iterations per solve, 1 to ``MAX_ITERATIONS``.

    >>> from filters import make_filter
    >>> f = make_filter("tvd", lam=2.0)
    >>> f.filter([10.0, 10.0, 10.0, 20.0, 20.0, 20.0]).round(3).tolist()
    [10.0, 10.0, 10.0, 18.0, 19.0, 19.333]
    >>> noisy = [300.0 + 10.0 * (-1) ** k + 3.0 * (k % 3) for k in range(14)]
    >>> auto = make_filter("tvd").filter(noisy)  # lam="auto": 10 x the noise estimate
    >>> noisy[:4], auto[:4].round(1).tolist()  # smoothed from the third sample on
    ([310.0, 293.0, 316.0, 290.0], [310.0, 293.0, 304.5, 299.7])
    >>> in_other_units = make_filter("tvd").filter([v / 1000 - 5 for v in noisy])
    >>> bool(np.allclose(in_other_units, auto / 1000 - 5, rtol=1e-12, atol=0))
    True
    """

    name = "tvd"

    def __init__(
        self,
        lam: float | str = "auto",
        lam_per_sigma: float = 10.0,
        method: str = "exact",
        window: int | None = None,
        iterations: int = 100,
    ) -> None:
        if lam != "auto":
            try:
                check_number(self.name, "lam", lam, minimum=0)
            except ParameterError as error:
                raise ParameterError(
                    f"{error} or 'auto'",
                    param="lam",
                    value=lam,
                    allowed=f"{error.allowed} or 'auto'",
                ) from None
        check_number(self.name, "lam_per_sigma", lam_per_sigma, minimum=0, exclusive_minimum=True)
        check_choice(self.name, "method", method, ("exact", "mm"))
        if lam == "auto" and method != "exact":
            raise ParameterError(
                f"tvd: lam='auto' is not allowed with method={method!r}: the MM solver uses one "
                "weight for the whole window; lam must be a number >= 0, or method 'exact'",
                param="lam",
                value=lam,
                allowed="lam must be a number >= 0, or method 'exact'",
            )
        if window is not None:
            if method != "mm":
                raise ParameterError(
                    f"tvd: window={window!r} is not allowed with method='exact': the exact "
                    "filter always uses the whole history; window must be None",
                    param="window",
                    value=window,
                    allowed="window must be None with method 'exact'",
                )
            check_number(self.name, "window", window, minimum=2, maximum=MAX_WINDOW, integer=True)
        check_number(
            self.name, "iterations", iterations, minimum=1, maximum=MAX_ITERATIONS, integer=True
        )
        if method == "mm":
            # Missing scipy is said when the filter is built, not at its second sample.
            instead = "'exact', which needs numpy only"
            optional(
                "scipy.linalg", "tvd's method='mm'", param="method", value=method, instead=instead
            )
        self.lam = lam
        self.lam_per_sigma = lam_per_sigma
        self.method = method
        self.window = window
        self.iterations = iterations
        self.reset()

    def reset(self) -> None:
        if self.method == "mm":
            # An integral float (5.0) is a valid window; deque wants an int.
            maxlen = None if self.window is None else int(self.window)
            self._history: deque[float] = deque(maxlen=maxlen)
            return
        # Samples are shifted by the first one: TVD commutes with shifts, and small numbers keep
        # the knot coefficients (sums of samples) precise over long runs.
        self._offset: float | None = None
        # Knots of the clipped message derivative G(v), sorted by position: crossing knot k
        # from left to right adds (slope[k], intercept[k]) to G's coefficients G(v) = a*v + b.
        # Left of all knots G = -bound, right of them G = +bound: bound is the λ of the edge
        # after the latest sample (0 before any sample).
        self._position: deque[float] = deque()
        self._slope: deque[float] = deque()
        self._intercept: deque[float] = deque()
        self._bound = 0.0
        if self.lam == "auto":
            self._noise = NoiseEstimator()

    def _update(self, x: float) -> float:
        if self.method == "mm":
            self._history.append(x)
            solution = tv_mm(np.fromiter(self._history, float), float(self.lam), self.iterations)
            return float(solution[-1])
        if self.lam == 0:
            return x
        if self._offset is None:
            self._offset = x
        weighted = self._bound > 0.0
        argmin = self._step(x - self._offset, self._weight(x))[0]
        # With no weight on the edge from the previous sample the endpoint is the sample itself;
        # return it as given rather than as offset + (x - offset), which can differ in the last
        # bit.
        return self._offset + argmin if weighted else x

    def _weight(self, x: float) -> float:
        """λ for the edge from sample ``x`` to the next one."""
        if self.lam != "auto":
            return float(self.lam)
        sigma = self._noise.update(x)
        if sigma is not None:  # _auto_weight's, without its call and rough's (1.4 K instructions)
            return self.lam_per_sigma * sigma
        return self._auto_weight(self._noise)

    def _auto_weight(self, noise: NoiseEstimator) -> float:
        sigma = noise.rough
        return 0.0 if sigma is None else self.lam_per_sigma * sigma

    def _step(self, y: float, lam: float) -> tuple[float, float, float]:
        """Add one (shifted) sample, clip at ±``lam``; return the argmin and where F' = ∓lam.

        The two points bound the previous solution element in the backward pass of the batch
        solver: x_{t} = clip(x_{t+1}, lower_t, upper_t).
        """
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
        # Clip F' at ±λ: G is -λ left of `lower` and +λ right of `upper`. With λ = 0 both
        # knots sit at the argmin and G is 0 on both sides.
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

    def _export_state(self) -> dict[str, Any]:
        values = super()._export_state()
        if self.lam == "auto":
            # The estimator is an object with its own JSON state, not a plain value.
            values["_noise"] = self._noise.state_dict()
        return values

    def _import_state(self, values: dict[str, Any]) -> None:
        # Mismatched fields are refused by the generic import, which also converts the values.
        if (
            self.method == "exact"
            and isinstance(values, dict)
            and set(values) == set(self._learned())
        ):
            values = self._checked(values)
        super()._import_state(values)

    def _checked(self, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` with the noise estimator loaded; ``ValueError`` if the DP cannot be there."""
        offset, bound = values["_offset"], values["_bound"]
        knots = [values[key] for key in _KNOTS]
        if offset is not None and not _is_finite_number(offset):
            raise ValueError(f"_offset={offset!r} is not allowed: it must be null or finite")
        if not (
            all(isinstance(k, list) and all(map(_is_finite_number, k)) for k in knots)
            and len({len(k) for k in knots}) == 1
            and (offset is None) == (not knots[0])
        ):
            raise ValueError(
                f"knots {dict(zip(_KNOTS, knots, strict=True))!r} are not allowed: they must be "
                "lists of finite numbers of one length, empty exactly while _offset is null"
            )
        checked = dict(values)
        if self.lam == "auto":
            noise = NoiseEstimator()
            noise.load_state_dict(values["_noise"])
            if (offset is None) != (noise.state_dict()["previous"] is None):
                raise ValueError("_noise is not allowed: it must have seen the filter's samples")
            expected = self._auto_weight(noise)
            checked["_noise"] = noise
        else:
            expected = 0.0 if offset is None else float(self.lam)
        if bound != expected:
            raise ValueError(
                f"_bound={bound!r} is not allowed: it must be the weight in use, {expected!r}"
            )
        return checked


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
    steps = [engine._step(v, float(lam)) for v in (values - offset).tolist()]
    solution = np.empty(values.size)
    current = steps[-1][0]
    solution[-1] = current
    for index in range(values.size - 2, -1, -1):
        _, lower, upper = steps[index]
        current = min(max(current, lower), upper)
        solution[index] = current
    return solution + offset
