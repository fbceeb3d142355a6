"""A fake Prometheus HTTP API for the pull tests, behind httpx's MockTransport.

``FakePrometheus`` answers ``/api/v1/query`` from a table of query text to a function of the
evaluation time, and records every request; ``down`` makes it refuse connections.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

Answer = Callable[[float], Any]


def vector(*values: float | str) -> dict[str, Any]:
    """A vector result with one series per value (labels ``i``)."""
    result = [{"metric": {"i": str(i)}, "value": [0, str(v)]} for i, v in enumerate(values)]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


class FakePrometheus:
    def __init__(self, answers: dict[str, Answer]) -> None:
        self.answers = answers
        self.down = False
        self.requests: list[httpx.Request] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.down:
            raise httpx.ConnectError("connection refused", request=request)
        query = request.url.params["query"]
        if query not in self.answers:
            body = {"status": "error", "errorType": "bad_data", "error": f"parse error: {query}"}
            return httpx.Response(400, json=body)
        answer = self.answers[query](float(request.url.params["time"]))
        if isinstance(answer, httpx.Response):
            return answer
        return httpx.Response(200, json=answer if isinstance(answer, dict) else vector(answer))

    def client(self, **options: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle), **options)
