"""Bad input against the service (``benchmarks.service --only attack,bodies``; issue 14).

``attack``: about 140 hand-made bad requests (bodies, values, ids, methods, headers) against a
server with one stream. Target: no 5xx; every 4xx body names the field, the value (cut short)
and what is allowed, is under 64 KB, and leaves the stream as it was; RSS growth per request.

``bodies``: 16 MiB bodies, declared and chunked, and the largest allowed bodies. Targets: a
16 MiB body refused within 1 s; RSS growth under 100 MB for any single request.

    .venv/bin/python -m benchmarks.service --only attack,bodies
"""

from __future__ import annotations

import gzip
import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from benchmarks.served import JSON, STREAM, Served


@dataclass
class Bad:
    """One hand-made bad request."""

    label: str
    method: str
    path: str
    body: bytes | None = None
    headers: dict[str, str] | None = None


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def bad_requests() -> list[Bad]:
    """The hand-made bad requests: each sample field, policy field and filter or guard
    parameter with values of every wrong kind, ids, bodies that are not JSON, methods."""
    stream = "/v1/streams/s"
    samples = f"{stream}/samples"
    wrong: list[tuple[str, bytes]] = [
        ("NaN", b"NaN"), ("Infinity", b"Infinity"), ("-Infinity", b"-Infinity"),
        ("negative", b"-1"), ("1e155", b"1e155"), ("1e308", b"1e308"), ("1e999", b"1e999"),
        ("400 digits", b"1" + b"0" * 400), ("string", b'"12"'), ("true", b"true"),
        ("null", b"null"), ("list", b"[1]"), ("object", b'{"v": 1}'),
        ("long string", b'"' + b"x" * 100_000 + b'"'),
    ]  # fmt: skip
    bad: list[Bad] = []
    for field in ("t", "volume"):
        for name, value in wrong:
            if field == "t" and name in ("negative", "1e155"):
                continue  # a negative t is fine; 1e155 is out of range like 1e308
            other = b'"volume": 300' if field == "t" else b'"t": 1000'
            body = b'{"samples": [{' + other + b', "' + field.encode() + b'": ' + value + b"}]}"
            bad.append(Bad(f"sample {field} = {name}", "POST", samples, body, JSON))
    bad += [
        Bad("sample missing t", "POST", samples, _json({"samples": [{"volume": 1}]}), JSON),
        Bad("sample extra field", "POST", samples,
            _json({"samples": [{"t": 1000, "volume": 1, "v": 2}]}), JSON),
        Bad("samples not a list", "POST", samples, _json({"samples": 5}), JSON),
        Bad("no samples", "POST", samples, _json({}), JSON),
        Bad("20,000 bad samples", "POST", samples,
            _json({"samples": [{"t": "x", "volume": -1}] * 20_000}), JSON),
        Bad("10,001 samples", "POST", samples,
            _json({"samples": [{"t": 1000.0 + i, "volume": 1.0} for i in range(10_001)]}), JSON),
        Bad("t not increasing", "POST", samples,
            _json({"samples": [{"t": 1001, "volume": 1}, {"t": 1000, "volume": 1}]}), JSON),
        Bad("t already applied, other volume", "POST", samples,
            _json({"samples": [{"t": 0.0, "volume": 1.0}]}), JSON),
    ]  # fmt: skip
    policy_values: list[tuple[str, Any]] = [
        ("0", 0), ("-1", -1), ("1e-300", 1e-300), ("1e300", 1e300), ("10**30", 10**30),
        ("1.5", 1.5), ("string", "x"), ("true", True), ("list", [1]),
    ]  # fmt: skip
    config = {"filter": {"name": "tvd"}, "policy": {"capacity": 50}}
    for field in ("capacity", "min_operators", "max_operators"):
        for name, value in policy_values:
            if field == "capacity" and name == "1.5":
                continue  # a fine capacity
            policy = {"capacity": 50, field: value}
            body = _json({**config, "policy": policy})
            bad.append(Bad(f"policy {field} = {name}", "PUT", stream, body, JSON))
    for name, value in policy_values:
        if name != "1e-300":
            bad.append(Bad(f"operators = {name}", "PUT", stream,
                           _json({**config, "operators": value}), JSON))  # fmt: skip
    bad.append(Bad("max_operators < min_operators", "PUT", stream,
                   _json({**config, "policy": {"capacity": 50, "min_operators": 5,
                                               "max_operators": 2}}), JSON))  # fmt: skip
    filters: list[tuple[str, dict[str, Any]]] = [
        ("unknown filter", {"name": "kalman"}), ("no name", {"lam": 2}),
        ("name not a string", {"name": 5}), ("unknown parameter", {"name": "tvd", "lam_sigma": 2}),
        ("tvd lam_per_sigma = 0", {"name": "tvd", "lam_per_sigma": 0}),
        ("tvd lam = -1", {"name": "tvd", "lam": -1}),
        ("tvd lam = string", {"name": "tvd", "lam": "big"}),
        ("tvd method", {"name": "tvd", "method": "fast"}),
        ("tvd mm without window", {"name": "tvd", "lam": 1, "method": "mm"}),
        ("tvd mm iterations 100000", {"name": "tvd", "lam": 1, "method": "mm", "window": 50,
                                      "iterations": 100_000}),
        ("tvd mm window 10**6", {"name": "tvd", "lam": 1, "method": "mm", "window": 10**6}),
        ("tvd mm window 5.5", {"name": "tvd", "lam": 1, "method": "mm", "window": 5.5}),
        ("tvd window with exact", {"name": "tvd", "window": 5}),
        ("moving_average w = 0", {"name": "moving_average", "w": 0}),
        ("moving_average w = 3.5", {"name": "moving_average", "w": 3.5}),
        ("moving_average w = 10**400", {"name": "moving_average", "w": 10**400}),
        ("ewma alpha = 2", {"name": "ewma", "alpha": 2}),
        ("ewma alpha = NaN", {"name": "ewma", "alpha": float("nan")}),
        ("ekf dt = 0", {"name": "ekf", "dt": 0}),
        ("ekf observation", {"name": "ekf", "observation": "cubic"}),
        ("parameter of 100 KB", {"name": "tvd", "lam": ["x" * 100] * 1000}),
        ("parameter nested 30 deep", {"name": "tvd", "lam": json.loads("[" * 30 + "]" * 30)}),
    ]  # fmt: skip
    for name, spec in filters:
        bad.append(Bad(f"filter: {name}", "PUT", stream, _json({**config, "filter": spec}), JSON))
    guards: list[tuple[str, dict[str, Any]]] = [
        ("unknown guard", {"name": "brake"}), ("cooldown up = -1", {"name": "cooldown", "up": -1}),
        ("cooldown down = string", {"name": "cooldown", "down": "1m"}),
        ("hysteresis band = 1.5", {"name": "hysteresis", "band": 1.5}),
        ("stabilization window = -1", {"name": "stabilization", "window": -1}),
        ("max_step up = 0", {"name": "max_step", "up": 0}),
        ("max_step up = 1.5", {"name": "max_step", "up": 1.5}),
        ("filter used as guard", {"name": "tvd", "lam_per_sigma": 10.0}),
    ]  # fmt: skip
    for name, spec in guards:
        bad.append(Bad(f"guard: {name}", "PUT", stream, _json({**config, "guards": [spec]}), JSON))
    bad.append(Bad("17 guards", "PUT", stream,
                   _json({**config, "guards": [{"name": "cooldown"}] * 17}), JSON))  # fmt: skip
    bad.append(Bad("another configuration without reset", "PUT", stream,
                   _json({**STREAM, "operators": 9}), JSON))  # fmt: skip
    for stream_id in ("%2E", "%2E%2E", ".hidden", "a%20b", "x" * 129, "caf%C3%A9", "a:b", "a%00b"):
        bad.append(Bad(f"stream id {stream_id[:12]}", "PUT", f"/v1/streams/{stream_id}",
                       _json(STREAM), JSON))  # fmt: skip
        bad.append(Bad(f"stream id {stream_id[:12]} (GET)", "GET", f"/v1/streams/{stream_id}"))
    bad += [
        Bad("trailing slash", "PUT", "/v1/streams/", _json(STREAM), JSON),
        Bad("unknown path", "GET", "/v2/streams"),
        Bad("not UTF-8", "POST", samples, b'{"samples": [\xff]}', JSON),
        Bad("gzip without encoding header", "POST", samples,
            gzip.compress(b'{"samples": []}'), JSON),
        Bad("gzip", "POST", samples, gzip.compress(b'{"samples": []}'),
            {**JSON, "content-encoding": "gzip"}),
        Bad("nested 100,000 deep", "POST", samples, b"[" * 100_000 + b"]" * 100_000, JSON),
        Bad("nested 40 deep", "PUT", stream, b'{"filter": ' + b"[" * 40 + b"]" * 40 + b"}", JSON),
        Bad("duplicate keys", "POST", samples,
            b'{"samples": [{"t": 1000, "volume": 5, "volume": 7}]}', JSON),
        Bad("truncated JSON", "POST", samples, b'{"samples": [', JSON),
        Bad("empty body", "POST", samples, b"", JSON),
        Bad("JSON array body", "POST", samples, b"[1, 2]", JSON),
        Bad("JSON string body", "PUT", stream, b'"config"', JSON),
        Bad("no content type", "POST", samples, _json({"samples": []}), {}),
        Bad("text/plain", "POST", samples, _json({"samples": []}), {"content-type": "text/plain"}),
        Bad("form", "PUT", stream, b"filter=tvd",
            {"content-type": "application/x-www-form-urlencoded"}),
        Bad("history limit = 0", "GET", f"{stream}/history?limit=0"),
        Bad("history limit = 10**6", "GET", f"{stream}/history?limit=1000000"),
        Bad("history since = nan", "GET", f"{stream}/history?since=nan"),
        Bad("history since = x", "GET", f"{stream}/history?since=x"),
        Bad("list limit = 5000", "GET", "/v1/streams?limit=5000"),
        Bad("list after = ..", "GET", "/v1/streams?after=.."),
        Bad("reset = maybe", "PUT", f"{stream}?reset=maybe", _json(STREAM), JSON),
        Bad("decision of a missing stream", "GET", "/v1/streams/nope/decision"),
        Bad("samples for a missing stream", "POST", "/v1/streams/nope/samples",
            _json({"samples": [{"t": 1, "volume": 1}]}), JSON),
        Bad("delete a missing stream", "DELETE", "/v1/streams/nope"),
    ]  # fmt: skip
    for method, path in [("PATCH", stream), ("OPTIONS", stream), ("POST", stream),
                         ("TRACE", stream), ("FOO", "/healthz"), ("DELETE", "/metrics"),
                         ("PUT", samples), ("GET", samples)]:  # fmt: skip
        bad.append(Bad(f"{method} {path}", method, path))
    return bad


