"""Issue 14, item by item, through the app in process: bad input is a bounded 4xx that names
the field and changes nothing, never a 500; a stream is never broken or silently reset.

The items about the server process itself (header timeout, another SQLite writer, a full disk,
start-up) are in ``test_server.py``.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from filters import available_filters
from filters.raw import Raw
from scaling import Scaler
from service.app import create_app
from service.bounds import MAX_VOLUME
from service.errors import UnfollowableSample
from service.models import MAX_ERRORS, Sample, StreamConfig
from service.settings import Settings
from service.storage import Storage
from service.streams import INLINE_SECONDS, StreamService

TVD = {"filter": {"name": "tvd"}, "policy": {"capacity": 50, "max_operators": 10}}
JSON = {"content-type": "application/json"}
STREAM = "/v1/streams/s"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(data_dir=tmp_path / "data"))) as client:
        assert client.put(STREAM, json=TVD).status_code == 201
        yield client


def samples(start: int, count: int, volume: float = 300.0) -> list[dict[str, float]]:
    return [{"t": float(start + i), "volume": volume + 7.0 * (i % 3)} for i in range(count)]


def post(client: TestClient, batch: list[dict[str, Any]], path: str = STREAM) -> Any:
    return client.post(f"{path}/samples", json={"samples": batch})


def refused(response: Any, status: int, field: str) -> dict[str, Any]:
    """The Problem of ``response``: ``status``, under 64 KB, naming ``field`` with its value
    and what is allowed."""
    assert response.status_code == status, response.text
    assert len(response.content) < 64 * 1024
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["detail"]
    [error, *_] = body["errors"]
    assert error["field"] == field, body
    assert error["allowed"] and error["message"]
    return body


def state(client: TestClient, path: str = STREAM) -> tuple[Any, Any]:
    history = client.get(f"{path}/history", params={"limit": 100_000}).json()
    return client.get(path).json(), history


# 1-5: accepted input that broke a stream or answered 500


@pytest.mark.parametrize("volume", [1e155, 1.0000001e12, 1e308])
def test_1_a_huge_volume_is_refused_and_the_stream_keeps_working(
    client: TestClient, tmp_path: Path, volume: float
) -> None:
    assert post(client, samples(0, 1)).status_code == 200
    before = state(client)
    bad = [{"t": 1.0, "volume": 100.0}, {"t": 2.0, "volume": volume}]
    body = refused(post(client, bad), 422, "samples[1].volume")
    assert body["errors"][0]["value"] == volume
    assert state(client) == before
    assert post(client, samples(1, 5)).status_code == 200
    # ... also after a restart: nothing unloadable was stored.
    with TestClient(create_app(Settings(data_dir=tmp_path / "data"))) as again:
        assert post(again, samples(6, 5)).status_code == 200


def test_1_the_largest_volume_is_followed_by_every_filter(client: TestClient) -> None:
    for name in available_filters():
        path = f"/v1/streams/{name}"
        config = {"filter": {"name": name}, "policy": {"capacity": 0.001}}
        assert client.put(path, json=config).status_code == 201
        extreme = [{"t": float(t), "volume": MAX_VOLUME * (t % 2)} for t in range(40)]
        assert post(client, extreme, path).status_code == 200, name
        assert post(client, samples(40, 3), path).status_code == 200, name


def test_1_a_sample_the_scaler_cannot_follow_is_refused_before_anything_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Scaler advances its filter before its policy refuses a non-finite value; the
    service must neither store that state nor keep the advanced Scaler."""
    service = StreamService(Storage(tmp_path / "db"), retention=100, max_batch=100)
    raw = StreamConfig.model_validate({"filter": {"name": "raw"}, "policy": {"capacity": 50}})
    service.put("s", raw)
    batch = [Sample(t=float(t), volume=100.0 + t) for t in range(6)]
    service.post_samples("s", batch[:2])
    stored = service.storage.load("s")
    update = Raw._update
    monkeypatch.setattr(Raw, "_update", lambda self, x: float("inf") if x == 777.0 else x)
    poisoned = [batch[2], Sample(t=3.0, volume=777.0)]
    with pytest.raises(UnfollowableSample) as error:
        service.post_samples("s", poisoned)
    assert error.value.errors[0].field == "samples[1].volume"
    assert service.storage.load("s") == stored
    monkeypatch.setattr(Raw, "_update", update)
    service.post_samples("s", batch[2:])
    scaler = Scaler.from_spec({"filter": {"name": "raw"}, "policy": {"capacity": 50.0}})
    expected = [scaler.observe(s.volume, s.t) for s in batch]
    assert service.history("s", None, 100) == expected


def test_2_a_400_digit_volume_is_a_422_with_the_value_cut_short(client: TestClient) -> None:
    body = '{"samples": [{"t": 1, "volume": 1' + "0" * 400 + "}]}"
    error = refused(
        client.post(f"{STREAM}/samples", content=body, headers=JSON), 422, "samples[0].volume"
    )
    assert len(json.dumps(error["errors"][0]["value"])) < 300


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"operators": 10**30}, "operators"),
        ({"policy": {"capacity": 50, "min_operators": 10**30}}, "policy.min_operators"),
        ({"policy": {"capacity": 50, "max_operators": 10**30}}, "policy.max_operators"),
        ({"policy": {"capacity": 1e-300}}, "policy.capacity"),
        ({"policy": {"capacity": 1e300}}, "policy.capacity"),
        # Over the filter's own bound on its window (filters.base.MAX_WINDOW).
        ({"filter": {"name": "moving_average", "w": 10**400}}, "filter.w"),
    ],
)
def test_3_counts_and_capacities_out_of_bounds_are_422(
    client: TestClient, change: dict[str, Any], field: str
) -> None:
    before = state(client)
    refused(client.put(STREAM, json={**TVD, **change}), 422, field)
    assert state(client) == before


def test_3_the_smallest_capacity_with_the_largest_volume_is_decided(client: TestClient) -> None:
    config = {"filter": {"name": "raw"}, "policy": {"capacity": 0.001}}
    assert client.put("/v1/streams/tiny", json=config).status_code == 201
    answer = post(client, [{"t": 1.0, "volume": MAX_VOLUME}], "/v1/streams/tiny")
    assert answer.status_code == 200 and answer.json()["operators"] == 10**15
    refused(
        post(client, [{"t": 2.0, "volume": 1e30}], "/v1/streams/tiny"), 422, "samples[0].volume"
    )


@pytest.mark.parametrize("name", ["moving_average", "ekf", "tvd"])
def test_4_volumes_whose_sum_overflows_are_refused(client: TestClient, name: str) -> None:
    path = f"/v1/streams/{name}"
    client.put(path, json={"filter": {"name": name}, "policy": {"capacity": 50}})
    refused(
        post(client, [{"t": 1.0, "volume": 1e308}, {"t": 2.0, "volume": 1e308}], path),
        422,
        "samples[0].volume",
    )
    assert post(client, samples(3, 3), path).status_code == 200


def test_5_an_integral_float_window_works(client: TestClient) -> None:
    config = {"filter": {"name": "tvd", "lam": 1, "method": "mm", "window": 5.0}, **TVD}
    config["filter"] = {"name": "tvd", "lam": 1, "method": "mm", "window": 5.0}
    assert client.put("/v1/streams/mm", json=config).status_code == 201
    assert post(client, samples(0, 8), "/v1/streams/mm").status_code == 200


# 6-12: stalls and unbounded growth


def test_6_made_up_methods_do_not_grow_the_metrics(client: TestClient) -> None:
    for index in range(5):
        client.request(f"X{index}", "/healthz")
        client.request(f"Y{index}", f"/nowhere/{index}")
    size = len(client.get("/metrics").content)
    for index in range(5, 200):
        client.request(f"X{index}", f"/nowhere/{index}")
        client.request(f"Y{index}", "/healthz")
    text = client.get("/metrics").text
    assert 'method="other"' in text and "X199" not in text
    # Counts change, label sets do not: the same lines as before, give or take a few digits.
    assert len(client.get("/metrics").content) < size + 2_000


def test_7_a_body_above_the_limit_is_refused_before_it_is_read(client: TestClient) -> None:
    body = b'{"samples": [' + b'{"t": "x", "volume": -1},' * 400_000 + b"{}]}"
    refused(client.post(f"{STREAM}/samples", content=body, headers=JSON), 413, "body")

    def chunks() -> Iterator[bytes]:
        yield b'{"samples": ['
        for _ in range(100):
            yield b'{"t": 1, "volume": 1},' * 1000

    refused(client.post(f"{STREAM}/samples", content=chunks(), headers=JSON), 413, "body")


