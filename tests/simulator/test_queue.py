"""The fluid queue model: backlog, pauses, delays and metrics against hand computations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from scaling.baselines import Observation, make_policy
from simulator.model.queue import QueueConfig, run_queue


class Scripted:
    """Answers from a list (the last one repeated) and remembers what it saw."""

    name = "scripted"

    def __init__(self, answers: Sequence[Any], interval: float = 1.0) -> None:
        self.answers = list(answers)
        self.interval = interval
        self.seen: list[Observation] = []

    def decide(self, observation: Observation) -> int:
        self.seen.append(observation)
        answer: int = self.answers[min(len(self.seen), len(self.answers)) - 1]
        return answer

    @property
    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "answers": self.answers, "interval": self.interval}


def stage(**settings: Any) -> QueueConfig:
    return QueueConfig(**({"pause": 0.0} | settings))


def test_the_backlog_grows_at_arrivals_minus_running_capacity() -> None:
    result = run_queue(Scripted([2]), np.full(4, 130.0), config=stage(), operators=2)
    timeline = result.timeline
    np.testing.assert_array_equal(timeline["backlog"], [30.0, 60.0, 90.0, 120.0])
    np.testing.assert_array_equal(timeline["processed"], [100.0] * 4)
    np.testing.assert_array_equal(timeline["utilisation"], [1.0] * 4)
    np.testing.assert_array_equal(timeline["needed"], [3] * 4)
    assert result.metrics["p_under"] == 4.0 and result.metrics["s_up"] == 0


def test_the_backlog_drains_at_spare_capacity_then_throughput_follows_arrivals() -> None:
    arrivals = np.array([150.0] * 4 + [50.0] * 6)
    result = run_queue(Scripted([2]), arrivals, config=stage(), operators=2)
    timeline = result.timeline
    np.testing.assert_array_equal(
        timeline["backlog"], [50.0, 100.0, 150.0, 200.0, 150.0, 100.0, 50.0, 0.0, 0.0, 0.0]
    )
    np.testing.assert_array_equal(timeline["processed"], [100.0] * 8 + [50.0] * 2)
    np.testing.assert_array_equal(timeline["utilisation"], [1.0] * 8 + [0.5] * 2)
    np.testing.assert_array_equal(timeline["t"], np.arange(10.0))


def test_a_pause_processes_nothing_for_its_length_then_the_new_capacity_works() -> None:
    result = run_queue(Scripted([2]), np.full(5, 60.0), config=stage(pause=2.5))
    timeline = result.timeline
    np.testing.assert_array_equal(timeline["operators"], [1, 2, 2, 2, 2])
    np.testing.assert_array_equal(timeline["paused"], [0.0, 1.0, 1.0, 0.5, 0.0])
    # 60 in, then 0, 0, half of 2 x 50, 2 x 50 processed
    np.testing.assert_array_equal(timeline["processed"], [50.0, 0.0, 0.0, 50.0, 100.0])
    np.testing.assert_array_equal(timeline["backlog"], [10.0, 70.0, 130.0, 140.0, 100.0])
    np.testing.assert_array_equal(timeline["utilisation"], [1.0, 0.0, 0.0, 0.5, 1.0])
    # a tuple arriving at the end of step 1 waits for the 1.5 s of pause left, then 70 / 100
    assert timeline["latency"][1] == pytest.approx(2.2)
    assert result.metrics["paused_seconds"] == 2.5 and result.metrics["s_up"] == 1


@pytest.mark.parametrize("delay", [3.0, 2.5])
def test_the_delay_shifts_the_effect_by_whole_steps_rounded_up(delay: float) -> None:
    result = run_queue(Scripted([2]), np.full(6, 60.0), config=stage(delay=delay))
    np.testing.assert_array_equal(result.timeline["target"], [1, 2, 2, 2, 2, 2])
    np.testing.assert_array_equal(result.timeline["operators"], [1, 1, 1, 1, 2, 2])


def test_a_later_decision_re_targets_a_pending_one_which_keeps_its_due_time() -> None:
    # 3 decided at t=1 is due at t=3; 2 decided at t=3 re-targets it: 2 lands at t=3
    result = run_queue(Scripted([3, 3, 2]), np.full(7, 60.0), config=stage(delay=2.0))
    np.testing.assert_array_equal(result.timeline["target"], [1, 3, 3, 2, 2, 2, 2])
    np.testing.assert_array_equal(result.timeline["operators"], [1, 1, 1, 2, 2, 2, 2])
    assert result.metrics["s_up"] == 1


def test_a_policy_that_changes_its_mind_every_interval_still_lands_an_operation() -> None:
    # 2, 3, 2, 3, ... every second from 1 with a 3 s delay: what is wanted when the delay is
    # up lands (3). After it, each 2 is cancelled by the next 3, the running count.
    result = run_queue(Scripted([2, 3] * 10), np.full(20, 60.0), config=stage(delay=3.0))
    np.testing.assert_array_equal(result.timeline["operators"], [1] * 4 + [3] * 16)
    assert result.metrics["s_up"] == 1 and result.metrics["s_down"] == 0


def test_asking_again_for_the_decided_target_does_not_postpone_it() -> None:
    result = run_queue(Scripted([3]), np.full(5, 60.0), config=stage(delay=2.0))
    np.testing.assert_array_equal(result.timeline["operators"], [1, 1, 1, 3, 3])


def test_deciding_the_running_count_cancels_a_pending_target() -> None:
    result = run_queue(Scripted([3, 1]), np.full(6, 60.0), config=stage(delay=2.0))
    np.testing.assert_array_equal(result.timeline["operators"], [1] * 6)
    assert result.metrics["s_up"] == result.metrics["s_down"] == 0


def test_backpressure_is_the_share_of_each_step_at_or_above_the_buffer() -> None:
    arrivals = np.array([150.0, 150.0, 0.0, 0.0, 0.0])
    result = run_queue(Scripted([1]), arrivals, config=stage(buffer=150.0, sla=2.5))
    timeline = result.timeline
    # backlog 0 -> 100 -> 200 -> 150 -> 100 -> 50: step 1 crosses 150 half-way, step 2 stays
    # at or above it, step 3 leaves it at once
    np.testing.assert_array_equal(timeline["backlog"], [100.0, 200.0, 150.0, 100.0, 50.0])
    np.testing.assert_array_equal(timeline["backpressure"], [0.0, 0.5, 1.0, 0.0, 0.0])
    # latency: the backlog at one instance's 50 tuples/s; 4 s and 3 s exceed the 2.5 s SLA
    np.testing.assert_array_equal(timeline["latency"], [2.0, 4.0, 3.0, 2.0, 1.0])
    assert result.metrics["sla_seconds"] == 2.0
    assert result.metrics["latency_max"] == 4.0 and result.metrics["latency_mean"] == 2.4


def test_metrics_match_hand_counts() -> None:
    # from 2 operators: 3 at t=1, 1 at t=3, 2 at t=5, each followed by a 1 s pause
    policy = Scripted([3, 3, 1, 1, 2])
    config = stage(pause=1.0, sla=3.0)
    result = run_queue(policy, np.full(6, 100.0), config=config, operators=2, step=1.0)
    timeline = result.timeline
    np.testing.assert_array_equal(timeline["operators"], [2, 3, 3, 1, 1, 2])
    np.testing.assert_array_equal(timeline["backlog"], [0.0, 100.0, 50.0, 150.0, 200.0, 300.0])
    np.testing.assert_allclose(timeline["latency"], [0.0, 2 / 3, 1 / 3, 3.0, 4.0, 3.0])
    assert result.metrics == pytest.approx(
        {
            "s_up": 2,
            "s_down": 1,
            "p_over": 2.0,  # 3 running, 2 needed, at steps 1 and 2
            "p_under": 2.0,  # 1 running at steps 3 and 4
            "operator_seconds": 12.0,
            "backlog_max": 300.0,
            "backlog_mean": 800.0 / 6,
            "latency_mean": 11.0 / 6,
            "latency_max": 4.0,
            "sla_seconds": 1.0,  # 4 s; 3 s does not exceed the 3 s SLA
            "paused_seconds": 3.0,
        }
    )
    assert isinstance(result.metrics["s_up"], int)
    trend = np.full(6, 140.0)  # needs 3: p+- count against it instead of the arrivals
    again = Scripted([3, 3, 1, 1, 2])
    against_trend = run_queue(again, np.full(6, 100.0), config=config, operators=2, trend=trend)
    assert (against_trend.metrics["p_over"], against_trend.metrics["p_under"]) == (0.0, 4.0)


def test_each_observation_averages_the_steps_since_the_previous_decision() -> None:
    policy = Scripted([1], interval=2.5)
    arrivals = np.array([40.0, 80.0, 60.0, 100.0, 20.0, 50.0, 50.0, 50.0, 50.0, 50.0])
    run_queue(policy, arrivals, config=stage(), start=100.0)
    # decisions at the first step boundary at or after every 2.5 s
    assert [seen.t for seen in policy.seen] == [103.0, 105.0, 108.0, 110.0]
    assert [seen.period for seen in policy.seen] == [3.0, 2.0, 3.0, 2.0]
    first, second = policy.seen[:2]
    # backlog 0, 30, 40 after steps 0-2: throughput 40, 50, 50; busy 0.8, 1, 1
    assert first.arrival_rate == 60.0 and first.processed_rate == pytest.approx(140.0 / 3)
    assert first.utilisation == pytest.approx(2.8 / 3)
    assert (first.backlog, first.backlog_rate, first.operators, first.capacity) == (
        40.0,
        40.0 / 3,
        1,
        50.0,
    )
    # then 100 and 20 in: backlog 90, 60
    assert second.backlog == 60.0 and second.backlog_rate == 10.0
    assert second.arrival_rate == 60.0 and second.processed_rate == 50.0


def test_a_micro_batch_stage_reports_at_each_batchs_end_less_often_when_behind() -> None:
    # Micro-batches of at most 600 tuples on one 50 tuples/s instance, a trigger of 1 s: 40/s
    # arriving, each batch reads what came during the one before and ends after the trigger.
    # Then 200/s for 10 s: the backlog grows, and each batch reads 600 and takes 12 s.
    policy = Scripted([1])
    arrivals = np.array([40.0] * 5 + [200.0] * 10 + [40.0] * 40)
    run_queue(policy, arrivals, config=stage(batch=600.0))
    times = [seen.t for seen in policy.seen]
    assert times[:6] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    gaps = np.diff(times)
    assert gaps.max() == 12.0  # 600 tuples at 50/s
    # While the stage is behind it is decided for every 12 s, not every second.
    behind = [seen for seen in policy.seen if seen.backlog >= 600.0]
    assert len(behind) >= 2 and all(b.period == 12.0 for b in behind[1:])
    # Without ``batch`` (a lag read on a clock) every second, whatever the backlog.
    clocked = Scripted([1])
    run_queue(clocked, arrivals, config=stage())
    assert [seen.t for seen in clocked.seen] == [float(t) for t in range(1, 56)]


def test_decisions_are_clamped_to_the_bounds() -> None:
    config = stage(min_operators=2, max_operators=4)
    result = run_queue(Scripted([9, 0]), np.full(3, 60.0), config=config, operators=2)
    np.testing.assert_array_equal(result.timeline["target"], [2, 4, 2])
    np.testing.assert_array_equal(result.timeline["operators"], [2, 4, 2])


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"capacity": 0.0}, r"QueueConfig: capacity=0\.0 is not allowed: .* > 0"),
        ({"buffer": -1.0}, r"QueueConfig: buffer=-1\.0 is not allowed"),
        ({"pause": float("nan")}, r"QueueConfig: pause=nan is not allowed: .* >= 0"),
        ({"delay": -2}, r"QueueConfig: delay=-2 is not allowed"),
        ({"sla": "10"}, r"QueueConfig: sla='10' is not allowed: sla must be a number"),
        ({"min_operators": 1.5}, r"QueueConfig: min_operators=1\.5 is not allowed: .* integer"),
        ({"min_operators": 3, "max_operators": 2}, r"max_operators=2 is not allowed: .* >= 3"),
        ({"batch": 0.0}, r"QueueConfig: batch=0\.0 is not allowed: .* > 0"),
    ],
)
def test_invalid_settings_name_the_field_and_value(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        QueueConfig(**settings)


def test_integral_counts_are_stored_as_int_and_numbers_as_float() -> None:
    config = QueueConfig(capacity=5, min_operators=2.0, max_operators=3.0)
    assert (config.capacity, config.min_operators, config.max_operators) == (5.0, 2, 3)
    assert type(config.capacity) is float and type(config.max_operators) is int


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"arrivals": np.array([1.0, -1.0])}, r"arrivals\[1\]=-1\.0 is not allowed: .* >= 0"),
        ({"arrivals": np.array([np.inf])}, r"arrivals\[0\]=inf is not allowed"),
        ({"arrivals": np.ones((2, 2))}, r"arrivals has shape \(2, 2\)"),
        ({"arrivals": np.array([])}, r"arrivals has shape \(0,\); it must be non-empty"),
        ({"trend": np.ones(3)}, r"trend has shape \(3,\); it must be \(2,\), like arrivals"),
        ({"step": 0.0}, r"run_queue: step=0\.0 is not allowed: step must be a number > 0"),
        ({"operators": 0}, r"run_queue: operators=0 is not allowed: .* >= 1"),
        ({"policy": Scripted([2.5])}, r"Scripted: decide\(\)=2\.5 is not allowed: .* integer"),
    ],
)
def test_invalid_arguments_name_the_argument_and_value(
    arguments: dict[str, Any], message: str
) -> None:
    call = {"policy": Scripted([1]), "arrivals": np.ones(2)} | arguments
    with pytest.raises(ValueError, match=message):
        run_queue(**call)


def test_runs_are_deterministic() -> None:
    arrivals = 300.0 + np.random.default_rng(3).normal(0.0, 60.0, 400).clip(-300.0)
    first, second = (
        run_queue(make_policy("steadyscale", filter="ewma"), arrivals, config=stage(pause=4.0))
        for _ in range(2)
    )
    assert first.metrics == second.metrics
    for name, values in first.timeline.items():
        np.testing.assert_array_equal(values, second.timeline[name], err_msg=name)


def test_denoised_steadyscale_pauses_less_than_raw_thresholding_on_noise() -> None:
    trend = np.full(1_500, 310.0)
    arrivals = (trend + np.random.default_rng(0).normal(0.0, 40.0, trend.size)).clip(0.0)
    runs = {
        name: run_queue(
            make_policy("steadyscale", filter=spec), arrivals, config=QueueConfig(), trend=trend
        ).metrics
        for name, spec in (("raw", "raw"), ("tvd", {"name": "tvd", "lam": 2_000.0}))
    }
    raw, tvd = runs["raw"], runs["tvd"]
    assert tvd["s_up"] + tvd["s_down"] < (raw["s_up"] + raw["s_down"]) / 10
    assert tvd["paused_seconds"] < raw["paused_seconds"] / 10
    assert tvd["latency_mean"] < raw["latency_mean"]
