"""What-if replays and batches within the work budget, a few replays at a time, stopped when
their client leaves (issue 32, item 1)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.budget import sample_seconds
from service.settings import Settings
from tests.service.test_server import Server

RAW = {"filter": {"name": "raw"}, "policy": {"capacity": 50.0}}
# About 64 ms of CPU per sample (service.budget estimates 72): 60 samples are seconds of work.
SLOW = {
    "filter": {"name": "tvd", "lam": 10.0, "method": "mm", "window": 50, "iterations": 1000},
    "policy": {"capacity": 50.0},
}


def raw_stream(client: TestClient | httpx.Client, count: int) -> None:
    assert client.put("/v1/streams/s", json=RAW).status_code == 201
    samples = [{"t": float(t), "volume": 100.0 + t % 7} for t in range(count)]
    assert client.post("/v1/streams/s/samples", json={"samples": samples}).status_code == 200


@pytest.fixture
def tight(tmp_path: Path) -> Iterator[TestClient]:
    """A service whose budget holds 400 samples of the raw filter."""
    budget = 400.5 * sample_seconds({"filter": RAW["filter"]})
    with TestClient(create_app(Settings(data_dir=tmp_path, work_budget=budget))) as client:
        yield client


def test_a_replay_over_the_budget_is_refused_up_front_naming_the_limit(tight: TestClient) -> None:
    raw_stream(tight, 400)
    assert tight.post("/v1/streams/s/what-if", json=RAW).status_code == 200
    one_more = {"samples": [{"t": 400.0, "volume": 1.0}]}
    assert tight.post("/v1/streams/s/samples", json=one_more).status_code == 200
    refused = tight.post("/v1/streams/s/what-if", json=RAW)
    assert refused.status_code == 422, refused.text
    [error] = refused.json()["errors"]
    assert error["field"] == "limit" and "at most 400 samples" in error["allowed"]
    assert "work_budget" in error["allowed"]
    assert tight.post("/v1/streams/s/what-if", params={"limit": 400}, json=RAW).status_code == 200


def test_a_batch_over_the_budget_is_413_and_stores_nothing(tight: TestClient) -> None:
    raw_stream(tight, 10)
    batch = [{"t": float(t), "volume": 1.0} for t in range(10, 411)]  # 401
    refused = tight.post("/v1/streams/s/samples", json={"samples": batch})
    assert refused.status_code == 413, refused.text
    [error] = refused.json()["errors"]
    assert error["field"] == "samples" and "at most 400 samples" in error["allowed"]
    assert tight.get("/v1/streams/s").json()["t"] == 9.0
    assert tight.post("/v1/streams/s/samples", json={"samples": batch[:400]}).status_code == 200


def test_a_configuration_too_costly_for_a_minute_of_samples_is_refused_at_put(
    tmp_path: Path,
) -> None:
    issue = {"name": "tvd", "method": "mm", "lam": 10, "window": 10000, "iterations": 1000}
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        refused = client.put("/v1/streams/s", json={"filter": issue, "policy": {"capacity": 50}})
        assert refused.status_code == 422
        [error] = refused.json()["errors"]
        assert error["field"] == "filter" and "60 samples within" in error["allowed"]
        assert client.get("/v1/streams/s").status_code == 404
        assert client.put("/v1/streams/s", json=SLOW).status_code == 201


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds the process has used (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / 100.0  # clock ticks, USER_HZ = 100


def test_replays_run_a_few_at_a_time_and_stop_when_their_client_leaves(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", env={"STEADYSCALE_MAX_REPLAYS": "1"})
    try:
        with httpx.Client(base_url=server.url, timeout=10.0) as client:
            raw_stream(client, 60)

            def give_up_after_a_second() -> None:
                with httpx.Client(base_url=server.url, timeout=1.0) as impatient:
                    with pytest.raises(httpx.ReadTimeout):
                        impatient.post("/v1/streams/s/what-if", json=SLOW)

            leaving = threading.Thread(target=give_up_after_a_second)
            leaving.start()
            time.sleep(0.5)
            busy = client.post("/v1/streams/s/what-if", json=SLOW)
            assert busy.status_code == 503 and busy.headers["retry-after"] == "1", busy.text
            assert "max_replays" in busy.json()["detail"]
            began = time.monotonic()
            assert client.get("/healthz").status_code == 200
            assert client.get("/v1/streams/s").status_code == 200
            assert time.monotonic() - began < 1.0
            leaving.join()
            # The replay (about 4 s of CPU) stops within DISCONNECT_POLL of the client leaving.
            time.sleep(0.5)
            before = cpu_seconds(server.process.pid)
            time.sleep(1.0)
            assert cpu_seconds(server.process.pid) - before < 0.3
            # Its slot is free again.
            assert client.post("/v1/streams/s/what-if", json=RAW).status_code == 200
    finally:
        server.stop()
