"""The FastAPI app: settings, storage, metrics, the error body and the routes, wired together.

``create_app(settings)`` builds the app; its ``lifespan`` opens the storage when the server
starts and closes it when it stops. ``steadyscale serve`` runs it, as does
``uvicorn --factory service.app:create_app`` (settings from ``STEADYSCALE_*``).

The settings come from one dependency, ``service.settings.get_settings``: the settings given to
``create_app``, else ``Settings()`` from the environment. Tests can override it
(``app.dependency_overrides[get_settings]``, with a function of no arguments, before the app
starts): the lifespan then opens the storage of the settings it returns, and the token check
and the body limit follow them too. (``create_app`` itself does not use
``dependency_overrides``: while any is set, FastAPI analyses every dependency's signature again
on every request.)

When the setting ``tokens`` has any, every path but the probes ``/healthz`` and ``/readyz``
(a status and a reason code, ``service.readiness``) and the dashboard page's
(``service.dashboard``: no data, the page asks for the token) needs one (``TokenMiddleware``).

Routes and dependencies are ``async``: FastAPI runs plain functions in its thread pool, and a hop
there and back costs more than a small request's own work. Calls that touch the database go
to the thread pool, except small sample batches (``StreamService.post_samples_async``).

Every error answers a ``service.models.Problem`` (``service.problems``). ``POST
/v1/streams/{stream_id}/samples`` is answered by ``service.fastpath`` (see there).

``create_app`` checks the data directory before anything starts (``OSError`` naming the path),
so that ``steadyscale serve`` on an unusable directory says which and why instead of failing in
the middle of start-up. With ``database_url`` the streams live in PostgreSQL
(``service.postgres``), shared with the other replicas, and no data directory is used.
"""

from __future__ import annotations

import functools
import gc
import hmac
import importlib.metadata
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.checkpoints import CheckpointPolicy
from service.dashboard import OPEN_PATHS, OPEN_PREFIX, dashboard
from service.errors import ServiceError
from service.fastpath import SamplesFastPath
from service.health import LoopWatch
from service.keda import serve_keda
from service.metrics import Metrics, RequestMetricsMiddleware
from service.models import FieldError
from service.problems import (
    http_error,
    internal_error,
    problem_response,
    storage_error,
    validation_error,
)
from service.pull.runner import open_pull
from service.replay import Replays
from service.routes import api, probes
from service.settings import Settings, get_settings
from service.storage import Storage, prepare_file
from service.store import StorageUnavailable, Store
from service.streams import INLINE_BATCH, StreamService


def _telemetry(enabled: bool) -> dict[str, Any]:
    """FastAPI's own OpenTelemetry spans, metrics and logs, on only when asked for
    (``Settings.telemetry``): the service sets up no OpenTelemetry provider (its metrics are
    Prometheus', ``service.metrics``), yet FastAPI asked OpenTelemetry for three at every
    request, a KeyError caught in os.environ each: 4.3-5.7 us, against 0.1 off (issue 32,
    session 30). FastAPI before 0.142 has no such telemetry, and no such argument."""
    if "telemetry" not in inspect.signature(FastAPI.__init__).parameters:
        return {}
    return {"telemetry": dict.fromkeys(("tracing", "metrics", "logs"), enabled)}