def test_7_a_large_body_of_bad_samples_gets_a_small_answer(client: TestClient) -> None:
    before = state(client)
    bad = json.dumps({"samples": [{"t": "x", "volume": -1}] * 20_000})
    assert len(bad) > 500_000
    body = refused(client.post(f"{STREAM}/samples", content=bad, headers=JSON), 422, "samples[0].t")
    assert len(body["errors"]) <= MAX_ERRORS
    huge = json.dumps(
        {"filter": {"name": "tvd", "lam": ["x" * 100] * 5000}, "policy": {"capacity": 50}}
    )
    body = refused(client.put(STREAM, content=huge, headers=JSON), 422, "filter.lam")
    assert len(json.dumps(body["errors"][0]["value"])) < 300
    assert state(client) == before


def test_8_unbounded_mm_solves_are_refused(client: TestClient) -> None:
    mm = {"name": "tvd", "lam": 1, "method": "mm"}
    for changes, field in [
        ({"iterations": 100_000, "window": 50}, "filter.iterations"),
        ({"window": 10**6}, "filter.window"),
        ({}, "filter.window"),
    ]:
        refused(client.put("/v1/streams/mm", json={**TVD, "filter": {**mm, **changes}}), 422, field)


def test_8_a_slow_filter_never_runs_on_the_event_loop(tmp_path: Path) -> None:
    service = StreamService(Storage(tmp_path / "db"), retention=100, max_batch=100, inline_batch=8)
    # Every update solves over up to 50 samples with 1,000 iterations: about 20 ms.
    slow = {"name": "tvd", "lam": 1.0, "method": "mm", "window": 50, "iterations": 1000}
    service.put("mm", StreamConfig.model_validate({"filter": slow, "policy": {"capacity": 50}}))
    service.put(
        "raw", StreamConfig.model_validate({"filter": {"name": "raw"}, "policy": {"capacity": 50}})
    )
    threads: dict[str, set[str]] = {"mm": set(), "raw": set()}
    original = StreamService._apply

    def spy(self: StreamService, stream_id: str, batch: Any, *args: Any) -> Any:
        threads[stream_id].add(threading.current_thread().name)
        return original(self, stream_id, batch, *args)

    async def main() -> str:
        first = [Sample(t=float(t), volume=10.0 + t) for t in range(5)]
        for stream_id in ("mm", "raw"):
            await service.post_samples_async(stream_id, first)
        for t in range(5, 10):
            for stream_id in ("mm", "raw"):
                await service.post_samples_async(stream_id, [Sample(t=float(t), volume=10.0 + t)])
        return threading.current_thread().name

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(StreamService, "_apply", spy)
        loop_thread = asyncio.run(main())
    assert loop_thread not in threads["mm"]
    assert loop_thread in threads["raw"]  # cheap, cached streams stay on the loop
    assert (
        (entry := service.scalers.peek("mm")) is not None
        and entry.cost is not None
        and entry.cost > INLINE_SECONDS
    )


def test_10_per_stream_series_are_bounded_and_the_list_is_paged(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, stream_metrics=5)
    raw = {"filter": {"name": "raw"}, "policy": {"capacity": 50}}
    with TestClient(create_app(settings)) as client:
        for index in range(12):
            client.put(f"/v1/streams/s{index:02d}", json=raw)
            post(client, samples(0, 1), f"/v1/streams/s{index:02d}")
        text = client.get("/metrics").text
        assert (
            len(
                {
                    line.split('stream="')[1].split('"')[0]
                    for line in text.splitlines()
                    if 'stream="' in line
                }
            )
            == 5
        )
        assert "steadyscale_streams_untracked 7.0" in text
        pages, after = [], None
        while True:
            params: dict[str, Any] = {"limit": 5, **({"after": after} if after else {})}
            page = client.get("/v1/streams", params=params).json()
            pages.append([stream["id"] for stream in page["streams"]])
            after = page["next_after"]
            if after is None:
                break
        assert [len(page) for page in pages] == [5, 5, 2]
        assert sum(pages, []) == [f"s{index:02d}" for index in range(12)]
        assert len(client.get("/v1/streams").json()["streams"]) == 12  # default page: 100
        refused(client.get("/v1/streams", params={"limit": 1001}), 422, "limit")
    # Restarted: the first streams by id keep their series.
    with TestClient(create_app(settings)) as client:
        assert "steadyscale_streams_untracked 7.0" in client.get("/metrics").text


