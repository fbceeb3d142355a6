"""FlinkPolicy: Flink's own tests, one per Java case, then the policy on the queue model.

From ``flink-autoscaler/src/test/java/org/apache/flink/autoscaler/`` of
apache/flink-kubernetes-operator, release 1.15.0: every case of ``JobVertexScalerTest`` and the
cases of ``ScalingExecutorTest`` one stage can represent, with their numbers. Java's
``conf.set`` becomes a new ``FlinkPolicy`` with the setting (``options``); ``evaluated(p,
target, tpr)`` builds the same metrics with the same dead band; the clock is the ``now``
argument. A Java test parameterised over input ship strategies (``[HASH]`` and ``[REBALANCE,
HASH, RESCALE]``) is one test with ``hash_input=True``: both lists contain HASH, which is all
``scale`` reads of them.

Not representable, and why:

* the event assertions of ``testSendingIneffectiveScalingEvents`` and
  ``testSendingScalingLimitedEvents`` (their decisions are transcribed), and
  ``testScalingEventsWith0IntervalConfig``, ``testScalingEventsWithIntervalConfig``,
  ``testScalingEventsWithDefaultIntervalConfig``: a policy answers a count; it has no event
  handler, and ``scaling.enabled=false`` (a recommend-only autoscaler) has nothing to drive;
* ``testVertexesExclusionForScaling``: the simulated job has one vertex, which is never
  excluded;
* ``testExcludedPeriodsForScaling``: periods are times of day and week; an ``Observation``'s
  ``t`` has no calendar origin;
* ``testBlockScalingOnFailedResourceCheck``, ``testQuota``: the model has no cluster, TaskManager
  slots, CPU or memory to run out of;
* ``testMemoryTuning``, ``testScalingUnderGcPressure``: the model has no heap or GC.

One case differs in how it is written: steadyscale refuses a ``target_utilization_boundary``
above ``utilization_target`` when it would set the lower utilisation, where Flink silently
takes 0; that step of ``testUtilizationBoundariesAndUtilizationMinMaxCompatibility`` says
``utilization_min=0`` instead, the same band.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from filters.base import ParameterError
from scaling.baselines import Observation, make_policy
from scaling.baselines.flink import FlinkPolicy
from scaling.baselines.flink_rules import (
    Change,
    DelayedScaleDown,
    Evaluated,
    Summary,
    compute_scale_target_parallelism,
    evaluate,
    job_scaling_summary,
    observed_scaling_coefficient,
    scale,
)
from simulator.model.queue import QueueConfig, run_queue

INT_MAX = 2**31 - 1  # Java's Integer.MAX_VALUE, which the tests use for "no limit"
# JobVertexScalerTest.setup / ScalingExecutorTest.setup
SETUP = {
    "scale_down_max_factor": 1.0,
    "scale_up_max_factor": float(INT_MAX),
    "catch_up_duration": 0,
}


def options(**settings: Any) -> FlinkPolicy:
    return FlinkPolicy(**{**SETUP, **settings})


def evaluated(
    conf: FlinkPolicy, parallelism: int, target: float, tpr: float, catch_up: float = 0.0,
    **vertex: Any,
) -> Evaluated:  # fmt: skip
    """The tests' ``evaluated(...)``: max parallelism 720, no partitions, dead band from conf."""
    return evaluate(conf, parallelism, target, tpr, catch_up_rate=catch_up,
                    restart_time=conf.restart_time, **vertex)  # fmt: skip


def compute(conf: FlinkPolicy, metrics: Evaluated, history: list[Summary] | None = None,
            delayed: DelayedScaleDown | None = None, now: float = 0.0) -> Change:  # fmt: skip
    delayed = DelayedScaleDown() if delayed is None else delayed
    return compute_scale_target_parallelism(
        conf, metrics, history or [], conf.restart_time, delayed, now
    )


def build(new: int, current: int, outside: bool) -> Change:
    return Change(current, new, outside)


def no_change(current: int) -> Change:
    return Change(current, current)


# ---- JobVertexScalerTest -------------------------------------------------------------------


