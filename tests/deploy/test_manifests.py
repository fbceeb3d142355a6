"""deploy/examples/ against the schemas the cluster applies, and against the stream it scales
(the service's own objects are checked rendered, in test_kustomize.py).

Kubernetes' own kinds are checked with kubernetes-validate (the API's OpenAPI schemas, strict:
an unknown field is an error, as ``kubectl apply`` with server-side field validation makes it);
the ScaledObject with the openAPIV3Schema of KEDA's CRD, from KEDA v2.18.0, the first release
whose CRD carries the HPA's ``tolerance`` (``keda.sh_scaledobjects-v2.18.0.yaml`` beside this
file, Apache-2.0, see ``service/keda/LICENSE``).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from scaling import Scaler
from service.keda import metric_name
from service.models import StreamConfig
from service.scalers import build_scaler
from tests.deploy.render import DEPLOY, VERSIONS, strict

EXAMPLES = DEPLOY / "examples"
KEDA_CRD = Path(__file__).with_name("keda.sh_scaledobjects-v2.18.0.yaml")


def scaledobject() -> dict[str, Any]:
    (found,) = yaml.safe_load_all((EXAMPLES / "scaledobject.yaml").read_text())
    return dict(found)


@pytest.fixture(scope="module")
def scaledobject_schema() -> dict[str, Any]:
    crd = yaml.safe_load(KEDA_CRD.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    return dict(strict(version["schema"]["openAPIV3Schema"]))


def keda_hpa(scaledobject: dict[str, Any]) -> dict[str, Any]:
    """The HorizontalPodAutoscaler KEDA builds for the ScaledObject (its min and max, its
    behavior, one external metric per trigger at the target GetMetricSpec answers)."""
    spec = scaledobject["spec"]
    stream = spec["triggers"][0]["metadata"]["stream"]
    metric = {
        "type": "External",
        "external": {
            "metric": {"name": f"s0-{metric_name(stream)}"},
            "target": {"type": "AverageValue", "averageValue": "1"},
        },
    }
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": f"keda-hpa-{scaledobject['metadata']['name']}"},
        "spec": {
            "scaleTargetRef": spec["scaleTargetRef"],
            "minReplicas": spec["minReplicaCount"],
            "maxReplicas": spec["maxReplicaCount"],
            "metrics": [metric],
            "behavior": spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"],
        },
    }


def test_the_scaledobject_matches_kedas_crd(scaledobject_schema: dict[str, Any]) -> None:
    jsonschema.validate(scaledobject(), scaledobject_schema)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("spec.minReplicaCount", "1"),
        ("spec.fallback.behavior", "hold"),
        ("spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleUp.tolerence", 0),
    ],
)
def test_keda_schema_refuses_mistakes(
    scaledobject_schema: dict[str, Any], path: str, value: object
) -> None:
    wrong = copy.deepcopy(scaledobject())
    *parents, last = path.split(".")
    place = wrong
    for key in parents:
        place = place[key]
    place[last] = value
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrong, scaledobject_schema)


def test_the_hpa_keda_builds_needs_kubernetes_1_33_for_the_tolerance() -> None:
    hpa = keda_hpa(scaledobject())
    for version in VERSIONS[1:]:
        kubernetes_validate.validate(hpa, version, strict=True)
    with pytest.raises(kubernetes_validate.ValidationError, match="tolerance"):
        kubernetes_validate.validate(hpa, "1.32.0", strict=True)
    for rules in hpa["spec"]["behavior"].values():
        del rules["tolerance"]
    kubernetes_validate.validate(hpa, VERSIONS[0], strict=True)


def test_the_scaledobject_mirrors_the_stream() -> None:
    spec = scaledobject()["spec"]
    (trigger,) = spec["triggers"]
    stream = trigger["metadata"]["stream"]
    config = StreamConfig.model_validate(
        json.loads((EXAMPLES / f"{stream}-stream.json").read_text())
    )
    policy = build_scaler(config).spec["policy"]
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (
        policy["min_operators"],
        policy["max_operators"],
    )
    behavior = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    pods = [p for p in behavior["scaleUp"]["policies"] if p["type"] == "Pods"]
    assert pods[0]["value"] >= spec["maxReplicaCount"]  # any increase in one step


def test_the_example_stream_gets_the_default() -> None:
    """No filter and no guards: the self-tuning default the README recommends."""
    given = json.loads((EXAMPLES / "orders-stream.json").read_text())
    assert given.keys() == {"policy", "operators"}
    default = Scaler.from_spec({"policy": given["policy"]}).spec
    assert build_scaler(StreamConfig.model_validate(given)).spec == default
