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

None of these routes is in the OpenAPI document: they are not part of the API.
"""

from __future__ import annotations

import importlib.resources
from typing import Annotated

from fastapi import APIRouter, Depends, Response
from fastapi.responses import HTMLResponse

from service.settings import Settings, get_settings
from service.streams import ServiceError

# Served without a token: the page and its files, never the data.
OPEN_PREFIX = "/dashboard/"
OPEN_PATHS = frozenset({"/", "/healthz"})

# Every file the page loads, and its media type: nothing else under OPEN_PREFIX answers.
ASSETS = {
    "dashboard.js": "text/javascript; charset=utf-8",
    "dashboard.css": "text/css; charset=utf-8",
    "uPlot.iife.min.js": "text/javascript; charset=utf-8",
    "uPlot.min.css": "text/css; charset=utf-8",
    "uPlot.LICENSE": "text/plain; charset=utf-8",
}

# Scripts, styles, images and requests from this origin only; uPlot sets element styles.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)

_STATIC = importlib.resources.files("service") / "static"

dashboard = APIRouter(include_in_schema=False)


@dashboard.get("/", response_class=HTMLResponse)
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


@dashboard.get(OPEN_PREFIX + "{name}")
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