def test_parallelism_scaling() -> None:
    settings: dict[str, Any] = {"utilization_target": 1.0, "scale_down_interval": 0}
    delayed = DelayedScaleDown()

    def check(expected: Change, p: int, target: float, tpr: float, **changed: Any) -> None:
        settings.update(changed)
        conf = options(**settings)
        metrics = evaluated(conf, p, target, tpr, hash_input=True)
        assert compute(conf, metrics, delayed=delayed) == expected

    check(build(5, 10, True), 10, 50, 100)
    check(build(8, 10, False), 10, 50, 100, utilization_target=0.8)
    check(no_change(10), 10, 80, 100)
    check(build(8, 10, False), 10, 60, 100)
    check(build(8, 10, False), 10, 59, 100)
    check(build(10, 2, True), 2, 100, 40, utilization_target=0.5)
    check(build(4, 2, True), 2, 100, 100, utilization_target=0.6)
    check(build(5, 10, True), 10, 10, 100, utilization_target=1.0, scale_down_max_factor=0.5)
    check(build(4, 10, True), 10, 10, 100, scale_down_max_factor=0.6)
    check(build(15, 10, True), 10, 200, 10, scale_up_max_factor=0.5)
    check(build(16, 10, True), 10, 200, 10, scale_up_max_factor=0.6)


@pytest.mark.parametrize(
    ("current", "max_parallelism", "factor", "expected"),
    [(1, 720, 0.0001, 1), (2, 720, 0.1, 1), (6, 720, 0.8, 5), (16, 128, 1.5, 24),
     (200, 720, 2, 400), (200, 720, INT_MAX, 720)],
)  # fmt: skip
def test_parallelism_computation(
    current: int, max_parallelism: int, factor: float, expected: int
) -> None:
    limits = {"lower": 1, "upper": INT_MAX, "max_parallelism": max_parallelism}
    assert scale(current, factor, **limits) == expected


def test_parallelism_computation_with_adjustment() -> None:
    def aligned(current: int, groups: int, factor: float, **limits: Any) -> int:
        limits = {"lower": 1, "upper": INT_MAX, **limits}
        return scale(current, factor, max_parallelism=groups, hash_input=True, **limits)

    assert aligned(6, 36, 0.8) == 6
    assert aligned(16, 128, 1.5) == 32
    assert aligned(200, 720, 1.3) == 360
    assert aligned(200, 720, INT_MAX) == 720
    assert aligned(10, 128, 2.5) == 32
    assert aligned(10, 128, 2.5, upper=128, mode="maximize_utilisation") == 26


@pytest.mark.parametrize(
    ("current", "groups", "factor", "lower", "upper", "expected"),
    [(6, 720, 0.8, 1, 700, 5), (8, 720, 0.8, 8, 700, 8), (16, 128, 1.5, 1, INT_MAX, 32),
     (16, 128, 1.5, 60, INT_MAX, 64), (200, 720, 2, 1, 300, 240),
     (200, 720, INT_MAX, 1, 600, 360)],
)  # fmt: skip
def test_parallelism_computation_with_limit(
    current: int, groups: int, factor: float, lower: int, upper: int, expected: int
) -> None:
    limits = {"lower": lower, "upper": upper, "max_parallelism": groups, "hash_input": True}
    assert scale(current, factor, **limits) == expected


def test_ensure_min_parallelism_does_not_exceed_max() -> None:
    with pytest.raises(ValueError, match="lower limit 500 is above the upper limit 499"):
        scale(200, INT_MAX, max_parallelism=720, lower=500, upper=499)
    # The same limits as settings are refused when the policy is built.
    with pytest.raises(ParameterError, match="vertex_max_parallelism=499") as error:
        FlinkPolicy(vertex_min_parallelism=500, vertex_max_parallelism=499)
    assert error.value.param == "vertex_max_parallelism"


def test_min_parallelism_limit_is_used() -> None:
    conf = options(vertex_min_parallelism=5, scale_down_interval=0)
    assert compute(conf, evaluated(conf, 10, 100, 500)) == build(5, 10, True)
    # The current parallelism is respected when it is lower.
    assert compute(conf, evaluated(conf, 4, 100, 500)) == no_change(4)


