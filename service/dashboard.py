"""The dashboard page: ``GET /`` and the files it loads, all from ``service/static``.

The page (``static/index.html``, ``dashboard.js``) draws each stream from the service's own
JSON routes (``/v1/streams``, ``/v1/streams/{id}/history``), with uPlot (MIT, vendored from the
npm registry with its licence as ``uPlot.LICENSE``). It loads nothing from anywhere else, and
its Content-Security-Policy says so to the browser: in a cluster without internet it works the
same.

The page and its files hold no data, so they are served without a token (``OPEN_PATHS``,
``OPEN_PREFIX``, which ``service.app.TokenMiddleware`` lets through); the JSON the page reads
needs one when the service has tokens, and the page asks for it once, keeping it in the tab's
``sessionStorage``.

The page and its files are not in the OpenAPI document. The route behind the page's "what if"
panel is part of the API: ``POST /v1/streams/{id}/what-if`` replays the stream's retained
samples through another configuration and answers the decisions it would have made, storing
nothing (a dry run).
"""

from __future__ import annotations

import importlib.resources
from typing import Annotated, cast

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from service.answers import decision_out, json_answer, problems
from service.body import JSONRoute
from service.errors import ServiceError
from service.models import DecisionOut, StreamConfig
from service.replay import Replays
from service.routes import StreamId, StreamsDep
from service.settings import Settings, get_settings

# Served without a token: the page and its files, and the probes (a status and a reason code,
# which Kubernetes' httpGet probes ask for without one); never the data.
OPEN_PREFIX = "/dashboard/"
OPEN_PATHS = frozenset({"/", "/healthz", "/readyz"})

# Every file the page loads, and its media type: nothing else under OPEN_PREFIX answers.
ASSETS = {
    "dashboard.js": "text/javascript; charset=utf-8",
    "chart.js": "text/javascript; charset=utf-8",
    "whatif.js": "text/javascript; charset=utf-8",
    "dashboard.css": "text/css; charset=utf-8",
    "uPlot.iife.min.js": "text/javascript; charset=utf-8",
    "uPlot.min.css": "text/css; charset=utf-8",
    "uPlot.LICENSE": "text/plain; charset=utf-8",
}

# Scripts, styles, images and requests from this origin only, no inline script or style (uPlot
# sets styles through the CSSOM, which a policy does not restrict).
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)

# The most samples one what-if replays: as many as the page draws in a chart. Measured over
# 20,000 samples: 0.42 s with the default filter, 0.69 s with TVD, in a worker thread; a
# costlier filter is held to the setting work_budget (service.replay).
MAX_REPLAY = 20_000

_STATIC = importlib.resources.files("service") / "static"

dashboard = APIRouter(route_class=JSONRoute)


class WhatIfOut(BaseModel):
    """The decisions another configuration would have made on the stream's samples."""

    decisions: list[DecisionOut] = Field(description="One per sample replayed, in order.")
    scaling_operations: int = Field(description="Decisions that changed the operator count.")


async def get_replays(request: Request) -> Replays:
    """The app's ``Replays``, opened by its lifespan."""
    return cast(Replays, request.state.replays)


@dashboard.post(
    "/v1/streams/{stream_id}/what-if",
    tags=["streams"],
    response_model=WhatIfOut,
    responses=problems(400, 401, 404, 413, 415, 422, 503),
)
async def what_if(
    request: Request,
    stream_id: StreamId,
    config: StreamConfig,
    streams: StreamsDep,
    replays: Annotated[Replays, Depends(get_replays)],
    since: Annotated[
        float | None,
        Query(allow_inf_nan=False, description="Replay the samples with t > since."),
    ] = None,
    limit: Annotated[
        int, Query(ge=1, le=MAX_REPLAY, description="Most samples replayed, the first ones.")
    ] = MAX_REPLAY,
) -> Response:
    """A dry run: the stream's retained samples (with what the job reported) through a fresh
    Scaler of ``config``, starting at ``config.operators``. Nothing is stored; the stream and
    its decisions stay as they are. Bounded (``service.replay``): 503 while ``max_replays``
    run, 422 above the ``work_budget``; it stops when the client leaves."""
    decisions = await replays.replay(request, streams, stream_id, config, since, limit)

    def answer() -> bytes:
        out = WhatIfOut(
            decisions=[decision_out(decision) for decision in decisions],
            scaling_operations=sum(decision.action != "none" for decision in decisions),
        )
        return out.model_dump_json().encode()

    return json_answer(await run_in_threadpool(answer))


@dashboard.get("/", response_class=HTMLResponse, include_in_schema=False)
async def page(settings: Annotated[Settings, Depends(get_settings)]) -> Response:
    """The dashboard; it asks for a token before reading any data when the service has
    tokens (``data-tokens="required"``), rather than meet a 401 first."""
    html = (_STATIC / "index.html").read_text(encoding="utf-8")
    return Response(
        html.replace("{tokens}", "required" if settings.tokens else "none"),
        media_type="text/html; charset=utf-8",
        headers={
            "Content-Security-Policy": CONTENT_SECURITY_POLICY,
            "Cache-Control": "no-cache",
            "X-Content-Type-Options": "nosniff",
        },
    )


@dashboard.get(OPEN_PREFIX + "{name}", include_in_schema=False)
async def asset(name: str) -> Response:
    """One of the page's files (``ASSETS``); 404 for any other name."""
    media_type = ASSETS.get(name)
    if media_type is None:
        raise ServiceError(404, f"the dashboard has no file {name[:100]!r}")
    # no-cache: the browser revalidates, so a new version of the service is seen at once.
    return Response(
        (_STATIC / name).read_bytes(),
        media_type=media_type,
        headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )
