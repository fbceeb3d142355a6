"""``service.fastpath``: sample batches answered byte for byte as FastAPI's route answers them.

Two apps, one with the fast path (the default) and one without, each on its own database, get
the same requests in the same order; every answer (status, the headers a client reads, body)
and the request metrics must be equal. The cases cover every refusal the route gives (413,
415, 400, 422 on the path, the body and both, 404, 409), duplicates, and what the fast path
must leave to the router (other methods, other paths); a property test adds random bodies.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from service.app import create_app
from service.body import parse_json
from service.fastpath import _BATCH, _plain_batch
from service.models import SampleBatch
from service.settings import Settings

CONFIG = {"filter": {"name": "tvd"}, "policy": {"capacity": 50.0}, "operators": 2}
JSON = {"content-type": "application/json"}
PATH = "/v1/streams/s/samples"
HEADERS = ("content-type", "allow", "retry-after", "www-authenticate")


@pytest.fixture
def apps(tmp_path: Path) -> Iterator[tuple[TestClient, TestClient]]:
    def app(name: str, fast: bool) -> TestClient:
        settings = Settings(data_dir=tmp_path / name, max_body_bytes=16_384)
        return TestClient(create_app(settings, fast_path=fast), raise_server_exceptions=False)

    with app("fast", True) as fast, app("routed", False) as routed:
        for client in (fast, routed):
            assert client.put("/v1/streams/s", json=CONFIG).status_code == 201
        yield fast, routed


def same(
    apps: tuple[TestClient, TestClient], method: str, path: str, body: bytes, headers: dict
) -> Any:
    """Send to both; assert the answers are equal; return the fast path's."""
    answers = [client.request(method, path, content=body, headers=headers) for client in apps]
    fast, routed = answers
    assert fast.status_code == routed.status_code, (fast.text, routed.text)
    assert fast.content == routed.content
    for header in HEADERS:
        assert fast.headers.get(header) == routed.headers.get(header), header
    return fast


def samples(*times: float, volume: float = 120.0) -> bytes:
    return json.dumps({"samples": [{"t": t, "volume": volume} for t in times]}).encode()


CASES: list[tuple[str, str, bytes, dict[str, str], int]] = [
    ("POST", "/v1/streams/s/samples", samples(1.0), JSON, 200),
    ("POST", "/v1/streams/s/samples", samples(2.0, 3.0, 4.0), JSON, 200),
    ("POST", "/v1/streams/s/samples", samples(2.0, 3.0, 4.0), JSON, 200),  # duplicates
    ("POST", "/v1/streams/s/samples", samples(3.0, volume=7.0), JSON, 409),
    ("POST", "/v1/streams/s/samples", samples(6.0, 5.0), JSON, 409),
    ("POST", "/v1/streams/s/samples?x=1", samples(5.0), JSON, 200),
    ("POST", "/v1/streams/none/samples", samples(1.0), JSON, 404),
    ("POST", "/v1/streams/.dot/samples", samples(9.0), JSON, 422),
    ("POST", "/v1/streams/" + "a" * 129 + "/samples", samples(9.0), JSON, 422),
    ("POST", "/v1/streams/a%20b/samples", samples(9.0), JSON, 422),
    ("POST", "/v1/streams/%C3%BC/samples", b'{"samples": [{"t": "x"}]}', JSON, 422),
    ("POST", "/v1/streams/s/samples", b"", JSON, 422),
    ("POST", "/v1/streams/s/samples", b"", {}, 422),
    ("POST", "/v1/streams/s/samples", b"null", JSON, 422),
    ("POST", "/v1/streams/s/samples", b"[]", JSON, 422),
    ("POST", "/v1/streams/s/samples", b"{}", JSON, 422),
    ("POST", "/v1/streams/s/samples", b'{"samples": 1}', JSON, 422),
    ("POST", "/v1/streams/s/samples", b'{"samples": [{"t": 1e400, "volume": 1}]}', JSON, 422),
    ("POST", "/v1/streams/s/samples", b'{"samples": [{"t": 10, "volume": -1}]}', JSON, 422),
    ("POST", "/v1/streams/s/samples", b'{"samples": [{"t": 10, "volume": 1, "x": 1}]}', JSON, 422),
    ("POST", "/v1/streams/s/samples", b'{"samples": [{"t": 10, "volume": true}]}', JSON, 422),
    ("POST", "/v1/streams/s/samples", b'{"samples": [{"t": NaN, "volume": 1}]}', JSON, 422),
    ("POST", "/v1/streams/s/samples", b'{"samples": [], "samples": []}', JSON, 400),
    ("POST", "/v1/streams/s/samples", b"[" * 40 + b"]" * 40, JSON, 400),
    ("POST", "/v1/streams/s/samples", b"\xff{}", JSON, 400),
    ("POST", "/v1/streams/s/samples", b"{", JSON, 400),
    ("POST", "/v1/streams/s/samples", samples(11.0), {}, 415),
    ("POST", "/v1/streams/s/samples", samples(11.0), {"content-type": "text/plain"}, 415),
    (
        "POST",
        "/v1/streams/s/samples",
        samples(11.0),
        {**JSON, "content-encoding": "gzip"},
        415,
    ),
    ("POST", "/v1/streams/s/samples", samples(11.0), {"content-type": "Application/JSON"}, 200),
    ("POST", "/v1/streams/s/samples", b" " * 20_000, JSON, 413),
    ("POST", "/v1/streams/s/samples", b'{"samples": [{"t": ' + b"1" * 5000 + b"}]}", JSON, 400),
    ("POST", "/v1/streams/.bad/samples", b'{"samples": [{"t": 1}]}', JSON, 422),
    ("GET", "/v1/streams/s/samples", b"", {}, 405),
    ("PUT", "/v1/streams/s/samples", samples(1.0), JSON, 405),
    ("POST", "/v1/streams//samples", samples(1.0), JSON, 404),
    ("POST", "/v1/streams/s/samples/", samples(1.0), JSON, 404),
    ("POST", "/v1/streams/a/b/samples", samples(1.0), JSON, 404),
    ("POST", "/v1/streams/s/samples", samples(12.0, 13.0), JSON, 200),
    # Bodies pydantic-core would take in one pass (_plain_batch) but parse_json refuses.
    ("POST", PATH, b'{"samples": [{"t": 20, "t": 21, "volume": 1}]}', JSON, 400),
    ("POST", PATH, b'{"samples": [{"t": 20, "\\u0074": 21, "volume": 1}]}', JSON, 400),
    ("POST", PATH, b'{"samples": [{"t": 20, "volume": 1, "volume": 1}]}', JSON, 400),
    ("POST", PATH, b"\xef\xbb\xbf" + samples(20.0), JSON, 400),
    ("POST", PATH, samples(20.0) + b"\x00", JSON, 400),
    # ... and ones both take.
    ("POST", PATH, b'{"\\u0073amples": [{"\\u0074": 20, "volume": 1}]}', JSON, 200),
    ("POST", PATH, b'\t{"samples":[{"t":21,"volume":1E2,"running":null}]}\n', JSON, 200),
    ("POST", PATH, b'{"samples": [{"t": 22, "volume": -0, "running": 3.0}]}', JSON, 200),
]


