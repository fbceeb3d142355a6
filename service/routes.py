"""The HTTP routes: each turns a request into one ``StreamService`` call and its answer back.

The routes are ``async``: the service's blocking (SQLite) calls go to the thread pool, a single
hop per request, except small sample batches, which ``StreamService.post_samples_async`` may
apply on the event loop (see there).

``probes`` holds ``/healthz`` and ``/readyz``; ``api`` the rest. The bearer tokens are checked
by ``service.app.TokenMiddleware`` for every path but the probes (which say nothing about any
stream) and the dashboard's page. Bodies are read by ``service.body.JSONRoute`` (415, 400, 413
before validation).

The OpenAPI document links each operation to those that follow it (``LINKS``): PUT a stream,
then POST its samples, then GET its decision, history and metric; a fuzzer follows them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any, cast

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from scaling.legacy import mapped_settings
from service.answers import batch_answer, decision_out, history_answer, json_answer, problems
from service.body import JSONRoute
from service.errors import ServiceError, StoredConfigUnreadable
from service.health import LoopWatch
from service.metrics import Metrics
from service.models import (
    STREAM_ID_ALLOWED,
    STREAM_ID_PATTERN,
    BatchOut,
    DecisionOut,
    HistoryOut,
    MetricOut,
    Sample,
    SampleBatch,
    Status,
    StreamConfig,
    StreamList,
    StreamOut,
)
from service.pull.health import SourceHealth
from service.pull.runner import Pull, get_pull
from service.readiness import NotReady, readiness
from service.rows import StoredStream
from service.streams import StreamService


async def get_streams(request: Request) -> StreamService:
    """The app's ``StreamService``, opened by its lifespan."""
    return cast(StreamService, request.state.streams)


async def get_metrics(request: Request) -> Metrics:
    """The app's ``Metrics``."""
    return cast(Metrics, request.state.metrics)


StreamsDep = Annotated[StreamService, Depends(get_streams)]
MetricsDep = Annotated[Metrics, Depends(get_metrics)]
PullDep = Annotated[Pull, Depends(get_pull)]
StreamId = Annotated[
    str, Path(pattern=STREAM_ID_PATTERN, description=f"The stream's id: {STREAM_ID_ALLOWED}.")
]


# /metrics is rendered at most once a second; Prometheus scrapes every 15 s or so.
METRICS_MAX_AGE = 1.0

# Answers with more decisions than this are built and serialised in a worker thread: 10,000
# of them take about 100 ms, far too long to hold the event loop (and /healthz) for.
LARGE_ANSWER = 128


# Statuses every route that reads the database or a body may answer.
_STORAGE = problems(503)
_BODY = problems(400, 413, 415, 422)

_STREAM_ID = {"stream_id": "$request.path.stream_id"}
LINKS: dict[str, dict[str, Any]] = {
    "PostSamples": {"operationId": "post_samples", "parameters": _STREAM_ID},
    "GetStream": {"operationId": "get_stream", "parameters": _STREAM_ID},
    "DeleteStream": {"operationId": "delete_stream", "parameters": _STREAM_ID},
    "GetDecision": {"operationId": "latest_decision", "parameters": _STREAM_ID},
    "GetHistory": {"operationId": "history", "parameters": _STREAM_ID},
    "GetMetric": {"operationId": "metric", "parameters": _STREAM_ID},
}


def _links(*names: str) -> dict[str, Any]:
    return {name: LINKS[name] for name in names}


probes = APIRouter(tags=["probes"], route_class=JSONRoute)
api = APIRouter(responses={**problems(401), **_STORAGE}, route_class=JSONRoute)


@probes.get("/healthz", responses=problems(503))
async def healthz(request: Request) -> Status:
    """Liveness: 200 while the event loop runs its timers on time and a worker thread takes
    work, both within the setting ``health_timeout``; else 503 (``service.health``). Never
    needs a token."""
    settings = request.state.settings
    watch: LoopWatch = request.state.watch
    behind = watch.behind()
    if behind > settings.health_timeout:
        message = (
            f"the event loop runs {behind:.1f} s behind its timers, more than "
            f"{settings.health_timeout:g} s (setting health_timeout)"
        )
        raise ServiceError(503, message)
    try:
        await asyncio.wait_for(run_in_threadpool(_nothing), settings.health_timeout)
    except TimeoutError:
        message = (
            f"no worker thread took work within {settings.health_timeout:g} s "
            "(setting health_timeout): every one is held"
        )
        raise ServiceError(503, message) from None
    return Status(status="ok")


