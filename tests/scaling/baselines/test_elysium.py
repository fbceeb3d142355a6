"""ElysiumPolicy: Algorithm 1's two stages with the paper's thresholds 0.65 / 0.25 / 0.80."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from scaling.baselines import Observation, make_policy
from scaling.baselines.elysium import ElysiumPolicy

Observe = Callable[..., Observation]


@pytest.mark.parametrize(
    ("arrival", "operators", "nodes"),
    [(1300.0, 20, 5), (650.0, 10, 3), (65.0, 1, 1), (66.0, 2, 1), (0.0, 1, 1)],
)
def test_operators_at_065_per_core_then_nodes_at_080(
    observe: Observe, arrival: float, operators: int, nodes: int
) -> None:
    # p = ceil(r / (c * 0.65)) at c = 100 tuples/s; a 4-core node holds at most
    # floor(0.8 * 4 / 0.65) = 4 instances at 0.65 each.
    elysium = ElysiumPolicy()
    assert elysium.decide(observe(arrival_rate=arrival)) == operators
    assert elysium.nodes == nodes


def test_stateless_one_reconfiguration_reaches_the_size(observe: Observe) -> None:
    # Every assessment starts from p = 1 and one node, so the running count does not matter
    # and a single decision jumps as far as needed (multi-level).
    decided = {
        ElysiumPolicy().decide(observe(operators=n, arrival_rate=1300.0)) for n in (1, 7, 50)
    }
    assert decided == {20}


def test_max_parallelism_like_the_papers_four(observe: Observe) -> None:
    elysium = ElysiumPolicy(max_operators=4)
    assert elysium.decide(observe(arrival_rate=1300.0)) == 4
    # 3.25 cores' worth per instance overloads any node: one node per instance, at most.
    assert elysium.nodes == 4


def test_removal_loop_runs_as_written(observe: Observe) -> None:
    # 0.7 cores of work: stage 1 gives 2 instances at 0.35. With the paper's core_min = 0.25
    # they stay; with core_min = 0.4 (> 0.65 / 2) Algorithm 1's second loop removes one.
    assert ElysiumPolicy().decide(observe(arrival_rate=70.0)) == 2
    assert ElysiumPolicy(core_min=0.4).decide(observe(arrival_rate=70.0)) == 1


def test_nodes_never_fall_as_the_load_rises(observe: Observe) -> None:
    elysium = ElysiumPolicy(cores_per_node=2)
    nodes = []
    for arrival in range(0, 5000, 37):
        elysium.decide(observe(arrival_rate=float(arrival)))
        assert elysium.nodes is not None
        nodes.append(elysium.nodes)
    assert nodes == sorted(nodes) and nodes[-1] > nodes[0]


def test_bigger_nodes_mean_fewer_nodes(observe: Observe) -> None:
    counts = []
    for cores in (1, 4, 8):
        elysium = ElysiumPolicy(cores_per_node=cores)
        elysium.decide(observe(arrival_rate=1300.0))
        counts.append(elysium.nodes)
    assert counts == [20, 5, 3]


def test_nodes_unknown_before_the_first_assessment_and_without_a_profile(observe: Observe) -> None:
    elysium = ElysiumPolicy()
    assert elysium.nodes is None
    assert elysium.decide(observe(operators=6, capacity=0.0, arrival_rate=500.0)) == 6
    assert elysium.nodes is None


def test_bounds(observe: Observe) -> None:
    assert ElysiumPolicy(min_operators=3).decide(observe(arrival_rate=10.0)) == 3
    idle = ElysiumPolicy(min_operators=0)
    assert idle.decide(observe(arrival_rate=0.0)) == 0
    assert idle.decide(observe(arrival_rate=1.0)) == 1


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"core_max": 0.0}, r"core_max=0.0 is not allowed"),
        ({"core_min": 0.7}, r"core_min=0.7 is not allowed: core_min must be .*<= 0.65"),
        ({"core_min": 0.65}, r"core_min=0.65 is not allowed: core_min must be < core_max"),
        ({"cpu_max": -0.8}, r"cpu_max=-0.8 is not allowed"),
        ({"cores_per_node": 0}, r"cores_per_node=0 is not allowed"),
        ({"interval": 0.0}, r"interval=0.0 is not allowed"),
    ],
)
def test_invalid_settings_name_the_field_and_value(
    settings: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=rf"elysium: {message}"):
        ElysiumPolicy(**settings)  # type: ignore[arg-type]


def test_spec_round_trips_through_json_and_the_registry() -> None:
    policy = ElysiumPolicy(cpu_max=0.7, cores_per_node=8, max_operators=4)
    spec = json.loads(json.dumps(policy.spec))
    assert spec["name"] == "elysium"
    assert make_policy(spec).spec == policy.spec


def test_same_observations_give_the_same_decisions(observe: Observe) -> None:
    seen = [observe(t=60.0 * i, arrival_rate=50.0 + 113.0 * (i % 13)) for i in range(40)]
    first, second = ElysiumPolicy(), ElysiumPolicy()
    assert [(first.decide(o), first.nodes) for o in seen] == [
        (second.decide(o), second.nodes) for o in seen
    ]
