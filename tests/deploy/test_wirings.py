"""What each KEDA wiring does to steadyscale's decision, computed with HpaPolicy (the
Kubernetes HPA, checked against Kubernetes' own test cases in tests/scaling/baselines): the
numbers the README's KEDA section gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scaling import ThresholdPolicy
from scaling.baselines import Observation
from scaling.baselines.hpa import HpaPolicy
from service.models import StreamConfig
from service.scalers import build_scaler
from simulator import add_noise, paper_workload

EXAMPLES = Path(__file__).parents[2] / "deploy" / "examples"
SYNC = 15.0  # the HPA controller's sync period, seconds


def seen(t: float, replicas: int, value: float) -> Observation:
    """The HPA's view: ``replicas`` running, an AverageValue metric of ``value`` in all."""
    return Observation(
        t=t,
        period=SYNC,
        operators=replicas,
        arrival_rate=value,
        processed_rate=0.0,
        capacity=1.0,
        utilisation=0.0,
        backlog=0.0,
        backlog_rate=0.0,
        backpressure=0.0,
    )


def scaledobject_hpa() -> HpaPolicy:
    """The HPA deploy/examples/scaledobject.yaml makes KEDA build, on the scaler's metric
    (target 1)."""
    (scaledobject,) = yaml.safe_load_all((EXAMPLES / "scaledobject.yaml").read_text())
    spec = scaledobject["spec"]
    behavior: dict[str, Any] = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    up, down = behavior["scaleUp"], behavior["scaleDown"]
    assert up["stabilizationWindowSeconds"] == 0  # HpaPolicy scales up at once, as here
    assert up["tolerance"] == down["tolerance"]
    by_type = {policy["type"]: policy for policy in up["policies"]}
    (down_percent,) = down["policies"]
    return HpaPolicy(
        target=1.0,
        metric="arrival_rate",
        tolerance=float(up["tolerance"]),
        stabilization_window=float(down["stabilizationWindowSeconds"]),
        scale_up_percent=float(by_type["Percent"]["value"]),
        scale_up_pods=int(by_type["Pods"]["value"]),
        scale_down_percent=float(down_percent["value"]),
        rate_period=float(by_type["Percent"]["periodSeconds"]),
        min_operators=spec["minReplicaCount"],
        max_operators=spec["maxReplicaCount"],
        interval=SYNC,
    )


def follow(hpa: HpaPolicy, decided: list[int], start: int) -> list[int]:
    """The replicas the HPA sets at each sync when the metric is the decided count."""
    replicas, applied = start, []
    for sync, count in enumerate(decided):
        replicas = hpa.decide(seen(sync * SYNC, replicas, float(count)))
        applied.append(replicas)
    return applied


@pytest.fixture(scope="module")
def decided() -> list[int]:
    """The operator count of deploy/examples/orders-stream.json's stream (the default) at each
    HPA sync, over the paper's workload at SNR 1 (seed 1)."""
    config = StreamConfig.model_validate(json.loads((EXAMPLES / "orders-stream.json").read_text()))
    scaler = build_scaler(config)
    volumes = add_noise(paper_workload(seed=1), snr=1.0, seed=1)
    counts = [scaler.observe(float(v), float(t)).operators for t, v in enumerate(volumes)]
    return counts[:: int(SYNC)]


def test_the_deploy_scaledobject_applies_every_decision_exactly(decided: list[int]) -> None:
    assert len(set(decided)) >= 3  # the decisions move
    assert follow(scaledobject_hpa(), decided, start=decided[0]) == decided


def test_the_default_hpa_behaviour_departs_from_the_decisions(decided: list[int]) -> None:
    # Target 1 on the same metric, Kubernetes' defaults: 10 % tolerance, 300 s to scale down.
    default = HpaPolicy(target=1.0, metric="arrival_rate", min_operators=1, max_operators=20)
    applied = follow(default, decided, start=decided[0])
    # Scale-downs wait for the 300 s window: more replicas than decided, for minutes.
    assert any(a > d for a, d in zip(applied, decided, strict=True))


def test_metrics_api_on_the_filtered_volume_keeps_10_where_steadyscale_says_11() -> None:
    # valueLocation: value, target 50 (the capacity): the HPA recomputes ceil(520 / 50) itself
    # and its 10 % tolerance keeps 10 replicas (520 / 500 = 1.04).
    assert ThresholdPolicy(capacity=50.0).needed(520.0) == 11
    hpa = HpaPolicy(target=50.0, metric="arrival_rate", stabilization_window=0.0)
    assert hpa.decide(seen(0.0, 10, 520.0)) == 10


@pytest.mark.parametrize(
    ("replicas", "decided", "applied"),
    [(9, 10, 10), (9, 8, 8), (10, 11, 10), (10, 9, 10), (11, 12, 11), (20, 19, 20), (20, 22, 20)],
)
def test_operators_at_target_1_swallow_one_step_from_10_replicas(
    replicas: int, decided: int, applied: int
) -> None:
    # valueLocation: operators (or the external scaler) with the default 10 % tolerance: a
    # step of one operator is applied below 10 replicas and lost from 10 up.
    hpa = HpaPolicy(target=1.0, metric="arrival_rate", stabilization_window=0.0)
    assert hpa.decide(seen(0.0, replicas, float(decided))) == applied


def test_a_zero_tolerance_applies_each_of_those_steps() -> None:
    for replicas, decided in [(10, 11), (11, 12), (20, 19), (20, 22)]:
        hpa = HpaPolicy(target=1.0, metric="arrival_rate", tolerance=0.0, stabilization_window=0)
        assert hpa.decide(seen(0.0, replicas, float(decided))) == decided
