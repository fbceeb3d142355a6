"""One PromQL query at one time, through Prometheus' HTTP API, down to one number.

``query_value`` asks ``GET {base}/api/v1/query?query=...&time=...&timeout=...`` with httpx and
reads the answer's envelope (``{"status", "data": {"resultType", "result"}, "errorType",
"error"}``). A query answers one number only when its result is a scalar, or a vector of exactly
one series; anything else is a ``QueryFailed`` whose ``kind`` says why:

``unavailable``  Prometheus did not answer, timed out, or answered 5xx
``refused``      Prometheus refused the query (it does not parse, or cannot run): its message
``shape``        several series, a string or a range vector: the query must aggregate to one
``empty``        no series at that time (the metric is missing)
``nan``          the value is NaN or infinite

``Credentials`` sends a bearer token or basic auth read from files at every request, so that a
rotated secret is picked up without a restart.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Generator
from pathlib import Path
from typing import Any, Literal

import httpx

from service.pull.settings import PullSettings

Kind = Literal["unavailable", "refused", "shape", "empty", "nan"]

# Characters of Prometheus' own message kept in a failure (and shown by the API).
MESSAGE_CHARS = 300
# The largest answer read: one series is a few hundred bytes; a query over every series of a
# large Prometheus would otherwise be read whole (into memory) before being refused.
MAX_ANSWER_BYTES = 1024 * 1024


class QueryFailed(Exception):
    """A query that gave no single finite number; ``str()`` is why, Prometheus' words where it
    gave any (cut to ``MESSAGE_CHARS``)."""

    def __init__(self, kind: Kind, message: str) -> None:
        message = message if len(message) <= MESSAGE_CHARS else message[:MESSAGE_CHARS] + "..."
        super().__init__(message)
        self.kind = kind


class Credentials(httpx.Auth):
    """The bearer token or basic auth of ``settings``, each file read when a request is sent."""

    def __init__(self, settings: PullSettings) -> None:
        self.token_file = settings.prometheus_bearer_token_file
        self.username = settings.prometheus_username
        self.password_file = settings.prometheus_password_file

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self.username is not None and self.password_file is not None:
            yield from httpx.BasicAuth(self.username, _secret(self.password_file)).auth_flow(
                request
            )
            return
        if self.token_file is not None:
            request.headers["Authorization"] = f"Bearer {_secret(self.token_file)}"
        yield request


def _secret(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError as error:
        raise QueryFailed("unavailable", f"cannot read {path}: {error.strerror}") from None


async def query_value(
    client: httpx.AsyncClient, base: str, query: str, at: float, timeout: float
) -> float:
    """The value of ``query`` at unix time ``at`` from the Prometheus at ``base``; raises
    ``QueryFailed``. ``timeout`` bounds the whole exchange, and Prometheus' own evaluation."""
    params = {"query": query, "time": f"{at:.3f}", "timeout": f"{timeout:g}s"}
    try:
        async with asyncio.timeout(timeout):
            status, content = await _get(client, f"{base}/api/v1/query", params)
    except (TimeoutError, httpx.TimeoutException):
        raise QueryFailed("unavailable", f"{base} did not answer within {timeout:g} s") from None
    except httpx.HTTPError as error:
        raise QueryFailed("unavailable", f"{base} cannot be reached: {error}") from None
    except httpx.InvalidURL as error:
        raise QueryFailed("refused", f"{base} is not a URL httpx can ask: {error}") from None
    try:
        body = json.loads(content)
    except ValueError:
        kind: Kind = "unavailable" if status >= 500 else "refused"
        text = content.decode(errors="replace").strip()
        raise QueryFailed(kind, f"{base} answered {status}: {text}") from None
    if not isinstance(body, dict) or body.get("status") != "success":
        said = body.get("error") if isinstance(body, dict) else None
        kind = "unavailable" if status >= 500 else "refused"
        raise QueryFailed(kind, str(said or f"{base} answered {status}"))
    return _one_number(body.get("data"))


async def _get(client: httpx.AsyncClient, url: str, params: dict[str, str]) -> tuple[int, bytes]:
    """The status and body of ``GET url``; ``QueryFailed`` past ``MAX_ANSWER_BYTES``."""
    async with client.stream("GET", url, params=params) as response:
        content = bytearray()
        async for chunk in response.aiter_bytes():
            content += chunk
            if len(content) > MAX_ANSWER_BYTES:
                raise QueryFailed(
                    "shape",
                    f"the answer is larger than {MAX_ANSWER_BYTES} bytes: the query must "
                    "aggregate to one value, e.g. sum(...)",
                )
        return response.status_code, bytes(content)


def _one_number(data: Any) -> float:
    """The number of an instant query's ``data``; ``QueryFailed`` unless there is one."""
    kind = data.get("resultType") if isinstance(data, dict) else None
    result = data.get("result") if isinstance(data, dict) else None
    if kind == "vector" and isinstance(result, list):
        if not result:
            raise QueryFailed("empty", "the query returned no series at this time")
        if len(result) > 1:
            labels = ", ".join(str(series.get("metric", {})) for series in result[:3])
            raise QueryFailed(
                "shape",
                f"the query returned {len(result)} series ({labels}{', ...' * (len(result) > 3)}); "
                "it must aggregate to one value, e.g. sum(...)",
            )
        sample = result[0].get("value") if isinstance(result[0], dict) else None
    elif kind == "scalar":
        sample = result
    else:
        raise QueryFailed(
            "shape", f"the query returned a {kind}; it must return one number (a scalar, or a "
            "vector of one series)",
        )  # fmt: skip
    try:
        value = float(sample[1])  # type: ignore[index]
    except (TypeError, ValueError, IndexError):
        raise QueryFailed("shape", f"Prometheus answered an unreadable sample {sample!r}") from None
    if not math.isfinite(value):
        raise QueryFailed("nan", f"the query's value is {value}")
    return value