def test_max_parallelism_limit_is_used() -> None:
    conf = options(vertex_max_parallelism=10, utilization_target=1.0)
    assert compute(conf, evaluated(conf, 10, 500, 100)) == no_change(10)
    # The current parallelism is respected when it is higher.
    assert compute(conf, evaluated(conf, 12, 500, 100)) == no_change(12)


def test_disable_scale_down_interval() -> None:
    conf = options(utilization_target=1.0, scale_down_interval=0)
    assert compute(conf, evaluated(conf, 10, 50, 100)) == build(5, 10, True)


def _interval_of_a_minute() -> tuple[FlinkPolicy, DelayedScaleDown]:
    return options(utilization_target=1.0, scale_down_interval=60), DelayedScaleDown()


def test_scale_down_after_interval() -> None:
    conf, delayed = _interval_of_a_minute()
    for now, target in ((0, 800), (10, 900), (40, 720), (59, 640)):
        change = compute(conf, evaluated(conf, 100, target, 1000), delayed=delayed, now=now)
        assert change == no_change(100)
    # The highest recommendation of the interval (90, at 10 s), not the latest (70).
    change = compute(conf, evaluated(conf, 100, 700, 1000), delayed=delayed, now=60)
    assert change == build(90, 100, False)


def test_immediate_scale_up_within_scale_down_interval() -> None:
    conf, delayed = _interval_of_a_minute()
    for now, target in ((0, 800), (10, 900)):
        assert compute(conf, evaluated(conf, 100, target, 1000), delayed=delayed, now=now) == (
            no_change(100)
        )
        assert delayed.vertices
    change = compute(conf, evaluated(conf, 100, 1700, 1000), delayed=delayed, now=12)
    assert change == build(170, 100, True)
    assert not delayed.vertices


def test_cancel_delayed_scale_down_after_new_parallelism_is_same() -> None:
    conf, delayed = _interval_of_a_minute()
    for now, target in ((0, 800), (10, 900)):
        compute(conf, evaluated(conf, 100, target, 1000), delayed=delayed, now=now)
        assert delayed.vertices
    change = compute(conf, evaluated(conf, 100, 1000, 1000), delayed=delayed, now=12)
    assert change == no_change(100)
    assert not delayed.vertices


def test_ineffective_scaling_detection() -> None:
    detecting = options(scaling_effectiveness_detection_enabled=True, utilization_target=1.0,
                        scale_down_interval=0)  # fmt: skip
    history: list[Summary] = []

    def step(p: int, target: float, tpr: float, conf: FlinkPolicy = detecting) -> Change:
        return compute(conf, evaluated(conf, p, target, tpr), history)

    change = step(5, 100, 50)
    assert change == build(10, 5, True) and change.expected_rate == 100
    history.append(Summary(5, 10, 50, change.expected_rate))
    # Scaling higher is allowed when the last scale-up was effective (80 %).
    change = step(10, 180, 90)
    assert change == build(20, 10, True) and change.expected_rate == 180
    history.append(Summary(10, 20, 90, change.expected_rate))
    # 90 -> 94 and 90 -> 98 instead of 90 -> 180: under 10 % of the increase, ineffective.
    assert step(20, 180, 94) == no_change(20)
    assert step(20, 180, 98) == no_change(20)
    # Not the parallelism the last scaling set (rescaled by hand): allowed.
    assert step(10, 180, 90) == build(20, 10, True)
    change = step(20, 180, 100)  # over 10 %: effective
    assert change == build(36, 20, True) and not math.isnan(change.expected_rate)
    not_detecting = options(utilization_target=1.0, scale_down_interval=0)
    assert step(20, 180, 90, not_detecting) == build(40, 20, True)
    # A scale-down is allowed even after an ineffective scale-up.
    assert step(20, 45, 90) == build(10, 20, True)