def _named(body: Any) -> bool:
    """Whether a Problem names each field at fault with its value and what is allowed."""
    errors = body.get("errors") if isinstance(body, dict) else None
    return bool(errors) and all(
        isinstance(error, dict) and error.get("field") and "value" in error and error.get("allowed")
        for error in errors
    )


def attack() -> None:
    """The hand-made bad requests against a server with one stream."""
    with tempfile.TemporaryDirectory() as data, Served(Path(data) / "data") as server:
        client = httpx.Client(base_url=server.url, timeout=60)
        client.put("/v1/streams/s", json=STREAM).raise_for_status()
        first = [{"t": float(t), "volume": 300.0 + t % 7} for t in range(10)]
        client.post("/v1/streams/s/samples", json={"samples": first}).raise_for_status()

        def snapshot() -> tuple[Any, ...]:
            history = client.get("/v1/streams/s/history", params={"limit": 100_000}).json()
            return client.get("/v1/streams/s").json(), history, client.get("/v1/streams").json()

        requests = bad_requests()
        statuses: Counter[int] = Counter()
        failures: list[str] = []
        largest, growth = 0, 0.0
        for bad in requests:
            before = snapshot()
            server.reset_peak()
            baseline = server.memory()
            answer = client.request(bad.method, bad.path, content=bad.body, headers=bad.headers)
            growth = max(growth, server.memory("VmHWM") - baseline)
            statuses[answer.status_code] += 1
            largest = max(largest, len(answer.content))
            body = answer.json() if answer.content else None
            if not 400 <= answer.status_code < 500:
                failures.append(f"{bad.label}: {answer.status_code}")
            elif not _named(body):
                failures.append(
                    f"{bad.label}: {answer.status_code} names no field: {answer.text[:200]}"
                )
            elif len(answer.content) >= 64 * 1024:
                failures.append(f"{bad.label}: a body of {len(answer.content)} bytes")
            if snapshot() != before:
                failures.append(f"{bad.label}: changed the stream")
        client.close()
    fivexx = sum(count for status, count in statuses.items() if status >= 500)
    print(f"hand-made bad requests: {len(requests)}; statuses "
          f"{dict(sorted(statuses.items()))}; 5xx: {fivexx}")  # fmt: skip
    print(f"largest error body: {largest:,} bytes (target < 65,536); RSS growth of the worst "
          f"request: {growth:.1f} MB")  # fmt: skip
    print(f"bodies that do not name field, value and allowed, or changed the stream: "
          f"{len(failures)}")  # fmt: skip
    for failure in failures:
        print(f"  {failure}")


