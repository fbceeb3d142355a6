"""ThresholdPolicy: operators needed for a volume, on values worked out by hand."""

from __future__ import annotations

import json
import math

import pytest

from scaling import ThresholdPolicy


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


def test_headroom_keeps_the_noise_under_the_latency_after_a_restart() -> None:
    policy = ThresholdPolicy(capacity=50.0)  # latency 10 s, risk one in a thousand
    # 10 h^2 + 10 x 400 h = 114^2 ln(1000) / 2, and with an 8 s restart 10 h^2 + 2 x 400 h = ...
    assert policy.headroom(400.0, 114.0) == pytest.approx(10.92, abs=0.01)
    assert policy.headroom(400.0, 114.0, restart=8.0) == pytest.approx(38.03, abs=0.01)
    # More noise, more headroom; more load absorbs the same noise with less.
    assert policy.headroom(400.0, 228.0) > 3.5 * policy.headroom(400.0, 114.0)
    assert policy.headroom(800.0, 114.0) < policy.headroom(400.0, 114.0)
    # A restart longer than the latency bound needs capacity for its backlog even without noise:
    # 12 s x 400 tuples/s drained by 400 + 80 tuples/s is a delay of exactly 10 s.
    assert policy.headroom(400.0, 0.0, restart=12.0) == pytest.approx(80.0)
    assert ThresholdPolicy(capacity=50.0, latency=None).headroom(400.0, 114.0, 8.0) == 0.0


def test_look_ahead_only_along_a_rising_level() -> None:
    policy = ThresholdPolicy(capacity=50.0, lead=20.0)
    assert policy.demand(300.0, slope=1.5, restart=10.0) == 345.0  # 300 + 1.5 x 30
    assert policy.demand(300.0, slope=-1.5, restart=10.0) == 300.0
    assert ThresholdPolicy(capacity=50.0, lead=0.0).demand(300.0, slope=1.5) == 300.0


def test_new_settings_appear_in_the_spec_only_when_not_default() -> None:
    default = ThresholdPolicy(capacity=50.0)
    assert set(default.spec) == {"capacity", "min_operators", "max_operators"}
    custom = ThresholdPolicy(capacity=50.0, latency=30.0, lead=15.0, restart=120.0)
    assert custom.spec["latency"] == 30.0 and custom.spec["lead"] == 15.0
    assert custom.spec["restart"] == 120.0 and "restart" not in default.spec
    assert ThresholdPolicy(**custom.spec) == custom
    with pytest.raises(ValueError, match="restart=-1.0 is not allowed"):
        ThresholdPolicy(capacity=50.0, restart=-1.0)
    with pytest.raises(ValueError, match="latency=0.0 is not allowed"):
        ThresholdPolicy(capacity=50.0, latency=0.0)
    with pytest.raises(ValueError, match="lead=-1.0 is not allowed"):
        ThresholdPolicy(capacity=50.0, lead=-1.0)


def test_quiet_weight_is_a_share_from_0_to_1_kept_in_the_spec_when_not_1() -> None:
    assert "quiet_weight" not in ThresholdPolicy(capacity=50.0).spec
    halved = ThresholdPolicy(capacity=50.0, quiet_weight=0.5)
    assert halved.spec["quiet_weight"] == 0.5 and ThresholdPolicy(**halved.spec) == halved
    for value in (-0.1, 1.5, float("nan"), "0.5"):
        with pytest.raises(ValueError, match=f"quiet_weight={value!r} is not allowed"):
            ThresholdPolicy(capacity=50.0, quiet_weight=value)  # type: ignore[arg-type]


def test_the_risk_sets_the_headroom_and_is_kept_in_the_spec_when_not_the_default() -> None:
    # The headroom is the spare capacity whose chance of letting the noise take the delay over
    # the latency is the risk: exp(-2 h L (v + h) / sigma^2) = risk without a restart.
    default, loose = ThresholdPolicy(capacity=50.0), ThresholdPolicy(capacity=50.0, risk=0.1)
    assert "risk" not in default.spec and loose.spec["risk"] == 0.1
    assert ThresholdPolicy(**loose.spec) == loose and loose != default
    for policy in (default, loose):
        h = policy.headroom(400.0, 114.0)
        assert math.exp(-2.0 * h * 10.0 * (400.0 + h) / 114.0**2) == pytest.approx(policy.risk)
    assert loose.headroom(400.0, 114.0) < default.headroom(400.0, 114.0)
    assert ThresholdPolicy(capacity=50.0, risk=1.0).headroom(400.0, 114.0) == 0.0
    for value in (0, -0.1, 1.5, float("nan"), "0.1"):
        with pytest.raises(ValueError, match=f"risk={value!r} is not allowed"):
            ThresholdPolicy(capacity=50.0, risk=value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("weight", "since", "expected"),
    [
        (0.5, 0.0, 700.0),  # right after the operation: half-way from the level
        (0.5, 59.9, 700.0),
        (0.5, 60.0, 900.0),  # the quiet period is over: the sample itself
        (0.5, None, 900.0),  # no operation yet
        (1.0, 10.0, 900.0),  # the default: used as any other sample
        (0.0, 10.0, None),  # ignored
    ],
)
def test_a_volume_within_the_quiet_period_counts_for_its_weight(
    weight: float, since: float | None, expected: float | None
) -> None:
    policy = ThresholdPolicy(capacity=50.0, quiet_weight=weight)  # quiet 60 s
    assert policy.quiet_volume(900.0, 500.0, since) == expected
    assert policy.quiet_volume(900.0, None, since) == 900.0  # no level yet: never ignored