def test_sending_ineffective_scaling_events() -> None:
    """The decisions of this case; its events are not representable (module docstring)."""
    conf = options(scaling_effectiveness_detection_enabled=True, utilization_target=1.0,
                   scale_down_interval=0)  # fmt: skip
    history: list[Summary] = []
    for p, tpr, expected in ((5, 50, build(10, 5, True)), (10, 90, build(20, 10, True))):
        change = compute(conf, evaluated(conf, p, 100 if p == 5 else 180, tpr, hash_input=True),
                         history)  # fmt: skip
        assert change == expected
        history.append(Summary(p, change.new, tpr, change.expected_rate))
    for tpr in (95, 95.01, 95):
        assert compute(conf, evaluated(conf, 20, 180, tpr, hash_input=True), history) == (
            no_change(20)
        )
    off = options(utilization_target=1.0, scale_down_interval=0)
    assert compute(off, evaluated(off, 20, 180, 95, hash_input=True), history) == (
        build(40, 20, True)
    )


@pytest.mark.parametrize(
    ("current", "partitions", "groups", "factor", "lower", "expected", "mode"),
    [(6, 15, 128, 0.4, 1, 3, "evenly_spread"), (7, 15, 128, 1.2, 1, 15, "evenly_spread"),
     (20, 35, 30, 0.9, 1, 18, "evenly_spread"), (22, 35, 30, 1.1, 20, 22, "evenly_spread"),
     (80, 200, 128, 1.4, 1, 100, "evenly_spread"), (24, 199, INT_MAX, 4, 1, 199, "evenly_spread"),
     # 99 subtasks read two partitions, one reads one
     (24, 199, INT_MAX, 4, 1, 100, "maximize_utilisation")],
)  # fmt: skip
def test_num_partitions_adjustment(
    current: int, partitions: int, groups: int, factor: float, lower: int, expected: int, mode: str
) -> None:
    limits = {"lower": lower, "upper": INT_MAX, "max_parallelism": groups}
    assert scale(current, factor, num_source_partitions=partitions, mode=mode, **limits) == expected


def test_sending_scaling_limited_events() -> None:
    """The decisions of this case (20 wanted, 15 partitions); its events are not representable."""
    conf = options(utilization_target=1.0, scale_down_interval=0)
    for target in (200, 199):
        metrics = evaluated(conf, 10, target, 100, num_source_partitions=15)
        assert compute(conf, metrics) == build(15, 10, True)


def _summaries(*rows: tuple[int, int, float]) -> list[Summary]:
    """``ScalingSummary(current, new, evaluated(...))``: what the coefficient reads of them."""
    return [Summary(current, new, tpr, math.nan) for current, new, tpr in rows]


LINEAR = _summaries((4, 2, 200), (2, 8, 100), (8, 16, 400))
DIMINISHING = _summaries((4, 2, 160), (2, 8, 96), (8, 16, 240))


def test_calculate_scaling_coefficient() -> None:
    conf = options()
    assert observed_scaling_coefficient(LINEAR, conf) == 1.0
    slight = _summaries((4, 2, 196), (2, 8, 99), (8, 16, 390))
    assert 0.9 < observed_scaling_coefficient(slight, conf) < 1
    assert 0.4 < observed_scaling_coefficient(DIMINISHING, conf) < 0.9
    with_one = _summaries((1, 2, 50), (2, 4, 80), (4, 8, 100))
    assert 0.4 < observed_scaling_coefficient(with_one, conf) < 0.9
    conf = options(observed_scalability_min_observations=1)
    assert observed_scaling_coefficient(_summaries((4, 8, 100)), conf) == 1
    two = _summaries((2, 4, 80), (4, 8, 100))
    assert 0.4 < observed_scaling_coefficient(two, conf) < 0.9
    assert observed_scaling_coefficient(_summaries((2, 4, 80), (4, 8, 160)), conf) == 1


def test_parallelism_scaling_with_observed_scaling_coefficient() -> None:
    conf = options(utilization_target=0.5, observed_scalability_enabled=True)
    metrics = evaluated(conf, 2, 100, 40, hash_input=True)
    assert compute(conf, metrics, LINEAR) == build(10, 2, True)
    # alpha = 2752 / (84 x 48) = 0.683, rounded up to 0.69: ceil(2 x 5 / 0.69) = 15.
    assert compute(conf, metrics, DIMINISHING) == build(15, 2, True)


