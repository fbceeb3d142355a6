"""ScalerPolicy: a Scaler behind the baselines' interface, fed what a deployment would see."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from scaling.baselines import Observation, make_policy
from scaling.baselines.steadyscale import ScalerPolicy

Observe = Callable[..., Observation]

# 10 instances of 100 tuples/s: 700 processed, 900 arriving, so the backlog grows by 200/s.
STAGE = {"processed_rate": 700.0, "backlog_rate": 200.0, "backlog": 3000.0}


def test_the_scaler_is_fed_the_arrival_rate_by_default(observe: Observe) -> None:
    policy = ScalerPolicy("raw", capacity=100.0)
    assert policy.decide(observe(**STAGE)) == 9  # ceil(900 / 100): the backlog is not seen
    told = ScalerPolicy("raw", capacity=100.0, reported=True)
    # Told the backlog, the cost model keeps the 10 running: their 1,000/s drain the 3,000
    # waiting within the latency, while 11 would stop everything for the 20 s restart first.
    assert told.decide(observe(**STAGE)) == 10
    assert told._scaler is not None
    again = told._scaler.observe(900.0, 1.0, backlog=3200.0, running=10, processed=1000.0)
    assert (again.operators, again.code) == (10, "HeldForCost")  # 900/s alone would need 9
    costs = {row["operators"]: row["total"] for row in (again.explain or {})["candidates"]}
    assert costs[10] < min(costs[9], costs[11])


def test_the_processed_rate_may_be_fed_as_the_volume_instead(observe: Observe) -> None:
    policy = ScalerPolicy("raw", capacity=100.0, volume="processed")
    assert policy.decide(observe(**STAGE)) == 7  # ceil(700 / 100): what a saturated job reads
    assert policy.spec["volume"] == "processed" and "volume" not in ScalerPolicy().spec
    with pytest.raises(ValueError, match="volume='lag' is not allowed: volume must be one of"):
        ScalerPolicy(volume="lag")


def test_the_spec_rebuilds_the_policy_with_every_setting() -> None:
    policy = ScalerPolicy(
        None, late_probability=0.01, operation_price=5.0, restart=40.0, latency=30.0,
        volume="processed", reported=True,
    )  # fmt: skip
    rebuilt = make_policy(json.loads(json.dumps(policy.spec)))
    assert isinstance(rebuilt, ScalerPolicy) and rebuilt.spec == policy.spec
    assert rebuilt.spec["late_probability"] == 0.01 and rebuilt.spec["operation_price"] == 5.0
    assert (rebuilt.spec["restart"], rebuilt.spec["latency"]) == (40.0, 30.0)
    priced = ScalerPolicy(None, late_price=200.0, operator_price=2.0)
    assert make_policy(json.loads(json.dumps(priced.spec))).spec == priced.spec
    assert (priced.spec["late_price"], priced.spec["operator_price"]) == (200.0, 2.0)


@pytest.mark.parametrize("setting", ["quiet_weight", "risk", "catch_up", "quiet", "lead"])
def test_the_replaced_rules_settings_are_refused_naming_them(setting: str) -> None:
    with pytest.raises(ValueError, match=f"unknown parameter '{setting}'"):
        make_policy({"name": "steadyscale", "filter": None, "capacity": 50.0, setting: 0.25})
