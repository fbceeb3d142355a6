"""Deciders: samples of a streaming query in, the executor count wanted out.

* ``LocalDecider``: a ``Scaler`` in the driver;
* ``ServiceDecider``: a steadyscale service, which keeps the stream's state (and its decision
  history) across driver restarts; samples are posted in batches and retried until
  acknowledged, which the service makes safe (a resent sample is a duplicate, never applied
  twice).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, Protocol

import httpx

from scaling.decision import Decision
from scaling.scaler import Scaler


class Sample(NamedTuple):
    """One micro-batch as the Scaler sees it: ``t`` (seconds), ``volume`` (input rows/s), and
    what the query reports besides, ``None`` where it does not: ``backlog`` (records its sources
    are behind), ``running`` (executors registered), ``processed`` (rows/s processed)."""

    t: float
    volume: float
    backlog: float | None = None
    running: int | None = None
    processed: float | None = None


class RetryLater(Exception):
    """The decider could not answer now; the same samples may be sent again later."""


class Decider(Protocol):
    """Samples in, in increasing ``t``; the executor count wanted after the last one out."""

    def decide(self, samples: Sequence[Sample]) -> int: ...


class LocalDecider:
    """Decisions from a ``Scaler`` running in this process; ``last`` is its last ``Decision``."""

    def __init__(self, scaler: Scaler) -> None:
        self.scaler = scaler
        self.last: Decision | None = None

    def decide(self, samples: Sequence[Sample]) -> int:
        for sample in (Sample(*sample) for sample in samples):
            self.last = self.scaler.observe(
                sample.volume,
                sample.t,
                backlog=sample.backlog,
                running=sample.running,
                processed=sample.processed,
            )
        return self.scaler.operators


class ServiceDecider:
    """Decisions from a steadyscale service: ``POST {url}/v1/streams/{stream}/samples``.

    The stream must exist (``PUT /v1/streams/{stream}``, or ``spec`` here: it is created with
    that spec on the first call if the service does not know it). A network error, a timeout or
    a 5xx answer raises ``RetryLater``: the listener keeps the samples and sends them again with
    the next ones. Any other refusal raises ``ValueError`` with the service's explanation.

    Parameters
    ----------
    url
        The service's base URL, e.g. ``http://steadyscale:8000``.
    stream
        The stream's id.
    token
        Bearer token, if the service requires one.
    spec, operators
        Scaler spec (``{"filter": ..., "policy": ..., "guards": [...]}``) and initial count to
        create the stream with when it does not exist.
    client
        The ``httpx.Client`` to use (tests pass one bound to an in-process app).
    """

    def __init__(
        self,
        url: str,
        stream: str,
        token: str | None = None,
        spec: Mapping[str, Any] | None = None,
        operators: int = 1,
        timeout: float = 10.0,
        client: httpx.Client | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.client = client or httpx.Client(base_url=url, timeout=timeout)
        self.client.headers.update(headers)
        self.path = f"/v1/streams/{stream}"
        self.spec = None if spec is None else {**spec, "operators": operators}

    def decide(self, samples: Sequence[Sample]) -> int:
        body = {"samples": [_payload(Sample(*sample)) for sample in samples]}
        response = self._send("POST", f"{self.path}/samples", body)
        if response.status_code == 404 and self.spec is not None:
            created = self._send("PUT", self.path, self.spec)
            if created.status_code not in (200, 201):
                raise ValueError(f"the service refused the stream's spec: {created.text}")
            response = self._send("POST", f"{self.path}/samples", body)
        if response.status_code != 200:
            raise ValueError(f"the service refused the samples: {response.text}")
        return int(response.json()["operators"])

    def _send(self, method: str, path: str, body: Mapping[str, Any]) -> httpx.Response:
        try:
            response = self.client.request(method, path, json=body)
        except httpx.HTTPError as error:
            raise RetryLater(f"{method} {path}: {error!r}") from error
        if response.status_code >= 500:
            raise RetryLater(f"{method} {path}: {response.status_code} {response.text}")
        return response


def _payload(sample: Sample) -> dict[str, Any]:
    """A sample as the service takes it: the optional fields only when known."""
    return {key: value for key, value in sample._asdict().items() if value is not None}