def test_every_case_answers_as_the_route_does(apps: tuple[TestClient, TestClient]) -> None:
    for method, path, body, headers, status in CASES:
        answer = same(apps, method, path, body, headers)
        assert answer.status_code == status, (method, path, body[:60], answer.text)


def test_the_request_metrics_name_the_route(apps: tuple[TestClient, TestClient]) -> None:
    for method, path, body, headers, _ in CASES[:8]:
        same(apps, method, path, body, headers)
    counted = []
    for client in apps:
        text = client.get("/metrics").text
        counted.append(
            sorted(
                line
                for line in text.splitlines()
                if line.startswith("steadyscale_http_requests_total")
            )
        )
    assert counted[0] == counted[1]
    assert any('route="/v1/streams/{stream_id}/samples"' in line for line in counted[0])


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
)
_SAMPLE = st.dictionaries(
    st.sampled_from(["t", "volume", "backlog", "running", "processed", "other"]), _VALUES
)
_BODY = st.one_of(
    st.fixed_dictionaries({"samples": st.lists(_SAMPLE, max_size=4)}),
    st.dictionaries(st.sampled_from(["samples", "x"]), _VALUES),
    _VALUES,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=_BODY, stream=st.sampled_from(["s", "none", "-x", ".x", "s" * 130]))
def test_random_bodies_answer_as_the_route_does(
    apps: tuple[TestClient, TestClient], body: Any, stream: str
) -> None:
    same(apps, "POST", f"/v1/streams/{stream}/samples", json.dumps(body).encode(), JSON)


def test_the_app_answers_batches_on_the_fast_path_by_default(tmp_path: Path) -> None:
    from service.fastpath import SamplesFastPath

    def layers(fast: bool) -> list[type]:
        app = create_app(Settings(data_dir=tmp_path), fast_path=fast)
        return [middleware.cls for middleware in app.user_middleware]

    assert SamplesFastPath in layers(True)
    assert SamplesFastPath not in layers(False)
    assert SamplesFastPath in [
        m.cls for m in create_app(Settings(data_dir=tmp_path)).user_middleware
    ]


@pytest.mark.parametrize("root", ["/x", "/v1"])
def test_a_root_path_is_matched_as_the_router_matches_it(tmp_path: Path, root: str) -> None:
    clients = []
    for fast in (True, False):
        app = create_app(Settings(data_dir=tmp_path / str(fast)), fast_path=fast)
        clients.append(TestClient(app, root_path=root))
    with clients[0] as fast, clients[1] as routed:
        pair = (fast, routed)
        for client in pair:
            client.put("/v1/streams/s", json=CONFIG)
        for path in (
            "/v1/streams/s/samples",
            f"{root}/v1/streams/s/samples",
            f"{root}/streams/s/samples",
        ):
            same(pair, "POST", path, samples(1.0), JSON)


# JSON numbers: integers and decimals of up to 25 digits each side, with or without exponent.
_NUMBER = st.from_regex(
    r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,25})?([eE][+-]?[0-9]{1,3})?", fullmatch=True
)


@settings(max_examples=400, deadline=None)
@given(numbers=st.lists(_NUMBER, min_size=1, max_size=5))
def test_a_batch_parsed_in_one_pass_holds_the_doubles_json_reads(numbers: list[str]) -> None:
    """``_plain_batch`` gives the samples ``parse_json`` and validation give, to the bit (the
    decisions depend on them), and nothing where they refuse the body."""
    members = ", ".join(
        f'{{"t": {k}, "volume": {number}, "backlog": {number}}}' for k, number in enumerate(numbers)
    )
    body = f'{{"samples": [{members}]}}'.encode()
    plain = _plain_batch(body)
    try:
        strict = _BATCH.validate_python(parse_json(body), from_attributes=True)
    except ValidationError:
        assert plain is None
        return
    assert plain is not None

    def bits(batch: SampleBatch) -> list[tuple[str, ...]]:
        return [(s.t.hex(), s.volume.hex(), float(s.backlog or 0).hex()) for s in batch.samples]

    assert bits(plain) == bits(strict)
