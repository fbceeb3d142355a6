"""ThresholdPolicy: operators needed for a volume, on values worked out by hand."""

from __future__ import annotations

import json

import pytest

from scaling import ThresholdPolicy
from scaling.cost import Prices


def test_needed_is_the_ceiling_of_volume_over_capacity() -> None:
    policy = ThresholdPolicy(capacity=50.0)
    volumes = [0.0, 1.0, 49.999, 50.0, 50.001, 312.4, 350.0, 500.0]
    assert [policy.needed(v) for v in volumes] == [1, 1, 1, 1, 2, 7, 7, 10]


@pytest.mark.parametrize("capacity", [0.1, 0.3, 7.0, 33.3, 50.0])
def test_exact_multiples_of_the_capacity_do_not_get_an_extra_operator(capacity: float) -> None:
    policy = ThresholdPolicy(capacity=capacity, min_operators=0)
    for operators in range(2000):
        volume = operators * capacity  # rounded: 3 * 0.1 is 0.30000000000000004
        assert policy.needed(volume) == operators, volume
        assert policy.needed(volume + capacity * 1e-6) == operators + 1, volume


def test_decimal_inputs_that_round_above_a_multiple() -> None:
    # 2.1 / 0.3 == 7.000000000000001 in floating point; the ceiling alone would say 8.
    assert ThresholdPolicy(capacity=0.3).needed(2.1) == 7
    assert ThresholdPolicy(capacity=0.3).needed(13.8) == 46
    assert ThresholdPolicy(capacity=50.0).needed(100.0) == 2


def test_bounds() -> None:
    policy = ThresholdPolicy(capacity=50.0, min_operators=2, max_operators=4)
    assert [policy.needed(v) for v in (0.0, 100.0, 100.1, 200.0, 201.0, 1e9)] == [2, 2, 3, 4, 4, 4]
    assert [policy.clamp(n) for n in (0, 3, 9)] == [2, 3, 4]


def test_scale_to_zero_needs_min_operators_zero() -> None:
    assert ThresholdPolicy(capacity=50.0).needed(0.0) == 1
    idle = ThresholdPolicy(capacity=50.0, min_operators=0)
    assert [idle.needed(v) for v in (0.0, 0.5, 50.0)] == [0, 1, 1]
    assert ThresholdPolicy(capacity=50.0, min_operators=0, max_operators=0).needed(500.0) == 0


def test_negative_filtered_volume_needs_the_minimum() -> None:
    # Some filters (EKF) may overshoot below zero after a drop to 0.
    assert ThresholdPolicy(capacity=50.0, min_operators=0).needed(-3.0) == 0


def test_counts_are_ints_even_from_integral_floats() -> None:
    policy = ThresholdPolicy(capacity=50, min_operators=2.0, max_operators=6.0)  # type: ignore[arg-type]
    assert policy.spec == {"capacity": 50.0, "min_operators": 2, "max_operators": 6}
    assert type(policy.needed(0.0)) is int and type(policy.needed(1e6)) is int


def test_spec_round_trips_through_json() -> None:
    for policy in (
        ThresholdPolicy(capacity=50.0),
        ThresholdPolicy(capacity=12.5, min_operators=0, max_operators=40),
    ):
        rebuilt = ThresholdPolicy(**json.loads(json.dumps(policy.spec)))
        assert rebuilt == policy
        assert rebuilt.spec == policy.spec


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"capacity": 0.0}, "capacity=0.0 is not allowed: capacity must be a number > 0"),
        ({"capacity": -50.0}, "capacity=-50.0 is not allowed"),
        ({"capacity": float("inf")}, "capacity=inf is not allowed"),
        ({"capacity": float("nan")}, "capacity=nan is not allowed"),
        ({"capacity": "50"}, "capacity='50' is not allowed"),
        ({"capacity": True}, "capacity=True is not allowed"),
        ({"capacity": 50.0, "min_operators": -1}, "min_operators=-1 is not allowed"),
        ({"capacity": 50.0, "min_operators": 1.5}, "min_operators must be an integer >= 0"),
        ({"capacity": 50.0, "min_operators": None}, "min_operators=None is not allowed"),
        (
            {"capacity": 50.0, "min_operators": 3, "max_operators": 2},
            "max_operators=2 is not allowed: max_operators must be an integer >= 3",
        ),
        ({"capacity": 50.0, "max_operators": 2.5}, "max_operators=2.5 is not allowed"),
    ],
)
def test_invalid_settings_are_refused_naming_parameter_value_and_rule(
    params: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match="ThresholdPolicy: ") as error:
        ThresholdPolicy(**params)  # type: ignore[arg-type]
    assert message in str(error.value)


