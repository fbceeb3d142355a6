"""The HTTP routes: each turns a request into one ``StreamService`` call and its answer back.

The routes are ``async``: the service's blocking (SQLite) calls go to the thread pool, a single
hop per request, except small sample batches, which ``StreamService.post_samples_async`` may
apply on the event loop (see there).

``probes`` holds ``/healthz`` and ``/readyz``; ``api`` the rest. The bearer tokens are checked
by ``service.app.TokenMiddleware`` for every path but ``/healthz``.
"""

from __future__ import annotations

import sqlite3
from http import HTTPStatus
from typing import Annotated, Any, cast

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.concurrency import run_in_threadpool

from scaling import Decision
from service.metrics import Metrics
from service.models import (
    STREAM_ID_ALLOWED,
    STREAM_ID_PATTERN,
    BatchOut,
    DecisionOut,
    HistoryOut,
    MetricOut,
    Problem,
    SampleBatch,
    Status,
    StreamConfig,
    StreamList,
    StreamOut,
)
from service.storage import StoredStream
from service.streams import ServiceError, StreamService


async def get_streams(request: Request) -> StreamService:
    """The app's ``StreamService``, opened by its lifespan."""
    return cast(StreamService, request.state.streams)


async def get_metrics(request: Request) -> Metrics:
    """The app's ``Metrics``."""
    return cast(Metrics, request.state.metrics)


StreamsDep = Annotated[StreamService, Depends(get_streams)]
MetricsDep = Annotated[Metrics, Depends(get_metrics)]
StreamId = Annotated[
    str, Path(pattern=STREAM_ID_PATTERN, description=f"The stream's id: {STREAM_ID_ALLOWED}.")
]


def _problems(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {"model": Problem, "description": HTTPStatus(code).phrase} for code in codes}


probes = APIRouter(tags=["probes"])
api = APIRouter(responses=_problems(401))


@probes.get("/healthz")
async def healthz() -> Status:
    """Liveness: the process answers. Always 200, never needs a token."""
    return Status(status="ok")


@probes.get("/readyz", responses=_problems(401, 503))
async def readyz(streams: StreamsDep) -> Status:
    """Readiness: 200 when the storage answers, else 503."""
    try:
        await run_in_threadpool(streams.storage.ping)
    except (sqlite3.Error, RuntimeError) as error:
        raise ServiceError(503, f"the storage does not answer: {error}") from error
    return Status(status="ready")


@probes.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE_LATEST: {}}, "description": "Prometheus text"},
        **_problems(401),
    },
)
async def prometheus_metrics(metrics: MetricsDep) -> Response:
    """Every series in the Prometheus text format (see ``service.metrics``)."""
    return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)


@api.get("/v1/streams", tags=["streams"])
async def list_streams(streams: StreamsDep) -> StreamList:
    """Every stream, by id."""
    stored = await run_in_threadpool(streams.list_streams)
    return StreamList(streams=[_stream_out(stream) for stream in stored])


@api.put(
    "/v1/streams/{stream_id}",
    tags=["streams"],
    status_code=201,
    responses={200: {"model": StreamOut, "description": "Replaced"}, **_problems(413, 422)},
)
async def put_stream(
    stream_id: StreamId, config: StreamConfig, streams: StreamsDep, response: Response
) -> StreamOut:
    """Create the stream (201), or replace it (200): its state and history start afresh."""
    stream, created = await run_in_threadpool(streams.put, stream_id, config)
    response.status_code = 201 if created else 200
    return _stream_out(stream)


@api.get("/v1/streams/{stream_id}", tags=["streams"], responses=_problems(404, 422))
async def get_stream(stream_id: StreamId, streams: StreamsDep) -> StreamOut:
    """The stream's configuration and where it stands."""
    return _stream_out(await run_in_threadpool(streams.get, stream_id))


@api.delete("/v1/streams/{stream_id}", tags=["streams"], responses=_problems(404, 422))
async def delete_stream(stream_id: StreamId, streams: StreamsDep) -> StreamOut:
    """Remove the stream, its state and its history; answers the stream as it was."""
    return _stream_out(await run_in_threadpool(streams.delete, stream_id))


@api.post(
    "/v1/streams/{stream_id}/samples",
    tags=["streams"],
    responses=_problems(404, 409, 413, 422),
)
async def post_samples(stream_id: StreamId, batch: SampleBatch, streams: StreamsDep) -> BatchOut:
    """Apply a batch of samples, all or none, and answer the decisions.

    A sample whose ``t`` and ``volume`` equal those of an applied one is a duplicate:
    acknowledged, not applied again, so retrying a batch is safe. Any other sample at or before
    the last applied ``t``, or times that do not increase within the batch: 409, nothing
    applied.
    """
    result = await streams.post_samples_async(stream_id, batch.samples)
    return BatchOut(
        accepted=result.accepted,
        duplicates=result.duplicates,
        operators=result.operators,
        decisions=[_decision_out(decision) for decision in result.decisions],
    )


@api.get("/v1/streams/{stream_id}/decision", tags=["streams"], responses=_problems(404, 422))
async def latest_decision(stream_id: StreamId, streams: StreamsDep) -> DecisionOut:
    """The stream's last decision; 404 before its first sample."""
    return _decision_out(await run_in_threadpool(streams.latest, stream_id))


@api.get("/v1/streams/{stream_id}/history", tags=["streams"], responses=_problems(404, 422))
async def history(
    stream_id: StreamId,
    streams: StreamsDep,
    since: Annotated[
        float | None,
        Query(allow_inf_nan=False, description="Only decisions with t > since."),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100_000, description="Most decisions.")] = 1000,
) -> HistoryOut:
    """The stream's retained decisions, oldest first, a page at a time."""
    decisions = await run_in_threadpool(streams.history, stream_id, since, limit)
    full = len(decisions) == limit
    return HistoryOut(
        decisions=[_decision_out(decision) for decision in decisions],
        next_since=decisions[-1].t if full else None,
    )


@api.get("/v1/streams/{stream_id}/metric", tags=["streams"], responses=_problems(404, 422))
async def metric(stream_id: StreamId, streams: StreamsDep) -> MetricOut:
    """The filtered volume and operators of the last decision, for KEDA's metrics-api scaler
    (``valueLocation: value``, or ``operators``); 404 before the first sample."""
    decision = await run_in_threadpool(streams.latest, stream_id)
    return MetricOut(value=decision.filtered, operators=decision.operators)


def _stream_out(stream: StoredStream) -> StreamOut:
    config = StreamConfig.model_validate(
        {**stream.spec, "operators": stream.initial_operators}, strict=False
    )
    return StreamOut(id=stream.id, config=config, operators=stream.operators, t=stream.t)


def _decision_out(decision: Decision) -> DecisionOut:
    return DecisionOut.model_validate(decision, from_attributes=True)
