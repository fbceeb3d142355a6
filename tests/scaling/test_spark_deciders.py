"""The deciders without Spark: a steadyscale service in process (FastAPI's test client is an
httpx.Client) deciding for the listener, answers lost, refused and failed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from scaling.spark import InMemoryExecutors, RetryLater, ScalingListener, ServiceDecider
from service.app import create_app
from service.settings import Settings
from tests.scaling.spark_events import SPEC, START, progress, reference, volumes


@pytest.fixture
def service(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        yield client


def history(service: TestClient) -> list[dict[str, Any]]:
    answer = service.get("/v1/streams/orders/history", params={"limit": 100_000})
    return list(answer.json()["decisions"])


def test_remote_mode_creates_the_stream_and_decides_as_a_local_scaler(
    service: TestClient,
) -> None:
    decider = ServiceDecider("http://unused", "orders", spec=SPEC, operators=1, client=service)
    executors = InMemoryExecutors(current=1, max_executors=6)
    listener = ScalingListener(decider, executors)
    rates = volumes()
    for i, rate in enumerate(rates):
        listener.onQueryProgress(progress(START + i, rate))
    assert listener.wait_idle(30.0)
    listener.close()
    assert [d["operators"] for d in history(service)] == reference(rates)
    assert executors.current() == reference(rates)[-1]


def test_a_lost_answer_is_resent_and_never_applied_twice(service: TestClient) -> None:
    lost = {"count": 0}

    def forward(request: httpx.Request) -> httpx.Response:
        answer = service.request(
            request.method, request.url.path, content=request.content, headers=request.headers
        )
        if request.url.path.endswith("/samples") and lost["count"] < 2:
            lost["count"] += 1  # applied by the service, answer lost on the way back
            raise httpx.ReadTimeout("timed out", request=request)
        return httpx.Response(answer.status_code, content=answer.content)

    client = httpx.Client(base_url="http://steadyscale", transport=httpx.MockTransport(forward))
    decider = ServiceDecider("http://steadyscale", "orders", spec=SPEC, client=client)
    listener = ScalingListener(decider, InMemoryExecutors(max_executors=6))
    rates = volumes(30)
    for i, rate in enumerate(rates):
        listener.onQueryProgress(progress(START + i, rate))
        assert listener.wait_idle(5.0)
    listener.close()
    assert lost["count"] == 2 and len(listener.errors) == 2
    assert [d["operators"] for d in history(service)] == reference(rates)


def test_a_refusal_drops_the_samples_with_the_services_reason(service: TestClient) -> None:
    decider = ServiceDecider("http://unused", "missing", client=service)  # no spec to create it
    with pytest.raises(ValueError, match="refused the samples: .*missing"):
        decider.decide([(START, 10.0)])
    listener = ScalingListener(decider, InMemoryExecutors())
    listener.onQueryProgress(progress(START, 10.0))
    assert listener.wait_idle(5.0)
    listener.close()
    assert "1 samples dropped" in listener.errors[0] and listener.target is None


@pytest.mark.parametrize(
    "answer",
    [httpx.ConnectError("connection refused"), httpx.Response(503, text="storage down")],
)
def test_network_errors_and_5xx_ask_to_retry_later(answer: Any) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[no-any-return]

    client = httpx.Client(base_url="http://x", transport=httpx.MockTransport(handler))
    with pytest.raises(RetryLater):
        ServiceDecider("http://x", "orders", client=client).decide([(START, 1.0)])


def test_the_token_is_sent_as_a_bearer_header(tmp_path: Path) -> None:
    with TestClient(create_app(Settings(data_dir=tmp_path, tokens=["s3cret"]))) as client:
        decider = ServiceDecider("http://unused", "orders", "s3cret", spec=SPEC, client=client)
        assert decider.decide([(START, 250.0)]) == 3
        assert client.get("/v1/streams/orders").status_code == 200
