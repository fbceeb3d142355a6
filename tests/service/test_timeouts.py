"""A stream held by another writer answers 503 with Retry-After within lock_timeout, and holds
up no other stream (issue 32, item 2)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.errors import StreamLocked
from service.models import Sample, StreamConfig
from service.settings import Settings
from service.storage import Storage
from service.streams import StreamService

RAW = {"filter": {"name": "raw"}, "policy": {"capacity": 50.0}}


def batch(t: float) -> dict[str, list[dict[str, float]]]:
    return {"samples": [{"t": t, "volume": 120.0}]}


def test_a_row_held_in_postgresql_is_503_and_other_streams_stay_fast(
    tmp_path: Path, postgres_url: str
) -> None:
    settings = Settings(data_dir=tmp_path, database_url=postgres_url, lock_timeout=0.5)
    with TestClient(create_app(settings)) as client, ThreadPoolExecutor(1) as pool:
        for stream in ("held", "free"):
            assert client.put(f"/v1/streams/{stream}", json=RAW).status_code == 201
        with psycopg.connect(postgres_url) as other:
            other.execute("SELECT 1 FROM streams WHERE id = 'held' FOR UPDATE")
            began = time.monotonic()
            waiting = pool.submit(client.post, "/v1/streams/held/samples", json=batch(0.0))
            answer = waiting.result(timeout=10.0)  # without a lock timeout: forever
            assert answer.status_code == 503, answer.text
            assert answer.headers["retry-after"] == "1"
            assert "lock timeout" in answer.json()["detail"]
            assert time.monotonic() - began < 5.0
            began = time.monotonic()
            assert client.post("/v1/streams/free/samples", json=batch(0.0)).status_code == 200
            assert client.get("/readyz").status_code == 200
            assert time.monotonic() - began < 1.0
        # Nothing of the refused batch was stored: sent again, it is applied, once.
        again = client.post("/v1/streams/held/samples", json=batch(0.0))
        assert again.status_code == 200 and again.json()["accepted"] == 1


def test_a_batch_waits_for_another_batch_of_its_stream_at_most_lock_timeout(
    tmp_path: Path,
) -> None:
    service = StreamService(
        Storage(tmp_path / "db"), retention=100, max_batch=100, lock_timeout=0.2
    )
    service.put("s", StreamConfig.model_validate(RAW))
    with service.lock("s"):  # a batch of the stream that does not finish
        began = time.monotonic()
        with pytest.raises(StreamLocked) as refused:
            service.post_samples("s", [Sample(t=0.0, volume=1.0)])
    assert 0.2 <= time.monotonic() - began < 2.0
    assert refused.value.status_code == 503 and refused.value.headers == {"Retry-After": "1"}
    assert service.post_samples("s", [Sample(t=0.0, volume=1.0)]).accepted == 1
