"""HpaPolicy against seed 002's HPA-CPU numbers and Kubernetes' documented behaviour."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from scaling.baselines import Observation, Policy, make_policy
from scaling.baselines.hpa import HpaPolicy

Observe = Callable[..., Observation]


def test_thesis_example_ceil_of_n_times_cpu_over_target(observe: Observe) -> None:
    # Seed 002 §5.3 (14): p = 10, cpu = 0.9, target 0.7 -> ceil(12.857) = 13.
    assert HpaPolicy().decide(observe(operators=10, utilisation=0.9)) == 13


def test_kubernetes_docs_doubling_and_halving(observe: Observe) -> None:
    # Kubernetes docs: current 200m for a 100m target doubles the replicas, 50m halves them.
    hpa = HpaPolicy(target=0.5, stabilization_window=0.0)
    assert hpa.decide(observe(operators=10, utilisation=1.0)) == 20
    assert hpa.decide(observe(t=15.0, operators=10, utilisation=0.25)) == 5


@pytest.mark.parametrize(
    ("utilisation", "wanted"),
    [(0.75, 10), (0.65, 10), (0.7, 10), (0.78, 12), (0.62, 9), (0.35, 5)],
)
def test_no_change_within_the_tolerance(observe: Observe, utilisation: float, wanted: int) -> None:
    # |u / 0.7 - 1| <= 0.1 keeps 10; outside it the ceiling applies (0.78 -> 11.14 -> 12).
    hpa = HpaPolicy(stabilization_window=0.0)
    assert hpa.decide(observe(operators=10, utilisation=utilisation)) == wanted


def test_stabilisation_holds_a_scale_down_for_300_seconds(observe: Observe) -> None:
    hpa = HpaPolicy()
    assert hpa.decide(observe(t=0.0, operators=10, utilisation=0.9)) == 13
    held = [hpa.decide(observe(t=t, operators=13, utilisation=0.3)) for t in range(15, 300, 15)]
    assert held == [13] * len(held)
    assert hpa.decide(observe(t=300.0, operators=13, utilisation=0.3)) == 6  # ceil(5.57)


def test_stabilisation_goes_to_the_highest_recommendation_in_the_window(observe: Observe) -> None:
    hpa = HpaPolicy()
    hpa.decide(observe(t=0.0, operators=10, utilisation=0.9))  # recommends 13
    hpa.decide(observe(t=100.0, operators=13, utilisation=0.45))  # recommends ceil(8.36) = 9
    low = {"operators": 13, "utilisation": 0.3}  # recommends 6
    assert hpa.decide(observe(t=299.0, **low)) == 13
    assert hpa.decide(observe(t=300.0, **low)) == 9  # the 13 is 300 s old, the 9 is not
    assert hpa.decide(observe(t=400.0, **low)) == 6


def test_scale_up_is_immediate_inside_the_window(observe: Observe) -> None:
    hpa = HpaPolicy()
    assert hpa.decide(observe(t=0.0, operators=10, utilisation=0.9)) == 13
    assert hpa.decide(observe(t=15.0, operators=13, utilisation=0.3)) == 13
    assert hpa.decide(observe(t=30.0, operators=13, utilisation=1.0)) == 19  # ceil(18.57)


# The cases below are transcribed from Kubernetes' pkg/controller/podautoscaler/horizontal_test.go
# (kubernetes/kubernetes, master as of 2025). Their pods request 1.0 CPU each and report usage
# in millicores, so the average utilisation is sum(reportedLevels) / (1000 * pods); CPUTarget is
# a percentage. ``recommendations: []timestampedRecommendation{}`` there means an autoscaler
# that has run before and holds no recommendation younger than the window, which here is one
# decision a full window earlier; ``recommendations: nil`` is a new autoscaler.


def _run_once_a_window_ago(hpa: HpaPolicy, observe: Observe, operators: int) -> None:
    """Age the autoscaler by one window: its initial recommendation has expired."""
    at_target = observe(t=-hpa.stabilization_window, operators=operators, utilisation=hpa.target)
    assert hpa.decide(at_target) == operators


def test_kubernetes_scale_down(observe: Observe) -> None:
    # TestScaleDown: min 2, max 6, 5 replicas, target 50 %, levels 100+300+500+250+250 of
    # 5000 = 28 %, recommendations empty -> ceil(5 * 0.28 / 0.5) = ceil(2.8) = 3.
    hpa = HpaPolicy(target=0.5, min_operators=2, max_operators=6)
    _run_once_a_window_ago(hpa, observe, operators=5)
    assert hpa.decide(observe(t=0.0, operators=5, utilisation=0.28)) == 3


def test_kubernetes_scale_down_stabilize_initial_size(observe: Observe) -> None:
    # TestScaleDownStabilizeInitialSize: the same pods, recommendations nil -> 5: the new
    # autoscaler recorded the 5 it found and holds it for the 300 s window.
    hpa = HpaPolicy(target=0.5, min_operators=2, max_operators=6)
    assert hpa.decide(observe(t=0.0, operators=5, utilisation=0.28)) == 5
    assert hpa.decide(observe(t=299.0, operators=5, utilisation=0.28)) == 5
    assert hpa.decide(observe(t=300.0, operators=5, utilisation=0.28)) == 3


def test_kubernetes_min_replicas_desired_zero(observe: Observe) -> None:
    # TestMinReplicasDesiredZero: min 2, max 5, 3 replicas, target 90 %, levels 0, 0, 0 -> 2.
    hpa = HpaPolicy(target=0.9, min_operators=2, max_operators=5)
    _run_once_a_window_ago(hpa, observe, operators=3)
    assert hpa.decide(observe(t=0.0, operators=3, utilisation=0.0)) == 2


def test_kubernetes_max_replicas(observe: Observe) -> None:
    # TestMaxReplicas: min 2, max 5, 3 replicas, target 90 %, levels 8000 + 9500 + 1000 of
    # 0.9 + 1.0 + 1.1 CPU requested -> 617 % -> 21 wanted, 5 allowed.
    hpa = HpaPolicy(target=0.9, min_operators=2, max_operators=5)
    assert hpa.decide(observe(operators=3, utilisation=18.5 / 3.0)) == 5


# No metrics: NaN would make any read of the utilisation fail (ceil of NaN raises).
_UNREADABLE = {"utilisation": float("nan"), "arrival_rate": float("nan")}


def test_kubernetes_zero_replicas_disable_scaling(observe: Observe) -> None:
    # TestZeroReplicas: min 3, max 5, 0 replicas, no reported levels -> 0 ("ScalingDisabled").
    hpa = HpaPolicy(target=0.9, min_operators=3, max_operators=5)
    assert hpa.decide(observe(operators=0, **_UNREADABLE)) == 0
    assert hpa.decide(observe(t=15.0, operators=0, **_UNREADABLE)) == 0


def test_kubernetes_too_few_replicas_go_to_the_minimum(observe: Observe) -> None:
    # TestTooFewReplicas: min 3, max 5, 2 replicas, no reported levels -> 3.
    hpa = HpaPolicy(target=0.9, min_operators=3, max_operators=5)
    assert hpa.decide(observe(operators=2, **_UNREADABLE)) == 3


def test_kubernetes_too_many_replicas_go_to_the_maximum(observe: Observe) -> None:
    # TestTooManyReplicas: min 3, max 5, 10 replicas, no reported levels -> 5, at once: neither
    # the initial recommendation of 10 nor a 50 % scale-down limit holds it.
    hpa = HpaPolicy(target=0.9, min_operators=3, max_operators=5, scale_down_percent=50.0)
    assert hpa.decide(observe(operators=10, **_UNREADABLE)) == 5


# From Kubernetes' pkg/controller/podautoscaler/replica_calculator_test.go.


def test_kubernetes_replica_calc_tolerance(observe: Observe) -> None:
    # TestReplicaCalcTolerance: 3 replicas, levels 1010 + 1030 + 1020 of 0.9 + 1.0 + 1.1 CPU
    # requested = 102 % for a 100 % target: within 10 %, 3 stay.
    hpa = HpaPolicy(target=1.0, stabilization_window=0.0)
    assert hpa.decide(observe(operators=3, utilisation=3060 / 3000)) == 3


def test_kubernetes_replica_calc_tolerance_per_pod_external(observe: Observe) -> None:
    # TestReplicaCalcTolerancePerPodCMExternal: 3 replicas, external metric 8600 for a per-pod
    # target of 2900: 8600 / 8700 is within 10 %, 3 stay.
    hpa = HpaPolicy(target=2900.0, metric="arrival_rate", stabilization_window=0.0)
    assert hpa.decide(observe(operators=3, arrival_rate=8600.0)) == 3


def test_kubernetes_replica_calc_outside_a_zero_tolerance(observe: Observe) -> None:
    # TestReplicaCalcConfigurableTolerance, "Outside of a 0% tolerance": 3 replicas at 101 %
    # of a 100 % target -> ceil(3.03) = 4.
    hpa = HpaPolicy(target=1.0, tolerance=0.0, stabilization_window=0.0)
    assert hpa.decide(observe(operators=3, utilisation=3030 / 3000)) == 4


@pytest.mark.parametrize(("wanted", "kept"), [(11, 10), (9, 10), (12, 12), (8, 8)])
def test_the_tolerance_includes_its_bounds(observe: Observe, wanted: int, kept: int) -> None:
    # replica_calculator.go's Tolerances.isWithin: (1 - down) <= ratio <= (1 + up). With the
    # steadyscale metric at target 1 on 10 replicas, 11 and 9 are ratios 1.1 and 0.9: kept.
    hpa = HpaPolicy(target=1.0, metric="arrival_rate", stabilization_window=0.0)
    assert hpa.decide(observe(operators=10, arrival_rate=float(wanted))) == kept


def test_zero_replicas_scale_when_the_minimum_is_zero(observe: Observe) -> None:
    # horizontal.go disables scaling at 0 only when minReplicas != 0; with minReplicas 0 the
    # metric decides (an external metric, here the arrival rate, can wake the target).
    hpa = HpaPolicy(target=50.0, metric="arrival_rate", min_operators=0)
    assert hpa.decide(observe(operators=0, utilisation=0.0, arrival_rate=120.0)) == 3


def test_rate_limit_is_the_larger_of_double_and_four_more_pods(observe: Observe) -> None:
    saturated = {"utilisation": 1.0}
    assert HpaPolicy(target=0.1).decide(observe(operators=2, **saturated)) == 6  # 2 + 4 > 2 * 2
    assert HpaPolicy(target=0.1).decide(observe(operators=10, **saturated)) == 20  # 2 * 10


def test_rate_limit_counts_changes_within_the_period(observe: Observe) -> None:
    hpa = HpaPolicy(target=0.1, interval=5.0)
    assert hpa.decide(observe(t=0.0, operators=2, utilisation=1.0)) == 6
    # 5 s later the period still started at 2 replicas: no more room.
    assert hpa.decide(observe(t=5.0, operators=6, utilisation=1.0)) == 6
    assert hpa.decide(observe(t=15.0, operators=6, utilisation=1.0)) == 12


def test_scale_down_rate_limit(observe: Observe) -> None:
    hpa = HpaPolicy(stabilization_window=0.0, scale_down_percent=50.0)
    assert hpa.decide(observe(operators=10, utilisation=0.05)) == 5


def test_bounds(observe: Observe) -> None:
    assert HpaPolicy(max_operators=12).decide(observe(operators=10, utilisation=0.9)) == 12
    floor = HpaPolicy(min_operators=3, stabilization_window=0.0)
    assert floor.decide(observe(operators=10, utilisation=0.01)) == 3


def test_arrival_rate_metric_is_a_volume_threshold(observe: Observe) -> None:
    hpa = HpaPolicy(target=50.0, metric="arrival_rate", stabilization_window=0.0)
    assert hpa.decide(observe(operators=4, arrival_rate=312.4)) == 7
    assert hpa.decide(observe(t=15.0, operators=7, arrival_rate=340.0)) == 7  # within tolerance
    # From zero instances only the volume can say how many are needed.
    idle = HpaPolicy(target=50.0, metric="arrival_rate", min_operators=0)
    assert idle.decide(observe(operators=0, utilisation=0.0, arrival_rate=120.0)) == 3
    assert HpaPolicy(min_operators=0).decide(observe(operators=0, utilisation=0.0)) == 0


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("target", 0.0),
        ("metric", "cpu"),
        ("tolerance", -0.1),
        ("stabilization_window", -1.0),
        ("scale_up_pods", 1.5),
        ("scale_down_percent", 150.0),
        ("rate_period", 0.0),
        ("min_operators", -1),
        ("interval", 0.0),
    ],
)
def test_invalid_settings_name_the_field_and_value(param: str, value: object) -> None:
    with pytest.raises(ValueError, match=rf"hpa: {param}={value!r} is not allowed"):
        HpaPolicy(**{param: value})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"max_operators=2 is not allowed.*>= 3"):
        HpaPolicy(min_operators=3, max_operators=2)


def test_spec_round_trips_through_json_and_the_registry() -> None:
    for policy in (HpaPolicy(), HpaPolicy(target=50.0, metric="arrival_rate", max_operators=9)):
        spec = json.loads(json.dumps(policy.spec))
        assert spec["name"] == "hpa"
        assert make_policy(spec).spec == policy.spec
    assert isinstance(make_policy("hpa"), Policy)


def test_same_observations_give_the_same_decisions(observe: Observe) -> None:
    seen = [
        observe(t=15.0 * i, operators=10, utilisation=u)
        for i, u in enumerate([0.9, 0.2, 0.95, 0.1, 0.5, 0.99, 0.3] * 5)
    ]
    first, second = HpaPolicy(), HpaPolicy()
    assert [first.decide(o) for o in seen] == [second.decide(o) for o in seen]