def test_12_the_scaler_cache_keeps_only_the_streams_used_last(tmp_path: Path) -> None:
    service = StreamService(Storage(tmp_path / "db"), retention=100, max_batch=100, cache_size=3)
    raw = StreamConfig.model_validate({"filter": {"name": "tvd"}, "policy": {"capacity": 50}})
    batches = [
        [Sample(t=float(t), volume=200.0 + 40 * (t % 5)) for t in range(k, k + 4)]
        for k in (0, 4, 8)
    ]
    for batch in batches:
        for index in range(10):
            service.put(f"s{index}", raw) if batch is batches[0] else None
            service.post_samples(f"s{index}", batch)
            assert len(service.scalers) <= 3
    scaler = Scaler.from_spec({"filter": {"name": "tvd"}, "policy": {"capacity": 50.0}})
    expected = [scaler.observe(s.volume, s.t) for batch in batches for s in batch]
    assert all(service.history(f"s{index}", None, 100) == expected for index in range(10))


# 14-17: operations


def test_14_blank_tokens_are_refused_not_ignored() -> None:
    for blank in (" , ", ",", '[" "]'):
        with pytest.raises(ValidationError, match="holds no token"):
            Settings(tokens=blank)
    assert Settings(tokens="").tokens == [] and Settings(tokens=" a, ,b ").tokens == ["a", "b"]


def test_15_retention_below_max_batch_is_refused() -> None:
    with pytest.raises(ValidationError, match="retention must be >= max_batch"):
        Settings(retention=100, max_batch=150)
    assert Settings(retention=150, max_batch=150).retention == 150


def test_15_a_resent_full_batch_is_acknowledged(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, retention=150, max_batch=150)
    with TestClient(create_app(settings)) as client:
        client.put(STREAM, json=TVD)
        batch = samples(0, 150)
        assert post(client, batch).json()["accepted"] == 150
        again = post(client, batch)
        assert again.status_code == 200 and again.json()["duplicates"] == 150


def test_16_the_data_is_private(tmp_path: Path) -> None:
    data = tmp_path / "fresh" / "data"
    with TestClient(create_app(Settings(data_dir=data))) as client:
        client.put(STREAM, json=TVD)
        post(client, samples(0, 3))
        files = list(data.iterdir())
        assert {path.name for path in files} >= {"steadyscale.db", "steadyscale.db-wal"}
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in files), files


def test_17_an_unusable_data_dir_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OSError, match=str(blocker)):
        create_app(Settings(data_dir=blocker))
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(OSError, match=str(locked)):
            create_app(Settings(data_dir=locked))


# 18-25: contract


@pytest.mark.parametrize(
    ("body", "headers", "status", "field", "reason"),
    [
        (b'{"samples": [\xff]}', JSON, 400, "body", "not UTF-8"),
        (gzip.compress(b'{"samples": []}'), JSON, 400, "body", "not UTF-8"),
        (
            gzip.compress(b'{"samples": []}'),
            {**JSON, "content-encoding": "gzip"},
            415,
            "Content-Encoding",
            "gzip",
        ),
        (b"[" * 100_000 + b"]" * 100_000, JSON, 400, "body", "nested"),
        (b'{"samples": ' + b"[" * 40 + b"]" * 40 + b"}", JSON, 400, "body", "nested"),
        (b'{"samples": [', JSON, 400, "body", "Expecting value"),
    ],
)
def test_18_a_body_that_is_not_json_is_named(
    client: TestClient, body: bytes, headers: dict[str, str], status: int, field: str, reason: str
) -> None:
    before = state(client)
    problem = refused(
        client.post(f"{STREAM}/samples", content=body, headers=headers), status, field
    )
    assert reason in problem["detail"]
    assert state(client) == before


def test_18_19_the_openapi_document_states_the_errors_constraints_security_and_links(
    client: TestClient,
) -> None:
    document = client.get("/openapi.json").json()
    paths, schemas = document["paths"], document["components"]["schemas"]
    for operation in (
        paths["/v1/streams/{stream_id}"]["put"],
        paths["/v1/streams/{stream_id}/samples"]["post"],
    ):
        assert {"400", "413", "415", "422", "503"} <= set(operation["responses"])
    volume = schemas["Sample"]["properties"]["volume"]
    assert (volume["minimum"], volume["maximum"]) == (0.0, MAX_VOLUME)
    assert schemas["PolicySpec"]["properties"]["capacity"]["minimum"] > 0
    for count in ("min_operators", "max_operators"):
        assert "0" in json.dumps(schemas["PolicySpec"]["properties"][count])
    assert schemas["StreamConfig"]["properties"]["operators"]["minimum"] == 0
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    links = paths["/v1/streams/{stream_id}"]["put"]["responses"]["201"]["links"]
    assert links["PostSamples"]["operationId"] == "post_samples"
    assert (
        "GetDecision"
        in paths["/v1/streams/{stream_id}/samples"]["post"]["responses"]["200"]["links"]
    )
    # The example configuration is accepted as it is (it once held a filter used for guards).
    [example] = schemas["StreamConfig"]["examples"]
    assert client.put("/v1/streams/example", json=example).status_code == 201
    assert "examples" not in schemas["GuardSpec"]
    guard_name = schemas["GuardSpec"]["properties"]["name"]
    assert "cooldown" in guard_name["enum"] and "tvd" not in guard_name["enum"]
    assert "tvd" in schemas["FilterSpec"]["properties"]["name"]["enum"]


