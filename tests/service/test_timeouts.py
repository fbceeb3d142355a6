"""A stream held by another writer answers 503 with Retry-After within lock_timeout, however
many batches wait for it, and holds up no other stream; a statement that runs longer than
statement_timeout answers the same (issue 32, item 2)."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
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

# Batches waiting at once for a held stream in the report.
WAITERS = 45


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
            _unavailable(answer, "lock timeout", began)
            began = time.monotonic()
            assert client.post("/v1/streams/free/samples", json=batch(0.0)).status_code == 200
            assert client.get("/readyz").status_code == 200
            assert time.monotonic() - began < 1.0
        _stored_nothing(client, "held", batch(0.0)["samples"])


def test_a_statement_longer_than_statement_timeout_is_503_and_stores_nothing(
    tmp_path: Path, postgres_url: str
) -> None:
    settings = Settings(data_dir=tmp_path, database_url=postgres_url, statement_timeout=0.3)
    with TestClient(create_app(settings)) as client:
        assert client.put("/v1/streams/slow", json=RAW).status_code == 201
        with psycopg.connect(postgres_url, autocommit=True) as other:
            # The batch's INSERT runs 10 s; no lock is waited for, so only statement_timeout
            # can cut it short.
            other.execute(
                "CREATE FUNCTION slowly() RETURNS trigger LANGUAGE plpgsql "
                "AS $$ BEGIN PERFORM pg_sleep(10); RETURN NULL; END $$"
            )
            other.execute(
                "CREATE TRIGGER slowly AFTER INSERT ON decisions "
                "FOR EACH STATEMENT EXECUTE FUNCTION slowly()"
            )
            began = time.monotonic()
            answer = client.post("/v1/streams/slow/samples", json=batch(0.0))
            _unavailable(answer, "statement timeout", began)
            assert "nothing was stored" in answer.json()["detail"]
            other.execute("DROP TRIGGER slowly ON decisions")
        _stored_nothing(client, "slow", batch(0.0)["samples"])


def test_45_batches_for_a_held_row_are_all_503_in_bounded_time_and_hold_up_no_other_stream(
    tmp_path: Path, postgres_url: str
) -> None:
    settings = Settings(data_dir=tmp_path, database_url=postgres_url, lock_timeout=0.5)
    with TestClient(create_app(settings)) as client, ThreadPoolExecutor(WAITERS) as pool:
        for stream in ("held", "free"):
            assert client.put(f"/v1/streams/{stream}", json=RAW).status_code == 201
        with psycopg.connect(postgres_url) as other:
            other.execute("SELECT 1 FROM streams WHERE id = 'held' FOR UPDATE")
            began = time.monotonic()
            waiting = [
                pool.submit(_timed, client.post, "/v1/streams/held/samples", json=batch(t))
                for t in range(WAITERS)
            ]
            while not _row_lock_waited_for(postgres_url):
                assert time.monotonic() - began < 5.0
                time.sleep(0.01)
            fast = time.monotonic()
            assert client.post("/v1/streams/free/samples", json=batch(0.0)).status_code == 200
            assert client.get("/readyz").status_code == 200
            assert time.monotonic() - fast < 1.0
            assert not all(answer.done() for answer in waiting)  # answered while they wait
            answers = [answer.result(timeout=10.0) for answer in waiting]
        for answer, seconds in answers:
            assert answer.status_code == 503, answer.text
            assert answer.headers["retry-after"] == "1"
            assert seconds < 5.0
        samples = [sample for t in range(WAITERS) for sample in batch(t)["samples"]]
        _stored_nothing(client, "held", samples)


def _stored_nothing(client: TestClient, stream: str, samples: list[dict[str, Any]]) -> None:
    """Nothing of the refused ``samples`` was stored: sent again, each is applied, once."""
    again = client.post(f"/v1/streams/{stream}/samples", json={"samples": samples})
    assert again.status_code == 200 and again.json()["accepted"] == len(samples), again.text


def _unavailable(answer: httpx.Response, why: str, began: float) -> None:
    """A 503 with Retry-After that says ``why``, answered within 5 s of ``began``."""
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"] == "1"
    assert why in answer.json()["detail"]
    assert time.monotonic() - began < 5.0


def _timed(
    send: Callable[..., httpx.Response], *args: Any, **kwargs: Any
) -> tuple[httpx.Response, float]:
    began = time.monotonic()
    answer = send(*args, **kwargs)
    return answer, time.monotonic() - began


def _row_lock_waited_for(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as db:
        row = db.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        ).fetchone()
    return row is not None and row[0] > 0


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
