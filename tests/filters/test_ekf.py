"""What is specific to the EKF: it is the Kalman recursion it claims to be, ``R`` is learned
from the data, and the log model stays positive and finite whatever the samples.

The generic contract (causality, batch == streaming, state round trip, constant input,
parameter validation) is in ``test_contract.py``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from filters import make_filter
from filters.ekf import ExtendedKalman
from filters.noise import NoiseEstimator


def ramp_and_step(n: int = 500, sigma: float = 40.0, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n, dtype=float)
    trend = 250.0 + 0.4 * t + np.where(t >= n // 2, 120.0, 0.0)
    return trend + rng.normal(0.0, sigma, n)


def noisy_steps(n: int, sigma: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    trend = np.repeat(rng.uniform(200.0, 500.0, n // 150 + 1), 150)[:n]
    return trend, trend + rng.normal(0.0, sigma, n)


def kalman_by_hand(zs: np.ndarray, q: float, r: float, dt: float) -> np.ndarray:
    """Textbook two-state Kalman filter, constant velocity, same start as the EKF's docstring."""
    f = np.array([[1.0, dt], [0.0, 1.0]])
    g = np.array([dt**2 / 2.0, dt])
    x = np.array([zs[0], 0.0])
    p = np.diag([r, 0.0])
    out = [zs[0]]
    for z in zs[1:]:
        x = f @ x
        p = f @ p @ f.T + q * np.outer(g, g)
        gain = p[:, 0] / (p[0, 0] + r)
        x = x + gain * (z - x[0])
        p = p - np.outer(gain, p[0, :])
        out.append(x[0])
    return np.array(out)


def log_ekf_by_hand(zs: np.ndarray, q: float, r: float) -> np.ndarray:
    """Textbook EKF on [log v, slope] observed through exp, linearised at the prediction."""
    f = np.array([[1.0, 1.0], [0.0, 1.0]])
    g = np.array([0.5, 1.0])
    x = np.array([np.log(zs[0]), 0.0])
    p = np.diag([min(r / zs[0] ** 2, 1.0), 0.0])
    out = [zs[0]]
    for z in zs[1:]:
        x = f @ x
        p = f @ p @ f.T + q * np.outer(g, g)
        volume = np.exp(x[0])
        gain = p[:, 0] * volume / (volume**2 * p[0, 0] + r)
        x = x + gain * (z - volume)
        p = p - np.outer(gain, volume * p[0, :])
        out.append(np.exp(x[0]))
    return np.array(out)


@pytest.mark.parametrize(
    ("q", "r", "dt"), [(0.01, 1600.0, 1.0), (0.5, 100.0, 2.0), (1e-4, 9e4, 0.5)]
)
def test_linear_model_is_the_plain_kalman_filter(q: float, r: float, dt: float) -> None:
    zs = ramp_and_step()
    ekf = make_filter("ekf", process_noise=q, measurement_noise=r, dt=dt).filter(zs)
    np.testing.assert_allclose(ekf, kalman_by_hand(zs, q, r, dt), rtol=1e-9)


def test_log_model_linearises_at_the_prediction() -> None:
    zs = ramp_and_step(sigma=15.0)
    ekf = make_filter("ekf", observation="log", process_noise=1e-6, measurement_noise=225.0)
    np.testing.assert_allclose(ekf.filter(zs), log_ekf_by_hand(zs, 1e-6, 225.0), rtol=1e-9)


@pytest.mark.parametrize("observation", ["linear", "log"])
def test_auto_measurement_noise_converges_to_the_true_variance(observation: str) -> None:
    sigma = 60.0
    _, zs = noisy_steps(6000, sigma, seed=11)
    f = ExtendedKalman(observation=observation)
    learned = []
    for z in zs:
        f.update(z)
        learned.append(f.measurement_variance)
    assert learned[0] == 2500.0
    assert abs(np.mean(learned[1000:]) / sigma**2 - 1.0) < 0.15


def test_fixed_measurement_noise_is_used_as_given() -> None:
    f = ExtendedKalman(measurement_noise=321.0)
    f.filter(ramp_and_step(100))
    assert f.measurement_variance == 321.0


def test_log_model_tracks_a_positive_series_as_well_as_the_linear_one() -> None:
    trend, zs = noisy_steps(3000, 40.0, seed=5)
    errors = {}
    for observation in ("linear", "log"):
        out = make_filter("ekf", observation=observation).filter(zs)
        assert np.all(out > 0.0)
        errors[observation] = np.mean(np.abs(out - trend)[50:])
    assert errors["log"] < 20.0
    assert errors["log"] < 1.25 * errors["linear"]


