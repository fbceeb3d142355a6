"""Schema-valid input the service cannot use is refused as such: a 4xx naming the field, never
a 500, and never an answer that grows with the input (issue 32, items 3, 4, 5, 7, 8 and 10)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
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


def timed(volumes: list[float]) -> list[dict[str, Any]]:
    """Samples of these volumes, one a second from t = 0."""
    return [{"t": float(t), "volume": volume} for t, volume in enumerate(volumes)]


def stream(client: TestClient, samples: list[dict[str, Any]], config: dict[str, Any] = RAW) -> None:
    assert client.put("/v1/streams/s", json=config).status_code == 201
    answer = client.post("/v1/streams/s/samples", json={"samples": samples})
    assert answer.status_code == 200, answer.text


def posted_after_reset(
    client: TestClient, samples: list[dict[str, Any]], config: dict[str, Any]
) -> httpx.Response:
    """The answer to a POST of ``samples`` once stream s is replaced by one of ``config``."""
    replaced = client.put("/v1/streams/s", params={"reset": True}, json=config)
    assert replaced.status_code == 200, replaced.text
    return client.post("/v1/streams/s/samples", json={"samples": samples})


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


# A stage reporting its backlog whose volume leaps from 0 to 1e12 in a second: at capacity 0.001
# the cost model follows the ramp over its horizon to more operators than a count can store.
LEAP = [
    {"t": 0.0, "volume": 0.0, "running": 1000},
    {"t": 1000.0, "volume": 0.0, "backlog": 0.0, "running": 1000},
    {"t": 1001.0, "volume": 1e12, "backlog": 1.0, "running": 1},
]


@pytest.mark.parametrize(
    "samples, config, field, why",
    [
        (LEAP, {"filter": {"name": "raw"}, "policy": {"capacity": 0.001}},
         "samples[2].volume", "operators, more than 9007199254740992"),
        (timed([1.0, 5.0, 1e12, 0.0, 3.0]), {"filter": {"name": "tvd", "lam_per_sigma": 1e300},
                                             "policy": {"capacity": 1.0}},
         "samples[3].volume", "volume=nan"),
        (timed([1.0, 1e12, 0.0, 1e12]), {"filter": {"name": "ekf", "process_noise": 1e300,
                                                    "observation": "log"},
                                         "policy": {"capacity": 1.0}},
         "samples[1].volume", "infs or NaNs"),
    ],
)  # fmt: skip
def test_what_if_refuses_what_post_refuses(
    client: TestClient, samples: list[dict[str, Any]], config: dict[str, Any], field: str, why: str
) -> None:
    """Issue 32 item 4: a configuration the stream could take whose Scaler cannot follow one
    of the samples. The replay meets that sample as a POST of it does, and answers it the
    same way: a 422 naming the sample, not a 500."""
    stream(client, samples)
    replayed = client.post("/v1/streams/s/what-if", json=config)
    assert replayed.status_code == 422, replayed.text
    error = replayed.json()["errors"][0]
    assert error["field"] == field and why in error["message"], error
    posted = posted_after_reset(client, samples, config)
    assert posted.status_code == 422, posted.text
    assert posted.json()["errors"][0]["field"] == field
    assert replayed.json()["sample"] == posted.json()["sample"]


def test_what_if_follows_tiny_volumes_as_a_post_does(client: TestClient) -> None:
    """Issue 32 item 4's first repro: the default filter's overflow on these volumes escaped
    the replay as a 500. The default filter now takes them (item 10), so the replay answers
    200 with the decisions a POST of them makes: tiny volumes need one operator, and the
    confidence guard holds the leap to 1e12 while the filter warms up."""
    samples = timed([1e-300, 5e-324, 1e12])
    stream(client, samples)
    config = {"policy": {"capacity": 1}}
    replayed = client.post("/v1/streams/s/what-if", json=config)
    assert replayed.status_code == 200, replayed.text
    decisions = replayed.json()["decisions"]
    assert [decision["operators"] for decision in decisions] == [1, 1, 1]
    posted = posted_after_reset(client, samples, config)
    assert posted.status_code == 200, posted.text
    assert posted.json()["decisions"] == decisions


@pytest.mark.parametrize(
    "filter_spec, field, replayed_field",
    [
        ({"name": "tvd", "lam": 10**400}, "filter.lam", "filter.lam"),
        ({"name": "changepoint", "memory": 10**400}, "filter.memory", "filter.memory"),
        ({"name": "changepoint", "resolution": 10**400}, "filter.resolution", "filter.resolution"),
        ({"name": "ekf", "process_noise": 10**400}, "filter.process_noise", "filter.process_noise"),
        # Takes a first sample, then no other: found by feeding a throwaway Scaler.
        ({"name": "ekf", "measurement_noise": 1e308}, "config", "samples[1].volume"),
    ],
)
def test_a_configuration_that_can_never_take_a_sample_is_refused_at_put(
    client: TestClient, filter_spec: dict[str, Any], field: str, replayed_field: str
) -> None:
    body = json.dumps({"filter": filter_spec, "policy": {"capacity": 1.0}})
    put = client.put("/v1/streams/s", content=body, headers={"content-type": "application/json"})
    assert put.status_code == 422, put.text
    assert put.json()["errors"][0]["field"] == field
    assert client.get("/v1/streams/s").status_code == 404
    # A what-if of it over a stream's samples is refused too: at the parameter, or at the
    # first sample the filter cannot follow (the replay does not try the configuration first).
    stream(client, timed([1.0, 2.0, 3.0, 2.0]))
    what_if = client.post(
        "/v1/streams/s/what-if", content=body, headers={"content-type": "application/json"}
    )
    assert what_if.status_code == 422, what_if.text
    assert what_if.json()["errors"][0]["field"] == replayed_field


@pytest.mark.parametrize(
    "spec, window",
    [({"name": "moving_average"}, "w"), ({"name": "moving_median"}, "w"),
     ({"name": "tvd", "method": "mm", "lam": 10}, "window")],
)  # fmt: skip
@pytest.mark.parametrize("length", [10_001, 10**9])
def test_every_window_is_bounded_with_the_limit_in_the_error(
    client: TestClient, spec: dict[str, Any], window: str, length: int
) -> None:
    config = {"filter": spec | {window: length}, "policy": RAW["policy"]}
    put = client.put("/v1/streams/s", json=config)
    assert put.status_code == 422, put.text
    error = put.json()["errors"][0]
    assert error["field"] == f"filter.{window}" and "10000" in error["allowed"], error


@pytest.mark.parametrize(
    "volumes", [[0.0, 1e-320], [1e-300, 5e-324, 1e12], [5e-324] * 20 + [1e12, 0.0, 1e-300]]
)
def test_the_default_filter_follows_tiny_volumes(client: TestClient, volumes: list[float]) -> None:
    stream(client, [], {"policy": {"capacity": 1.0}})
    samples = timed(volumes)
    answer = client.post("/v1/streams/s/samples", json={"samples": samples})
    assert answer.status_code == 200, answer.text
    assert all(d["operators"] >= 1 for d in answer.json()["decisions"])


def test_a_sample_long_after_samples_next_to_each_other_is_followed(client: TestClient) -> None:
    """Samples 1e-300 s apart, then one 1e15 s on: it covers 1e315 typical intervals, a weight
    every filter refused as inf (a 422 on a schema-valid batch; ``scaling.cadence.HEAVIEST``)."""
    stream(client, [], RAW)
    times = [0.0, 1e-300, 2e-300, 1e15]
    samples = [{"t": t, "volume": float(k)} for k, t in enumerate(times, start=1)]
    answer = client.post("/v1/streams/s/samples", json={"samples": samples})
    assert answer.status_code == 200, answer.text
    assert answer.json()["accepted"] == 4


def test_a_backlog_stream_whose_level_moves_within_1e_300_s_is_decided(client: TestClient) -> None:
    """Within every bound: the level's wander over a 1e-300 s interval overflowed, and the
    cost model answered "cannot convert float NaN to integer" as a 422 (session 29)."""
    stream(client, [], {"filter": {"name": "raw"}, "policy": {"capacity": 0.001}})
    samples = [
        {"t": 5e-324, "volume": 1e12, "backlog": 0.0, "running": 10**9},
        {"t": 1e-300, "volume": 1e6, "backlog": 1e12, "running": 10**9, "processed": 0.0},
        {"t": 1e-9, "volume": 300.0, "backlog": 1.0, "running": 1000, "processed": 300.0},
    ]
    answer = client.post("/v1/streams/s/samples", json={"samples": samples})
    assert answer.status_code == 200, answer.text
    assert answer.json()["accepted"] == 3


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
