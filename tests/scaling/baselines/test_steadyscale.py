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
    told = ScalerPolicy("raw", capacity=100.0, reported=True, quiet=0.0, catch_up=60.0)
    assert told.decide(observe(**STAGE)) == 10  # 900 + 3000 / 60 s: the 10 running suffice


def test_the_processed_rate_may_be_fed_as_the_volume_instead(observe: Observe) -> None:
    policy = ScalerPolicy("raw", capacity=100.0, volume="processed")
    assert policy.decide(observe(**STAGE)) == 7  # ceil(700 / 100): what a saturated job reads
    assert policy.spec["volume"] == "processed" and "volume" not in ScalerPolicy().spec
    with pytest.raises(ValueError, match="volume='lag' is not allowed: volume must be one of"):
        ScalerPolicy(volume="lag")


def test_the_spec_rebuilds_the_policy_with_every_setting() -> None:
    policy = ScalerPolicy(None, quiet_weight=0.25, risk=0.01, volume="processed", reported=True)
    rebuilt = make_policy(json.loads(json.dumps(policy.spec)))
    assert isinstance(rebuilt, ScalerPolicy) and rebuilt.spec == policy.spec
    assert rebuilt.spec["quiet_weight"] == 0.25 and rebuilt.spec["risk"] == 0.01
