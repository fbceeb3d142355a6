"""``POST /v1/streams/{stream_id}/samples`` answered without FastAPI's router and dependencies.

The service's hottest request is a small sample batch. FastAPI spent about half of a 1-sample
POST's CPU in process on it before the stream's own work began: three passes of route
matching through nested routers, solving the route's dependencies, a second request object
(issue 32's target: 1-sample POSTs at 60 % of a bare endpoint's rate). ``SamplesFastPath``
does what that route does, in the same order, with the same functions:

1. the body is read (through ``BodyLimitMiddleware``'s limit: 413);
2. a body that is not empty must be declared JSON (``service.body``: 415), and is parsed
   strictly (400);
3. the stream id and the body are validated against the route's own types, every error
   collected (path first, then body) into one ``RequestValidationError`` (422);
4. ``service.routes.apply_batch`` applies it and answers.

Errors are answered by the app's own handlers (``service.problems``); any other exception goes
on to Starlette's server-error handler, as it would from the route. The route stays declared
in FastAPI (the OpenAPI document, every other method on the path: 405); the tests send the
same requests through both and compare the answers byte for byte
(``tests/service/test_fastpath.py``). Only the exact path, with ``stream_id`` one segment as
the route's ``{stream_id}`` takes it, is answered here; everything else passes on.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import Response
from fastapi.exceptions import RequestValidationError
from pydantic import StringConstraints, TypeAdapter, ValidationError
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from service.body import JSONRequest, check_content_type
from service.models import STREAM_ID_PATTERN, SampleBatch
from service.problems import http_error, storage_error, validation_error
from service.routes import apply_batch
from service.store import StorageUnavailable

# The route's path; {stream_id} is one segment, as Starlette's default convertor takes it.
_PATH = re.compile(r"/v1/streams/([^/]+)/samples")
_STREAM_ID = TypeAdapter(Annotated[str, StringConstraints(pattern=STREAM_ID_PATTERN)])
_BATCH = TypeAdapter(SampleBatch)


class SamplesFastPath:
    """ASGI middleware answering ``POST`` on ``route``'s path (see the module); ``route`` is the
    FastAPI route it stands in for, put in the scope for the request metrics' label."""

    def __init__(self, app: ASGIApp, route: BaseRoute) -> None:
        self.app = app
        self.route = route

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        matched = _PATH.fullmatch(_route_path(scope))
        if matched is None:
            await self.app(scope, receive, send)
            return
        scope["route"] = self.route
        request = JSONRequest(scope, receive)
        try:
            response = await _answer(request, matched.group(1))
        except HTTPException as error:
            response = await http_error(request, error)
        except StorageUnavailable as error:
            response = await storage_error(request, error)
        except RequestValidationError as error:
            response = await validation_error(request, error)
        await response(scope, receive, send)


async def _answer(request: JSONRequest, stream_id: str) -> Response:
    body = await request.body()
    if body:
        check_content_type(request)
    _, errors = _validated(_STREAM_ID, stream_id, ("path", "stream_id"))
    document: Any = None
    batch: SampleBatch | None = None
    if not body:  # FastAPI's answer to a required body that is absent
        errors.append({"type": "missing", "loc": ("body",), "msg": "Field required", "input": None})
    else:
        document = await request.json()
        batch, refused = _validated(_BATCH, document, ("body",))
        errors.extend(refused)
    if errors or batch is None:
        raise RequestValidationError(errors, body=document)
    return await apply_batch(request.state.streams, stream_id, batch.samples)


def _validated(
    adapter: TypeAdapter[Any], value: Any, where: tuple[str, ...]
) -> tuple[Any, list[dict[str, Any]]]:
    """``value`` validated as FastAPI validates a parameter (``from_attributes``), or ``None``
    and pydantic's errors, located as FastAPI locates them (``where`` first)."""
    try:
        return adapter.validate_python(value, from_attributes=True), []
    except ValidationError as error:
        errors = error.errors(include_url=False)
        return None, [{**detail, "loc": (*where, *detail["loc"])} for detail in errors]


def _route_path(scope: Scope) -> str:
    """The path the router matches: below the root path, when the server was given one."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root) : len(root) + 1] == "/":
        return path[len(root) :]
    return path