@pytest.mark.parametrize("method", ["OPTIONS", "PATCH", "POST"])
def test_20_405_lists_every_method_of_the_path(client: TestClient, method: str) -> None:
    response = client.request(method, STREAM)
    refused(response, 405, "method")
    assert response.headers["allow"] == "DELETE, GET, PUT"


def test_21_duplicate_keys_are_refused(client: TestClient) -> None:
    body = '{"samples": [{"t": 1, "volume": 5, "volume": 7}]}'
    problem = refused(client.post(f"{STREAM}/samples", content=body, headers=JSON), 400, "body")
    assert "'volume' appears twice" in problem["detail"]


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_22_a_body_that_is_not_declared_json_is_415(
    client: TestClient, content_type: str | None
) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    body = json.dumps({"samples": samples(0, 1)})
    problem = refused(
        client.post(f"{STREAM}/samples", content=body, headers=headers), 415, "Content-Type"
    )
    assert "application/json" in problem["detail"] and "b'" not in problem["detail"]


def test_23_integral_floats_count_as_integers_everywhere(client: TestClient) -> None:
    config = {
        "filter": {"name": "moving_average", "w": 3.0},
        "policy": {"capacity": 50, "min_operators": 1.0, "max_operators": 4.0},
        "operators": 2.0,
    }
    created = client.put("/v1/streams/floats", json=config).json()["config"]
    assert (created["policy"]["min_operators"], created["operators"]) == (1, 2)
    assert isinstance(created["policy"]["min_operators"], int)
    for field, change in [
        ("policy.min_operators", {"policy": {"capacity": 50, "min_operators": 1.5}}),
        ("filter.w", {"filter": {"name": "moving_average", "w": 3.5}}),
        ("operators", {"operators": 2.5}),
    ]:
        refused(
            client.put("/v1/streams/floats", json={**config, **change}, params={"reset": "true"}),
            422,
            field,
        )


# httpx removes the dot segments "." and ".." from paths; encoded, they reach the service.
@pytest.mark.parametrize("stream_id", ["%2E", "%2E%2E", ".hidden"])
def test_24_dot_ids_are_refused(client: TestClient, stream_id: str) -> None:
    refused(client.put(f"/v1/streams/{stream_id}", json=TVD), 422, "stream_id")


def test_24_a_trailing_slash_is_not_redirected(client: TestClient) -> None:
    response = client.put("/v1/streams/", json=TVD, follow_redirects=False)
    assert response.status_code == 404


def test_25_head_on_the_probes(client: TestClient) -> None:
    assert client.head("/healthz").status_code == 200
    assert client.head("/readyz").status_code == 200


# 26: a PUT never resets a stream silently


def test_26_an_identical_put_changes_nothing(client: TestClient) -> None:
    batch = samples(0, 20)
    post(client, batch)
    before = state(client)
    again = client.put(STREAM, json=TVD)
    assert again.status_code == 200 and again.json() == before[0]
    assert state(client) == before
    resent = post(client, batch).json()
    assert (resent["accepted"], resent["duplicates"]) == (0, 20)


def test_26_another_configuration_needs_reset(client: TestClient) -> None:
    post(client, samples(0, 20))
    before = state(client)
    other = {**TVD, "operators": 3}
    problem = refused(client.put(STREAM, json=other), 409, "reset")
    assert "reset=true" in problem["detail"]
    assert state(client) == before
    replaced = client.put(STREAM, json=other, params={"reset": "true"})
    assert replaced.status_code == 200 and (replaced.json()["t"], replaced.json()["operators"]) == (
        None,
        3,
    )
    assert client.get(f"{STREAM}/history").json()["decisions"] == []
