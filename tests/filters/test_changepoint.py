"""changepoint: what is specific to it (the generic contract is in test_contract.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from filters import make_filter
from filters.changepoint import _CYCLE_SHARE, ChangePoint
from filters.changepoint_state import packed as _packed


def noisy(level: float, sigma: float, n: int, seed: int) -> np.ndarray:
    return np.clip(level + np.random.default_rng(seed).normal(0.0, sigma, n), 0.0, None)


@pytest.mark.parametrize("sigma", [5.0, 40.0, 150.0])
def test_noise_estimate_is_close_and_ignores_steps_and_spikes(sigma: float) -> None:
    series = np.concatenate([noisy(1000.0, sigma, 400, 1), noisy(1600.0, sigma, 400, 2)])
    series[[100, 500, 501, 700]] = [9000.0, 0.0, 9000.0, 0.0]
    f = ChangePoint()
    f.filter(series)
    assert f.noise == pytest.approx(sigma, rel=0.1)


def test_level_is_the_mean_since_the_change_with_a_standard_error_that_shrinks() -> None:
    f = ChangePoint(resolution=50.0)
    spreads = []
    for x in noisy(400.0, 60.0, 150, 3):
        f.update(float(x))
        spreads.append(f.spread)
    # None while the noise estimate rests on fewer than 8 differences (warm-up).
    assert spreads[:8] == [None] * 8 and spreads[8] is not None
    last = spreads[-1]
    assert last is not None and last == pytest.approx(60.0 / np.sqrt(150), rel=0.2)
    assert f.update(400.0) == pytest.approx(400.0, abs=3 * last)


def test_a_change_is_followed_sooner_the_larger_it_is_relative_to_the_noise() -> None:
    def delay(height: float) -> int:
        f = ChangePoint(resolution=50.0)
        f.filter(noisy(300.0, 50.0, 300, 4))
        after = f.filter(noisy(300.0 + height, 50.0, 300, 5))
        return int(np.argmax(np.abs(after - (300.0 + height)) < height / 2))

    delays = [delay(height) for height in (75.0, 150.0, 300.0, 1000.0)]
    assert delays == sorted(delays, reverse=True) and delays[0] > delays[-1]
    # The residuals are clipped at 3 deviations: a change is never declared on fewer than
    # threshold / 3 samples, whatever its height.
    assert delays[-1] >= 25 / 3


def test_a_level_that_holds_is_averaged_over_all_its_samples() -> None:
    # No drift: the level is the mean of every sample since the change, not of the last
    # ``memory``, so a level just above a threshold does not wander below it.
    series = noisy(1000.0, 90.0, 3000, 10)
    f = ChangePoint(resolution=50.0, memory=80.0)
    levels = f.filter(series)
    # The standard error of a mean over 80 forgotten samples is 90 / sqrt(159) = 7.1.
    assert f.spread is not None and f.spread < 90.0 / np.sqrt(159) / 2
    forgetting = ChangePoint(resolution=50.0, memory=80.0)
    recent = []
    for x in series:
        forgetting.update(float(x))
        recent.append(forgetting._recent_level)
    mean = np.cumsum(series) / np.arange(1, series.size + 1)  # of every sample so far
    stray = np.abs(np.array(recent[500:]) - mean[500:]).mean()
    assert np.abs(levels[500:] - mean[500:]).mean() < stray / 2


def test_a_drift_is_followed_once_the_data_show_it() -> None:
    # 200 -> 400 over 2,000 samples under noise of 40: the change per sample is far below
    # what the CUSUM declares, but the recent level leaves the long mean and the output
    # follows it instead of lagging by half the elapsed drift.
    trend = np.linspace(200.0, 400.0, 2000)
    series = np.clip(trend + np.random.default_rng(11).normal(0.0, 40.0, 2000), 0.0, None)
    levels = ChangePoint(resolution=50.0, memory=80.0, threshold=1e9).filter(series)
    lag = trend[1000:] - levels[1000:]
    assert np.abs(lag).mean() < 25.0  # the mean since the start lags by 50-100


def test_a_level_that_holds_is_known_ever_better() -> None:
    # Whatever follows a drift must not cost this: with no drift the level is the mean of every
    # sample, so its standard error keeps falling as sigma / sqrt(n) instead of stopping at a
    # window's (90 / sqrt(159) = 7.1 for a mean forgetting over 80 samples).
    f = ChangePoint(resolution=50.0, memory=80.0)
    spreads = []
    for piece, seed in zip((500, 500, 1000, 2000), range(20, 24), strict=True):
        f.filter(noisy(1000.0, 90.0, piece, seed))
        assert f.spread is not None
        spreads.append(f.spread)
    assert spreads == sorted(spreads, reverse=True)
    assert spreads[-1] == pytest.approx(90.0 / np.sqrt(4000), rel=0.25)


@pytest.mark.xfail(
    strict=True,
    reason="not done: step 4 follows the recent mean E, memory x slope behind a ramp, and only "
    "once drift is evident (docs/default.md, What is not done yet)",
)
def test_the_level_keeps_up_with_a_ramp() -> None:
    # The compare grid's paper workload at SNR 10, seed 3: flat at 376, then 376 -> 487 in
    # 155 s under noise of 110. At the end of the ramp the level read 437 and the Scaler went
    # to 10 operators of 50 for 490 tuples/s. Over 20 seeds the level lags the last 40
    # samples of the ramp by 73 on average today; a level that follows a ramp errs by at most
    # a third of one operator's capacity there.
    lags = []
    for seed in range(20):
        trend = np.concatenate([np.full(700, 376.0), np.linspace(376.0, 487.0, 156)])
        noise = np.random.default_rng(seed).normal(0.0, 110.0, trend.size)
        levels = ChangePoint(resolution=50.0).filter(np.clip(trend + noise, 0.0, None))
        lags.append(np.mean(trend[-40:] - levels[-40:]))
    assert abs(np.mean(lags)) < 50.0 / 3


def test_noise_that_grows_a_billionfold_within_a_cycle_window_is_followed() -> None:
    # Found by the service's fuzzing: 2e-170, then 351, then volumes near 10^12. The cycle
    # test's residuals, in steps of the noise at the window's start, overflowed their int32.
    changepoint = ChangePoint(resolution=50.0)
    levels = [changepoint.update(v) for v in (2.2e-170, 351.2, 6.3e11, 7.7e11, 6.6e11, 7e11)]
    assert all(np.isfinite(levels)) and levels[-1] > 0.0
    restored = ChangePoint(resolution=50.0)
    restored.load_state_dict(changepoint.state_dict())
    assert restored.update(6.8e11) == changepoint.update(6.8e11)


def test_the_spread_includes_a_variation_the_level_does_not_follow() -> None:
    # A cycle of +-100 every 48 samples (a day of half-hour samples) under noise of 60: the
    # level is its mean, but the volume is 70 away from it on average, and the spread says
    # so; on the noise alone it is the standard error of the mean.
    t = np.arange(3000)
    cycle = 100.0 * np.sin(2.0 * np.pi * t / 48.0)
    noise = np.random.default_rng(12).normal(0.0, 60.0, t.size)
    varying, flat = ChangePoint(resolution=50.0), ChangePoint(resolution=50.0)
    varying.filter(400.0 + cycle + noise)
    flat.filter(400.0 + noise)
    assert varying.spread is not None and flat.spread is not None
    assert varying.spread == pytest.approx(100.0 / np.sqrt(2.0), rel=0.25)
    assert flat.spread < 3.0


def cyclic(level: float, sigma: float, n: int, seed: int) -> np.ndarray:
    """A daily cycle of +-90 every 48 samples (nyc_taxi replayed at a sample a second)."""
    cycle = 90.0 * np.cos(2.0 * np.pi * np.arange(n) / 48.0)
    return np.clip(level + cycle + np.random.default_rng(seed).normal(0.0, sigma, n), 0.0, None)


def test_a_cycle_faster_than_a_change_is_provisioned_for() -> None:
    # Under noise of 150 the level reads the cycle's mean, 340 (7 operators of 50); once the
    # cycle stands out of the periodogram the output is the level plus half its deviation of
    # 64 (90 / sqrt 2), so that a count covers most of the cycle. The same noise without the
    # cycle leaves the level alone.
    for seed in range(10):
        with_cycle, without = ChangePoint(resolution=50.0), ChangePoint(resolution=50.0)
        raised = with_cycle.filter(cyclic(340.0, 150.0, 3000, seed))[-1]
        flat = without.filter(noisy(340.0, 150.0, 3000, seed))[-1]
        assert with_cycle._cycle == pytest.approx(90.0 / np.sqrt(2.0), rel=0.15)
        assert raised - 340.0 == pytest.approx(32.0, abs=10.0)
        assert without._cycle == 0.0 and flat == pytest.approx(340.0, abs=8.0)


def test_steps_and_noise_alone_seldom_show_a_cycle() -> None:
    # Plateaus of 100-250 samples 5-10 deviations apart: the transient of each change (the
    # samples before it is declared) is left out of the periodogram, so no cycle shows.
    lengths = np.random.default_rng(5).integers(100, 250, 24)
    levels = [300.0, 500.0, 250.0, 450.0, 200.0, 400.0] * 4
    pieces = enumerate(zip(levels, lengths, strict=True))
    steps = np.concatenate([noisy(v, 30.0, int(n), seed) for seed, (v, n) in pieces])
    f = ChangePoint(resolution=50.0)
    f.filter(steps)
    assert f._cycle == 0.0
    # Noise alone: a cycle may pass the test at some window (at most 10 % of them by the
    # Bonferroni bound; 8 % of 3,000-sample runs), and then for little, under 0.1 deviation.
    shown = []
    for seed in range(50):
        g = ChangePoint(resolution=50.0)
        g.filter(noisy(340.0, 150.0, 3072, seed))
        shown.append(g._cycle)
    assert sum(cycle > 0.0 for cycle in shown) <= 5
    assert max(shown) / 2.0 < 0.1 * 150.0


def test_heavy_noise_declares_no_change() -> None:
    # Noise of 345 around 338 (nyc_taxi at SNR 1, 7 capacities of 50): with an allowance of
    # resolution / 2 sigma = 0.07 alone, noise passed the CUSUM threshold about once in 2,900
    # samples, and the level restarted from the most extreme samples, 730 (8 operators too
    # many). With the allowance at least 0.25 the level stays within about 2 standard errors.
    worst = [
        np.abs(ChangePoint(resolution=50.0).filter(noisy(338.0, 345.0, 3000, seed))[200:] - 338.0)
        for seed in range(20)
    ]
    assert max(float(np.max(w)) for w in worst) < 100.0


def test_a_state_taken_mid_window_with_a_cycle_continues_identically() -> None:
    series = cyclic(340.0, 150.0, 2500, 3)
    original = ChangePoint(resolution=50.0)
    original.filter(series[:1300])
    assert original._cycle > 0.0 and original._cycle_residuals
    saved = json.loads(json.dumps(original.state_dict(), allow_nan=False))
    restored = make_filter(saved["spec"])
    restored.load_state_dict(saved)
    np.testing.assert_array_equal(restored.filter(series[1300:]), original.filter(series[1300:]))


def test_noise_clipped_at_zero_does_not_bias_the_level() -> None:
    # A level of 250 under noise of 500 is clipped at 0 a third of the time; the clipped
    # samples average 350, two operators of 50 too many.
    series = [noisy(250.0, 500.0, 3000, seed) for seed in (6, 7, 8)]
    assert np.mean(series) > 340.0
    levels = [ChangePoint(resolution=50.0).filter(s)[500:] for s in series]
    assert np.mean(levels) == pytest.approx(250.0, abs=15.0)


def test_a_level_that_holds_under_clipped_noise_is_neither_low_nor_wandering() -> None:
    # 200.2 under noise of 205 (a flat real trace at SNR 1, 16 % of samples clipped at 0):
    # leaving out the samples above 3 clipped deviations (an upper tail only) read 1.8 low,
    # and noise taken for a drift made the level wander by 6.2 after 3,000 samples, against
    # a standard error of 3.9 for the mean of all of them. The level is the output less what
    # it provisions for a cycle (which noise alone shows in 2 of these 40 runs, +10 each; see
    # test_steps_and_noise_alone_seldom_show_a_cycle).
    finals = []
    for seed in range(40):
        f = ChangePoint(resolution=50.0)
        finals.append(f.filter(noisy(200.2, 205.0, 3000, seed))[-1] - _CYCLE_SHARE * f._cycle)
    assert np.mean(finals) == pytest.approx(200.2, abs=1.0)
    assert np.std(finals) < 5.5


def test_scale_free_when_the_resolution_scales_too() -> None:
    series = np.concatenate([noisy(300.0, 30.0, 200, 7), noisy(500.0, 30.0, 200, 8)])
    plain = ChangePoint(resolution=50.0).filter(series)
    scaled = ChangePoint(resolution=50.0 * 1000.0).filter(series * 1000.0)
    np.testing.assert_allclose(scaled, plain * 1000.0, rtol=1e-9)


def test_noise_free_input_follows_a_change_after_the_shortest_detection() -> None:
    # threshold / (outlier - outlier / 2) = 25 / 1.5: the 17th sample at the new level.
    f = ChangePoint(resolution=50.0)
    assert f.filter([300.0] * 5 + [400.0] * 20).tolist() == [300.0] * 21 + [400.0] * 4
    assert f.spread is not None and f.spread < 1.0


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("_level", float("inf"), "_level=inf is not allowed: it must be a finite number"),
        ("_weight", -1.0, "_weight=-1.0 is not allowed: it must be >= 0"),
        ("_zeros", 1.5, "_zeros=1.5 is not allowed: it is a share"),
        ("_sigma", 1.0, "_sigma=1.0 is not allowed: it must be the deviation that _noise gives"),
        ("_weight", 0.0, "_weight=0.0 is not allowed: it is 0 exactly before the first sample"),
        ("_recent", [1.0, "x"], "_recent=\\[1.0, 'x'\\] is not allowed"),
        ("_recent_weights", [1.0], "_recent_weights=.* one per _recent"),
        ("_recent_weights", [1.0] * 63 + [0.0], "_recent_weights=.* numbers > 0, one per"),
        ("_previous", "300", "_previous='300' is not allowed"),
        ("_recent_zeros", 2.0, "_recent_zeros=2.0 is not allowed: it is a share"),
        ("_recent_weight", 0.0, "_recent_weight=0.0 is not allowed: it is 0 exactly when"),
        ("_recent_weight2", 1e9, "_recent_weight=.* is not allowed: .*_recent_weight2 <="),
        ("_drift", float("nan"), "_drift=nan is not allowed: it must be a finite number"),
        ("_covariance", float("inf"), "_covariance=inf is not allowed: it must be a finite"),
        ("_cycle", -1.0, "_cycle=-1.0 is not allowed: it must be >= 0"),
        ("_cycle_windows", 1.5, "_cycle_windows=1.5 is not allowed: it counts windows"),
        ("_cycle_windows", 33.0, "_cycle_windows=33.0 is not allowed: .* from 0 to 32"),
        ("_cycle_residuals", _packed(np.zeros(512, "<i4")), "_cycle_residuals=.* fewer than 512"),
        ("_cycle_residuals", [0.0] * 3, "_cycle_residuals=.* base64 of fewer than 512"),
        ("_cycle_residuals", "not base64!", "_cycle_residuals=.* little-endian int32"),
        ("_cycle_residuals", "AAAA" * 3 + "AA==", "_cycle_residuals=.* little-endian int32"),
        ("_cycle_step", -1.0, "_cycle_step=-1.0 is not allowed: it must be >= 0"),
        ("_cycle_step", 0.0, "_cycle_step=0.0 is not allowed: it must be > 0 while the window"),
        ("_cycle_power", _packed(np.zeros(3, "<f4")), "_cycle_power=.* base64 of 257"),
        ("_cycle_power", _packed(np.full(257, -1.0, "<f4")), "_cycle_power=.* finite and >= 0"),
        ("_cycle_power", _packed(np.full(257, np.nan, "<f4")), "_cycle_power=.* finite and >= 0"),
    ],
)
def test_loading_refuses_impossible_values_and_changes_nothing(
    field: str, value: object, message: str
) -> None:
    f = make_filter("changepoint", resolution=50.0)
    f.filter(noisy(300.0, 30.0, 100, 9))
    state = json.loads(json.dumps(f.state_dict()))
    before = json.dumps(state)
    state["state"][field] = value
    with pytest.raises(ValueError, match=message):
        f.load_state_dict(state)
    assert json.dumps(f.state_dict()) == before


def test_invalid_resolution_says_none_is_allowed() -> None:
    with pytest.raises(ValueError, match=r"resolution=0 is not allowed: .*> 0, or None"):
        ChangePoint(resolution=0)
