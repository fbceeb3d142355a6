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
   collected (path first, then body) into one ``RequestValidationError`` (422) — a plain
   batch is parsed and validated in one pass (``_plain_batch``), anything else as the route
   does it;
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

from service.body import THREAD_BYTES, JSONRequest, check_content_type
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
        batch = _plain_batch(body)
        if batch is None:
            document = await request.json()
            batch, refused = _validated(_BATCH, document, ("body",))
            errors.extend(refused)
    if errors or batch is None:
        raise RequestValidationError(errors, body=document)
    return await apply_batch(request.scope["state"]["streams"], stream_id, batch.samples)


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


def _plain_batch(body: bytes) -> SampleBatch | None:
    """The batch, parsed and validated from the bytes by pydantic-core in one pass, when that
    gives what ``parse_json`` then validation give; else ``None`` (the caller takes that
    path, and its answer, 400 or 422, is the route's).

    ``parse_json`` then ``validate_python`` cost about twice what ``validate_json`` alone does
    (2.1 against 1.1 M instructions for 100 samples; issue 32, 100-sample batches). A body
    that validates needs none of ``parse_json``'s checks but one: it holds no string but its
    keys, and nothing deeper than a sample, and pydantic-core reads numbers as ``json`` does
    (``tests/service/test_fastpath.py`` compares them), but takes the last of two equal keys
    where ``parse_json`` refuses them. So the body's colons, one per member of an object
    (every string is a key, and no field's name holds one), are counted against the members
    the batch was given. Bodies above ``THREAD_BYTES`` are left to the route's way, which
    parses them in a worker thread.
    """
    if len(body) > THREAD_BYTES:
        return None
    try:
        batch = _BATCH.validate_json(body)
    except ValidationError:
        return None
    members = 1 + sum(len(sample.model_fields_set) for sample in batch.samples)
    return batch if body.count(b":") == members else None


def _route_path(scope: Scope) -> str:
    """The path the router matches: below the root path, when the server was given one."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root) : len(root) + 1] == "/":
        return path[len(root) :]
    return path
