"""deploy/examples/pull/: the pull-mode example (issue 34) against what would apply it.

The Kubernetes kinds against the API's schemas (strict, as in test_manifests.py); the stream
against the service's own model and Scaler, each of its queries with promtool (skipped as
"promtool NOT TESTED" where there is none, see test_grafana.py); and the ScaledObject it is
used with, deploy/examples/scaledobject.yaml, against the stream's policy and name; and the
stream is the push example's, deploy/examples/orders-stream.json, plus its source.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from service.models import StreamConfig
from service.pull.spec import REPORTS
from service.scalers import build_scaler
from tests.deploy.render import DEPLOY, VERSIONS
from tests.deploy.test_grafana import check_rules, promtool

EXAMPLES = DEPLOY / "examples"
PULL = EXAMPLES / "pull"


def stream() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((PULL / "orders-stream.json").read_text())
    return loaded


def queries() -> list[str]:
    prometheus = stream()["source"]["prometheus"]
    return [prometheus[field] for field in ("volume", *REPORTS) if field in prometheus]


@pytest.mark.parametrize("version", VERSIONS)
def test_the_exporter_matches_the_api_schemas(version: str) -> None:
    with (PULL / "kafka-exporter.yaml").open() as file:
        documents = [document for document in yaml.safe_load_all(file) if document]
    assert [document["kind"] for document in documents] == ["Deployment", "Service"]
    for document in documents:
        kubernetes_validate.validate(document, version, strict=True)


def test_the_stream_is_one_the_service_takes() -> None:
    config = StreamConfig.model_validate(stream())
    build_scaler(config)
    assert config.source is not None and config.source.fallback is not None
    assert len(queries()) == 3


def test_the_stream_is_the_push_examples_plus_its_source() -> None:
    pushed = json.loads((EXAMPLES / "orders-stream.json").read_text())
    assert {key: value for key, value in stream().items() if key != "source"} == pushed


def test_each_query_is_promql(tmp_path: Path) -> None:
    checked = check_rules(promtool(), queries(), tmp_path / "rules.yml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    refused = check_rules(promtool(), ["sum(rate(kafka_topic_partition_current_offset[1m])"],
                          tmp_path / "wrong.yml")  # fmt: skip
    assert refused.returncode != 0


def test_the_queries_read_what_kafka_exporter_and_kube_state_metrics_export() -> None:
    volume, backlog, running = queries()
    assert "kafka_topic_partition_current_offset" in volume and volume.startswith("sum(rate(")
    assert "kafka_consumergroup_lag" in backlog and 'consumergroup="orders-consumer"' in backlog
    assert "kube_deployment_status_replicas_available" in running


def test_the_scaledobject_applies_this_streams_decision() -> None:
    with (EXAMPLES / "scaledobject.yaml").open() as file:
        (scaledobject,) = [d for d in yaml.safe_load_all(file) if d]
    policy = stream()["policy"]
    spec = scaledobject["spec"]
    assert spec["triggers"][0]["metadata"]["stream"] == "orders"
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (
        policy["min_operators"],
        policy["max_operators"],
    )
    assert spec["scaleTargetRef"]["name"] == "orders-consumer"
    assert 'deployment="orders-consumer"' in queries()[2]
