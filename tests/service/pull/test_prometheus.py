"""One query, one number: what Prometheus' answers become (service.pull.prometheus)."""

from __future__ import annotations

import asyncio
from base64 import b64encode
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.pull.prometheus import Credentials, QueryFailed, query_value
from service.pull.settings import PullSettings
from tests.service.pull.fake import FakePrometheus, vector

BASE = "http://prometheus:9090"


def ask(answer: Any, query: str = "q", at: float = 1_700_000_015.0) -> float:
    fake = FakePrometheus({"q": lambda t: answer})

    async def run() -> float:
        async with fake.client() as client:
            return await query_value(client, BASE, query, at, timeout=2.0)

    return asyncio.run(run())


def failure(answer: Any, query: str = "q") -> QueryFailed:
    with pytest.raises(QueryFailed) as caught:
        ask(answer, query)
    return caught.value


def test_one_series_or_a_scalar_is_one_number() -> None:
    assert ask(vector(351.5)) == 351.5
    scalar = {"status": "success", "data": {"resultType": "scalar", "result": [0, "42"]}}
    assert ask(scalar) == 42.0


def test_the_query_is_asked_at_the_evaluation_time_with_a_timeout() -> None:
    fake = FakePrometheus({"sum(x)": lambda t: t})

    async def run() -> float:
        async with fake.client() as client:
            return await query_value(client, BASE, "sum(x)", 1_700_000_015.0, timeout=2.0)

    assert asyncio.run(run()) == 1_700_000_015.0
    params = fake.requests[0].url.params
    assert fake.requests[0].url.path == "/api/v1/query"
    assert (params["query"], params["time"], params["timeout"]) == (
        "sum(x)",
        "1700000015.000",
        "2s",
    )


def test_what_is_not_one_finite_number_fails_and_says_why() -> None:
    several = failure(vector(1, 2, 3, 4))
    assert several.kind == "shape" and "returned 4 series" in str(several)
    assert "aggregate" in str(several)
    string = {"status": "success", "data": {"resultType": "string", "result": [0, "a"]}}
    assert failure(string).kind == "shape" and "string" in str(failure(string))
    matrix = {"status": "success", "data": {"resultType": "matrix", "result": []}}
    assert failure(matrix).kind == "shape"
    assert failure(vector()).kind == "empty"
    assert failure(vector("NaN")).kind == "nan"
    assert failure(vector("+Inf")).kind == "nan"


def test_prometheus_refusals_carry_its_own_message_cut_short() -> None:
    refused = failure(None, query="rate(x[")
    assert refused.kind == "refused" and "parse error: rate(x[" in str(refused)
    long = {"status": "error", "errorType": "execution", "error": "e" * 5000}
    cut = failure(httpx.Response(422, json=long))
    assert cut.kind == "refused" and len(str(cut)) < 400 and str(cut).endswith("...")


def test_prometheus_down_or_overloaded_is_unavailable() -> None:
    assert failure(httpx.Response(503, text="<html>overloaded</html>")).kind == "unavailable"
    fake = FakePrometheus({"q": lambda t: 1.0})
    fake.down = True

    async def run() -> float:
        async with fake.client() as client:
            return await query_value(client, BASE, "q", 0.0, timeout=1.0)

    with pytest.raises(QueryFailed) as caught:
        asyncio.run(run())
    assert caught.value.kind == "unavailable" and "cannot be reached" in str(caught.value)


def test_credentials_are_read_from_their_files_at_every_request(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("first\n")
    fake = FakePrometheus({"q": lambda t: 1.0})
    auth = Credentials(PullSettings(prometheus_bearer_token_file=token))

    async def twice() -> None:
        async with fake.client(auth=auth) as client:
            await query_value(client, BASE, "q", 0.0, timeout=1.0)
            token.write_text("rotated")
            await query_value(client, BASE, "q", 0.0, timeout=1.0)

    asyncio.run(twice())
    assert [r.headers["authorization"] for r in fake.requests] == [
        "Bearer first",
        "Bearer rotated",
    ]
    password = tmp_path / "password"
    password.write_text("s3cret")
    basic = Credentials(
        PullSettings(prometheus_username="steadyscale", prometheus_password_file=password)
    )
    request = next(basic.auth_flow(httpx.Request("GET", BASE)))
    assert request.headers["authorization"] == "Basic " + b64encode(b"steadyscale:s3cret").decode()


def test_settings_refuse_what_cannot_work() -> None:
    with pytest.raises(ValueError, match="http:// or https://"):
        PullSettings(prometheus_url="prometheus:9090")
    with pytest.raises(ValueError, match="not allowed together"):
        PullSettings(prometheus_bearer_token_file="/t", prometheus_username="u")
    with pytest.raises(ValueError, match="go together"):
        PullSettings(prometheus_username="u")


def test_an_answer_too_large_to_be_one_number_is_not_read_whole() -> None:
    series = [{"metric": {"pod": f"p{i:06d}" * 10}, "value": [0, "1"]} for i in range(20_000)]
    huge = {"status": "success", "data": {"resultType": "vector", "result": series}}
    refused = failure(huge)
    assert refused.kind == "shape" and "larger than 1048576 bytes" in str(refused)


def test_a_slow_prometheus_is_a_timeout() -> None:
    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5)
        return httpx.Response(200, json=vector(1.0))

    async def run() -> float:
        transport = httpx.MockTransport(slow)
        async with httpx.AsyncClient(transport=transport) as client:
            return await query_value(client, BASE, "q", 0.0, timeout=0.2)

    with pytest.raises(QueryFailed) as caught:
        asyncio.run(run())
    assert caught.value.kind == "unavailable" and "within 0.2 s" in str(caught.value)
