"""A stream created without a filter gets the default Scaler (docs/default.md), as embedders do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from scaling import Scaler
from service.app import create_app
from service.settings import Settings

POLICY = {"capacity": 50.0, "min_operators": 1, "max_operators": 100}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        yield client


def test_a_put_without_filter_gets_the_default_and_decides_like_it(client: TestClient) -> None:
    assert client.put(
        "/v1/streams/orders", json={"policy": POLICY, "operators": 7}
    ).status_code in (
        200,
        201,
    )
    rng = np.random.default_rng(4)
    volumes = np.clip(350.0 + rng.normal(0.0, 30.0, 300), 0.0, None).tolist()
    volumes[250] = 1050.0  # a spike the default ignores
    samples = [{"t": float(t), "volume": v} for t, v in enumerate(volumes)]
    answer = client.post("/v1/streams/orders/samples", json={"samples": samples})
    assert answer.status_code == 200, answer.text
    expected = Scaler.from_spec({"policy": POLICY}, operators=7)
    assert [d["operators"] for d in answer.json()["decisions"]] == [
        expected.observe(s["volume"], s["t"]).operators for s in samples
    ]
    stored = client.get("/v1/streams/orders").json()
    assert "changepoint" in str(stored) and "confidence" in str(stored)


def test_guards_given_without_a_filter_replace_the_default_guard(client: TestClient) -> None:
    body = {"policy": POLICY, "guards": []}
    assert client.put("/v1/streams/plain", json=body).status_code in (200, 201)
    stored = str(client.get("/v1/streams/plain").json())
    assert "changepoint" in stored and "confidence" not in stored


def test_samples_may_report_backlog_running_and_processed(client: TestClient) -> None:
    policy = {**POLICY, "restart": 0.0}
    put = client.put("/v1/streams/lagging", json={"policy": policy, "filter": {"name": "raw"}})
    assert put.status_code in (200, 201), put.text
    samples = [
        {"t": 0.0, "volume": 300.0},
        {"t": 1.0, "volume": 300.0, "backlog": 3000.0, "running": 6, "processed": 290.0},
    ]
    answer = client.post("/v1/streams/lagging/samples", json={"samples": samples})
    assert answer.status_code == 200, answer.text
    plain, lagging = answer.json()["decisions"]
    assert plain["operators"] == 6 and plain["backlog"] is None
    assert plain["code"] == "ScaledUp" and plain["explain"]["model"] == "threshold"
    # 6 running serve the 300 arriving and leave the 3,000 waiting at the 10 s latency's edge
    # for the whole horizon; 7 drain them in a minute: from the 6 reported running, to 7.
    assert (lagging["operators"], lagging["previous"], lagging["running"]) == (7, 6, 6)
    assert lagging["backlog"] == 3000.0 and lagging["processed"] == 290.0
    assert lagging["code"] == "ScaledUp" and lagging["explain"]["model"] == "cost"
    costs = {row["operators"]: row for row in lagging["explain"]["candidates"]}
    assert set(costs) == {6, 7, 8} and costs[7]["total"] < min(costs[6]["total"], costs[8]["total"])
    assert costs[6]["late_seconds"] > 0.0 == costs[7]["late_seconds"]
    assert lagging["reason"].startswith(f"7: expected cost {costs[7]['total']:.0f}")
    # The history keeps the code and the record.
    stored = client.get("/v1/streams/lagging/history").json()["decisions"]
    assert [d["code"] for d in stored] == ["ScaledUp", "ScaledUp"]
    assert stored[-1]["explain"] == lagging["explain"]


@pytest.mark.parametrize(
    ("sample", "field", "allowed"),
    [
        ({"backlog": -1}, "samples[0].backlog", "backlog must be a number from 0 to 1e+15"),
        ({"backlog": "lots"}, "samples[0].backlog", "backlog must be a number"),
        ({"running": 2.5}, "samples[0].running", "running must be an integer from 0"),
        ({"processed": -3.0}, "samples[0].processed", "processed must be a number from 0"),
    ],
)
def test_bad_reports_are_422_naming_the_field_and_change_nothing(
    client: TestClient, sample: dict[str, object], field: str, allowed: str
) -> None:
    assert client.put("/v1/streams/orders", json={"policy": POLICY}).status_code in (200, 201)
    body = {"samples": [{"t": 1.0, "volume": 300.0, **sample}]}
    answer = client.post("/v1/streams/orders/samples", json=body)
    assert answer.status_code == 422, answer.text
    error = answer.json()["errors"][0]
    assert error["field"] == field and error["allowed"].startswith(allowed)
    assert client.get("/v1/streams/orders").json()["t"] is None  # nothing applied


def test_policy_settings_for_reports_are_validated(client: TestClient) -> None:
    bad = [("latency", 0.0), ("latency", None), ("restart", -1.0), ("restart", "8")]
    bad += [("delay", -1.0), ("delay", "30"), ("delay", 1e300)]
    bad += [("operator_price", 0.0), ("late_price", -1.0), ("operation_price", -1.0)]
    bad += [("late_probability", 0.0), ("late_probability", 1.5), ("late_probability", "0.1")]
    # The settings of the rules the cost model replaced are not accepted in a new spec (a
    # stored one is mapped: scaling/legacy.py, tests/scaling/test_legacy.py).
    bad += [("utilisation", 0.8), ("catch_up", 60.0), ("quiet", 30.0), ("lead", 15.0)]
    bad += [("quiet_weight", 0.5), ("risk", 0.01)]
    for setting, value in bad:
        body = {"policy": {**POLICY, setting: value}}
        answer = client.put("/v1/streams/bad", json=body)
        assert answer.status_code == 422, (setting, answer.text)
        assert answer.json()["errors"][0]["field"] == f"policy.{setting}"
    assert client.get("/v1/streams/bad").status_code == 404
    probability = client.put(
        "/v1/streams/bad", json={"policy": {**POLICY, "late_probability": 0}}
    ).json()
    assert probability["errors"][0]["allowed"].startswith(
        "late_probability must be a number from 1e-12 to 1 (a probability)"
    )
    both = {**POLICY, "late_price": 5.0, "late_probability": 0.1}
    answer = client.put("/v1/streams/bad", json={"policy": both})
    assert answer.status_code == 422 and "not both" in answer.json()["errors"][0]["allowed"]
    assert client.get("/v1/streams/bad").status_code == 404
    custom = {**POLICY, "latency": 30.0, "restart": 120.0, "operator_price": 2.0}
    custom |= {"late_probability": 0.01, "operation_price": 5.0, "delay": 45.0}
    assert client.put("/v1/streams/slow", json={"policy": custom}).status_code in (200, 201)
    stored = client.get("/v1/streams/slow").json()["config"]["policy"]
    assert (stored["latency"], stored["restart"], stored["operator_price"]) == (30.0, 120.0, 2.0)
    assert (stored["late_probability"], stored["operation_price"]) == (0.01, 5.0)
    assert stored["delay"] == 45.0


def test_prometheus_shows_the_raw_volume_and_what_was_reported(client: TestClient) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    assert client.put("/v1/streams/orders", json={"policy": POLICY}).status_code in (200, 201)
    samples = [
        {"t": 0.0, "volume": 300.0},
        {"t": 1.0, "volume": 310.0, "backlog": 120.0, "running": 6},
        {"t": 2.0, "volume": 320.0},  # reports nothing: the last reports stand
    ]
    assert client.post("/v1/streams/orders/samples", json={"samples": samples}).status_code == 200
    values = {
        sample.name: sample.value
        for family in text_string_to_metric_families(client.get("/metrics").text)
        for sample in family.samples
        if sample.labels.get("stream") == "orders"
    }
    assert values["steadyscale_volume_tuples_per_second"] == 320.0
    assert values["steadyscale_running_operators"] == 6.0
    assert values["steadyscale_backlog_records"] == 120.0
