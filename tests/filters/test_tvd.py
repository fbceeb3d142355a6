"""TVD is exact and causal: its output equals the last element of an exact batch solution.

The reference is Condat's direct algorithm in its author's C implementation (package
``tvdcondat2013``), which shares nothing with our dynamic programme.
"""

from __future__ import annotations

import numpy as np
import pytest
from TVDCondat2013 import tvd_2013

from filters import make_filter
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


def test_memory_stays_flat_over_a_long_run() -> None:
    rng = np.random.default_rng(5)
    n = 200_000
    y = np.repeat(rng.uniform(200.0, 500.0, n // 120 + 1), 120)[:n] + rng.normal(0.0, 80.0, n)
    f = make_filter("tvd", lam=1500.0)
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
