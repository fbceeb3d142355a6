"""deploy/ against the schemas the cluster applies, and against the stream it scales.

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

from service.keda import metric_name
from service.models import StreamConfig
from service.scalers import build_scaler

DEPLOY = Path(__file__).parents[2] / "deploy"
KEDA_CRD = Path(__file__).with_name("keda.sh_scaledobjects-v2.18.0.yaml")
# The oldest Kubernetes these manifests target, the first with the HPA's tolerance field, and
# the newest schemas kubernetes-validate has.
VERSIONS = ["1.29.0", "1.33.0", kubernetes_validate.latest_version()]


def documents(name: str) -> list[dict[str, Any]]:
    with (DEPLOY / name).open() as file:
        return [document for document in yaml.safe_load_all(file) if document]


def kind(name: str, wanted: str) -> dict[str, Any]:
    (found,) = [document for document in documents(name) if document["kind"] == wanted]
    return found


def strict(schema: Any) -> Any:
    """The CRD's schema with unknown fields refused, as the API server's strict field
    validation refuses them (a CRD schema lists its fields but does not forbid others)."""
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    schema = {key: strict(value) for key, value in schema.items()}
    if "properties" in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
        schema.setdefault("additionalProperties", False)
    return schema


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


@pytest.mark.parametrize("version", VERSIONS)
def test_kubernetes_kinds_match_the_api_schemas(version: str) -> None:
    checked = [document["kind"] for document in documents("steadyscale.yaml")]
    assert checked == ["PersistentVolumeClaim", "Deployment", "Service", "NetworkPolicy"]
    for document in documents("steadyscale.yaml"):
        kubernetes_validate.validate(document, version, strict=True)


def test_the_validation_is_strict() -> None:
    deployment = copy.deepcopy(kind("steadyscale.yaml", "Deployment"))
    deployment["spec"]["replica"] = 1
    with pytest.raises(kubernetes_validate.ValidationError, match="replica"):
        kubernetes_validate.validate(deployment, VERSIONS[-1], strict=True)


def test_the_scaledobject_matches_kedas_crd(scaledobject_schema: dict[str, Any]) -> None:
    jsonschema.validate(kind("scaledobject.yaml", "ScaledObject"), scaledobject_schema)


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
    wrong = copy.deepcopy(kind("scaledobject.yaml", "ScaledObject"))
    *parents, last = path.split(".")
    place = wrong
    for key in parents:
        place = place[key]
    place[last] = value
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrong, scaledobject_schema)


def test_the_hpa_keda_builds_needs_kubernetes_1_33_for_the_tolerance() -> None:
    hpa = keda_hpa(kind("scaledobject.yaml", "ScaledObject"))
    for version in VERSIONS[1:]:
        kubernetes_validate.validate(hpa, version, strict=True)
    with pytest.raises(kubernetes_validate.ValidationError, match="tolerance"):
        kubernetes_validate.validate(hpa, "1.32.0", strict=True)
    for rules in hpa["spec"]["behavior"].values():
        del rules["tolerance"]
    kubernetes_validate.validate(hpa, VERSIONS[0], strict=True)


def test_the_scaledobject_mirrors_the_stream_and_the_service() -> None:
    spec = kind("scaledobject.yaml", "ScaledObject")["spec"]
    (trigger,) = spec["triggers"]
    stream = trigger["metadata"]["stream"]
    config = StreamConfig.model_validate(json.loads((DEPLOY / f"{stream}-stream.json").read_text()))
    policy = build_scaler(config).spec["policy"]
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (
        policy["min_operators"],
        policy["max_operators"],
    )
    behavior = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    pods = [p for p in behavior["scaleUp"]["policies"] if p["type"] == "Pods"]
    assert pods[0]["value"] >= spec["maxReplicaCount"]  # any increase in one step
    # scalerAddress is the Service's gRPC port, which is the port the server listens on.
    service = kind("steadyscale.yaml", "Service")
    deployment = kind("steadyscale.yaml", "Deployment")
    host, port = trigger["metadata"]["scalerAddress"].rsplit(":", 1)
    name, namespace = service["metadata"]["name"], service["metadata"]["namespace"]
    assert host == f"{name}.{namespace}.svc.cluster.local"
    (grpc,) = [p for p in service["spec"]["ports"] if p["name"] == "grpc"]
    assert grpc["port"] == int(port)
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    env = {variable["name"]: variable.get("value") for variable in container["env"]}
    (listening,) = [p for p in container["ports"] if p["name"] == grpc["targetPort"]]
    assert int(env["STEADYSCALE_GRPC_PORT"]) == listening["containerPort"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
