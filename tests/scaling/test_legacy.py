"""Specs from before the cost model: each row of scaling/legacy.py's table, and each refusal."""

from __future__ import annotations

from typing import Any

import pytest

from filters.base import ParameterError
from scaling import Scaler, ThresholdPolicy
from scaling.legacy import mapped_settings

NEW = {"capacity": 50.0, "min_operators": 1, "max_operators": 10}


def test_settings_without_anything_old_are_returned_as_they_are() -> None:
    assert mapped_settings(NEW) is NEW
    assert mapped_settings({**NEW, "latency": 30.0}) == {**NEW, "latency": 30.0}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # utilisation u < 1: capacity x u
        ({"utilisation": 0.8}, {"capacity": 40.0}),
        ({"utilisation": 0.5, "capacity": 30}, {"capacity": 15.0}),
        ({"utilisation": 1.0}, {}),  # the old default: no change
        # risk r: late_probability r
        ({"risk": 0.01}, {"late_probability": 0.01}),
        ({"risk": 1.0}, {"late_probability": 1.0}),
        # catch_up (a number): dropped
        ({"catch_up": 300.0}, {}),
        ({"catch_up": 60}, {}),
        # quiet, lead: dropped
        ({"quiet": 30.0}, {}),
        ({"lead": 15.0}, {}),
        # quiet_weight 1: dropped
        ({"quiet_weight": 1}, {}),
        ({"quiet_weight": 1.0}, {}),
        # latency (a number): kept, beside an old setting
        ({"latency": 25.0, "quiet": 0.0}, {"latency": 25.0}),
    ],
)
def test_each_row_of_the_table(old: dict[str, Any], new: dict[str, Any]) -> None:
    settings = {**NEW, **old}
    assert mapped_settings(settings) == {**NEW, **new}
    assert ThresholdPolicy.from_settings(settings) == ThresholdPolicy(**{**NEW, **new})


def test_a_whole_old_spec_maps_at_once() -> None:
    old = {**NEW, "utilisation": 0.8, "risk": 0.001, "catch_up": 300.0, "quiet": 60.0}
    old |= {"quiet_weight": 1.0, "lead": 0.0, "latency": 10.0, "restart": 8.0}
    assert mapped_settings(old) == {
        **NEW,
        "capacity": 40.0,
        "late_probability": 0.001,
        "latency": 10.0,
        "restart": 8.0,
    }


@pytest.mark.parametrize(
    ("setting", "value", "allowed"),
    [
        ("catch_up", None, "the model always prices a backlog; remove catch_up"),
        ("latency", None, "the model needs a latency in seconds > 0"),
        ("quiet_weight", 0.5, "only 1 can be mapped: the model uses every sample"),
        ("quiet_weight", 0.0, "only 1 can be mapped"),
        ("utilisation", "0.8", "a number in (0, 1] with capacity"),
    ],
)
def test_each_refusal_names_the_setting(setting: str, value: object, allowed: str) -> None:
    with pytest.raises(ParameterError) as error:
        mapped_settings({**NEW, setting: value})
    assert error.value.param == f"policy.{setting}" and error.value.value == value
    assert allowed in error.value.allowed
    assert str(error.value).startswith(f"Scaler: policy.{setting}=")
    # The service and Scaler.from_spec refuse the same way, pointing at the field.
    with pytest.raises(ParameterError) as built:
        Scaler.from_spec({"policy": {**NEW, setting: value}})
    assert built.value.param == f"policy.{setting}"


def test_a_latency_of_null_is_refused_even_without_another_old_setting() -> None:
    with pytest.raises(ParameterError, match="policy.latency=None is not allowed"):
        mapped_settings({**NEW, "latency": None})


def test_utilisation_needs_a_capacity_to_scale() -> None:
    with pytest.raises(ParameterError) as error:
        mapped_settings({"utilisation": 0.8})
    assert error.value.param == "policy.utilisation"


def test_an_old_spec_builds_a_scaler_whose_spec_is_the_mapped_one() -> None:
    old = {"policy": {**NEW, "utilisation": 0.8, "risk": 0.01, "quiet": 30.0}}
    scaler = Scaler.from_spec(old, operators=3)
    assert scaler.spec["policy"] == {**NEW, "capacity": 40.0, "late_probability": 0.01}
    decisions = [scaler.observe(100.0 + t % 3, float(t), backlog=0.0) for t in range(10)]
    assert [d.code for d in decisions[:8]] == ["WarmingUp"] * 8  # changepoint's warm-up
    last = decisions[-1]
    # 101/s at 40/s per operator: 3. The risk is a late probability: 2 would cost less (no
    # late price), but be late most of the horizon, over the 1% share.
    assert (last.operators, last.code) == (3, "Steady")
    rows = {row["operators"]: row for row in (last.explain or {})["candidates"]}
    assert rows[2]["total"] < rows[3]["total"] and rows[2]["late_cost"] == 0.0
    assert rows[2]["late_seconds"] > 0.01 * (last.explain or {})["horizon"]


def test_a_risk_beside_a_late_probability_or_a_utilisation_over_1_is_refused() -> None:
    both = {"capacity": 50.0, "risk": 0.01, "late_probability": 0.2}
    with pytest.raises(ValueError, match=r"policy\.risk=0\.01 .*keep one"):
        mapped_settings(both)
    with pytest.raises(ValueError, match=r"policy\.utilisation=1\.5 .*\(0, 1\]"):
        mapped_settings({"capacity": 50.0, "utilisation": 1.5})
