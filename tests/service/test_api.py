"""The HTTP API through FastAPI's test client: every route, every refusal, restarts, metrics.

The tests taking ``database_url`` run on SQLite and on PostgreSQL (tests/service/conftest.py).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from scaling import Scaler
from service.app import create_app
from service.models import DecisionOut
from service.settings import Settings, get_settings
from service.streams import StreamService
from tests.service.conftest import PostgresServer

CONFIG: dict[str, Any] = {
    "filter": {"name": "tvd", "lam_per_sigma": 8.0},
    "policy": {"capacity": 50.0, "min_operators": 1, "max_operators": 20},
    "guards": [{"name": "stabilization", "window": 30.0}, {"name": "cooldown", "up": 5.0}],
    "operators": 3,
}
STREAM = "/v1/streams/orders"


def noisy(n: int, seed: int = 11) -> list[dict[str, float]]:
    rng = np.random.default_rng(seed)
    trend = np.repeat(rng.uniform(100.0, 500.0, n // 40 + 1), 40)[:n]
    volumes = np.clip(trend + rng.normal(0.0, 60.0, n), 0.0, None)
    return [{"t": float(t), "volume": float(v)} for t, v in enumerate(volumes)]


def uninterrupted(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    spec = {key: CONFIG[key] for key in ("filter", "policy", "guards")}
    scaler = Scaler.from_spec(spec, operators=CONFIG["operators"])
    # The fields the API answers (a Decision may hold more).
    fields = DecisionOut.model_fields
    reports = ("backlog", "running", "processed")
    decisions = [
        scaler.observe(s["volume"], s["t"], **{key: s.get(key) for key in reports}).to_dict()
        for s in samples
    ]
    return [{key: value for key, value in d.items() if key in fields} for d in decisions]


@pytest.fixture
def client(tmp_path: Path, database_url: str | None) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(data_dir=tmp_path, database_url=database_url))) as client:
        client.put(STREAM, json=CONFIG)
        yield client


def post(client: TestClient, samples: list[dict[str, float]], path: str = STREAM) -> Any:
    return client.post(f"{path}/samples", json={"samples": samples})


def post_raw(client: TestClient, body: str) -> Any:
    return client.post(
        f"{STREAM}/samples", content=body, headers={"content-type": "application/json"}
    )


def snapshot(client: TestClient) -> tuple[Any, Any, Any]:
    """Everything a refused request must leave as it was."""
    history = client.get(f"{STREAM}/history", params={"limit": 10_000}).json()
    return client.get(STREAM).json(), history, client.get("/v1/streams").json()


def problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["detail"]
    assert set(body) == {"status", "error", "detail", "errors", "sample"}
    return body


# Routes and their answers


def test_put_creates_then_replaces_a_stream(client: TestClient) -> None:
    created = client.put("/v1/streams/clicks", json=CONFIG)
    assert created.status_code == 201
    body = created.json()
    assert body["id"] == "clicks" and (body["operators"], body["t"]) == (3, None)
    assert body["config"]["filter"] == {**CONFIG["filter"], **body["config"]["filter"]}
    assert body["config"]["guards"][1] == {"name": "cooldown", "up": 5.0, "down": 0.0}
    assert client.get("/v1/streams/clicks").json() == body
    post(client, noisy(5), "/v1/streams/clicks")
    replaced = client.put("/v1/streams/clicks", params={"reset": "true"}, json=body["config"])
    assert replaced.status_code == 200 and replaced.json() == body
    assert client.get("/v1/streams/clicks/history").json()["decisions"] == []
    listed = client.get("/v1/streams").json()["streams"]
    assert [stream["id"] for stream in listed] == ["clicks", "orders"]


def test_samples_are_answered_with_the_scalers_decisions(client: TestClient) -> None:
    samples = noisy(120)
    answers = [post(client, samples[start : start + 40]).json() for start in (0, 40, 80)]
    expected = uninterrupted(samples)
    assert [d for answer in answers for d in answer["decisions"]] == expected
    assert answers[-1] | {"decisions": []} == {
        "accepted": 40,
        "duplicates": 0,
        "operators": expected[-1]["operators"],
        "decisions": [],
    }
    stream = client.get(STREAM).json()
    assert (stream["operators"], stream["t"]) == (expected[-1]["operators"], 119.0)


def test_latest_decision_history_and_the_keda_metric(client: TestClient) -> None:
    for route in ("decision", "metric"):
        assert problem(client.get(f"{STREAM}/{route}"), 404)["errors"][0]["field"] == "stream_id"
    samples = noisy(25)
    post(client, samples)
    expected = uninterrupted(samples)
    assert client.get(f"{STREAM}/decision").json() == expected[-1]
    metric = client.get(f"{STREAM}/metric").json()
    assert metric == {
        "value": expected[-1]["filtered"],
        "operators": expected[-1]["operators"],
        "backlog": None,
        "running": None,
        "processed": None,
    }
    pages, since = [], None
    while True:
        params = {"limit": 10} | ({} if since is None else {"since": since})
        page = client.get(f"{STREAM}/history", params=params).json()
        pages.append(page["decisions"])
        if page["next_since"] is None:
            break
        since = page["next_since"]
    assert [len(page) for page in pages] == [10, 10, 5]
    assert [d for page in pages for d in page] == expected


def reporting(n: int) -> list[dict[str, Any]]:
    """Samples of which every other one carries what the job reported, as a job that reports
    now and then sends them."""
    samples: list[dict[str, Any]] = noisy(n)
    for index, sample in enumerate(samples[::2]):
        sample.update(backlog=float(40 * index), running=2 + index % 5, processed=300.0 + index)
    return samples


def test_what_the_job_reported_is_in_the_history_and_the_metric_after_a_restart(
    tmp_path: Path, database_url: str | None
) -> None:
    samples = reporting(60)
    expected = uninterrupted(samples)
    assert expected[10]["backlog"] == 200.0 and expected[11]["running"] is None
    settings = Settings(data_dir=tmp_path, database_url=database_url)
    with TestClient(create_app(settings)) as client:
        client.put(STREAM, json=CONFIG)
        post(client, samples[:30])
        assert post(client, samples[:30]).json()["duplicates"] == 30
    with TestClient(create_app(settings)) as client:
        post(client, samples[20:])
        assert client.get(f"{STREAM}/history").json()["decisions"] == expected
        assert client.get(f"{STREAM}/decision").json() == expected[-1]
        post(client, [{"t": 60.0, "volume": 10.0, "backlog": 7.5, "running": 0}])
        metric = client.get(f"{STREAM}/metric").json()
        assert (metric["backlog"], metric["running"], metric["processed"]) == (7.5, 0, None)


def test_delete_removes_the_stream_and_answers_it(client: TestClient) -> None:
    post(client, noisy(3))
    stream = client.get(STREAM).json()
    assert client.delete(STREAM).json() == stream
    assert problem(client.get(STREAM), 404)["errors"][0]["value"] == "orders"
    assert client.get("/v1/streams").json() == {"streams": [], "next_after": None}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", ""),
        ("DELETE", ""),
        ("POST", "/samples"),
        ("GET", "/decision"),
        ("GET", "/history"),
        ("GET", "/metric"),
    ],
)
def test_an_unknown_stream_is_404(client: TestClient, method: str, path: str) -> None:
    before = snapshot(client)
    body = {"samples": noisy(2)} if method == "POST" else None
    response = client.request(method, f"/v1/streams/nowhere{path}", json=body)
    [error] = problem(response, 404)["errors"]
    assert (error["field"], error["value"]) == ("stream_id", "nowhere")
    assert "PUT" in error["allowed"]
    assert snapshot(client) == before


def test_probes(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"status": "ready"}
    streams: StreamService = client.app_state["streams"]
    streams.storage.close()
    not_ready = client.get("/readyz")
    assert not_ready.status_code == 503 and not_ready.headers["retry-after"] == "1"
    assert not_ready.json() == {"status": "not_ready", "reason": "ShuttingDown"}
    assert client.get("/healthz").status_code == 200


def test_readyz_needs_no_token_and_tells_nothing_but_a_reason_code(tmp_path: Path) -> None:
    """Kubernetes' httpGet probe sends no token (issue 35): /readyz answers it, and says
    nothing of the streams, the files or the database to a caller without one."""
    settings = Settings(data_dir=tmp_path, tokens=["alpha"])
    authorised = {"Authorization": "Bearer alpha"}
    with TestClient(create_app(settings)) as client:
        assert client.put(STREAM, json=CONFIG, headers=authorised).status_code == 201
        for headers in [{}, {"Authorization": "Bearer guess"}]:
            assert client.get("/readyz", headers=headers).json() == {"status": "ready"}
            assert client.head("/readyz", headers=headers).status_code == 200
        assert client.get(STREAM).status_code == 401  # the data still needs a token
        client.app_state["streams"].storage.close()
        answer = client.get("/readyz")
        assert answer.status_code == 503
        assert answer.json() == {"status": "not_ready", "reason": "ShuttingDown"}
        for secret in ["orders", str(tmp_path), "steadyscale.db", "closed"]:
            assert secret not in answer.text
        document = client.get("/openapi.json", headers=authorised).json()
    readyz = document["paths"]["/readyz"]["get"]
    assert "security" not in readyz
    assert readyz["responses"]["503"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/NotReady"
    }


# Refusals: 422, 409, 413, 401, each changing nothing


@pytest.mark.parametrize(
    ("body", "field", "value"),
    [
        (
            '{"samples": [{"t": 5, "volume": 1}, {"t": 6, "volume": NaN}]}',
            "samples[1].volume",
            "NaN",
        ),
        ('{"samples": [{"t": 5, "volume": Infinity}]}', "samples[0].volume", "Infinity"),
        ('{"samples": [{"t": 5, "volume": -Infinity}]}', "samples[0].volume", "-Infinity"),
        ('{"samples": [{"t": 5, "volume": -0.5}]}', "samples[0].volume", -0.5),
        ('{"samples": [{"t": 5, "volume": "351.2"}]}', "samples[0].volume", "351.2"),
        ('{"samples": [{"t": 5, "volume": true}]}', "samples[0].volume", True),
        ('{"samples": [{"t": 5, "volume": null}]}', "samples[0].volume", None),
        ('{"samples": [{"t": 5}]}', "samples[0].volume", None),
        ('{"samples": [{"volume": 5}]}', "samples[0].t", None),
        ('{"samples": [{"t": NaN, "volume": 5}]}', "samples[0].t", "NaN"),
        ('{"samples": [{"t": 1e999, "volume": 5}]}', "samples[0].t", "Infinity"),
        ('{"samples": [{"t": 5, "volume": 5, "v": 1}]}', "samples[0].v", 1),
        ('{"samples": [{"t": 5, "volume": 5, "backlog": -1}]}', "samples[0].backlog", -1),
        ('{"samples": [{"t": 5, "volume": 5, "running": 2.5}]}', "samples[0].running", 2.5),
        ('{"samples": [{"t": 5, "volume": 5, "processed": NaN}]}', "samples[0].processed", "NaN"),
        ('{"samples": 5}', "samples", 5),
        ("{}", "samples", None),
        ("[1, 2]", "body", [1, 2]),
    ],
)
def test_a_bad_sample_is_422_naming_field_value_and_what_is_allowed(
    client: TestClient, body: str, field: str, value: Any
) -> None:
    post(client, noisy(5))
    before = snapshot(client)
    errors = problem(post_raw(client, body), 422)["errors"]
    assert errors[0]["field"] == field and errors[0]["value"] == value
    assert errors[0]["allowed"] and field in errors[0]["message"] or field == "body"
    assert snapshot(client) == before


def test_a_batch_reports_its_first_bad_sample(client: TestClient) -> None:
    body = '{"samples": [{"t": 1, "volume": 3}, {"t": 2, "volume": -1}, {"t": "x", "volume": 3}]}'
    errors = problem(post_raw(client, body), 422)["errors"]
    assert [e["field"] for e in errors] == ["samples[1].volume"]
    assert errors[0]["allowed"] == "volume must be a number from 0 to 1e+12 (tuples/s)"


@pytest.mark.parametrize(
    ("change", "field", "value", "allowed"),
    [
        ({"filter": {"name": "kalman"}}, "filter.name", "kalman", "allowed names"),
        ({"filter": {"name": "tvd", "lam_per_sigma": 0}}, "filter.lam_per_sigma", 0, "> 0"),
        ({"filter": {"name": "tvd", "lam_sigma": 2}}, "filter.lam_sigma", 2, "lam_per_sigma"),
        ({"filter": {"lam": 2}}, "filter.name", None, "required"),
        ({"guards": [{"name": "cooldown", "up": -1}]}, "guards[0].up", -1, ">= 0"),
        (
            {"guards": [{"name": "max_step"}, {"name": "brake"}]},
            "guards[1].name",
            "brake",
            "allowed",
        ),
        ({"policy": {"capacity": 0}}, "policy.capacity", 0, "from 0.001"),
        ({"policy": {"capacity": 50, "burst": 2}}, "policy.burst", 2, "not permitted"),
        (
            {"policy": {"capacity": 50, "min_operators": 5, "max_operators": 2}},
            "policy.max_operators",
            2,
            ">= 5",
        ),
        ({"operators": -1}, "operators", -1, "operators must be an integer from 0"),
        ({"operators": 2.5}, "operators", 2.5, "integer"),
        ({"filter": 5}, "filter", 5, "dictionary"),
    ],
)
def test_a_bad_configuration_is_422_and_keeps_the_stream(
    client: TestClient, change: dict[str, Any], field: str, value: Any, allowed: str
) -> None:
    post(client, noisy(5))
    before = snapshot(client)
    [error] = problem(client.put(STREAM, json=CONFIG | change), 422)["errors"]
    assert (error["field"], error["value"]) == (field, value)
    assert allowed in error["allowed"]
    assert snapshot(client) == before


@pytest.mark.parametrize("stream_id", ["bad id", "x" * 129, "caf\u00e9", "a:b"])
def test_a_bad_stream_id_is_422(client: TestClient, stream_id: str) -> None:
    [error] = problem(client.put(f"/v1/streams/{stream_id}", json=CONFIG), 422)["errors"]
    assert (error["field"], error["value"]) == ("stream_id", stream_id)
    assert "128 characters" in error["allowed"]
    assert [s["id"] for s in client.get("/v1/streams").json()["streams"]] == ["orders"]


def test_a_stream_id_of_128_characters_is_fine(client: TestClient) -> None:
    assert client.put("/v1/streams/" + "a._-9" * 25 + "xyz", json=CONFIG).status_code == 201


@pytest.mark.parametrize(
    ("query", "field"),
    [("limit=0", "limit"), ("limit=100001", "limit"), ("since=nan", "since"), ("since=x", "since")],
)
def test_bad_history_parameters_are_422(client: TestClient, query: str, field: str) -> None:
    [error] = problem(client.get(f"{STREAM}/history?{query}"), 422)["errors"]
    assert error["field"] == field


def test_a_retried_batch_is_acknowledged_not_applied_again(client: TestClient) -> None:
    samples = noisy(30)
    first = post(client, samples[:20]).json()
    retry = post(client, samples[:20]).json()
    assert retry == {
        "accepted": 0,
        "duplicates": 20,
        "operators": first["operators"],
        "decisions": [],
    }
    overlap = post(client, samples[10:]).json()
    assert (overlap["accepted"], overlap["duplicates"]) == (10, 10)
    history = client.get(f"{STREAM}/history").json()["decisions"]
    assert history == uninterrupted(samples)


APPLIED = noisy(40)[2]  # the sample at t = 2, applied below


@pytest.mark.parametrize(
    ("batch", "index", "why", "field"),
    [
        ([{"t": 20.0, "volume": 1.0}, {"t": 3.0, "volume": 1.0}], 1, "times must increase", "t"),
        ([{"t": 2.0, "volume": 9.5}], 0, "was applied with volume=", "volume"),
        ([{**APPLIED, "backlog": 5.0}], 0, "was applied with backlog=None", "backlog"),
        ([{**APPLIED, "running": 3}], 0, "was applied with running=None", "running"),
        ([{"t": 1.5, "volume": 9.0}, {"t": 30.0, "volume": 1.0}], 0, "no retained sample", "t"),
        (
            [{"t": 10.0, "volume": 1.0}, {"t": 11.0, "volume": 1.0}, {"t": 10.5, "volume": 1.0}],
            2,
            "times must increase",
            "t",
        ),
        ([{"t": 20.0, "volume": 1.0}, {"t": 20.0, "volume": 1.0}], 1, "times must increase", "t"),
    ],
)
def test_a_conflicting_sample_is_409_and_nothing_of_its_batch_is_applied(
    client: TestClient, batch: list[dict[str, float]], index: int, why: str, field: str
) -> None:
    samples = noisy(40)
    post(client, samples[:8])
    before = snapshot(client)
    body = problem(post(client, batch), 409)
    culprit = batch[index]
    assert body["sample"] == {"index": index, "t": culprit["t"], "volume": culprit["volume"]}
    assert body["errors"][0]["field"] == f"samples[{index}].{field}"
    assert body["errors"][0]["value"] == culprit[field]
    assert why in body["detail"] and body["detail"].startswith(f"samples[{index}] (t=")
    assert snapshot(client) == before
    post(client, samples[8:])
    assert client.get(f"{STREAM}/history").json()["decisions"] == uninterrupted(samples)


def test_too_many_samples_or_bytes_are_413(tmp_path: Path, database_url: str | None) -> None:
    settings = Settings(
        data_dir=tmp_path, database_url=database_url, max_batch=5, max_body_bytes=2000
    )
    with TestClient(create_app(settings)) as client:
        client.put(STREAM, json=CONFIG)
        before = snapshot(client)
        [error] = problem(post(client, noisy(6)), 413)["errors"]
        assert (error["field"], error["value"]) == ("samples", 6)
        body = json.dumps({"samples": noisy(60)})
        [error] = problem(post_raw(client, body), 413)["errors"]
        assert (error["field"], error["value"]) == ("body", len(body))

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            yield body.encode()

        streamed = client.post(
            f"{STREAM}/samples", content=chunks(), headers={"content-type": "application/json"}
        )
        assert problem(streamed, 413)["errors"][0]["field"] == "body"
        assert snapshot(client) == before
        assert post(client, noisy(5)).status_code == 200


def test_tokens_guard_everything_but_the_probes(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, tokens=["alpha", "beta"])
    with TestClient(create_app(settings)) as client:
        paths = ["/v1/streams", STREAM, f"{STREAM}/metric", "/metrics", "/docs"]
        for path in [*paths, "/openapi.json"]:
            response = client.get(path)
            assert problem(response, 401)["errors"][0]["field"] == "Authorization"
            assert response.headers["www-authenticate"] == "Bearer"
        for header in ["Bearer gamma", "Basic alpha", "Bearer", "alpha"]:
            response = client.put(STREAM, json=CONFIG, headers={"Authorization": header})
            assert response.status_code == 401
        assert client.get("/v1/streams", headers={"Authorization": "Bearer beta"}).json() == {
            "streams": [],
            "next_after": None,
        }
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
        authorised = {"Authorization": "Bearer alpha"}
        assert client.put(STREAM, json=CONFIG, headers=authorised).status_code == 201
        assert client.get("/openapi.json", headers=authorised).status_code == 200


def test_settings_read_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STEADYSCALE_TOKENS", " alpha, beta ,")
    monkeypatch.setenv("STEADYSCALE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("STEADYSCALE_MAX_BATCH", "7")
    settings = Settings()
    assert (settings.tokens, settings.data_dir, settings.max_batch) == (
        ["alpha", "beta"],
        tmp_path,
        7,
    )
    assert settings.database == tmp_path / "steadyscale.db"
    monkeypatch.setenv("STEADYSCALE_TOKENS", '["gamma"]')
    assert Settings().tokens == ["gamma"]
    assert "alpha" not in repr(Settings(tokens=["alpha"]))


def test_a_database_url_selects_postgresql_and_must_be_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().database_url is None
    url = "postgresql://app:secret@db.internal:5432/steadyscale"
    monkeypatch.setenv("STEADYSCALE_DATABASE_URL", url)
    assert Settings().database_url == url
    assert "secret" not in repr(Settings())
    with pytest.raises(ValueError, match="must be a postgresql://") as refused:
        Settings(database_url="mysql://app:secret@db/steadyscale")
    assert "secret" not in str(refused.value)


def test_a_postgresql_outage_answers_503_and_stores_nothing_unacknowledged(
    tmp_path: Path, lone_postgres: PostgresServer
) -> None:
    samples = noisy(40)
    settings = Settings(data_dir=tmp_path, database_url=lone_postgres.url, busy_timeout=1.0)
    with TestClient(create_app(settings)) as client:
        client.put(STREAM, json=CONFIG)
        assert post(client, samples[:20]).status_code == 200
        lone_postgres.halt()
        assert problem(post(client, samples[20:]), 503)["detail"].startswith(
            "the storage is unavailable, nothing was stored"
        )
        assert client.get("/readyz").json() == {
            "status": "not_ready",
            "reason": "StorageUnavailable",
        }
        assert problem(client.get(f"{STREAM}/history"), 503)
        assert client.get("/healthz").status_code == 200
        lone_postgres.start()
        deadline = time.monotonic() + 30.0
        while client.get("/readyz").status_code != 200:
            assert time.monotonic() < deadline, "not ready 30 s after the database came back"
            time.sleep(0.2)
        # The client resends what got 503: applied once, after the acknowledged half.
        answer = post(client, samples[20:])
        assert answer.status_code == 200 and answer.json()["accepted"] == 20
        assert client.get(f"{STREAM}/history").json()["decisions"] == uninterrupted(samples)


# Restarts, concurrency, metrics, OpenAPI


def test_a_restarted_app_continues_every_stream_exactly(
    tmp_path: Path, database_url: str | None
) -> None:
    samples = noisy(160)
    with TestClient(create_app(Settings(data_dir=tmp_path, database_url=database_url))) as client:
        client.put(STREAM, json=CONFIG)
        client.put("/v1/streams/clicks", json=CONFIG)
        for start in range(0, 70, 10):
            post(client, samples[start : start + 10])
            post(client, samples[start : start + 10], "/v1/streams/clicks")
    # The second app gets its data directory through the settings dependency.
    app = create_app()
    app.dependency_overrides[get_settings] = lambda: Settings(
        data_dir=tmp_path, database_url=database_url
    )
    with TestClient(app) as client:
        metric = client.get(f"{STREAM}/metric").json()
        assert metric["operators"] == uninterrupted(samples[:70])[-1]["operators"]
        post(client, samples[60:])  # the end of a batch sent before the restart, then new ones
        post(client, samples[70:], "/v1/streams/clicks")
        for stream in (STREAM, "/v1/streams/clicks"):
            history = client.get(f"{stream}/history").json()["decisions"]
            assert history == uninterrupted(samples)


def test_two_apps_on_one_database_at_once_stay_exact(
    tmp_path: Path, database_url: str | None
) -> None:
    samples = noisy(100)
    one = TestClient(create_app(Settings(data_dir=tmp_path, database_url=database_url)))
    two = TestClient(create_app(Settings(data_dir=tmp_path, database_url=database_url)))
    with one, two:
        one.put(STREAM, json=CONFIG)
        for number, start in enumerate(range(0, 100, 10)):
            assert post(one if number % 2 else two, samples[start : start + 10]).status_code == 200
        assert one.get(f"{STREAM}/history").json()["decisions"] == uninterrupted(samples)


def test_concurrent_posts_to_one_stream_lose_nothing_and_apply_nothing_twice(
    client: TestClient,
) -> None:
    samples = noisy(120)
    workers = 4
    answers: list[list[tuple[dict[str, float], int]]] = [[] for _ in range(workers)]

    def send(worker: int) -> None:
        for sample in samples[worker::workers]:
            answers[worker].append((sample, post(client, [sample]).status_code))

    threads = [threading.Thread(target=send, args=(worker,)) for worker in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    codes = [code for answer in answers for _, code in answer]
    assert len(codes) == len(samples) and set(codes) <= {200, 409}
    accepted = sorted((s for a in answers for s, code in a if code == 200), key=lambda s: s["t"])
    history = client.get(f"{STREAM}/history").json()["decisions"]
    assert [(d["t"], d["volume"]) for d in history] == [(s["t"], s["volume"]) for s in accepted]
    assert history == uninterrupted(accepted)


def test_a_busy_stream_does_not_hold_up_another(client: TestClient) -> None:
    client.put("/v1/streams/clicks", json=CONFIG)
    streams: StreamService = client.app_state["streams"]
    answered: list[int] = []
    waiting = threading.Thread(target=lambda: answered.append(post(client, noisy(2)).status_code))
    with streams.lock("orders"):
        waiting.start()
        assert post(client, noisy(50), "/v1/streams/clicks").status_code == 200
        waiting.join(0.2)
        assert answered == []
    waiting.join(5)
    assert answered == [200]


def test_prometheus_metrics_have_the_per_stream_series(client: TestClient) -> None:
    samples = noisy(80)
    post(client, samples)
    post(client, samples[:1] + [{"t": 0.5, "volume": 1.0}])  # 409
    expected = uninterrupted(samples)
    response = client.get("/metrics")
    assert response.headers["content-type"].startswith("text/plain")
    found = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }
    orders = (("stream", "orders"),)
    assert (
        found["steadyscale_filtered_volume_tuples_per_second", orders] == expected[-1]["filtered"]
    )
    assert found["steadyscale_desired_operators", orders] == expected[-1]["operators"]
    for direction in ("up", "down"):
        labels = (("direction", direction), ("stream", "orders"))
        count = sum(d["action"] == direction for d in expected)
        assert found["steadyscale_scaling_operations_total", labels] == count
    route = "/v1/streams/{stream_id}/samples"
    for status, count in (("200", 1), ("409", 1)):
        labels = (("method", "POST"), ("route", route), ("status", status))
        assert found["steadyscale_http_requests_total", labels] == count
        assert found["steadyscale_http_request_duration_seconds_count", labels] == count
    put = (("method", "PUT"), ("route", "/v1/streams/{stream_id}"), ("status", "201"))
    assert found["steadyscale_http_requests_total", put] == 1


def test_openapi_documents_a_response_model_for_every_route(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    routes = {(path, method) for path, item in document["paths"].items() for method in item}
    assert routes == {
        ("/healthz", "get"),
        ("/readyz", "get"),
        ("/metrics", "get"),
        ("/v1/streams", "get"),
        ("/v1/streams/{stream_id}", "put"),
        ("/v1/streams/{stream_id}", "get"),
        ("/v1/streams/{stream_id}", "delete"),
        ("/v1/streams/{stream_id}/samples", "post"),
        ("/v1/streams/{stream_id}/decision", "get"),
        ("/v1/streams/{stream_id}/history", "get"),
        ("/v1/streams/{stream_id}/metric", "get"),
        ("/v1/streams/{stream_id}/what-if", "post"),
    }
    for path, method in routes:
        responses = document["paths"][path][method]["responses"]
        success = responses.get("200") or responses["201"]
        [(media, content)] = success["content"].items()
        if path != "/metrics":
            assert media == "application/json" and "$ref" in content["schema"], (path, method)
        for code, response in responses.items():
            if code.startswith("4") or code.startswith("5"):
                schema = response["content"]["application/json"]["schema"]
                # /readyz answers anyone: a reason code, not a Problem (service.readiness).
                body = "NotReady" if path == "/readyz" else "Problem"
                assert schema == {"$ref": f"#/components/schemas/{body}"}, (path, method, code)
    assert "HTTPValidationError" not in document["components"]["schemas"]