@pytest.mark.parametrize("start", [350.0, 0.0, -80.0])
def test_log_model_stays_positive_through_zeros_and_negative_samples(start: float) -> None:
    rng = np.random.default_rng(2)
    trend = np.r_[np.full(300, 350.0), np.zeros(300), np.full(300, 350.0)]
    zs = trend + rng.normal(0.0, 50.0, trend.size)
    zs[:300:7] = 0.0
    zs[0] = start
    out = make_filter("ekf", observation="log").filter(zs)
    assert np.all(np.isfinite(out)) and np.all(out > 0.0)
    assert np.median(out[400:600]) < 50.0
    assert np.mean(np.abs(out[-150:] - 350.0)) < 35.0
    assert out.max() < 700.0


def test_log_model_reads_a_negative_sample_as_zero() -> None:
    zs = ramp_and_step(300)
    negative, zero = zs.copy(), zs.copy()
    negative[150], zero[150] = -5000.0, 0.0
    out = make_filter("ekf", observation="log").filter(negative)
    np.testing.assert_array_equal(out, make_filter("ekf", observation="log").filter(zero))
    assert out[150] > 0.9 * out[149]


def test_log_model_follows_a_noise_free_jump_from_zero_without_blowing_up() -> None:
    zs = np.r_[np.zeros(50), np.full(100, 350.0), np.full(100, 3500.0)]
    out = make_filter("ekf", observation="log").filter(zs)
    assert np.all(np.isfinite(out))
    assert out[49] < 1e-9
    assert abs(out[149] - 350.0) < 10.0 and abs(out[-1] - 3500.0) < 100.0
    assert out.max() < 3.0 * 3500.0


def test_invalid_state_is_refused_and_changes_nothing() -> None:
    zs = ramp_and_step(200)
    f = make_filter("ekf", observation="log")
    f.filter(zs[:100])
    good = json.loads(json.dumps(f.state_dict()))
    broken: list[dict[str, Any]] = [
        {"x": [[1.0], [float("nan")]]},
        {"x": [1.0, 2.0]},
        {"P": [[1.0, 0.0]]},
        {"R": 0.0},
        {"samples": -1},
        {"noise": {**good["state"]["noise"], "differences": [1.0] * 500}},
    ]
    for change in broken:
        state = {"spec": good["spec"], "state": {**good["state"], **change}}
        with pytest.raises(ValueError, match="is not allowed"):
            f.load_state_dict(state)
    untouched = make_filter("ekf", observation="log")
    untouched.filter(zs[:100])
    np.testing.assert_array_equal(f.filter(zs[100:]), untouched.filter(zs[100:]))


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("process_noise", 0.0),
        ("measurement_noise", 0.0),
        ("measurement_noise", "manual"),
        ("observation", "exp"),
        ("dt", 0.0),
    ],
)
def test_boundary_parameters_are_refused_by_name(param: str, value: object) -> None:
    with pytest.raises(ValueError) as error:
        make_filter("ekf", **{param: value})
    message = str(error.value)
    assert f"{param}={value!r} is not allowed" in message, message
    if param == "measurement_noise":
        assert "'auto'" in message, message


def test_noise_estimator_finds_sigma_under_jumps() -> None:
    sigma = 25.0
    rng = np.random.default_rng(4)
    trend = np.repeat(rng.uniform(200.0, 500.0, 200), 40)
    estimator = NoiseEstimator()
    estimates = [estimator.update(v) for v in (trend + rng.normal(0.0, sigma, trend.size))]
    assert estimates[7] is None and estimates[8] is not None
    assert abs(np.mean(np.array(estimates[200:], dtype=float)) / sigma - 1.0) < 0.1
    clean = NoiseEstimator()
    assert [clean.update(v) for v in trend][-1] == 0.0


def test_noise_estimator_state_round_trips_through_json() -> None:
    rng = np.random.default_rng(6)
    xs = (300.0 + rng.normal(0.0, 20.0, 400)).tolist()
    original = NoiseEstimator(window=50)
    for x in xs[:170]:
        original.update(x)
    restored = NoiseEstimator(window=50)
    restored.load_state_dict(json.loads(json.dumps(original.state_dict())))
    assert restored.sigma == original.sigma
    assert [restored.update(x) for x in xs[170:]] == [original.update(x) for x in xs[170:]]
    with pytest.raises(ValueError, match="window"):
        NoiseEstimator(window=60).load_state_dict(original.state_dict())
    with pytest.raises(ValueError, match="window=3 is not allowed"):
        NoiseEstimator(window=3)
