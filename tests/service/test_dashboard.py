"""The dashboard page as the service serves it, and the metrics the Grafana dashboard reads.

What the page draws is checked in a real browser (test_dashboard_browser.py); here, without
one: what is served, to whom, with which policy, and the series /metrics holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from service.app import create_app
from service.dashboard import ASSETS
from service.metrics import SERIES_PER_STREAM
from service.settings import Settings

TOKEN = "s3cret"
STREAM = {"filter": {"name": "tvd"}, "policy": {"capacity": 50.0}, "operators": 2}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        yield client


@pytest.fixture
def secured(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(data_dir=tmp_path, tokens=TOKEN))) as client:
        yield client


def test_the_page_loads_only_its_own_files_under_a_policy_that_forbids_others(
    client: TestClient,
) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert "script-src 'self'" in policy
    assert 'data-tokens="none"' in page.text
    links = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert links and all(link.startswith(("/dashboard/", "data:")) for link in links), links
    for link in links:
        if link.startswith("/dashboard/"):
            answer = client.get(link)
            assert answer.status_code == 200, link
            assert answer.headers["content-type"] == ASSETS[link.removeprefix("/dashboard/")]
    # uPlot travels with its licence.
    assert "MIT License" in client.get("/dashboard/uPlot.LICENSE").text


def test_with_tokens_the_page_is_open_and_asks_for_one_but_the_data_is_not(
    secured: TestClient,
) -> None:
    page = secured.get("/")
    assert page.status_code == 200
    assert 'data-tokens="required"' in page.text
    assert secured.get("/dashboard/dashboard.js").status_code == 200
    assert secured.get("/v1/streams").status_code == 401
    assert secured.get("/metrics").status_code == 401
    right = {"Authorization": f"Bearer {TOKEN}"}
    assert secured.get("/v1/streams", headers=right).status_code == 200


def test_only_the_pages_files_are_served(secured: TestClient) -> None:
    for name in ("settings.py", "..%2Fsettings.py", "index.html", "nope.js"):
        answer = secured.get(f"/dashboard/{name}")
        assert answer.status_code == 404, name
        assert answer.json()["status"] == 404
    refused = secured.post("/")
    assert refused.status_code == 405 and refused.headers["allow"] == "GET"


def test_the_page_is_not_part_of_the_api_document(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert "/" not in paths and not any(path.startswith("/dashboard") for path in paths)


def series(client: TestClient) -> dict[tuple[str, str], float]:
    """Every sample of /metrics that has a stream label: (name, stream) -> value; a counter's
    name carries its direction (``..._total:up``)."""
    found = {}
    for family in text_string_to_metric_families(client.get("/metrics").text):
        for sample in family.samples:
            if "stream" in sample.labels:
                direction = sample.labels.get("direction")
                name = f"{sample.name}:{direction}" if direction else sample.name
                found[name, sample.labels["stream"]] = sample.value
    return found


def test_raw_filtered_and_running_per_stream_named_with_their_units(client: TestClient) -> None:
    assert client.put("/v1/streams/orders", json=STREAM).status_code == 201
    samples = [
        {"t": float(t), "volume": 120.0 + 5.0 * (t % 3), "running": 2, "backlog": 10.0 * t}
        for t in range(20)
    ]
    answer = client.post("/v1/streams/orders/samples", json={"samples": samples})
    last = answer.json()["decisions"][-1]
    found = series(client)
    assert found["steadyscale_volume_tuples_per_second", "orders"] == last["volume"]
    assert found["steadyscale_filtered_volume_tuples_per_second", "orders"] == last["filtered"]
    assert found["steadyscale_desired_operators", "orders"] == last["operators"]
    assert found["steadyscale_running_operators", "orders"] == 2
    assert found["steadyscale_backlog_records", "orders"] == 190.0
    # capacity 50 x utilisation 1 (the default): what the threshold lines of Grafana multiply.
    assert found["steadyscale_operator_capacity_tuples_per_second", "orders"] == 50.0
    text = client.get("/metrics").text
    assert "_created" not in text
    assert "steadyscale_filtered_volume{" not in text


def test_per_stream_series_stay_within_the_documented_bound(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, stream_metrics=3)
    with TestClient(create_app(settings)) as client:
        for number in range(5):
            stream = f"s{number}"
            assert client.put(f"/v1/streams/{stream}", json=STREAM).status_code == 201
            samples = [
                {"t": float(t), "volume": 400.0 * (t > 5), "running": 2, "backlog": 1.0}
                for t in range(12)
            ]
            assert client.post(f"/v1/streams/{stream}/samples", json={"samples": samples})
        found = series(client)
        assert {stream for _, stream in found} == {"s0", "s1", "s2"}
        # Every series a stream can have: its gauges, and both scaling counters.
        assert len(found) == SERIES_PER_STREAM * 3
        assert "steadyscale_streams_untracked 2.0" in client.get("/metrics").text


def stream_with_history(client: TestClient, count: int = 200) -> list[dict[str, object]]:
    """The stream 'orders' with ``count`` samples, some reporting a running count and backlog;
    its decisions."""
    assert client.put("/v1/streams/orders", json=STREAM).status_code == 201
    samples = [
        {"t": float(t), "volume": 100.0 + 250.0 * (t // 50 % 2) + 20.0 * (t % 5)}
        | ({"running": 3, "backlog": 40.0} if t % 10 == 0 else {})
        for t in range(count)
    ]
    answer = client.post("/v1/streams/orders/samples", json={"samples": samples})
    assert answer.status_code == 200, answer.text
    decisions: list[dict[str, object]] = answer.json()["decisions"]
    return decisions


def test_what_if_with_the_streams_own_configuration_decides_as_it_did(
    client: TestClient,
) -> None:
    decided = stream_with_history(client)
    stream = client.get("/v1/streams/orders").json()
    history = client.get("/v1/streams/orders/history").json()
    replayed = client.post("/v1/streams/orders/what-if", json=stream["config"])
    assert replayed.status_code == 200, replayed.text
    body = replayed.json()
    assert body["decisions"] == decided
    assert body["scaling_operations"] == sum(d["action"] != "none" for d in decided)
    # A dry run: the stream and its decisions are as they were.
    assert client.get("/v1/streams/orders").json() == stream
    assert client.get("/v1/streams/orders/history").json() == history


def test_what_if_another_configuration_over_the_samples_asked_for(client: TestClient) -> None:
    decided = stream_with_history(client)
    raw = {"filter": {"name": "raw"}, "policy": {"capacity": 50.0}, "operators": 2}
    whole = client.post("/v1/streams/orders/what-if", json=raw).json()
    scaled = sum(d["action"] != "none" for d in decided)
    assert whole["scaling_operations"] > scaled
    assert [d["volume"] for d in whole["decisions"]] == [d["volume"] for d in decided]
    part = client.post("/v1/streams/orders/what-if", params={"since": 99, "limit": 50}, json=raw)
    assert [d["t"] for d in part.json()["decisions"]] == [float(t) for t in range(100, 150)]


def test_what_if_refusals_name_what_is_wrong(secured: TestClient) -> None:
    right = {"Authorization": f"Bearer {TOKEN}"}
    assert secured.post("/v1/streams/orders/what-if", json=STREAM).status_code == 401
    missing = secured.post("/v1/streams/orders/what-if", json=STREAM, headers=right)
    assert missing.status_code == 404
    assert secured.put("/v1/streams/orders", json=STREAM, headers=right).status_code == 201
    bad = {"filter": {"name": "tvd", "lam": -1.0}, "policy": {"capacity": 50.0}}
    refused = secured.post("/v1/streams/orders/what-if", json=bad, headers=right)
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["field"].startswith("filter")
    too_many = secured.post(
        "/v1/streams/orders/what-if", params={"limit": 20_001}, json=STREAM, headers=right
    )
    assert too_many.status_code == 422 and too_many.json()["errors"][0]["field"] == "limit"
