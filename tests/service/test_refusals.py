"""Schema-valid input the service cannot use is refused as such: a 4xx naming the field, never
a 500, and never an answer that grows with the input (issue 32, items 3, 4, 5, 8 and 10)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.problems import MAX_ERROR_BODY
from service.settings import Settings

RAW = {"filter": {"name": "raw"}, "policy": {"capacity": 1.0}}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(data_dir=tmp_path)), raise_server_exceptions=False) as c:
        yield c


def stream(client: TestClient, volumes: list[float], config: dict[str, Any] = RAW) -> None:
    assert client.put("/v1/streams/s", json=config).status_code == 201
    samples = [{"t": float(t), "volume": volume} for t, volume in enumerate(volumes)]
    answer = client.post("/v1/streams/s/samples", json={"samples": samples})
    assert answer.status_code == 200, answer.text


def test_a_backlog_under_a_policy_without_latency_is_refused_at_put_not_500(
    client: TestClient,
) -> None:
    # Issue 32 item 3: this configuration answered 500 to every sample. The cost model needs
    # a latency, so a null one is refused at PUT, naming it; with one, the sample is decided.
    config = {
        "policy": {"capacity": 50, "latency": None, "min_operators": 10},
        "guards": [{"name": "max_step", "up": 2}],
    }
    refused = client.put("/v1/streams/s", json=config)
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "policy.latency"
    config["policy"]["latency"] = 10.0  # type: ignore[index]
    assert client.put("/v1/streams/s", json=config).status_code == 201
    sample = {"t": 1, "volume": 0, "backlog": 1, "running": 1}
    answer = client.post("/v1/streams/s/samples", json={"samples": [sample]})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize(
    "volumes, config",
    [
        ([1e-300, 5e-324, 1e12], {"policy": {"capacity": 0.001, "quiet": 0}}),
        ([1.0, 5.0, 1e12, 0.0, 3.0], {"filter": {"name": "tvd", "lam_per_sigma": 1e300},
                                      "policy": {"capacity": 1.0}}),
        ([1.0, 1e12, 0.0, 1e12], {"filter": {"name": "ekf", "process_noise": 1e300,
                                             "observation": "log"}, "policy": {"capacity": 1.0}}),
    ],
)  # fmt: skip
def test_what_if_refuses_what_post_refuses(
    client: TestClient, volumes: list[float], config: dict[str, Any]
) -> None:
    """The replay meets the same Scaler errors as a POST would, and answers them the same."""
    stream(client, volumes)
    replayed = client.post("/v1/streams/s/what-if", json=config)
    assert replayed.status_code in (200, 422), replayed.text
    direct = client.put("/v1/streams/s", params={"reset": True}, json=config)
    if direct.status_code == 422:
        # Refused when configured: the replay refuses the configuration the same way.
        assert replayed.status_code == 422
        assert replayed.json()["errors"][0]["field"] == direct.json()["errors"][0]["field"]
        return
    samples = [{"t": float(t), "volume": volume} for t, volume in enumerate(volumes)]
    posted = client.post("/v1/streams/s/samples", json={"samples": samples})
    assert posted.status_code == replayed.status_code, (posted.text, replayed.text)
    if posted.status_code == 422:
        assert replayed.json()["sample"] == posted.json()["sample"]


@pytest.mark.parametrize(
    "filter_spec, field",
    [
        ({"name": "tvd", "lam": 10**400}, "filter.lam"),
        ({"name": "changepoint", "memory": 10**400}, "filter.memory"),
        ({"name": "changepoint", "resolution": 10**400}, "filter.resolution"),
        ({"name": "ekf", "process_noise": 10**400}, "filter.process_noise"),
        # Takes a first sample, then no other: found by feeding a throwaway Scaler.
        ({"name": "ekf", "measurement_noise": 1e308}, "config"),
    ],
)
def test_a_configuration_that_can_never_take_a_sample_is_refused_at_put(
    client: TestClient, filter_spec: dict[str, Any], field: str
) -> None:
    body = json.dumps({"filter": filter_spec, "policy": {"capacity": 1.0}})
    put = client.put("/v1/streams/s", content=body, headers={"content-type": "application/json"})
    assert put.status_code == 422, put.text
    assert put.json()["errors"][0]["field"] == field
    assert client.get("/v1/streams/s").status_code == 404
    what_if = client.post(
        "/v1/streams/s/what-if", content=body, headers={"content-type": "application/json"}
    )
    assert what_if.status_code in (404, 422)


@pytest.mark.parametrize("spec", [{"name": "moving_average"}, {"name": "moving_median"}])
def test_every_window_is_bounded_with_the_limit_in_the_error(
    client: TestClient, spec: dict[str, Any]
) -> None:
    put = client.put("/v1/streams/s", json={"filter": spec | {"w": 10**9}, "policy": RAW["policy"]})
    assert put.status_code == 422, put.text
    error = put.json()["errors"][0]
    assert error["field"] == "filter.w" and "10000" in error["allowed"], error


@pytest.mark.parametrize(
    "volumes", [[0.0, 1e-320], [1e-300, 5e-324, 1e12], [5e-324] * 20 + [1e12, 0.0, 1e-300]]
)
def test_the_default_filter_follows_tiny_volumes(client: TestClient, volumes: list[float]) -> None:
    stream(client, [], {"policy": {"capacity": 1.0}})
    samples = [{"t": float(t), "volume": volume} for t, volume in enumerate(volumes)]
    answer = client.post("/v1/streams/s/samples", json={"samples": samples})
    assert answer.status_code == 200, answer.text
    assert all(d["operators"] >= 1 for d in answer.json()["decisions"])


def test_an_error_body_stays_small_whatever_the_input(client: TestClient) -> None:
    """A 1 MB string where a filter wants a number: the filter's message quotes it whole."""
    huge = "x" * (1024 * 1024 - 200)
    config = {"filter": {"name": "ekf", "measurement_noise": huge}, "policy": {"capacity": 1}}
    put = client.put("/v1/streams/s", json=config)
    assert put.status_code == 422
    assert len(put.content) <= MAX_ERROR_BODY
    assert put.json()["errors"][0]["field"].startswith("filter")
    # Keys of any length, escaped six-fold by JSON, many of them.
    keys = {"\x00" * 20_000 + str(index): 1 for index in range(8)}
    odd = client.put("/v1/streams/s", json={"filter": {"name": "raw", **keys}, "policy": {}})
    assert odd.status_code == 422
    assert len(odd.content) <= MAX_ERROR_BODY
