"""VargaPolicy against seed 002's HPA-Varga numbers: utilisation and relative lag change."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from scaling.baselines import Observation, make_policy
from scaling.baselines.hpa import HpaPolicy
from scaling.baselines.varga import VargaPolicy

Observe = Callable[..., Observation]

# The thesis's scale: a stage consuming 1 M records/s.
MILLION = {"operators": 10, "capacity": 1_000_000 / 7.0, "utilisation": 0.7}


def test_thesis_example_lag_growing_200k_per_second(observe: Observe) -> None:
    # Seed 002 §5.3 (15): lag +200k rec/s at 1 M rec/s throughput -> rlc 1.2 -> 10 becomes 12.
    seen = observe(backlog=3_000_000.0, backlog_rate=200_000.0, **MILLION)
    assert seen.processed_rate == pytest.approx(1_000_000.0)
    assert VargaPolicy().decide(seen) == 12


@pytest.mark.parametrize("utilisation", [0.9, 0.7, 0.3])
def test_slow_lag_growth_leaves_utilisation_alone(observe: Observe, utilisation: float) -> None:
    # Below 1000 records/s the thesis sets rlc to -1: the utilisation metric decides.
    seen = observe(operators=10, utilisation=utilisation, backlog=50_000.0, backlog_rate=999.0)
    assert VargaPolicy().decide(seen) == HpaPolicy().decide(seen)


def test_the_larger_metric_wins(observe: Observe) -> None:
    busy = {**MILLION, "utilisation": 0.98}  # utilisation alone asks for ceil(14) = 14
    assert VargaPolicy().decide(observe(backlog_rate=200_000.0, **busy)) == 14


def test_lag_slope_is_least_squares_over_60_seconds(observe: Observe) -> None:
    varga = VargaPolicy(stabilization_window=0.0)
    # The lag grows by 200k records/s until t = 45, then stays at 9 M.
    backlogs = [0.0, 3e6, 6e6, 9e6] + [9e6] * 5
    decided = [
        varga.decide(observe(t=15.0 * i, backlog=lag, backlog_rate=200_000.0, **MILLION))
        for i, lag in enumerate(backlogs)
    ]
    # At t = 60 the window (15, 60] still slopes at 140k/s (rlc 1.14, ceil(11.4)); at t = 75
    # at 60k/s, which is within HPA's tolerance; from t = 90 it is flat, and utilisation (0.7,
    # on target) keeps 10.
    assert decided == [12, 12, 12, 12, 12, 10, 10, 10, 10]


def test_nothing_processed_leaves_the_lag_metric_out(observe: Observe) -> None:
    paused = observe(operators=10, utilisation=0.7, processed_rate=0.0, backlog_rate=200_000.0)
    assert VargaPolicy().decide(paused) == 10


def test_scale_down_waits_for_the_window_as_in_hpa(observe: Observe) -> None:
    varga = VargaPolicy()
    assert varga.decide(observe(t=0.0, backlog_rate=200_000.0, **MILLION)) == 12
    calm = {"operators": 12, "utilisation": 0.3}
    assert varga.decide(observe(t=285.0, **calm)) == 12
    assert varga.decide(observe(t=300.0, **calm)) == 6


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("target", -1.0),
        ("lag_change_target", 0.0),
        ("lag_rate_threshold", -5.0),
        ("derivative_window", 0.0),
        ("tolerance", -1.0),
        ("interval", 0.0),
    ],
)
def test_invalid_settings_name_the_field_and_value(param: str, value: object) -> None:
    with pytest.raises(ValueError, match=rf"varga: {param}={value!r} is not allowed"):
        VargaPolicy(**{param: value})  # type: ignore[arg-type]


def test_spec_round_trips_and_has_no_metric_choice() -> None:
    policy = VargaPolicy(target=0.6, lag_rate_threshold=10.0, max_operators=40)
    spec = json.loads(json.dumps(policy.spec))
    assert spec["name"] == "varga" and "metric" not in spec
    assert make_policy(spec).spec == policy.spec
    assert make_policy("varga").spec == VargaPolicy().spec


def test_same_observations_give_the_same_decisions(observe: Observe) -> None:
    seen = [
        observe(t=15.0 * i, backlog=1e5 * (i % 7) ** 2, backlog_rate=1e4 * (i % 5), **MILLION)
        for i in range(40)
    ]
    first, second = VargaPolicy(), VargaPolicy()
    assert [first.decide(o) for o in seen] == [second.decide(o) for o in seen]