def test_non_finite_volume_is_refused() -> None:
    with pytest.raises(ValueError, match="volume=nan is not allowed"):
        ThresholdPolicy(capacity=50.0).needed(float("nan"))


def test_the_policy_prices_the_model_in_its_units() -> None:
    default = ThresholdPolicy(capacity=50.0)
    assert default.prices == Prices(
        capacity=50.0, latency=10.0, operator=1.0, late=1000.0, operation=30.0
    )
    custom = ThresholdPolicy(
        capacity=20.0, latency=30.0, operator_price=2.0, late_price=0.0, operation_price=0.0
    )
    assert custom.prices == Prices(20.0, 30.0, 2.0, 0.0, 0.0)  # a late second may be free
    # A late probability instead of a price: late seconds cost nothing, the share bounds them.
    share = ThresholdPolicy(capacity=50.0, late_probability=0.01)
    assert share.late_price is None and share.prices.late == 0.0


def test_new_settings_appear_in_the_spec_only_when_not_default() -> None:
    default = ThresholdPolicy(capacity=50.0)
    assert set(default.spec) == {"capacity", "min_operators", "max_operators"}
    custom = ThresholdPolicy(
        capacity=50.0, latency=30.0, restart=120.0, operator_price=2.0, late_price=50.0,
        operation_price=0.0, delay=45.0,
    )  # fmt: skip
    assert custom.spec == {
        "capacity": 50.0, "min_operators": 1, "max_operators": None, "latency": 30.0,
        "operator_price": 2.0, "late_price": 50.0, "operation_price": 0.0, "restart": 120.0,
        "delay": 45.0,
    }  # fmt: skip
    assert ThresholdPolicy(**custom.spec) == custom and custom != default
    # A late price stated, even the default's 1,000, holds whatever the restart; unstated, it
    # falls where every operation is late for certain (late_price_for).
    stated = ThresholdPolicy(capacity=50.0, late_price=1000.0)
    assert stated != default and stated.spec["late_price"] == 1000.0
    assert ThresholdPolicy(**stated.spec).late_price_for(20.0) == 1000.0
    assert default.late_price_for(20.0) == 240.0 and default.late_price_for(10.0) == 1000.0
    for name, value in [
        ("restart", -1.0), ("latency", 0.0), ("operator_price", 0.0), ("late_price", -1.0),
        ("operation_price", -1.0), ("latency", None), ("restart", "8"), ("delay", -1.0),
        ("delay", float("inf")), ("delay", "30"),
    ]:  # fmt: skip
        with pytest.raises(ValueError, match=f"{name}={value!r} is not allowed"):
            ThresholdPolicy(capacity=50.0, **{name: value})  # type: ignore[arg-type]


def test_a_late_probability_replaces_the_late_price_and_is_kept_in_the_spec() -> None:
    share = ThresholdPolicy(capacity=50.0, late_probability=0.1)
    assert share.spec["late_probability"] == 0.1 and "late_price" not in share.spec
    assert ThresholdPolicy(**share.spec) == share and share != ThresholdPolicy(capacity=50.0)
    assert ThresholdPolicy(capacity=50.0, late_probability=1.0).late_probability == 1.0
    for value in (0, -0.1, 1.5, float("nan"), "0.1"):
        with pytest.raises(ValueError, match=f"late_probability={value!r} is not allowed"):
            ThresholdPolicy(capacity=50.0, late_probability=value)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"state late_price \(5.0\) or late_probability, not both"):
        ThresholdPolicy(capacity=50.0, late_price=5.0, late_probability=0.1)


def test_from_settings_maps_the_settings_of_older_specs() -> None:
    # The full table is tests/scaling/test_legacy.py; here: the policy built from them.
    old = {"capacity": 50.0, "utilisation": 0.8, "risk": 0.01, "quiet": 30.0, "lead": 15.0}
    policy = ThresholdPolicy.from_settings({**old, "catch_up": 300.0, "quiet_weight": 1.0})
    assert policy == ThresholdPolicy(capacity=40.0, late_probability=0.01)
    with pytest.raises(ValueError, match="policy.cap=3 is not allowed"):
        ThresholdPolicy.from_settings({"capacity": 50.0, "cap": 3})
