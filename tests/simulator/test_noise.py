"""Noise at a given SNR: the three definitions, seeding, clipping at 0 and validation."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from simulator.model.noise import add_noise, noise_std
from simulator.model.workloads import paper_workload

# Long enough that the noise's sample variance has a relative standard error of
# sqrt(2 / n) = 0.3 %, and far enough from 0 that clipping never happens: mean 1000, variance 5000.
LONG = 1000.0 + 100.0 * np.sin(2 * np.pi * np.arange(200_000) / 1000)


def realised_snr(trend: np.ndarray, noise: np.ndarray, definition: str) -> float:
    """The ratio measured on a sample, with the statistics the definition names."""
    if definition == "power":
        return float(np.mean(trend**2) / np.var(noise))
    if definition == "ac-power":
        return float(np.var(trend) / np.var(noise))
    return float(np.mean(trend) / np.std(noise))


def test_noise_std_implements_the_documented_formulas() -> None:
    trend = paper_workload(seed=4)
    assert noise_std(trend, 2.0, "power") == pytest.approx(math.sqrt(np.mean(trend**2) / 2.0))
    assert noise_std(trend, 2.0, "ac-power") == pytest.approx(math.sqrt(np.var(trend) / 2.0))
    assert noise_std(trend, 2.0, "amplitude") == pytest.approx(np.mean(trend) / 2.0)
    assert noise_std(trend, 2.0) == noise_std(trend, 2.0, "power")


@pytest.mark.parametrize(
    ("definition", "snr"), [("power", 100.5), ("ac-power", 0.5), ("amplitude", 10.0)]
)
def test_the_noise_added_has_the_stated_ratio(definition: str, snr: float) -> None:
    noise = add_noise(LONG, snr, seed=11, definition=definition) - LONG
    assert noise_std(LONG, snr, definition) == pytest.approx(100.0, rel=1e-3)
    assert np.var(noise) == pytest.approx(noise_std(LONG, snr, definition) ** 2, rel=0.02)
    assert realised_snr(LONG, noise, definition) == pytest.approx(snr, rel=0.02)
    assert abs(np.mean(noise)) < 1.0  # 0 within four standard errors (100 / sqrt(200,000))


def test_the_same_seed_gives_the_same_noise_and_another_seed_other_noise() -> None:
    trend = paper_workload(seed=1)
    noisy = add_noise(trend, 1.0, seed=5)
    assert np.array_equal(noisy, add_noise(trend, 1.0, seed=5))
    assert not np.array_equal(noisy, add_noise(trend, 1.0, seed=6))


def test_infinite_snr_returns_an_untouched_copy() -> None:
    trend = paper_workload(seed=1)
    copy = add_noise(trend, math.inf, seed=5)
    assert np.array_equal(copy, trend) and copy is not trend
    copy[0] = -1.0
    assert trend[0] != -1.0
    assert noise_std(trend, math.inf, "amplitude") == 0.0


def test_ac_power_adds_no_noise_to_a_constant_trend() -> None:
    constant = np.full(100, 300.0)
    assert noise_std(constant, 0.5, "ac-power") == 0.0
    assert np.array_equal(add_noise(constant, 0.5, seed=1, definition="ac-power"), constant)


def test_volumes_are_clipped_at_zero_which_raises_the_mean() -> None:
    level, snr = 350.0, 0.5  # amplitude: sigma = 700, as at the paper's lowest SNR
    trend = np.full(200_000, level)
    noisy = add_noise(trend, snr, seed=2, definition="amplitude")
    sigma = level / snr
    assert noisy.min() == 0.0
    assert np.mean(noisy == 0.0) == pytest.approx(NormalDist().cdf(-level / sigma), abs=0.005)
    z = level / sigma
    expected = level * NormalDist().cdf(z) + sigma * NormalDist().pdf(z)  # the documented 488
    assert np.mean(noisy) == pytest.approx(expected, rel=0.01)
    assert expected == pytest.approx(488.5, abs=0.1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"snr": 0.0}, "snr=0.0 is not allowed: snr must be a number > 0, or math.inf"),
        ({"snr": -1}, "snr=-1 "),
        ({"snr": math.nan}, "snr=nan "),
        ({"snr": "5"}, "snr='5' "),
        ({"snr": True}, "snr=True "),
        (
            {"definition": "db"},
            "definition='db' is not allowed: .*'power', 'ac-power', 'amplitude'",
        ),
        ({"trend": [[300.0]]}, "a trend of shape \\(1, 1\\) .*trend must be"),
        ({"trend": []}, "a trend of shape \\(0,\\)"),
        ({"trend": [300.0, math.nan]}, "trend\\[1\\]=nan .*finite numbers >= 0"),
        ({"trend": [300.0, -1.0]}, "trend\\[1\\]=-1.0 "),
        ({"seed": -1}, "seed=-1 is not allowed"),
        ({"seed": 1.5}, "seed=1.5 is not allowed"),
    ],
)
def test_invalid_arguments_raise_value_errors_that_name_them(
    kwargs: dict[str, object], message: str
) -> None:
    arguments: dict[str, object] = {"trend": [300.0, 400.0], "snr": 1.0, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=f"add_noise: {message}"):
        add_noise(**arguments)  # type: ignore[arg-type]
    if "seed" not in kwargs:
        del arguments["seed"]
        with pytest.raises(ValueError, match=f"noise_std: {message}"):
            noise_std(**arguments)  # type: ignore[arg-type]
