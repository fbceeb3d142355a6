"""What the moving median adds to the contract: exact medians, spikes ignored, no clipping bias."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from filters import make_filter

WINDOWS = (1, 2, 5, 60)


def reference(xs: np.ndarray, w: int) -> np.ndarray:
    return np.array([np.median(xs[max(0, t - w + 1) : t + 1]) for t in range(len(xs))])


@pytest.mark.parametrize("w", WINDOWS)
def test_equals_numpy_median_of_the_last_w_samples(w: int) -> None:
    rng = np.random.default_rng(w)
    # Small integers give many ties; the normal part gives distinct values; both warm up.
    ties = rng.integers(0, 4, 200).astype(float)
    distinct = rng.normal(300.0, 100.0, 200)
    for xs in (ties, distinct, np.concatenate([ties, distinct])):
        np.testing.assert_array_equal(
            make_filter("moving_median", w=w).filter(xs), reference(xs, w)
        )


@pytest.mark.parametrize("w", (3, 5, 60, 61))
@pytest.mark.parametrize("height", (5000.0, 0.0))
def test_a_spike_shorter_than_half_the_window_is_ignored(w: int, height: float) -> None:
    shortest_moving = math.ceil(w / 2)
    for length in range(1, shortest_moving):
        xs = np.full(3 * w, 350.0)
        xs[w : w + length] = height
        np.testing.assert_array_equal(make_filter("moving_median", w=w).filter(xs), 350.0)
    xs = np.full(3 * w, 350.0)
    xs[w : w + shortest_moving] = height
    assert make_filter("moving_median", w=w).filter(xs)[w + shortest_moving - 1] != 350.0


def test_clipped_noise_biases_the_moving_average_but_not_the_median() -> None:
    level, sigma, w = 350.0, 360.0, 60
    rng = np.random.default_rng(3)
    xs = np.clip(level + rng.normal(0.0, sigma, 40_000), 0.0, None)
    # E[max(0, X)] for X ~ N(level, sigma^2): level * Phi(level / sigma) + sigma * phi(...).
    z = level / sigma
    expected_bias = (
        level * 0.5 * (1 + math.erf(z / math.sqrt(2)))
        + sigma * math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
        - level
    )
    assert expected_bias == pytest.approx(31.6, abs=0.1)
    average_error = make_filter("moving_average", w=w).filter(xs)[w:].mean() - level
    median_error = make_filter("moving_median", w=w).filter(xs)[w:].mean() - level
    # Over 5 seeds: average +27..+35, median -3.5..+3.5.
    assert average_error == pytest.approx(expected_bias, abs=8.0)
    assert abs(median_error) < 8.0


@pytest.mark.parametrize("cut", (0, 1, 4, 5, 6, 37))
def test_state_round_trip_mid_stream_continues_exactly(cut: int) -> None:
    xs = np.random.default_rng(cut).integers(0, 6, 80).astype(float)
    original = make_filter("moving_median", w=5)
    original.filter(xs[:cut])
    saved = json.loads(json.dumps(original.state_dict()))
    assert saved["state"] == {"_window": xs[max(0, cut - 5) : cut].tolist()}
    restored = make_filter("moving_median", w=5)
    restored.filter([9.0, 1.0, 4.0])
    restored.load_state_dict(saved)
    np.testing.assert_array_equal(restored.filter(xs[cut:]), original.filter(xs[cut:]))


def test_integer_samples_in_a_state_come_back_as_floats() -> None:
    f = make_filter("moving_median", w=3)
    f.load_state_dict({"spec": f.spec, "state": {"_window": [1, 5, 2]}})
    value = f.update(0)
    assert value == 2.0 and type(value) is float


@pytest.mark.parametrize(
    "window", ([1.0, 2.0, 3.0, 4.0], [1.0, "2"], [1.0, None], [True], "1.0", {"0": 1.0})
)
def test_an_impossible_window_is_refused_and_changes_nothing(window: object) -> None:
    f = make_filter("moving_median", w=3)
    f.filter([10.0, 20.0])
    with pytest.raises(ValueError, match=r"_window=.* is not allowed: .* at most w=3 finite"):
        f.load_state_dict({"spec": f.spec, "state": {"_window": window}})
    assert f.update(30.0) == 20.0


def test_non_finite_window_values_are_refused() -> None:
    f = make_filter("moving_median", w=3)
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="_window"):
            f.load_state_dict({"spec": f.spec, "state": {"_window": [1.0, bad]}})


@pytest.mark.parametrize("w", (0, 2.5))
def test_windows_that_are_not_positive_integers_are_refused(w: float) -> None:
    with pytest.raises(ValueError, match=r"moving_median: w=.* integer >= 1"):
        make_filter("moving_median", w=w)
