"""deploy/'s overlays as ``kubectl apply -k`` gets them: rendered by a real kustomize, every
object checked against Kubernetes' schemas (kubernetes-validate, strict) or the Prometheus
Operator's ServiceMonitor CRD, and what each overlay promises checked on the rendered objects.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import kubernetes_validate
import pytest
import yaml

from service.settings import Settings
from tests.deploy.dockerfile import image_env, image_user
from tests.deploy.render import DEPLOY, OVERLAYS, VERSIONS, KustomizeError, render, strict
from tests.service.test_server import Server

SERVICEMONITOR_CRD = Path(__file__).with_name("monitoring.coreos.com_servicemonitors-v0.84.1.yaml")
SECRET_NAMES = ("TOKEN", "PASSWORD", "DATABASE_URL", "SECRET")


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[dict[str, Any]]]:
    return {overlay: render(DEPLOY / "overlays" / overlay) for overlay in OVERLAYS}


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [item for item in objects if item["kind"] == kind]
    return found


def pod_spec(objects: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = one(objects, "Deployment")["spec"]["template"]["spec"]
    return spec


def container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (found,) = pod_spec(objects)["containers"]
    return dict(found)


def env(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {variable["name"]: variable for variable in container(objects)["env"]}


def wiring_errors(objects: list[dict[str, Any]]) -> list[str]:
    """Every port name that names nothing: the Service's targets, the probes' and the
    NetworkPolicy's ports, each against the container's named ports; and each port against
    the setting that makes the process listen there."""
    ports = {port["name"]: port["containerPort"] for port in container(objects)["ports"]}
    errors = []
    for port in one(objects, "Service")["spec"]["ports"]:
        if port["targetPort"] not in ports:
            errors.append(f"Service port {port['name']}: targetPort {port['targetPort']!r}")
    for probe in ("livenessProbe", "readinessProbe"):
        named = container(objects)[probe].get("httpGet", {}).get("port")
        if named is not None and named not in ports:
            errors.append(f"{probe}: port {named!r}")
    for rule in one(objects, "NetworkPolicy")["spec"]["ingress"]:
        errors += [f"NetworkPolicy: port {p['port']!r}" for p in rule["ports"]
                   if p["port"] not in ports]  # fmt: skip
    variables = env(objects)
    for name, setting in [("http", "STEADYSCALE_PORT"), ("grpc", "STEADYSCALE_GRPC_PORT")]:
        if str(ports.get(name)) != variables[setting].get("value"):
            errors.append(f"container port {name}: {ports.get(name)}, {setting} otherwise")
    return errors


def secret_values(objects: list[dict[str, Any]]) -> list[str]:
    """Every place a secret's value is written down: a Secret with data, or a secret-looking
    variable given a value rather than read from a Secret."""
    found = [
        f"Secret {item['metadata']['name']}"
        for item in objects
        if item["kind"] == "Secret" and (item.get("data") or item.get("stringData"))
    ]
    if any(item["kind"] == "Deployment" for item in objects):
        for name, variable in env(objects).items():
            if any(word in name for word in SECRET_NAMES) and "valueFrom" not in variable:
                found.append(f"env {name}")
    return found


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_matches_its_schema(
    rendered: dict[str, list[dict[str, Any]]], overlay: str, version: str
) -> None:
    crd = yaml.safe_load(SERVICEMONITOR_CRD.read_text())
    for item in rendered[overlay]:
        assert item["metadata"]["namespace"] == "steadyscale", item["metadata"]
        if item["kind"] == "ServiceMonitor":
            jsonschema.validate(item, strict(crd))
        else:
            kubernetes_validate.validate(item, version, strict=True)


def test_the_schemas_refuse_a_misspelt_field(rendered: dict[str, list[dict[str, Any]]]) -> None:
    monitor = copy.deepcopy(one(rendered["monitoring"], "ServiceMonitor"))
    monitor["spec"]["endpoints"][0]["intervall"] = "15s"
    with pytest.raises(jsonschema.ValidationError, match="intervall"):
        jsonschema.validate(monitor, strict(yaml.safe_load(SERVICEMONITOR_CRD.read_text())))
    budget = copy.deepcopy(one(rendered["replicas"], "PodDisruptionBudget"))
    budget["spec"]["maxUnavailabe"] = 1
    with pytest.raises(kubernetes_validate.ValidationError, match="maxUnavailabe"):
        kubernetes_validate.validate(budget, VERSIONS[-1], strict=True)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_no_secret_carries_a_value(rendered: dict[str, list[dict[str, Any]]], overlay: str) -> None:
    assert secret_values(rendered[overlay]) == []
    assert not any(item["kind"] == "Secret" for item in rendered[overlay])


def test_a_written_token_is_found(rendered: dict[str, list[dict[str, Any]]]) -> None:
    objects = copy.deepcopy(rendered["single"])
    for variable in container(objects)["env"]:
        if variable["name"] == "STEADYSCALE_TOKENS":
            variable.pop("valueFrom")
            variable["value"] = "alpha"
    objects.append({"kind": "Secret", "metadata": {"name": "x"}, "stringData": {"url": "p"}})
    assert secret_values(objects) == ["Secret x", "env STEADYSCALE_TOKENS"]


@pytest.mark.parametrize("overlay", ["single", "replicas"])
def test_every_container_is_bounded_probed_and_non_root(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    pod = pod_spec(rendered[overlay])
    for each in pod["containers"]:
        assert {"cpu", "memory"} <= each["resources"]["requests"].keys()
        assert "memory" in each["resources"]["limits"]
        assert "livenessProbe" in each and "readinessProbe" in each
        context = each["securityContext"]
        assert context["runAsNonRoot"] and pod["securityContext"]["runAsNonRoot"]
        assert context["readOnlyRootFilesystem"] and not context["allowPrivilegeEscalation"]
    # The pod's user is the image's (Dockerfile USER), which owns /data.
    assert str(pod["securityContext"]["runAsUser"]) == image_user("service")


@pytest.mark.parametrize("overlay", ["single", "replicas"])
def test_the_ports_are_the_settings_and_every_name_resolves(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    objects = rendered[overlay]
    assert wiring_errors(objects) == []
    ports = {port["name"]: port["port"] for port in one(objects, "Service")["spec"]["ports"]}
    # 8000: the setting's default; 9090: the image's STEADYSCALE_GRPC_PORT (no default: off).
    assert ports["http"] == Settings.model_fields["port"].default
    assert ports == {
        "http": int(image_env("service")["STEADYSCALE_PORT"]),
        "grpc": int(image_env("service")["STEADYSCALE_GRPC_PORT"]),
    }
    labels = one(objects, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert one(objects, "Service")["spec"]["selector"].items() <= labels.items()


def test_a_port_name_that_does_not_match_is_named(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    objects = copy.deepcopy(rendered["single"])
    one(objects, "Service")["spec"]["ports"][1]["targetPort"] = "grcp"
    one(objects, "NetworkPolicy")["spec"]["ingress"][0]["ports"][0]["port"] = "htttp"
    assert wiring_errors(objects) == [
        "Service port grpc: targetPort 'grcp'",
        "NetworkPolicy: port 'htttp'",
    ]


def test_single_keeps_sqlite_on_a_claim_with_one_writer(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    objects = rendered["single"]
    deployment = one(objects, "Deployment")["spec"]
    assert deployment["replicas"] == 1 and deployment["strategy"] == {"type": "Recreate"}
    volumes = {volume["name"]: volume for volume in pod_spec(objects)["volumes"]}
    claim = one(objects, "PersistentVolumeClaim")
    assert volumes["data"] == {
        "name": "data",
        "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]},
    }
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
    mounts = {mount["name"]: mount["mountPath"] for mount in container(objects)["volumeMounts"]}
    assert mounts["data"] == env(objects)["STEADYSCALE_DATA_DIR"]["value"]
    assert "STEADYSCALE_DATABASE_URL" not in env(objects)


def test_replicas_share_postgresql_and_keep_all_but_one_through_a_drain(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    objects = rendered["replicas"]
    deployment = one(objects, "Deployment")["spec"]
    assert deployment["replicas"] >= 2
    assert deployment["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    url = env(objects)["STEADYSCALE_DATABASE_URL"]
    assert url["valueFrom"]["secretKeyRef"] == {"name": "steadyscale-database", "key": "url"}
    budget = one(objects, "PodDisruptionBudget")["spec"]
    labels = one(objects, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert budget["selector"]["matchLabels"].items() <= labels.items()
    assert 0 < budget["maxUnavailable"] < deployment["replicas"]
    readiness = container(objects)["readinessProbe"]
    assert readiness["httpGet"] == {"path": "/readyz", "port": "http"}
    assert "exec" not in readiness
    assert not any(item["kind"] == "PersistentVolumeClaim" for item in objects)


def test_the_replicas_readiness_probe_needs_no_token(
    rendered: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    """The probe's own request (kubelet's httpGet sends no header), against a real service
    holding tokens: ready, and nothing more said; the data still needs a token."""
    probe = container(rendered["replicas"])["readinessProbe"]["httpGet"]
    server = Server(tmp_path / "data", env={"STEADYSCALE_TOKENS": "alpha, beta"})
    try:
        answer = httpx.get(f"{server.url}{probe['path']}", timeout=10.0)
        assert answer.status_code == 200 and answer.json() == {"status": "ready"}
        assert httpx.get(f"{server.url}/v1/streams", timeout=10.0).status_code == 401
    finally:
        server.stop()


def test_monitoring_scrapes_the_service_and_ships_the_dashboard(
    rendered: dict[str, list[dict[str, Any]]],
) -> None:
    monitor = one(rendered["monitoring"], "ServiceMonitor")["spec"]
    service = one(rendered["single"], "Service")
    assert monitor["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    (endpoint,) = monitor["endpoints"]
    assert endpoint["port"] in {port["name"] for port in service["spec"]["ports"]}
    assert endpoint["path"] == "/metrics"
    # /metrics needs a token when the service has tokens: the same Secret the pods read.
    tokens = env(rendered["single"])["STEADYSCALE_TOKENS"]["valueFrom"]["secretKeyRef"]
    assert endpoint["authorization"]["credentials"] == tokens
    dashboard = one(rendered["monitoring"], "ConfigMap")
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    (text,) = dashboard["data"].values()
    assert json.loads(text) == json.loads((DEPLOY / "grafana" / "steadyscale.json").read_text())


@pytest.mark.parametrize("overlay", ["single", "replicas"])
def test_the_scaledobject_reaches_the_services_grpc_port(
    rendered: dict[str, list[dict[str, Any]]], overlay: str
) -> None:
    (scaledobject,) = yaml.safe_load_all((DEPLOY / "examples" / "scaledobject.yaml").read_text())
    (trigger,) = scaledobject["spec"]["triggers"]
    host, port = trigger["metadata"]["scalerAddress"].rsplit(":", 1)
    service = one(rendered[overlay], "Service")
    name, namespace = service["metadata"]["name"], service["metadata"]["namespace"]
    assert host == f"{name}.{namespace}.svc.cluster.local"
    (grpc,) = [p for p in service["spec"]["ports"] if p["port"] == int(port)]
    assert grpc["name"] == "grpc" and grpc["targetPort"] == "grpc"


def test_a_patch_naming_a_missing_object_fails_with_kustomizes_message(tmp_path: Path) -> None:
    broken = tmp_path / "deploy"
    shutil.copytree(DEPLOY, broken)
    patch = broken / "overlays" / "single" / "deployment.yaml"
    patch.write_text(patch.read_text().replace("name: steadyscale\n", "name: steadyscal\n", 1))
    with pytest.raises(KustomizeError, match=r"no matches for Id Deployment\.v1\.apps/steadyscal"):
        render(broken / "overlays" / "single")