def test_max_recommended_parallelism_used_after_scale_down_interval() -> None:
    conf, delayed = _interval_of_a_minute()
    assert compute(conf, evaluated(conf, 100, 500, 1000), delayed=delayed, now=0) == (
        no_change(100)
    )
    assert [p for _, p, _ in delayed.vertices["stage"][1]] == [50]
    assert compute(conf, evaluated(conf, 100, 600, 1000), delayed=delayed, now=30) == (
        no_change(100)
    )
    assert [p for _, p, _ in delayed.vertices["stage"][1]] == [60]  # 60 replaced 50
    change = compute(conf, evaluated(conf, 100, 600, 1000), delayed=delayed, now=65)
    assert change == build(60, 100, True)


def test_max_recommended_parallelism_equals_current_parallelism_returns_no_change() -> None:
    conf, delayed = _interval_of_a_minute()
    delayed.trigger("stage", 5.0, 100, True)  # a recommendation of the current count at 5 s
    change = compute(conf, evaluated(conf, 100, 800, 1000), delayed=delayed, now=65)
    assert change == no_change(100)


# ---- ScalingExecutorTest: a source and a sink behind a keyBy, max parallelism 720 -----------


def summary_of(conf: FlinkPolicy, source: tuple[float, ...], sink: tuple[float, ...]) -> set[str]:
    """``computeScalingSummary(...).keySet()``: each vertex's change, then the job's rule."""
    source_metrics = evaluated(conf, 10, *source)
    sink_metrics = evaluated(conf, 10, *sink, hash_input=True)
    changes = {"source": compute(conf, source_metrics), "sink": compute(conf, sink_metrics)}
    return set(job_scaling_summary(changes))


def test_utilization_boundaries() -> None:
    # The restart time must not move the dead band.
    band = {"restart_time": 0, "scale_down_interval": 0, "utilization_target": 0.6}
    exact = options(**band, utilization_max=0.6, utilization_min=0.6)
    # 0.7 is outside [0.6, 0.6]: the source scales, the sink (at 0.6) has nothing to change.
    assert summary_of(exact, (70, 100), (60, 100)) == {"source"}
    wide = options(**band, utilization_max=0.8, utilization_min=0.4)
    assert summary_of(wide, (70, 100), (60, 100)) == set()  # both within [0.4, 0.8]
    # 0.85 is outside: the job scales, and every vertex that changes goes with it.
    assert summary_of(wide, (70, 100), (85, 100)) == {"source", "sink"}
    assert summary_of(wide, (70, 100), (70, 100)) == set()
    # A lag to catch up (15 records/s) moves the source's band.
    assert summary_of(wide, (70, 100, 15), (70, 100)) == {"source", "sink"}


def test_no_scale_down_on_zero_lower_utilization_boundary() -> None:
    """Utilisation 0 to 1.2: the scale-down edge is infinite, even for an infinite rate."""
    for interval in (3600, 0):  # Flink's default delay, and (added here) none at all
        conf = options(utilization_target=0.6, utilization_max=1.2, utilization_min=0.0,
                       scale_down_interval=interval)  # fmt: skip
        change = compute(conf, evaluated(conf, 100, 1000, math.inf))
        assert not job_scaling_summary({"stage": change})


def test_utilization_boundaries_and_utilization_min_max_compatibility() -> None:
    base = {"restart_time": 0, "scale_down_interval": 0}
    # target 0.6 and boundary 0.1, or max 0.7 and min 0.5: the same band.
    for band in ({"target_utilization_boundary": 0.1}, {"utilization_max": 0.7,
                                                          "utilization_min": 0.5}):  # fmt: skip
        conf = options(**base, utilization_target=0.6, **band)
        assert summary_of(conf, (70, 100), (85, 100)) == {"source", "sink"}
    # Given, max and min prevail over the boundary: target 0.6, max 0.7, min 0.3.
    conf = options(**base, utilization_target=0.6, target_utilization_boundary=1.0,
                   utilization_max=0.7, utilization_min=0.3)  # fmt: skip
    assert summary_of(conf, (60, 100), (85, 100)) == {"sink"}
    # Target 0.5, max 0.6, min from the boundary: 0.5 - 1, which Flink takes as 0 (written
    # as utilization_min=0 here: a boundary above the target is refused on its own).
    conf = options(**base, utilization_target=0.5, target_utilization_boundary=1.0,
                   utilization_max=0.6, utilization_min=0.0)  # fmt: skip
    assert summary_of(conf, (100, 99999), (80, 99999)) == set()
    assert summary_of(conf, (50, 100), (85, 100)) == {"sink"}
    # Target 0.5, min 0.3, max from the boundary: 1.5, taken as 1.
    conf = options(**base, utilization_target=0.5, target_utilization_boundary=1.0,
                   utilization_min=0.3)  # fmt: skip
    assert summary_of(conf, (80, 81), (100, 101)) == set()
    assert summary_of(conf, (80, 79), (100, 101)) == {"source", "sink"}


