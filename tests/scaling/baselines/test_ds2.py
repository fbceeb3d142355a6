"""Ds2Policy: DS2's true-rate model, the thesis's over-provisioning, warm-up and activation."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from scaling.baselines import Observation, make_policy
from scaling.baselines.ds2 import Ds2Policy

Observe = Callable[..., Observation]

# 5 instances process 400 tuples/s while 80 % busy: a true rate of 100 per instance.
STAGE = {"operators": 5, "processed_rate": 400.0, "utilisation": 0.8, "arrival_rate": 1000.0}


@pytest.mark.parametrize(("factor", "wanted"), [(1.0, 10), (1.2, 12), (1.4, 14)])
def test_parallelism_is_target_over_true_rate_times_factor(
    observe: Observe, factor: float, wanted: int
) -> None:
    # ceil(1000 / (400 / (0.8 * 5)) * f), for the thesis's sweep of f (Table 7.3).
    policy = Ds2Policy(overprovisioning=factor, warm_up_intervals=0)
    assert policy.decide(observe(**STAGE)) == wanted


def test_idle_time_does_not_hide_capacity(observe: Observe) -> None:
    # Same throughput at half the busy time: each instance could do 160 tuples/s.
    half_busy = {**STAGE, "utilisation": 0.5}
    assert Ds2Policy(warm_up_intervals=0).decide(observe(**half_busy)) == 8  # ceil(7.5)


def test_true_rate_is_observation_capacity_when_busy(observe: Observe) -> None:
    seen = observe(operators=7, utilisation=0.6, capacity=50.0, arrival_rate=480.0)
    assert seen.processed_rate / (seen.utilisation * seen.operators) == pytest.approx(50.0)
    assert Ds2Policy(warm_up_intervals=0).decide(seen) == 12  # ceil(480 / 50 * 1.2) = ceil(11.52)


def test_warm_up_skips_two_decisions_after_start_and_after_each_change(observe: Observe) -> None:
    ds2 = Ds2Policy()
    assert [ds2.decide(observe(t=t, **STAGE)) for t in (0.0, 15.0)] == [5, 5]
    assert ds2.decide(observe(t=30.0, **STAGE)) == 12
    # Whatever is seen during the next two intervals, DS2 wants what it asked for.
    still_old = observe(t=45.0, **{**STAGE, "arrival_rate": 5000.0})
    assert [ds2.decide(still_old), ds2.decide(observe(t=60.0, **STAGE))] == [12, 12]
    assert ds2.decide(observe(t=75.0, **{**STAGE, "operators": 12, "arrival_rate": 5000.0})) > 12


def test_activation_needs_that_many_evaluations_since_the_last_change(observe: Observe) -> None:
    ds2 = Ds2Policy(warm_up_intervals=0, activation_intervals=3)
    assert [ds2.decide(observe(t=15.0 * i, **STAGE)) for i in range(3)] == [5, 5, 12]
    # The counter restarts with the change: a new target waits three evaluations again.
    busier = {**STAGE, "arrival_rate": 2000.0}
    assert [ds2.decide(observe(t=15.0 * i, **busier)) for i in (3, 4, 5)] == [12, 12, 24]


def test_holds_what_it_asked_for_until_it_changes_its_mind(observe: Observe) -> None:
    # The runner may still report the old count (e.g. during a reconfiguration pause).
    ds2 = Ds2Policy(warm_up_intervals=0)
    assert ds2.decide(observe(t=0.0, **STAGE)) == 12
    paused = {**STAGE, "utilisation": 0.0, "processed_rate": 0.0}
    assert ds2.decide(observe(t=15.0, **paused)) == 12


def test_zero_busy_time_holds_instead_of_dividing_by_zero(observe: Observe) -> None:
    # Seed 002 §1.2: a sink with busy time 0 made DS2 ask for infinitely many instances.
    paused = observe(operators=6, utilisation=0.0, processed_rate=0.0, arrival_rate=900.0)
    assert Ds2Policy(warm_up_intervals=0).decide(paused) == 6


def test_no_input_needs_the_minimum(observe: Observe) -> None:
    idle = observe(operators=6, utilisation=0.0, processed_rate=0.0, arrival_rate=0.0)
    assert Ds2Policy(warm_up_intervals=0, min_operators=2).decide(idle) == 2


def test_bounds(observe: Observe) -> None:
    assert Ds2Policy(warm_up_intervals=0, max_operators=8).decide(observe(**STAGE)) == 8
    small = {**STAGE, "arrival_rate": 10.0}
    assert Ds2Policy(warm_up_intervals=0, min_operators=3).decide(observe(**small)) == 3


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("overprovisioning", 0.9),
        ("warm_up_intervals", -1),
        ("activation_intervals", 0),
        ("min_operators", 1.5),
        ("interval", -15.0),
    ],
)
def test_invalid_settings_name_the_field_and_value(param: str, value: object) -> None:
    with pytest.raises(ValueError, match=rf"ds2: {param}={value!r} is not allowed"):
        Ds2Policy(**{param: value})  # type: ignore[arg-type]


def test_spec_round_trips_through_json_and_the_registry() -> None:
    policy = Ds2Policy(overprovisioning=1.4, warm_up_intervals=1, max_operators=80)
    spec = json.loads(json.dumps(policy.spec))
    assert spec["name"] == "ds2"
    assert make_policy(spec).spec == policy.spec


def test_same_observations_give_the_same_decisions(observe: Observe) -> None:
    seen = [
        observe(t=15.0 * i, **{**STAGE, "arrival_rate": 300.0 + 97.0 * (i % 11)}) for i in range(40)
    ]
    first, second = Ds2Policy(), Ds2Policy()
    assert [first.decide(o) for o in seen] == [second.decide(o) for o in seen]