def bodies() -> None:
    """16 MiB bodies, declared and streamed, and the largest bodies the service reads."""
    sixteen = b'{"samples": [' + b'{"t": 1, "volume": 1},' * (16 * 1024 * 1024 // 22) + b"{}]}"

    def streamed() -> Iterator[bytes]:
        for offset in range(0, len(sixteen), 64 * 1024):
            yield sixteen[offset : offset + 64 * 1024]

    limit = 1024 * 1024
    bad_batch = json.dumps({"samples": [{"t": "x", "volume": -1}] * 40_000}).encode()[: limit - 100]
    bad_batch = bad_batch[: bad_batch.rindex(b"},") + 1] + b"]}"
    good_batch = _json({"samples": [{"t": float(t), "volume": 300.0} for t in range(10_000)]})
    cases: list[tuple[str, Callable[[httpx.Client], httpx.Response]]] = [
        ("16 MiB, Content-Length", lambda http: http.post(
            "/v1/streams/s/samples", content=sixteen, headers=JSON)),
        ("16 MiB, chunked", lambda http: http.post(
            "/v1/streams/s/samples", content=streamed(), headers=JSON)),
        (f"{len(bad_batch) / 1e6:.2f} MB of bad samples", lambda http: http.post(
            "/v1/streams/s/samples", content=bad_batch, headers=JSON)),
        (f"10,000 samples ({len(good_batch) / 1e6:.2f} MB)", lambda http: http.post(
            "/v1/streams/s/samples", content=good_batch, headers=JSON)),
    ]  # fmt: skip
    with tempfile.TemporaryDirectory() as data, Served(Path(data) / "data") as server:
        with httpx.Client(base_url=server.url, timeout=120) as http:
            http.put("/v1/streams/s", json=STREAM).raise_for_status()
            print(f"{'request':32s} {'status':>6s} {'seconds':>8s} {'answer bytes':>13s} "
                  f"{'RSS growth MB':>14s}")  # fmt: skip
            for name, send in cases:
                server.reset_peak()
                baseline = server.memory()
                began = time.perf_counter()
                try:
                    answer = send(http)
                    status, size = str(answer.status_code), f"{len(answer.content):,}"
                except httpx.HTTPError as error:  # the server may close before all is sent
                    status, size = type(error).__name__[:6], "-"
                seconds = time.perf_counter() - began
                growth = server.memory("VmHWM") - baseline
                print(f"{name:32s} {status:>6s} {seconds:8.3f} {size:>13s} {growth:14.1f}")