def test_adjust_by_max_parallelism() -> None:
    """Source -> filter (rebalance) -> sink (keyBy), each at 2: 7 wanted, the sink aligned."""
    conf = options(utilization_target=1.0, stabilization_interval=0)
    inputs = {"source": {}, "filter": {}, "sink": {"hash_input": True}}
    changes = {
        vertex: compute(conf, evaluated(conf, 2, 70, 20, **edge)) for vertex, edge in inputs.items()
    }
    applied = job_scaling_summary(changes)
    assert {vertex: change.new for vertex, change in applied.items()} == {
        "source": 7, "filter": 7, "sink": 8,
    }  # fmt: skip


def test_the_dead_band_includes_its_edges() -> None:
    """Not a Flink case: a true rate exactly at an edge is within the band (Java's ``<``)."""
    conf = options(utilization_target=0.5, utilization_max=1.0, scale_down_interval=0)
    assert compute(conf, evaluated(conf, 10, 100, 100)) == build(20, 10, False)
    assert compute(conf, evaluated(conf, 10, 100, 99)) == build(21, 10, True)


# ---- The policy: settings, and what it does on the queue model ----------------------------


@pytest.mark.parametrize(
    ("settings", "param"),
    [({"target_utilization_boundary": 0.8}, "target_utilization_boundary"),
     ({"scale_down_max_factor": 1.5}, "scale_down_max_factor"),
     ({"vertex_min_parallelism": 5, "vertex_max_parallelism": 4}, "vertex_max_parallelism"),
     ({"utilization_target": 0.0}, "utilization_target"),
     ({"utilization_min": 0.8}, "utilization_min"),
     ({"metrics_window": 0}, "metrics_window"),
     ({"restart_time": -1}, "restart_time"),
     ({"scaling_effectiveness_detection_enabled": 1}, "scaling_effectiveness_detection_enabled"),
     ({"scaling_key_group_partitions_adjust_mode": "EVENLY"},
      "scaling_key_group_partitions_adjust_mode"),
     ({"interval": 0}, "interval")],
)  # fmt: skip
def test_bad_settings_name_the_setting_the_value_and_what_is_allowed(
    settings: dict[str, Any], param: str
) -> None:
    with pytest.raises(ParameterError) as error:
        make_policy("flink", **settings)
    assert error.value.param == param and error.value.value == settings[param]
    assert param in str(error.value) and error.value.allowed in str(error.value)


def test_defaults_are_flinks_and_the_spec_round_trips() -> None:
    flink = make_policy("flink")
    spec = flink.spec
    assert (spec["utilization_target"], spec["target_utilization_boundary"]) == (0.7, 0.3)
    assert (spec["metrics_window"], spec["stabilization_interval"]) == (900.0, 300.0)
    assert (spec["catch_up_duration"], spec["restart_time"]) == (1800.0, 300.0)
    assert (spec["scale_down_interval"], spec["scale_down_max_factor"]) == (3600.0, 0.6)
    assert (spec["vertex_max_parallelism"], spec["interval"]) == (200, 60.0)
    assert make_policy(spec).spec == spec


def _seen(t: float, operators: int, processed: float, backlog: float, busy: float) -> Observation:
    return Observation(t=t, period=10.0, operators=operators, arrival_rate=processed,
                       processed_rate=processed, capacity=100.0, utilisation=busy,
                       backlog=backlog, backlog_rate=0.0, backpressure=0.0)  # fmt: skip


