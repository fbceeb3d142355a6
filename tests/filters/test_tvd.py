"""TVD is exact and causal: its output equals the last element of an exact batch solution.

The reference for a fixed weight is Condat's direct algorithm in its author's C implementation
(package ``tvdcondat2013``), which shares nothing with our dynamic programme. For the
noise-adaptive weight (``lam="auto"``) it is the dual of the weighted problem, a bounded least
squares solved by SciPy's ``lsq_linear``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.optimize import lsq_linear
from TVDCondat2013 import tvd_2013

from filters import make_filter
from filters.noise import NoiseEstimator
from filters.tvd import tv_denoise


def reference_endpoints(y: np.ndarray, lam: float) -> np.ndarray:
    """Last element of the exact TVD solution of every prefix of ``y``."""
    return np.array([tvd_2013(y[: k + 1].copy(), lam)[-1] for k in range(y.size)])


def signal(kind: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "random":
        return rng.normal(0.0, 1.0, n) * rng.uniform(0.1, 100.0)
    if kind == "step":
        levels = rng.uniform(200.0, 500.0, n // 50 + 1)
        return np.repeat(levels, 50)[:n] + rng.normal(0.0, 40.0, n)
    if kind == "ramp":
        return np.linspace(200.0, 500.0, n) + rng.normal(0.0, 25.0, n)
    if kind == "idle":  # an exactly constant stretch: the noise estimate drops to 0 and back
        noisy = 300.0 + rng.normal(0.0, 30.0, n)
        noisy[n // 4 : n // 4 + n // 3] = 300.0
        return noisy
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["random", "step", "ramp"])
@pytest.mark.parametrize("lam", [0.05, 3.0, 150.0, 5000.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_every_prefix_matches_an_exact_batch_solver(kind: str, lam: float, seed: int) -> None:
    y = signal(kind, 400, seed)
    causal = make_filter("tvd", lam=lam).filter(y)
    np.testing.assert_allclose(causal, reference_endpoints(y, lam), rtol=1e-6, atol=1e-9)


def test_long_run_matches_on_every_prefix() -> None:
    y = signal("step", 20_000, 3)
    causal = make_filter("tvd", lam=800.0).filter(y)
    np.testing.assert_allclose(causal, reference_endpoints(y, 800.0), rtol=1e-6)


@pytest.mark.parametrize("params", [{"lam": 1500.0}, {}])
def test_memory_stays_flat_over_a_long_run(params: dict[str, object]) -> None:
    rng = np.random.default_rng(5)
    n = 200_000
    y = np.repeat(rng.uniform(200.0, 500.0, n // 120 + 1), 120)[:n] + rng.normal(0.0, 80.0, n)
    f = make_filter("tvd", **params)
    peak = []
    for chunk in np.array_split(y, 4):
        most = 0
        for value in chunk.tolist():
            f.update(value)
            most = max(most, f.knots)  # type: ignore[attr-defined]
        peak.append(most)
    assert max(peak) <= 64, peak
    assert peak[-1] <= 2 * peak[0] + 4, peak


def test_batch_solver_matches_reference() -> None:
    for kind, lam in (("random", 1.0), ("step", 200.0), ("ramp", 40.0)):
        y = signal(kind, 3_000, 11)
        np.testing.assert_allclose(tv_denoise(y, lam), tvd_2013(y.copy(), lam), rtol=1e-9)
    assert tv_denoise(np.array([]), 1.0).size == 0


def test_step_is_followed_faster_when_it_is_larger() -> None:
    """After a long flat stretch the new level after m samples is h - lam/m (to lam/len)."""
    lam = 200.0
    for height in (50.0, 200.0):
        y = np.concatenate([np.zeros(2_000), np.full(40, height)])
        out = make_filter("tvd", lam=lam).filter(y)
        m = np.arange(1, 41)
        expected = np.maximum(height - lam / m, lam / 2_000)
        np.testing.assert_allclose(out[2_000:], expected, atol=lam / 2_000 + 1e-9)
    # 50 tuples/s (one operator) takes 8 samples to get half way; 200 takes 2.


def test_lam_zero_is_the_identity() -> None:
    y = signal("random", 100, 2)
    np.testing.assert_array_equal(make_filter("tvd", lam=0.0).filter(y), y)
    np.testing.assert_array_equal(make_filter("tvd", lam=0.0, method="mm").filter(y), y)


@pytest.mark.parametrize("kind", ["random", "step", "ramp"])
def test_mm_method_is_close_to_exact(kind: str) -> None:
    y = signal(kind, 300, 4)
    scale = float(np.std(y))
    lam = 3.0 * scale
    exact = make_filter("tvd", lam=lam).filter(y)
    mm = make_filter("tvd", lam=lam, method="mm").filter(y)
    # MM is iterative: typically within 1e-4 of the signal's spread, a few prefixes up to ~1.5%.
    error = np.abs(mm - exact) / scale
    assert np.median(error) <= 1e-3 and error.max() <= 0.03, (np.median(error), error.max())


def test_mm_window_solves_the_last_window_only() -> None:
    y = signal("step", 200, 6)
    windowed = make_filter("tvd", lam=100.0, method="mm", window=30, iterations=300).filter(y)
    expected = [tvd_2013(y[max(0, k - 29) : k + 1].copy(), 100.0)[-1] for k in range(y.size)]
    np.testing.assert_allclose(windowed, expected, atol=0.01 * float(np.std(y)))


def weighted_endpoints(y: np.ndarray, lam_per_sigma: float) -> np.ndarray:
    """Last element of the exact weighted-TVD solution of every prefix, through the dual.

    min_x ½||y - x||² + Σ_i lam_i |x_{i+1} - x_i| is solved by x = y - Dᵀz, where
    z = argmin ||y - Dᵀz||² subject to |z_i| <= lam_i and (Dx)_i = x_{i+1} - x_i.
    lam_i = lam_per_sigma × the noise estimate after sample i (its warm-up stand-in ``rough``
    while it has fewer than 8 differences, 0 before the first difference).
    """
    noise = NoiseEstimator()
    sigmas = []
    for value in y.tolist():
        noise.update(value)
        sigmas.append(noise.rough)
    lam = np.array([0.0 if s is None else lam_per_sigma * s for s in sigmas])
    ends = []
    for k in range(y.size):
        prefix, weights = y[: k + 1], lam[:k]
        # Edges of weight 0 have z_i = 0; lsq_linear needs lower < upper bounds.
        free = weights > 0
        if not free.any():
            ends.append(prefix[-1])
            continue
        transposed = np.diff(np.eye(k + 1), axis=0).T[:, free]
        bound = weights[free]
        z = lsq_linear(transposed, prefix, bounds=(-bound, bound), method="bvls", tol=1e-15).x
        ends.append(prefix[-1] - (transposed @ z)[-1])
    return np.array(ends)


@pytest.mark.parametrize("kind", ["random", "step", "ramp", "idle"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("lam_per_sigma", [10.0, 2.5])
def test_auto_weight_matches_the_exact_weighted_solution(
    kind: str, seed: int, lam_per_sigma: float
) -> None:
    y = signal(kind, 60, seed)
    auto = make_filter("tvd", lam_per_sigma=lam_per_sigma).filter(y)
    reference = weighted_endpoints(y, lam_per_sigma)
    scale = float(np.std(y))
    np.testing.assert_allclose(auto, reference, rtol=1e-6, atol=1e-9 * scale)
    np.testing.assert_array_equal(auto[:2], y[:2])  # no difference, no weight, before sample 1


@pytest.mark.parametrize("scale", [0.01, 1000.0])
@pytest.mark.parametrize("shift", [0.0, -250.0, 1e5])
def test_auto_weight_does_not_depend_on_units(scale: float, shift: float) -> None:
    rng = np.random.default_rng(8)
    n = 1_500
    y = np.clip(np.repeat(rng.uniform(200.0, 500.0, 11), 150)[:n] + rng.normal(0, 100, n), 0, None)
    out = make_filter("tvd").filter(y)
    moved = make_filter("tvd").filter(scale * y + shift)
    np.testing.assert_allclose(moved, scale * out + shift, rtol=0, atol=1e-9 * scale * 500)


@pytest.mark.parametrize("sigma", [25.0, 250.0])
def test_default_smooths_without_knowing_the_noise_level(sigma: float) -> None:
    f = make_filter("tvd")
    assert f.spec == {
        "name": "tvd",
        "lam": "auto",
        "lam_per_sigma": 10.0,
        "method": "exact",
        "window": None,
        "iterations": 100,
    }
    rng = np.random.default_rng(0)
    n, length = 1_500, 150
    clean = np.repeat(rng.uniform(200.0, 500.0, n // length), length)
    noisy = clean + rng.normal(0.0, sigma, n)
    out = f.filter(noisy)
    # Raw jumps by more than sigma/10 at ~95% of samples; the output at ~6% (25) and ~1% (250).
    jumps = np.count_nonzero(np.abs(np.diff(out)) > 0.1 * sigma)
    assert jumps < 0.15 * n, jumps
    # Error: 0.57 sigma (25) and 0.19 sigma (250) overall, most of it in the lag after the steps
    # (the output reaches a step of h after about 2 lam / h samples, lam = 10 sigma); 0.17 and
    # 0.13 sigma from 20 samples after a step on. Raw (lam=0) is 0.99 sigma on both.
    error = (out - clean) / sigma
    settled = np.arange(n) % length >= 20
    assert np.sqrt(np.mean(error**2)) < 0.8
    assert np.sqrt(np.mean(error[settled] ** 2)) < 0.35


def test_auto_weight_needs_the_exact_method_and_a_positive_scale() -> None:
    with pytest.raises(ValueError, match="lam='auto' is not allowed with method='mm'"):
        make_filter("tvd", method="mm")
    make_filter("tvd", lam=40.0, method="mm")
    for bad in (0.0, -1.0, float("inf"), "10", None):
        with pytest.raises(ValueError, match=f"lam_per_sigma={bad!r} is not allowed.*> 0"):
            make_filter("tvd", lam_per_sigma=bad)
    with pytest.raises(ValueError, match="lam='Auto' is not allowed.* or 'auto'"):
        make_filter("tvd", lam="Auto")


def test_auto_state_continues_exactly_and_bad_state_changes_nothing() -> None:
    y = signal("step", 400, 9)
    original = make_filter("tvd")
    original.filter(y[:200])
    saved = json.loads(json.dumps(original.state_dict()))
    assert saved["state"]["_noise"]["window"] == 120
    noise = NoiseEstimator()
    for value in y[:200].tolist():
        sigma = noise.update(value)
    assert sigma is not None and saved["state"]["_bound"] == 10.0 * sigma

    target = make_filter("tvd")
    target.filter(y[:50])
    before = json.dumps(target.state_dict())
    state = saved["state"]
    broken = [
        {**state, "_noise": {**state["_noise"], "window": 60}},
        {**state, "_noise": {**state["_noise"], "differences": ["1.0"]}},
        {**state, "_noise": make_filter("tvd").state_dict()["state"]["_noise"]},
        {**state, "_bound": state["_bound"] * 1.5},
        {**state, "_bound": "100"},
        {**state, "_offset": float("nan")},
        {**state, "_position": state["_position"][1:]},
        {**state, "_slope": [str(v) for v in state["_slope"]]},
        {key: value for key, value in state.items() if key != "_noise"},
    ]
    for values in broken:
        with pytest.raises(ValueError, match="not allowed|do not match|state was taken"):
            target.load_state_dict({"spec": saved["spec"], "state": values})
        assert json.dumps(target.state_dict()) == before
    target.load_state_dict(saved)
    np.testing.assert_array_equal(target.filter(y[200:]), original.filter(y[200:]))


def test_auto_smooths_from_the_third_sample_instead_of_following_the_warm_up() -> None:
    # Before the noise estimator has 8 differences, the RMS of the differences stands in: the
    # first outputs of a noisy level must not swing like the samples (each swing would be a
    # scaling operation for a policy downstream).
    rng = np.random.default_rng(4)
    errors_in, errors_out = [], []
    for _ in range(200):
        y = 350.0 + rng.normal(0.0, 300.0, 9)
        out = make_filter("tvd").filter(y)
        errors_in.append(np.abs(y[2:] - 350.0).mean())
        errors_out.append(np.abs(out[2:] - 350.0).mean())
    assert np.mean(errors_out) < 0.6 * np.mean(errors_in)


def test_rough_noise_estimate_stands_in_until_the_robust_one_exists() -> None:
    noise = NoiseEstimator()
    assert noise.rough is None
    noise.update(10.0)
    assert noise.rough is None
    noise.update(14.0)
    assert noise.rough == pytest.approx(4.0 / np.sqrt(2.0))
    for value in (10.0, 14.0, 10.0, 14.0, 10.0, 14.0, 10.0):
        noise.update(value)
    assert noise.sigma is not None and noise.rough == noise.sigma
