"""seasonality: the periodogram test that finds a cycle faster than a level can follow."""

from __future__ import annotations

import numpy as np
import pytest

from filters.seasonality import WINDOW, cycle_variance, periodogram


def mean_periodogram(series: np.ndarray) -> tuple[np.ndarray, float]:
    windows = series.reshape(-1, WINDOW)
    return np.mean([periodogram(w.tolist()) for w in windows], axis=0), float(len(windows))


def test_a_profile_with_harmonics_is_found_with_its_variance() -> None:
    # A daily profile (fundamental and second harmonic, variance 1,800 + 1,012) under noise of
    # 100: the fundamental, its harmonics and the bins they leak into carry its variance.
    t = np.arange(6 * WINDOW)
    profile = 60.0 * np.cos(2 * np.pi * t / 48) + 45.0 * np.cos(4 * np.pi * t / 48 + 1.0)
    found = []
    for seed in range(10):
        noise = np.random.default_rng(seed).normal(0.0, 100.0, t.size)
        found.append(cycle_variance(*mean_periodogram(profile + noise)))
    assert np.mean(found) == pytest.approx(2812.0, rel=0.15)
    assert min(found) > 0.0


def test_a_cycle_slower_than_64_samples_is_a_drift_not_a_cycle() -> None:
    t = np.arange(4 * WINDOW)
    slow = 80.0 * np.cos(2 * np.pi * t / 128)
    noise = np.random.default_rng(1).normal(0.0, 100.0, t.size)
    assert cycle_variance(*mean_periodogram(slow + noise)) == 0.0


def test_noise_alone_passes_in_at_most_the_stated_share() -> None:
    # _FALSE_ALARM = 0.1 bounds the share of windows in which noise alone shows a cycle
    # (Bonferroni over the candidates); measured: 3 % of evaluations after 4 windows.
    shown = [
        cycle_variance(*mean_periodogram(np.random.default_rng(seed).normal(0.0, 1.0, 4 * WINDOW)))
        for seed in range(200)
    ]
    assert sum(variance > 0.0 for variance in shown) <= 20