def test_no_decision_before_stabilisation_and_a_full_window() -> None:
    flink = FlinkPolicy(metrics_window=60, stabilization_interval=30, interval=10,
                        scale_down_interval=0)  # fmt: skip
    # 10 instances, 10 % busy: far below the band, but nothing before 30 + 60 s.
    answers = [flink.decide(_seen(t, 10, 100.0, 0.0, 0.1)) for t in range(10, 100, 10)]
    # rho = 100 / 0.1 = 1000; round(100 x 300/1800 + 100/0.7) = 160; 0.16 capped at 0.4.
    assert answers == [10] * 8 + [4]


def test_a_rescale_restarts_the_job_and_the_metric_window() -> None:
    flink = FlinkPolicy(metrics_window=60, stabilization_interval=30, interval=10,
                        scale_down_interval=0, restart_time_tracking_enabled=True)  # fmt: skip
    for t in range(10, 100, 10):
        flink.decide(_seen(t, 10, 100.0, 0.0, 0.1))
    # Until 4 run, the policy asks for 4; restarting (nothing processed, a backlog), it waits.
    assert flink.decide(_seen(100, 10, 100.0, 0.0, 0.1)) == 4
    assert flink.decide(_seen(110, 4, 0.0, 1000.0, 0.0)) == 4
    assert flink.decide(_seen(120, 4, 100.0, 900.0, 0.25)) == 4
    # RUNNING again from 110 s: 20 s after the decision at 90 s.
    assert flink.restart_duration() == 20.0
    # Stable from 140 s; the window is full at 200 s: only then can it decide again.
    answers = [flink.decide(_seen(t, 4, 100.0, 0.0, 0.25)) for t in range(130, 210, 10)]
    # 25 % busy is below the band again: rho = 400, 160 / 400 = 0.4, ceil(4 x 0.4) = 2.
    assert answers == [4] * 7 + [2]


def test_a_backlog_blocks_scale_down() -> None:
    """Lag above the threshold (seconds of input) widens the band to utilisation [0, 1]."""

    def run(lag: float) -> int:
        flink = FlinkPolicy(metrics_window=60, stabilization_interval=0, interval=10,
                            scale_down_interval=0, catch_up_duration=0)  # fmt: skip
        answers = [flink.decide(_seen(t, 10, 100.0, lag, 0.3)) for t in range(10, 80, 10)]
        return answers[-1]

    assert run(lag=0.0) == 5  # 30 % busy is below the band: ceil(10 x 143 / 333) = 5
    assert run(lag=100.0 * 301) == 10  # 301 s of input waiting: no scale-down


def test_flink_tuned_follows_a_step_on_the_queue_model() -> None:
    """Tuned time constants (1/12 of Flink's): up soon after the load doubles, down later."""
    load = np.concatenate([np.full(300, 200.0), np.full(600, 400.0), np.full(600, 200.0)])
    tuned = FlinkPolicy(metrics_window=75, stabilization_interval=25, catch_up_duration=150,
                        restart_time=25, scale_down_interval=300,
                        backlog_processing_lag_threshold=25, vertex_max_parallelism=20,
                        interval=5)  # fmt: skip
    result = run_queue(tuned, load, config=QueueConfig(max_operators=20), operators=5)
    operators = result.timeline["operators"]
    assert operators[:300].max() == 5  # 200/s on 5 x 50/s: 80 % busy, within the band
    assert operators[420] >= 8  # 400/s needs 8 at 100 %; Flink plans for 70 %
    assert operators[-1] < operators[800]  # scaled down after the load fell
    assert result.metrics["s_up"] + result.metrics["s_down"] <= 6


def test_flink_with_its_defaults_waits_twenty_minutes() -> None:
    """5 min stabilisation + a 15 min window: nothing before 1200 s, even far out of band."""
    load = np.full(1500, 500.0)
    result = run_queue(FlinkPolicy(vertex_max_parallelism=20), load,
                       config=QueueConfig(max_operators=20), operators=2)  # fmt: skip
    operators = result.timeline["operators"]
    assert operators[:1200].max() == 2 and operators[-1] > 2