def _nothing() -> None:
    """What /healthz asks a worker thread to do."""


@probes.get(
    "/readyz",
    response_model=Status,
    responses={503: {"model": NotReady, "description": "Not ready, and a reason code."}},
)
async def readyz(streams: StreamsDep) -> Response:
    """Readiness: 200 when the storage answers (and, after a failed write, takes a write),
    else 503 with a reason code (``service.readiness``). Never needs a token, and says
    nothing else."""
    return await readiness(streams.storage)


# HEAD for the probes (load balancers use it); kept out of the OpenAPI document.
probes.add_api_route("/healthz", healthz, methods=["HEAD"], include_in_schema=False)
probes.add_api_route("/readyz", readyz, methods=["HEAD"], include_in_schema=False)


@probes.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE_LATEST: {}}, "description": "Prometheus text"},
        **problems(401),
    },
)
async def prometheus_metrics(metrics: MetricsDep) -> Response:
    """Every series in the Prometheus text format (see ``service.metrics``), at most
    ``METRICS_MAX_AGE`` seconds old."""
    text = await run_in_threadpool(metrics.render, METRICS_MAX_AGE)
    return Response(text, media_type=CONTENT_TYPE_LATEST)


@api.get("/v1/streams", tags=["streams"], response_model=StreamList, responses=problems(422))
async def list_streams(
    streams: StreamsDep,
    pull: PullDep,
    after: Annotated[
        str | None,
        Query(pattern=STREAM_ID_PATTERN, description="Only streams whose id sorts after this."),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="Most streams.")] = 100,
) -> Response:
    """The streams by id, a page at a time."""

    def page() -> StreamList:
        stored = streams.list_streams(after, limit)
        return StreamList(
            streams=[_stream_out(stream, pull.status(stream)) for stream in stored],
            next_after=stored[-1].id if len(stored) == limit else None,
        )

    return await run_in_threadpool(_answer, page)


@api.put(
    "/v1/streams/{stream_id}",
    tags=["streams"],
    status_code=201,
    responses={
        201: {
            "description": "Created",
            "links": _links("PostSamples", "GetStream", "DeleteStream"),
        },
        200: {
            "model": StreamOut,
            "description": "Unchanged (same configuration), or replaced (reset=true)",
            "links": _links("PostSamples", "GetStream", "DeleteStream"),
        },
        **problems(409),
        **_BODY,
    },
)
async def put_stream(
    stream_id: StreamId,
    config: StreamConfig,
    streams: StreamsDep,
    pull: PullDep,
    response: Response,
    reset: Annotated[
        bool,
        Query(
            description="Replace an existing stream that has another configuration, "
            "forgetting its state and history. Without it, such a PUT is refused (409)."
        ),
    ] = False,
) -> StreamOut:
    """Create the stream (201). The same configuration again changes nothing (200); another
    one replaces the stream, state and history afresh, only with ``reset=true`` (200), else
    409. A ``source`` is checked against Prometheus first (422 naming the query, 503 if
    Prometheus does not answer), once the configuration is one a stream can use: a filter or
    policy it refuses is the request's fault whatever Prometheus says."""
    if config.source is not None:
        await run_in_threadpool(streams.check, config)
        await pull.check(config.source)
    stream, outcome = await run_in_threadpool(streams.put, stream_id, config, reset=reset)
    pull.refresh()
    response.status_code = 201 if outcome == "created" else 200
    return _stream_out(stream)


@api.get("/v1/streams/{stream_id}", tags=["streams"], responses=problems(404, 422))
async def get_stream(stream_id: StreamId, streams: StreamsDep, pull: PullDep) -> StreamOut:
    """The stream's configuration and where it stands, and how polling its source goes."""
    stream = await run_in_threadpool(streams.get, stream_id)
    return _stream_out(stream, pull.status(stream))


