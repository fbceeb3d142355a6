"""Every error as a ``service.models.Problem``: the app's exception handlers, and the answer
they give, which ``service.fastpath`` gives too.

Status, reason phrase, one sentence, and each field at fault with the value received (cut
short) and what is allowed, at most ``MAX_ERRORS`` of them; 409 also names the sample. Trouble
with the storage answers 503 with ``Retry-After``. A 405 lists every method the path takes in
``Allow``. No error body grows with the input (``MAX_ERROR_BODY``).
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import Match
from starlette.types import Scope

from service.dashboard import dashboard
from service.errors import ServiceError, Unavailable
from service.models import MAX_ERRORS, STREAM_ID_ALLOWED, FieldError, Problem
from service.routes import api, probes
from service.shown import cut
from service.store import StorageUnavailable

# The largest error body, bytes, whatever the request (issue 32: a 1 MB PUT was answered 15.6 MB).
MAX_ERROR_BODY = 64 * 1024


async def http_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, HTTPException)
    if error.status_code == 405:
        allowed = allowed_methods(request.scope)
        message = f"{request.method[:20]} is not allowed here: use {', '.join(allowed)}"
        method = FieldError.of("method", request.method, ", ".join(allowed), message)
        error = ServiceError(405, message, [method], headers={"Allow": ", ".join(allowed)})
    elif error.status_code == 404 and not isinstance(error, ServiceError):
        path = request.url.path
        message = f"no route has the path {path[:100]!r}"
        paths = "a path of the API (GET /openapi.json lists them)"
        error = ServiceError(404, message, [FieldError.of("path", path, paths, message)])
    return problem_response(error)


async def storage_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, StorageUnavailable)
    return problem_response(Unavailable(error))


async def validation_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    details = error.errors()
    errors = [field_error(detail) for detail in details[:MAX_ERRORS]]
    summary = "; ".join(field.message for field in errors[:3])
    more = f" (and {len(details) - 3} more)" if len(details) > 3 else ""
    return problem_response(ServiceError(422, summary + more, errors))


def allowed_methods(scope: Scope) -> list[str]:
    """Every method some route of the app takes at the scope's path (Starlette's own 405
    names only the first route that matched the path)."""
    methods: set[str] = set()
    for route in (*probes.routes, *api.routes, *dashboard.routes):
        match, _ = route.matches(scope)
        if match != Match.NONE:
            methods |= getattr(route, "methods", None) or set()
    return sorted(methods)


async def internal_error(request: Request, error: Exception) -> JSONResponse:
    # Starlette logs the exception (it re-raises it to the server once this response is sent).
    return problem_response(ServiceError(500, "internal error; the server log has the details"))


def problem_response(error: HTTPException) -> JSONResponse:
    if isinstance(error, ServiceError):
        detail, errors, sample = error.message, error.errors[:MAX_ERRORS], error.sample
    else:
        detail, errors, sample = cut(str(error.detail)), [], None
    problem = Problem(
        status=error.status_code,
        error=HTTPStatus(error.status_code).phrase,
        detail=detail,
        errors=errors,
        sample=sample,
    )
    response = JSONResponse(problem.model_dump(mode="json"), error.status_code, error.headers)
    while len(response.body) > MAX_ERROR_BODY and problem.errors:
        # Escaped characters (\u0000 is six) can still take MAX_ERRORS sentences past it.
        problem.errors = problem.errors[: len(problem.errors) // 2]
        response = JSONResponse(problem.model_dump(mode="json"), error.status_code, error.headers)
    return response


def field_error(detail: dict[str, Any]) -> FieldError:
    """One of pydantic's validation errors as a ``FieldError`` naming the field."""
    where, *path = detail["loc"]
    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)
    field = field.lstrip(".") or where
    kind = detail["type"]
    if kind == "missing":
        return FieldError.of(field, None, "required", f"{field[:100]} is missing; it is required")
    if kind == "json_invalid":
        message = f"the body is not valid JSON: {detail['ctx']['error']} at character {path[0]}"
        return FieldError.of("body", None, "a JSON document", message)
    if kind == "value_error":
        allowed = str(detail["ctx"]["error"])
    elif where == "path" and field == "stream_id":
        allowed = f"stream_id must be {STREAM_ID_ALLOWED}"
    else:
        allowed = detail["msg"]
    return FieldError.of(field, detail.get("input"), allowed)
