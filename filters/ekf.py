"""Kalman filter on a local linear trend of the volume, run through filterpy's EKF."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from filters.base import Denoiser, check_choice, check_number, optional
from filters.noise import NoiseEstimator

_DEFAULT_PROCESS_NOISE = {"linear": 0.01, "log": 1e-7}
# R before the noise estimator has enough differences: sigma = 50 tuples/s, one operator's load.
_START_VARIANCE = 2500.0
# Volumes are counts per second; below one (tuple/s)^2 an estimate of R is numerical dust.
_VARIANCE_FLOOR = 1.0
_SMALLEST_VOLUME = 1e-12


class ExtendedKalman(Denoiser):
    """Volume and its slope, tracked by filterpy's ``ExtendedKalmanFilter``.

    State :math:`x = [v, \\dot v]` (``observation="linear"``) or :math:`[\\ln v, \\dot{\\ln v}]`
    (``"log"``), shape (2, 1). Per sample, ``predict()`` then ``update()``::

        x = F x,  P = F P F' + Q                       F = [[1, dt], [0, 1]]
        y = z - h(x),  S = H P H' + R,  K = P H' S^-1,  x = x + K y
        P = (I - K H) P (I - K H)' + K R K'            H = dh/dx at the predicted x

    ``Q = process_noise * [[dt^4/4, dt^3/2], [dt^3/2, dt^2]]`` (white-noise acceleration). The
    output is the volume of the updated state, :math:`h(x)`.

    With ``observation="linear"``, :math:`h(x) = v` and ``H = [1, 0]``: both models are linear,
    the Jacobians are constant and this **is the plain linear Kalman filter**, written with
    filterpy's EKF class. ``"log"`` is genuinely nonlinear: :math:`h(x) = e^{x_0}`,
    ``H = [exp(x0), 0]``, ``R`` in volume units, and the output is always positive. A sample
    below 0 is observed as 0; one above ``e`` times the prediction as ``e`` times the prediction
    (the linearised ``exp`` is trusted up to a factor ``e``, so a jump cannot overflow the
    state); a prediction below a tenth of the sample is first raised to it, since ``H`` is
    nearly 0 there and the filter could not move. The constant-slope model overshoots a step by
    about 20 % before it settles.

    The first sample starts the state at :math:`v_0` (log: :math:`\\max(v_0, 10^{-12})`), slope
    0, and is returned. :math:`P_0 = \\mathrm{diag}(R_0, 0)` (log: :math:`\\min(R_0/v_0^2, 1)`
    instead of :math:`R_0`): the level is as uncertain as one sample, the slope is 0 until
    ``Q`` lets the data move it, which keeps a noisy start from inventing a trend.

    Parameters
    ----------
    process_noise
        Variance of the white-noise acceleration, > 0, in (volume/s^2)^2, or (log-volume/s^2)^2
        for the log model. ``None``: 0.01 (linear) or 1e-7 (log, the same at 300 tuples/s).
        Larger follows changes sooner and passes more noise: at noise sigma = 100 tuples/s a
        step is half-way after 23 / 13 / 7 s and the output keeps 0.13 / 0.18 / 0.23 sigma of
        noise for 0.001 / 0.01 / 0.1.
    measurement_noise
        Variance ``R`` of the samples, in (volume)^2, > 0; or ``"auto"``: ``R`` is the squared
        ``NoiseEstimator`` deviation (last 120 differences), at least 1, and 2500 until it has
        8. After an exactly constant stretch ``R`` sits at 1 until noise fills half the window.
    observation
        ``"linear"`` or ``"log"``, see above.
    dt
        Seconds between samples, > 0.

    >>> from filters import make_filter
    >>> f = make_filter("ekf", measurement_noise=400.0)
    >>> [round(v, 1) for v in f.filter([300.0, 340.0, 320.0, 330.0]).tolist()]
    [300.0, 320.0, 320.0, 322.5]
    >>> f = make_filter("ekf", observation="log")
    >>> [round(v, 1) for v in f.filter([0.0, 300.0, 310.0, 290.0]).tolist()]
    [0.0, 47.3, 93.5, 265.6]
    """

    name = "ekf"

    def __init__(
        self,
        process_noise: float | None = None,
        measurement_noise: float | str = "auto",
        observation: str = "linear",
        dt: float = 1.0,
    ) -> None:
        if process_noise is not None:
            check_number(
                self.name, "process_noise", process_noise, minimum=0, exclusive_minimum=True
            )
        if measurement_noise != "auto":
            _check_measurement_noise(measurement_noise)
        check_choice(self.name, "observation", observation, ["linear", "log"])
        check_number(self.name, "dt", dt, minimum=0, exclusive_minimum=True)
        self.process_noise = process_noise
        self.measurement_noise = measurement_noise
        self.observation = observation
        self.dt = dt
        self.reset()

    def reset(self) -> None:
        dt = float(self.dt)
        default = _DEFAULT_PROCESS_NOISE[self.observation]
        q = default if self.process_noise is None else float(self.process_noise)
        kalman = optional("filterpy.kalman", "the ekf filter", value=self.name)
        common = optional("filterpy.common", "the ekf filter", value=self.name)
        kf = kalman.ExtendedKalmanFilter(dim_x=2, dim_z=1)
        kf.F = np.array([[1.0, dt], [0.0, 1.0]])
        kf.Q = common.Q_discrete_white_noise(dim=2, dt=dt, var=q)
        self._kf = kf
        self._noise = NoiseEstimator()
        self._samples = 0

    @property
    def measurement_variance(self) -> float:
        """``R`` as used for the latest sample, in volume units squared."""
        variance: float = self._kf.R.item()
        return variance

    def _update(self, x: float) -> float:
        kf = self._kf
        sigma = self._noise.update(x) if self.measurement_noise == "auto" else None
        if self._samples == 0:
            self._start(x)
        else:
            if sigma is not None:
                kf.R = np.array([[max(sigma * sigma, _VARIANCE_FLOOR)]])
            kf.predict()  # x = F x, P = F P F' + Q
            if self.observation == "linear":
                # K = P H' (H P H' + R)^-1, x = x + K (z - H x)
                kf.update(np.array([[x]]), _linear_jacobian, _linear_observe)
            else:
                self._log_update(x)
        self._samples += 1
        level: float = kf.x.item(0)
        return level if self.observation == "linear" else math.exp(level)

    def _start(self, x: float) -> None:
        kf = self._kf
        r = _START_VARIANCE if self.measurement_noise == "auto" else float(self.measurement_noise)
        kf.R = np.array([[r]])
        if self.observation == "linear":
            kf.x = np.array([[x], [0.0]])
            kf.P = np.array([[r, 0.0], [0.0, 0.0]])
        else:
            volume = max(x, _SMALLEST_VOLUME)
            kf.x = np.array([[math.log(volume)], [0.0]])
            kf.P = np.array([[min(r / volume**2, 1.0), 0.0], [0.0, 0.0]])

    def _log_update(self, x: float) -> None:
        kf = self._kf
        if math.exp(kf.x.item(0)) < 0.1 * x:
            kf.x[0, 0] = math.log(0.1 * x)
        z = min(max(x, 0.0), math.e * math.exp(kf.x.item(0)))
        # H = [exp(x0), 0] at the prediction; K = P H' (H P H' + R)^-1, x = x + K (z - exp(x0))
        kf.update(np.array([[z]]), _log_jacobian, _log_observe)

    def _export_state(self) -> dict[str, Any]:
        kf = self._kf
        return {
            "samples": self._samples,
            "x": kf.x.tolist(),
            "P": kf.P.tolist(),
            "R": kf.R.item(),
            "noise": self._noise.state_dict(),
        }

    def _import_state(self, values: dict[str, Any]) -> None:
        fields = {"samples", "x", "P", "R", "noise"}
        if not isinstance(values, dict) or set(values) != fields:
            got = sorted(values) if isinstance(values, dict) else values
            raise ValueError(f"state fields {got!r} do not match {sorted(fields)!r}")
        samples, r = values["samples"], values["R"]
        if not isinstance(samples, int) or isinstance(samples, bool) or samples < 0:
            raise ValueError(f"samples={samples!r} is not allowed: it must be an integer >= 0")
        x = _finite_matrix("x", values["x"], (2, 1))
        p = _finite_matrix("P", values["P"], (2, 2))
        if not isinstance(r, int | float) or isinstance(r, bool) or not 0 < r < math.inf:
            raise ValueError(f"R={r!r} is not allowed: it must be a finite number > 0")
        noise = NoiseEstimator()
        noise.load_state_dict(values["noise"])
        kf = self._kf
        kf.x, kf.P, kf.R = x, p, np.array([[float(r)]])
        self._noise, self._samples = noise, samples


def _check_measurement_noise(value: object) -> None:
    try:
        check_number(
            ExtendedKalman.name, "measurement_noise", value, exclusive_minimum=True, minimum=0
        )
    except ValueError as error:
        raise ValueError(f"{error} or 'auto'") from None


def _finite_matrix(field: str, value: object, shape: tuple[int, int]) -> np.ndarray:
    try:
        matrix = np.array(value, dtype=float)
    except (TypeError, ValueError):
        matrix = np.empty(0)
    if matrix.shape != shape or not np.isfinite(matrix).all():
        raise ValueError(f"{field}={value!r} is not allowed: it must be a finite {shape} matrix")
    return matrix


_LINEAR_H = np.array([[1.0, 0.0]])


def _linear_jacobian(x: np.ndarray) -> np.ndarray:
    return _LINEAR_H


def _linear_observe(x: np.ndarray) -> np.ndarray:
    return x[:1]


def _log_jacobian(x: np.ndarray) -> np.ndarray:
    return np.array([[math.exp(x.item(0)), 0.0]])


def _log_observe(x: np.ndarray) -> np.ndarray:
    return np.array([[math.exp(x.item(0))]])