@api.delete("/v1/streams/{stream_id}", tags=["streams"], responses=problems(404, 422))
async def delete_stream(stream_id: StreamId, streams: StreamsDep) -> StreamOut:
    """Remove the stream, its state and its history; answers the stream as it was."""
    return _stream_out(await run_in_threadpool(streams.delete, stream_id))


@api.post(
    "/v1/streams/{stream_id}/samples",
    tags=["streams"],
    response_model=BatchOut,
    responses={
        200: {"description": "Applied", "links": _links("GetDecision", "GetHistory", "GetMetric")},
        **problems(404, 409),
        **_BODY,
    },
)
async def post_samples(stream_id: StreamId, batch: SampleBatch, streams: StreamsDep) -> Response:
    """Apply a batch of samples, all or none, and answer the decisions.

    A sample whose ``t``, ``volume`` and reports equal those of an applied one is a duplicate:
    acknowledged, not applied again, so retrying a batch is safe. Any other sample at or before
    the last applied ``t``, or times that do not increase within the batch: 409, nothing
    applied.
    """
    return await apply_batch(streams, stream_id, batch.samples)


async def apply_batch(streams: StreamService, stream_id: str, samples: list[Sample]) -> Response:
    """``post_samples``' work once the request is valid (``service.fastpath`` calls it too)."""
    result = await streams.post_samples_async(stream_id, samples)

    def answer() -> Response:
        return json_answer(
            batch_answer(result.accepted, result.duplicates, result.operators, result.decisions)
        )

    if len(result.decisions) <= LARGE_ANSWER:
        return answer()
    return await run_in_threadpool(answer)


@api.get("/v1/streams/{stream_id}/decision", tags=["streams"], responses=problems(404, 422))
async def latest_decision(stream_id: StreamId, streams: StreamsDep, pull: PullDep) -> DecisionOut:
    """The stream's last decision (its source's fallback while that applies); 404 before its
    first sample."""
    return decision_out(
        pull.decision(stream_id, await run_in_threadpool(streams.latest, stream_id))
    )


@api.get(
    "/v1/streams/{stream_id}/history",
    tags=["streams"],
    response_model=HistoryOut,
    responses=problems(404, 422),
)
async def history(
    stream_id: StreamId,
    streams: StreamsDep,
    since: Annotated[
        float | None,
        Query(allow_inf_nan=False, description="Only decisions with t > since."),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100_000, description="Most decisions.")] = 1000,
) -> Response:
    """The stream's retained decisions, oldest first, a page at a time."""

    def page() -> Response:
        decisions = streams.history(stream_id, since, limit)
        next_since = decisions[-1].t if len(decisions) == limit else None
        return json_answer(history_answer(decisions, next_since))

    return await run_in_threadpool(page)


@api.get("/v1/streams/{stream_id}/metric", tags=["streams"], responses=problems(404, 422))
async def metric(stream_id: StreamId, streams: StreamsDep, pull: PullDep) -> MetricOut:
    """The filtered volume and operators of the last decision, for KEDA's metrics-api scaler
    (``valueLocation: value``, or ``operators``), with the backlog, running count and rate
    processed its sample reported (null where it did not); 404 before the first sample."""
    decision = pull.decision(stream_id, await run_in_threadpool(streams.latest, stream_id))
    return MetricOut(
        value=decision.filtered,
        operators=decision.operators,
        backlog=decision.backlog,
        running=decision.running,
        processed=decision.processed,
    )


def _answer(build: Callable[[], BaseModel]) -> Response:
    """The answer ``build`` makes, serialised by its own model (see ``json_answer``)."""
    return json_answer(build().model_dump_json().encode())


def _stream_out(stream: StoredStream, source_health: SourceHealth | None = None) -> StreamOut:
    spec = dict(stream.spec)
    try:  # a policy stored before the cost model is shown as it is mapped (scaling.legacy)
        spec["policy"] = mapped_settings(dict(spec["policy"]))
    except ValueError as error:
        raise StoredConfigUnreadable(stream.id, error) from None
    config = StreamConfig.model_validate(
        {**spec, "operators": stream.initial_operators}, strict=False
    )
    return StreamOut(
        id=stream.id,
        config=config,
        operators=stream.operators,
        t=stream.t,
        source_health=source_health,
    )
