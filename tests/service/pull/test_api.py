"""Pull mode through the HTTP API: the source in PUT, its checks, the stream's health in GET,
and POST refused for a stream that polls (service.routes with service.pull)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.pull.health import Health
from service.pull.runner import Pull, get_pull
from service.settings import Settings
from tests.service.pull.fake import FakePrometheus, vector

PROMETHEUS = "http://prometheus:9090"
ANSWERS = {
    "sum(rate(x[1m]))": lambda t: 351.0,
    "lag": lambda t: vector(1, 2),
    "label": lambda t: {"status": "success", "data": {"resultType": "string", "result": [0, "a"]}},
    "missing": lambda t: vector(),
}


@pytest.fixture
def prometheus() -> FakePrometheus:
    return FakePrometheus(dict(ANSWERS))


@pytest.fixture
def client(tmp_path: Path, prometheus: FakePrometheus) -> Iterator[TestClient]:
    settings = Settings(
        data_dir=tmp_path,
        prometheus_url=PROMETHEUS,
        prometheus_allowed_urls="http://other:9090",
    )
    app = create_app(settings)
    pull = Pull(settings, prometheus.client(), Health())
    app.dependency_overrides[get_pull] = lambda: pull
    with TestClient(app) as client:
        yield client


def put(client: TestClient, source: Any, stream: str = "orders") -> httpx.Response:
    body = {"policy": {"capacity": 50}, "source": source}
    return client.put(f"/v1/streams/{stream}", json=body)


def refused_field(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 422, response.text
    errors: list[dict[str, Any]] = response.json()["errors"]
    assert len(errors) == 1
    return errors[0]


def test_a_stream_with_a_source_shows_it_and_its_health(client: TestClient) -> None:
    source = {"prometheus": {"volume": "sum(rate(x[1m]))", "interval": 30}}
    assert put(client, source).status_code == 201
    assert put(client, source).status_code == 200  # the same configuration: unchanged
    stream = client.get("/v1/streams/orders").json()
    assert stream["config"]["source"]["prometheus"]["volume"] == "sum(rate(x[1m]))"
    assert stream["config"]["source"]["prometheus"]["interval"] == 30.0
    assert stream["source_health"] == {
        "last_success": None,
        "last_error": None,
        "last_error_at": None,
        "failures": 0,
        "fallback": None,
    }
    other = {"prometheus": {"volume": "sum(rate(x[1m]))", "interval": 60}}
    assert put(client, other).status_code == 409  # another source is another configuration
    plain = client.put("/v1/streams/plain", json={"policy": {"capacity": 50}})
    assert (
        plain.status_code == 201 and client.get("/v1/streams/plain").json()["source_health"] is None
    )


def test_posting_samples_to_a_stream_that_polls_is_409(client: TestClient) -> None:
    put(client, {"prometheus": {"volume": "sum(rate(x[1m]))"}})
    response = client.post("/v1/streams/orders/samples", json={"samples": [{"t": 1, "volume": 5}]})
    assert response.status_code == 409
    assert "polls its source" in response.json()["detail"]
    assert client.get("/v1/streams/orders/history").json()["decisions"] == []


@pytest.mark.parametrize(
    ("field", "query", "said"),
    [
        ("volume", "rate(x[", "parse error: rate(x["),
        ("backlog", "lag", "returned 2 series"),
        ("running", "label", "returned a string"),
    ],
)
def test_a_query_prometheus_refuses_or_that_is_not_one_number_is_422(
    client: TestClient, field: str, query: str, said: str
) -> None:
    queries = {"volume": "sum(rate(x[1m]))", field: query}
    error = refused_field(put(client, {"prometheus": queries}))
    assert error["field"] == f"source.prometheus.{field}"
    assert error["value"] == query and said in error["message"]
    assert client.get("/v1/streams/orders").status_code == 404  # nothing stored


def test_a_metric_that_is_not_there_yet_is_accepted(client: TestClient) -> None:
    assert put(client, {"prometheus": {"volume": "missing"}}).status_code == 201


@pytest.mark.parametrize("interval", [0.5, 3601, "15", None])
def test_an_interval_outside_one_second_to_one_hour_is_422(
    client: TestClient, interval: object
) -> None:
    error = refused_field(
        put(client, {"prometheus": {"volume": "sum(rate(x[1m]))", "interval": interval}})
    )
    assert error["field"] == "source.prometheus.interval" and error["value"] == interval
    assert "from 1 to 3600 (seconds)" in error["allowed"]


def test_a_url_off_the_allow_list_is_422_and_never_asked(
    client: TestClient, prometheus: FakePrometheus
) -> None:
    url = "http://evil.example:9090/" + "x" * 500
    error = refused_field(put(client, {"prometheus": {"volume": "sum(rate(x[1m]))", "url": url}}))
    assert error["field"] == "source.prometheus.url"
    assert "prometheus_allowed_urls" in error["allowed"] and len(error["value"]) <= 203
    assert prometheus.requests == []
    allowed = {"prometheus": {"volume": "sum(rate(x[1m]))", "url": "http://other:9090/"}}
    assert put(client, allowed).status_code == 201
    assert prometheus.requests[-1].url.host == "other"


def test_prometheus_down_at_put_is_503_and_stores_nothing(
    client: TestClient, prometheus: FakePrometheus
) -> None:
    prometheus.down = True
    response = put(client, {"prometheus": {"volume": "sum(rate(x[1m]))"}})
    assert response.status_code == 503 and response.headers["retry-after"] == "5"
    assert client.get("/v1/streams/orders").status_code == 404


def test_a_configuration_no_stream_can_use_is_422_even_with_prometheus_down(
    client: TestClient, prometheus: FakePrometheus
) -> None:
    prometheus.down = True
    costly = {"name": "tvd", "method": "mm", "lam": 10, "window": 10_000, "iterations": 1000}
    body = {"filter": costly, "policy": {"capacity": 50}, "source": {"prometheus": {"volume": "v"}}}
    response = client.put("/v1/streams/orders", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == "filter"
    assert prometheus.requests == []  # never asked
    assert client.get("/v1/streams/orders").status_code == 404


def test_unknown_source_fields_are_422(client: TestClient) -> None:
    response = put(client, {"prometheus": {"volume": "v", "password": "p"}})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "source.prometheus.password"