def create_app(settings: Settings | None = None, *, fast_path: bool = True) -> FastAPI:
    """The steadyscale service; ``settings`` default to ``Settings()`` from the environment.
    Without ``fast_path`` FastAPI's own route answers sample batches (the tests compare the
    two; ``service.fastpath``).

    Raises ``OSError`` naming the path when the data directory cannot hold the database, or
    the server when PostgreSQL's cannot be used.
    """
    settings = Settings() if settings is None else settings
    if settings.database_url is None:
        prepare_file(settings.database)
    else:
        from service.postgres import prepare_database

        prepare_database(settings.database_url, timeout=settings.busy_timeout)
    metrics = Metrics(max_streams=settings.stream_metrics)
    app = FastAPI(
        title="steadyscale",
        summary="Denoised input volume in, scaling decisions out.",
        version=importlib.metadata.version("steadyscale"),
        lifespan=lifespan,
        # /v1/streams/ is not a stream: 404, not a redirect to the list.
        redirect_slashes=False,
        # Operation ids are the route functions' names, which the OpenAPI links refer to.
        generate_unique_id_function=lambda route: route.name,
        **_telemetry(settings.telemetry),
    )
    app.openapi = functools.partial(_openapi, app)  # type: ignore[method-assign]
    app.state.metrics = metrics
    app.state.settings = settings
    # The last added runs first: metrics see every request, tokens are checked before the body
    # is read, the fast path reads it within the limit.
    if fast_path:
        samples = next(
            route for route in api.routes if getattr(route, "name", "") == "post_samples"
        )
        app.add_middleware(SamplesFastPath, route=samples)
    app.add_middleware(BodyLimitMiddleware)
    app.add_middleware(TokenMiddleware)
    app.add_middleware(RequestMetricsMiddleware, metrics=metrics)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(StorageUnavailable, storage_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(Exception, internal_error)
    app.include_router(probes)
    app.include_router(api)
    app.include_router(dashboard)
    return app


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
    """Open the storage and the streams (and the KEDA scaler, when ``grpc_port`` is set) on
    start-up; close them on shutdown."""
    settings: Settings = app.state.settings
    override: Callable[[], Settings | Awaitable[Settings]] | None
    override = app.dependency_overrides.get(get_settings)
    if override is not None:
        given = override()
        settings = await given if inspect.isawaitable(given) else given
    metrics: Metrics = app.state.metrics
    metrics.max_streams = settings.stream_metrics
    storage = open_storage(settings)
    try:
        streams = StreamService(
            storage,
            retention=settings.retention,
            max_batch=settings.max_batch,
            # A flush per commit, or a round trip to a database server, is too long to wait
            # for on the event loop.
            inline_batch=0 if settings.fsync or settings.database_url else INLINE_BATCH,
            cache_size=settings.cache_streams,
            metrics=metrics,
            work_budget=settings.work_budget,
            lock_timeout=settings.lock_timeout,
            checkpoints=CheckpointPolicy(settings.checkpoint_samples, settings.checkpoint_seconds),
        )
        # Everything loaded so far (modules, the app, restored series) lives as long as the
        # process: out of the collector's reach, a full collection no longer walks it. Such a
        # collection, set off by a request building thousands of objects in a worker thread,
        # held the GIL, and so the event loop, for about 100 ms (/healthz p99 at 10,000
        # streams while the stream list was read).
        gc.freeze()
        replays = Replays(settings.max_replays, settings.work_budget)
        with serve_keda(settings, streams), LoopWatch() as watch:
            async with open_pull(settings, streams, metrics) as pull:
                yield {
                    "settings": settings,
                    "streams": streams,
                    "metrics": metrics,
                    "replays": replays,
                    "watch": watch,
                    "pull": pull,
                }
    finally:
        storage.close()


def open_storage(settings: Settings) -> Store:
    """The database of ``settings``: PostgreSQL at ``database_url`` when set, else the SQLite
    file under ``data_dir``. Raises ``OSError`` when it cannot be opened."""
    if settings.database_url is not None:
        # Only here: the SQLite default never loads libpq.
        from service.postgres import PostgresStorage

        return PostgresStorage(
            settings.database_url,
            timeout=settings.busy_timeout,
            lock_timeout=settings.lock_timeout,
            statement_timeout=settings.statement_timeout,
        )
    return Storage(settings.database, fsync=settings.fsync, busy_timeout=settings.busy_timeout)


class TokenMiddleware:
    """401 unless the request carries ``Authorization: Bearer <token>`` with one of the
    setting ``tokens``, when it has any. The probes and the dashboard's page and files
    (``OPEN_PATHS``, ``OPEN_PREFIX``) are always open.

    A middleware rather than a dependency, so that it covers every path (the OpenAPI document
    and the docs included) and costs next to nothing when there are no tokens.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tokens: list[str] = (
            scope["state"]["settings"].tokens
            if scope["type"] == "http"
            and scope["path"] not in OPEN_PATHS
            and not scope["path"].startswith(OPEN_PREFIX)
            else []
        )
        if tokens:
            header = Headers(scope=scope).get("authorization")
            scheme, _, token = (header or "").partition(" ")
            given = token.strip().encode() if scheme.lower() == "bearer" else b""
            if not any(hmac.compare_digest(given, known.encode()) for known in tokens):
                problem = "is missing" if header is None else "has no valid bearer token"
                message = f"the Authorization header {problem}"
                allowed = "'Bearer <token>' with one of the service's tokens"
                error = ServiceError(
                    401,
                    message,
                    [FieldError.of("Authorization", None, allowed, message)],
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await problem_response(error)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BodyLimitMiddleware:
    """413 for a request body above the setting ``max_body_bytes``: at once when its
    Content-Length says so, otherwise as soon as the bytes received pass the limit."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit: int = scope["state"]["settings"].max_body_bytes
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            response = problem_response(_body_too_large(int(declared), limit))
            await response(scope, receive, send)
            return
        received = 0

        async def receive_within_limit() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                # An HTTPException: FastAPI lets it out of body parsing, to _http_error.
                raise _body_too_large(received, limit)
            return message

        await self.app(scope, receive_within_limit, send)


def _body_too_large(size: int, limit: int) -> ServiceError:
    """413; ``size`` is the body's Content-Length, or the bytes received so far."""
    allowed = f"at most {limit} bytes (setting max_body_bytes)"
    message = f"the request body is larger than {limit} bytes (setting max_body_bytes)"
    return ServiceError(413, message, [FieldError.of("body", size, allowed, message)])


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, plus what FastAPI cannot see: the bearer-token scheme (enforced by
    ``TokenMiddleware``) and the most samples a batch may hold (the setting ``max_batch``)."""
    if app.openapi_schema is None:
        document = FastAPI.openapi(app)
        components = document.setdefault("components", {})
        batch = components["schemas"]["SampleBatch"]["properties"]["samples"]
        batch["maxItems"] = app.state.settings.max_batch
        components["securitySchemes"] = {
            "bearer": {
                "type": "http",
                "scheme": "bearer",
                "description": "Required on every path but /healthz and /readyz when the "
                "service has tokens (setting tokens).",
            }
        }
        for path, operations in document["paths"].items():
            if path not in OPEN_PATHS:
                for operation in operations.values():
                    operation["security"] = [{"bearer": []}, {}]
        app.openapi_schema = document
    return app.openapi_schema
