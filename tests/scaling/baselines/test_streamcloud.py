"""StreamCloudPolicy: the LUT/UUT band, load-aware provisioning towards TUT, cascades."""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import pytest

from scaling.baselines import Observation, make_policy
from scaling.baselines.streamcloud import StreamCloudPolicy

Observe = Callable[..., Observation]


@pytest.mark.parametrize(
    ("operators", "utilisation", "wanted"), [(1, 0.9, 2), (15, 0.9, 23), (27, 0.5, 23)]
)
def test_load_aware_configuration_reaches_for_tut(
    operators: int, utilisation: float, wanted: int
) -> None:
    # seed001_003.md §2.2: ceil(old * U_av / TUT) with TUT = 0.6.
    assert StreamCloudPolicy().new_configuration(operators, utilisation) == wanted


@pytest.mark.parametrize("utilisation", [0.5, 0.6, 0.75, 0.9])
def test_no_action_inside_the_band(observe: Observe, utilisation: float) -> None:
    # LUT = 0.5 and UUT = 0.9 are inside: the paper acts "above UUT" and "below LUT".
    assert StreamCloudPolicy().decide(observe(operators=15, utilisation=utilisation)) == 15


@pytest.mark.parametrize(
    ("operators", "utilisation", "wanted"),
    [(15, 0.95, 24), (1, 1.0, 2), (27, 0.45, 21), (10, 0.05, 1)],
)
def test_outside_the_band_one_step_to_tut(
    observe: Observe, operators: int, utilisation: float, wanted: int
) -> None:
    seen = observe(operators=operators, utilisation=utilisation)
    assert StreamCloudPolicy().decide(seen) == wanted


def test_after_a_load_aware_step_the_same_load_asks_for_nothing_more(observe: Observe) -> None:
    # n' = ceil(n U / TUT) is a fixed point: the same load on n' instances gives n' again.
    policy = StreamCloudPolicy()
    for operators in range(1, 40):
        for utilisation in [u / 100 for u in range(1, 101)]:
            resized = policy.decide(observe(operators=operators, utilisation=utilisation))
            if resized == operators:
                continue
            spread = operators * utilisation / resized
            assert spread <= 0.6 + 1e-12
            assert policy.decide(observe(operators=resized, utilisation=spread)) == resized


def test_individual_provisioning_cascades_on_a_ramp(observe: Observe) -> None:
    # The paper's Fig. 21: load rising linearly, here to 15 instances' worth of work.
    def scale_outs(policy: StreamCloudPolicy) -> int:
        operators, count = 1, 0
        for step in range(1, 301):
            utilisation = min(1.0, 15.0 * step / 300 / operators)
            wanted = policy.decide(observe(operators=operators, utilisation=utilisation))
            count, operators = count + (wanted > operators), wanted
        return count

    # Both end at 17 instances; one at a time takes 16 steps, load-aware 5.
    individual = scale_outs(StreamCloudPolicy(provisioning="individual"))
    assert (scale_outs(StreamCloudPolicy()), individual) == (5, 16)


def test_individual_steps_by_one(observe: Observe) -> None:
    policy = StreamCloudPolicy(provisioning="individual")
    assert policy.decide(observe(operators=15, utilisation=0.95)) == 16
    assert policy.decide(observe(operators=15, utilisation=0.2)) == 14
    assert policy.decide(observe(operators=15, utilisation=0.7)) == 15


def test_bounds(observe: Observe) -> None:
    assert StreamCloudPolicy(max_operators=20).decide(observe(utilisation=1.0)) == 17
    assert StreamCloudPolicy(max_operators=16).decide(observe(utilisation=1.0)) == 16
    assert StreamCloudPolicy(min_operators=4).decide(observe(utilisation=0.1)) == 4


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"lower": -0.1}, r"lower=-0.1 is not allowed"),
        ({"upper": 0.5}, r"upper=0.5 is not allowed: upper must be a number > 0.5"),
        ({"target": 0.95}, r"target=0.95 is not allowed: target must be .*<= 0.9"),
        ({"lower": 0.0, "target": 0.0}, r"target=0.0 is not allowed: target must be .*> 0"),
        ({"provisioning": "greedy"}, r"provisioning='greedy' is not allowed"),
        ({"interval": math.inf}, r"interval=inf is not allowed"),
    ],
)
def test_invalid_settings_name_the_field_and_value(
    settings: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=rf"streamcloud: {message}"):
        StreamCloudPolicy(**settings)  # type: ignore[arg-type]


def test_spec_round_trips_through_json_and_the_registry() -> None:
    policy = StreamCloudPolicy(upper=0.8, provisioning="individual", max_operators=30)
    spec = json.loads(json.dumps(policy.spec))
    assert spec["name"] == "streamcloud"
    assert make_policy(spec).spec == policy.spec


def test_same_observations_give_the_same_decisions(observe: Observe) -> None:
    seen = [observe(t=15.0 * i, utilisation=(i * 37 % 100) / 100) for i in range(50)]
    first, second = StreamCloudPolicy(), StreamCloudPolicy()
    assert [first.decide(o) for o in seen] == [second.decide(o) for o in seen]
