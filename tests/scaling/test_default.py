"""The default a Scaler gets when its spec names no filter: the contract docs/default.md states.

* After warm-up (200 samples) with noise sigma <= 10 % of the level, a single sample at 3x the
  level, a burst of 3 such samples, or a single 0 never changes the operator count, neither then
  nor later (compared with the same run without them).
* A sustained step from 320 to 540 tuples/s (7 -> 11 operators at capacity 50) under noise
  sigma = 86 (SNR 5, amplitude definition) reaches 11 operators within 30 s, 15 s in the
  median, except in runs that no estimate of the new level meets (1 of these 40).
* A level that holds just above a threshold keeps its count (a flat real trace).
* Through a cycle faster than any change can be declared, the count holds at what covers most
  of the cycle once the cycle stands out of the noise.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from filters import make_filter
from scaling import Scaler, default_spec, make_guard

SPEC = {"policy": {"capacity": 50.0}}


def counts(volumes: list[float], operators: int) -> list[int]:
    scaler = Scaler.from_spec(SPEC, operators=operators)
    return [scaler.observe(volume, float(t)).operators for t, volume in enumerate(volumes)]


def noise(level: float, sigma: float, n: int, rng: np.random.Generator) -> list[float]:
    return np.clip(level + rng.normal(0.0, sigma, n), 0.0, None).tolist()


@pytest.mark.parametrize("relative_sigma", [0.02, 0.05, 0.1])
@pytest.mark.parametrize(
    ("name", "outlier"), [("spike", [3.0]), ("burst", [3.0] * 3), ("zero", [0.0])]
)
def test_a_spike_a_burst_or_a_dropout_never_changes_the_count(
    relative_sigma: float, name: str, outlier: list[float]
) -> None:
    level = 370.0
    changed = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        before = noise(level, relative_sigma * level, 200, rng)
        after = noise(level, relative_sigma * level, 150, rng)
        outliers = [factor * level for factor in outlier]
        with_outliers = counts(before + outliers + after, operators=8)
        # The control run sees the level instead of the outliers.
        control = counts(before + [level] * len(outliers) + after, operators=8)
        if with_outliers != control or len(set(with_outliers[199 : 199 + len(outlier) + 1])) > 1:
            changed.append(seed)
    assert changed == [], f"{name} changed the count for seeds {changed}"


def test_a_sustained_step_is_followed_within_30_seconds() -> None:
    delays, unreachable = [], []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        before, after = noise(320.0, 86.0, 300, rng), noise(540.0, 86.0, 120, rng)
        history = counts(before + after, operators=7)
        assert history[299] == 7
        delays.append(next(i for i, n in enumerate(history[300:], start=1) if n >= 11))
        # Even an estimate that knew when the step came, the mean of exactly the samples after
        # it, may read 10 operators at every length from 9 (the fewest a change is declared
        # on) to 30: then no estimate of the new level meets 30 s (seed 8, 1 run in 1,000).
        means = np.cumsum(after[:30]) / np.arange(1, 31)
        if not (means[8:] > 500.0).any():
            unreachable.append(seed)
    late = [seed for seed, delay in enumerate(delays) if delay > 30]
    # docs/default.md: median 13 s; late only where no estimate could be on time.
    assert set(late) <= set(unreachable) and max(delays) <= 45, (late, unreachable)
    assert float(np.median(delays)) <= 15


def test_a_level_just_above_a_threshold_keeps_its_operators() -> None:
    # 205 tuples/s needs 5 operators of 50, and noise of 92 (SNR 5) makes any mean over a
    # fixed window read below 200 from time to time: a level that holds is averaged over all
    # its samples instead (the real traces sit like this; a 150-sample memory dropped to 4
    # operators in 10 of these 20 runs).
    dropped = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        history = counts(noise(205.0, 92.0, 3000, rng), operators=5)
        dropped.append(sum(n < 5 for n in history[200:]))
    assert sum(seconds > 0 for seconds in dropped) <= 4, dropped


def test_a_count_holds_through_a_cycle_faster_than_a_change() -> None:
    # A daily cycle of +-90 around 340 every 48 samples (nyc_taxi replayed at a sample a
    # second) under noise of 150: the level is the cycle's mean, 7 operators of 50, and a
    # count that followed the cycle would pay a restart every few samples. Once the cycle
    # stands out (a few windows of 512 samples), the count holds at 8, which covers most of
    # the cycle, as the best configurations of that trace do.
    cycle = 90.0 * np.cos(2.0 * np.pi * np.arange(3000) / 48.0)
    for seed in range(5):
        rng = np.random.default_rng(seed)
        volumes = np.clip(340.0 + cycle + rng.normal(0.0, 150.0, cycle.size), 0.0, None)
        history = counts(volumes.tolist(), operators=8)
        assert set(history[2000:]) == {8}, seed


def test_the_default_spec_round_trips_and_is_named_in_full() -> None:
    scaler = Scaler.from_spec(SPEC, operators=3)
    assert scaler.spec == {
        "filter": make_filter(default_spec(50.0)["filter"]).spec,
        "policy": {"capacity": 50.0, "min_operators": 1, "max_operators": None},
        "guards": [make_guard("confidence").spec],
    }
    assert Scaler.from_spec(json.loads(json.dumps(scaler.spec))).spec == scaler.spec
    # Guards given without a filter keep the default filter; a filter without guards gets none.
    assert Scaler.from_spec({**SPEC, "guards": []}).spec["filter"]["name"] == "changepoint"
    assert Scaler.from_spec({**SPEC, "filter": "raw"}).spec["guards"] == []


def test_the_default_continues_exactly_from_a_saved_state() -> None:
    rng = np.random.default_rng(3)
    volumes = noise(300.0, 60.0, 300, rng) + noise(450.0, 60.0, 300, rng)
    whole = Scaler.from_spec(SPEC, operators=6)
    expected = [whole.observe(v, float(t)) for t, v in enumerate(volumes)]
    first = Scaler.from_spec(SPEC, operators=6)
    for t, v in enumerate(volumes[:350]):
        first.observe(v, float(t))
    second = Scaler.from_spec(SPEC)
    second.load_state_dict(json.loads(json.dumps(first.state_dict(), allow_nan=False)))
    rest = [second.observe(v, float(t)) for t, v in enumerate(volumes[350:], start=350)]
    assert rest == expected[350:]
