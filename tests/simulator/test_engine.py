"""The simulation engine drives a real Scaler and measures what it did."""

from __future__ import annotations

import numpy as np
import pytest

from filters import make_filter
from scaling import Scaler, ThresholdPolicy, make_guard
from simulator.model.engine import PROGRESS_CHUNK, simulate


def scaler(name: str = "raw", **params: float) -> Scaler:
    return Scaler(make_filter(name, **params), ThresholdPolicy(capacity=50.0), operators=2)


def test_raw_thresholding_is_perfect_against_its_own_samples() -> None:
    volumes = np.array([90.0, 160.0, 140.0, 40.0, 260.0])
    result = simulate(scaler(), volumes)
    assert result.reference == "volume"
    np.testing.assert_array_equal(result.timeline["operators"], [2, 4, 3, 1, 6])
    np.testing.assert_array_equal(result.timeline["needed"], [2, 4, 3, 1, 6])
    assert result.metrics == {
        "s_up": 2,  # 2 -> 4, 1 -> 6
        "s_down": 2,  # 4 -> 3, 3 -> 1
        "p_over": 0.0,
        "p_under": 0.0,
        "operator_seconds": 16.0,
    }
    assert result.trend_metrics is None


def test_metrics_against_the_trend_count_what_the_noise_made_the_scaler_do() -> None:
    trend = np.full(6, 120.0)  # needs 3 throughout
    noisy = np.array([120.0, 160.0, 120.0, 90.0, 120.0, 120.0])
    result = simulate(scaler(), noisy, trend=trend, step=10.0)
    # operators 3, 4, 3, 2, 3, 3 against 3 needed: one sample over, one under, 10 s each
    assert result.trend_metrics == {
        "s_up": 3,
        "s_down": 2,
        "p_over": 10.0,
        "p_under": 10.0,
        "operator_seconds": 180.0,
    }
    same = simulate(scaler(), noisy, reference="trend", trend=trend, step=10.0)
    assert same.reference == "trend" and same.metrics == result.trend_metrics
    np.testing.assert_array_equal(result.timeline["t"], np.arange(6) * 10.0)


def test_a_smoothing_filter_scales_less_than_raw_on_noise() -> None:
    rng = np.random.default_rng(0)
    trend = np.full(1_500, 310.0)
    noisy = trend + rng.normal(0.0, 40.0, trend.size)
    raw = simulate(scaler(), noisy, trend=trend).trend_metrics
    tvd = simulate(scaler("tvd", lam=2_000.0), noisy, trend=trend).trend_metrics
    assert raw is not None and tvd is not None
    assert tvd["s_up"] + tvd["s_down"] < (raw["s_up"] + raw["s_down"]) / 10
    assert tvd["p_over"] + tvd["p_under"] < raw["p_over"] + raw["p_under"]


def test_guards_and_the_scaler_state_carry_through() -> None:
    guarded = Scaler(
        make_filter("raw"),
        ThresholdPolicy(capacity=50.0),
        [make_guard("cooldown", down=100.0)],
        operators=1,
    )
    result = simulate(guarded, np.array([200.0, 50.0, 50.0]), start=5.0)
    np.testing.assert_array_equal(result.timeline["operators"], [4, 4, 4])
    assert guarded.operators == 4
    with pytest.raises(ValueError, match="t=5.0 is not allowed"):
        simulate(guarded, np.array([10.0]), start=5.0)


def test_bad_references_are_refused() -> None:
    with pytest.raises(ValueError, match="reference='trend' is not allowed"):
        simulate(scaler(), np.ones(3), reference="trend")
    with pytest.raises(ValueError, match="trend has shape"):
        simulate(scaler(), np.ones(3), trend=np.ones(4))


def test_progress_reports_growing_counts_up_to_every_sample_and_changes_nothing() -> None:
    rng = np.random.default_rng(1)
    samples = 2 * PROGRESS_CHUNK + 7
    noisy = np.clip(300.0 + rng.normal(0.0, 60.0, samples), 0.0, None)
    done: list[int] = []
    reported = simulate(scaler("ewma", alpha=0.1), noisy, progress=done.append)
    assert done == [PROGRESS_CHUNK, 2 * PROGRESS_CHUNK, samples]
    plain = simulate(scaler("ewma", alpha=0.1), noisy)
    assert reported.metrics == plain.metrics
    for column, values in plain.timeline.items():
        np.testing.assert_array_equal(reported.timeline[column], values)
