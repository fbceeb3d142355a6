"""DhalionPolicy against seed 002's Dhalion examples: 1/(1 - bp) up, -20 % down, cool-down."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from scaling.baselines import Observation, make_policy
from scaling.baselines.dhalion import DhalionPolicy

Observe = Callable[..., Observation]

HEALTHY = {"utilisation": 0.5, "backlog": 0.0, "backpressure": 0.0}


def test_thesis_example_20_percent_suspended(observe: Observe) -> None:
    # Seed 002 §4.2: 20 % suspended, 80 % processed -> 1 + 20/80 = 1.25, parallelism 8 -> 10.
    seen = observe(operators=8, utilisation=1.0, backlog=50_000.0, backpressure=0.2)
    assert DhalionPolicy().decide(seen) == 10


@pytest.mark.parametrize(("bp", "wanted"), [(0.5, 20), (0.1, 12), (0.75, 40), (1.0, 100)])
def test_scale_up_by_one_over_one_minus_backpressure(
    observe: Observe, bp: float, wanted: int
) -> None:
    # 10 / (1 - bp), rounded up; a stage that blocked all period is read as bp = 0.9.
    seen = observe(operators=10, utilisation=1.0, backlog=50_000.0, backpressure=bp)
    assert DhalionPolicy().decide(seen) == wanted


def test_thesis_example_scale_down_by_20_percent(observe: Observe) -> None:
    # Seed 002 §4.2: an over-provisioned operator at 20 goes to 16.
    assert DhalionPolicy().decide(observe(operators=20, **HEALTHY)) == 16


@pytest.mark.parametrize(("before", "after"), [(10, 8), (5, 4), (3, 2), (2, 1), (1, 1)])
def test_scale_down_rounds_down_so_small_stages_shrink(
    observe: Observe, before: int, after: int
) -> None:
    assert DhalionPolicy().decide(observe(operators=before, **HEALTHY)) == after


def test_source_rule_lag_growing_faster_than_the_threshold(observe: Observe) -> None:
    # Eq. 6.2 with the "1 +": lag +200k/s at 1 M/s throughput -> x1.2.
    seen = observe(operators=10, capacity=1e6 / 7, backlog=3e6, backlog_rate=200_000.0)
    assert seen.processed_rate == pytest.approx(1e6)
    assert DhalionPolicy().decide(seen) == 12


def test_no_scale_down_unless_healthy(observe: Observe) -> None:
    dhalion = DhalionPolicy(cooldown=0.0)
    assert dhalion.decide(observe(operators=10, utilisation=0.5, backlog=10_000.0)) == 10
    slow = observe(operators=10, utilisation=0.5, backlog=9_999.0, backlog_rate=999.0)
    assert dhalion.decide(slow) == 8  # below both thresholds: healthy
    # Growing faster than 1000 records/s is a symptom: 500/s processed, 1500/s more arriving.
    growing = observe(operators=10, utilisation=0.5, backlog=0.0, backlog_rate=1500.0)
    assert dhalion.decide(growing) == 40  # 10 * (1 + 1500 / 500)


def test_paused_stage_with_growing_lag_is_held(observe: Observe) -> None:
    paused = observe(operators=10, utilisation=0.0, processed_rate=0.0, backlog_rate=5000.0)
    assert DhalionPolicy().decide(paused) == 10


def test_cooldown_holds_five_minutes_after_each_change(observe: Observe) -> None:
    dhalion = DhalionPolicy()
    assert dhalion.decide(observe(t=0.0, operators=8, backpressure=0.2, backlog=5e4)) == 10
    held = [dhalion.decide(observe(t=t, operators=10, **HEALTHY)) for t in range(15, 300, 15)]
    assert held == [10] * len(held)
    assert dhalion.decide(observe(t=300.0, operators=10, **HEALTHY)) == 8
    assert dhalion.decide(observe(t=315.0, operators=8, **HEALTHY)) == 8
    assert DhalionPolicy(cooldown=0.0).decide(observe(t=315.0, operators=8, **HEALTHY)) == 6


def test_bounds(observe: Observe) -> None:
    seen = observe(operators=8, utilisation=1.0, backlog=5e4, backpressure=0.5)
    assert DhalionPolicy(max_operators=12).decide(seen) == 12
    assert DhalionPolicy(min_operators=18).decide(observe(operators=20, **HEALTHY)) == 18


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("scale_down", 0.0),
        ("scale_down", 1.2),
        ("lag_threshold", -1.0),
        ("lag_rate_threshold", float("nan")),
        ("cooldown", -300.0),
        ("max_operators", 0),
        ("interval", 0),
    ],
)
def test_invalid_settings_name_the_field_and_value(param: str, value: object) -> None:
    with pytest.raises(ValueError, match=rf"dhalion: {param}={value!r} is not allowed"):
        DhalionPolicy(**{param: value})  # type: ignore[arg-type]


def test_spec_round_trips_through_json_and_the_registry() -> None:
    policy = DhalionPolicy(scale_down=0.1, lag_threshold=500.0, cooldown=60.0, max_operators=80)
    spec = json.loads(json.dumps(policy.spec))
    assert spec["name"] == "dhalion"
    assert make_policy(spec).spec == policy.spec


def test_same_observations_give_the_same_decisions(observe: Observe) -> None:
    seen = [
        observe(t=15.0 * i, operators=10, backpressure=(i % 4) / 5, backlog=4000.0 * (i % 6))
        for i in range(60)
    ]
    first, second = DhalionPolicy(cooldown=30.0), DhalionPolicy(cooldown=30.0)
    assert [first.decide(o) for o in seen] == [second.decide(o) for o in seen]
