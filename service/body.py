"""Request bodies: JSON only, strict, size-limited, parsed off the event loop when large.

Every route with a body uses ``JSONRoute``. Before FastAPI sees the body:

* a body that is not declared ``application/json`` (or ``+json``) is refused with 415 naming
  the content type, and so is a ``Content-Encoding`` (gzip bodies are not decoded);
* the body is read up to the setting ``max_body_bytes`` (``service.app.BodyLimitMiddleware``
  refuses more with 413 as soon as it arrives);
* it is parsed strictly: UTF-8, no duplicate keys (JSON leaves them undefined, and "last one
  wins" would hide a client's mistake), nesting at most ``MAX_DEPTH`` deep; anything else is a
  400 naming the body and the reason, never a parser's traceback;
* bodies above ``THREAD_BYTES`` are parsed in a worker thread, so a large one does not hold
  the event loop (``/healthz`` and the other requests) for the milliseconds it takes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from itertools import chain
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from service.errors import ServiceError
from service.models import FieldError

# Above this, json.loads takes about a millisecond: worth the hop to a worker thread.
THREAD_BYTES = 64 * 1024
# Deeper than any body the API takes (a filter spec is three levels deep).
MAX_DEPTH = 32
# What the JSON parser builds that holds further values (objects are dicts: _unique_keys).
_CONTAINERS = (dict, list)

JSON_ALLOWED = "application/json (UTF-8)"


class JSONRequest(Request):
    """A request whose ``json()`` is the strict, bounded parse described in the module."""

    async def body(self) -> bytes:
        """The body, read as Starlette's ``Request.body`` reads it (``ClientDisconnect`` when
        the client goes first), without the async generator it reads through: making,
        registering and closing one took 5.2 us of a 1-sample POST, this loop 1.5 (issue 32,
        session 30)."""
        if not hasattr(self, "_body"):
            chunks: list[bytes] = []
            more = True
            while more:
                message = await self.receive()
                if message["type"] == "http.disconnect":
                    raise ClientDisconnect()
                if message["type"] == "http.request":
                    chunks.append(message.get("body", b""))
                    more = message.get("more_body", False)
            self._body = b"".join(chunks)
        return self._body

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            if len(body) > THREAD_BYTES:
                self._json = await run_in_threadpool(parse_json, body)
            else:
                self._json = parse_json(body)
        return self._json


class JSONRoute(APIRoute):
    """An ``APIRoute`` that reads its body as a ``JSONRequest`` after checking its content
    type and encoding (415 otherwise)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        if self.body_field is None:
            return handler

        async def strict_handler(request: Request) -> Response:
            strict = JSONRequest(request.scope, request.receive)
            if await strict.body():
                check_content_type(strict)
            return await handler(strict)

        return strict_handler


def parse_json(body: bytes) -> Any:
    """The JSON document ``body``; a 400 ``ServiceError`` naming what is wrong with it.

    >>> parse_json(b'{"samples": []}')
    {'samples': []}
    >>> parse_json(b'{"t": 1, "t": 2}')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    service.errors.ServiceError: 400: the body is not acceptable JSON: the key 't' appears ...
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        reason = f"it is not UTF-8 (byte {error.start} is {body[error.start]:#04x})"
        raise _bad_body(reason) from None
    try:
        document = _STRICT.decode(text)
    except json.JSONDecodeError as error:
        raise _bad_body(f"{error.msg} at character {error.pos}") from None
    except RecursionError:
        raise _bad_body(f"it is nested more than {MAX_DEPTH} levels deep") from None
    except _DuplicateKey as error:
        raise _bad_body(f"the key {error.key!r} appears twice in one object") from None
    except ValueError as error:  # an integer longer than Python converts (4,300 digits)
        raise _bad_body(str(error).partition(";")[0]) from None
    if _depth(document) > MAX_DEPTH:
        raise _bad_body(f"it is nested more than {MAX_DEPTH} levels deep")
    return document


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return document


# json.loads(text, object_pairs_hook=_unique_keys) without building its decoder at every call
# (json.loads does: about 40 us of a 100-sample batch's 250).
_STRICT = json.JSONDecoder(object_pairs_hook=_unique_keys)


def _depth(document: Any) -> int:
    """Nesting depth of containers (1 for a bare value); the request bodies are shallow and
    short-circuit fast. A level's values are gathered and sorted out in one comprehension:
    about 0.4 us per object of a sample batch, against 1 us looping over each object."""
    if not isinstance(document, _CONTAINERS):
        return 1
    deepest, level = 0, [document]
    while level:
        deepest += 1
        if deepest > MAX_DEPTH:
            return deepest
        values = chain.from_iterable(
            item.values() if isinstance(item, dict) else item for item in level
        )
        level = [value for value in values if isinstance(value, _CONTAINERS)]
    return deepest


def _bad_body(reason: str) -> ServiceError:
    message = f"the body is not acceptable JSON: {reason}"
    allowed = f"a JSON document, UTF-8, without duplicate keys, at most {MAX_DEPTH} levels deep"
    return ServiceError(400, message, [FieldError.of("body", None, allowed, message)])


def _media_type(declared: str) -> tuple[str, str]:
    """The type and subtype of a Content-Type header, lower case, as ``email.message`` reads
    them (``text/plain`` for a value without exactly one ``/``), without building a message.

    >>> _media_type("Application/JSON; charset=utf-8"), _media_type("json")
    (('application', 'json'), ('text', 'plain'))
    """
    media = declared.partition(";")[0].strip().lower()
    if media.count("/") != 1:
        media = "text/plain"
    maintype, _, subtype = media.partition("/")
    return maintype, subtype


def check_content_type(request: Request) -> None:
    """415 (a ``ServiceError``) unless the body is declared JSON and is not encoded."""
    declared = request.headers.get("content-type")
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding != "identity":
        message = f"content-encoding {encoding!r} is not supported: send the body uncompressed"
        allowed = "identity (no Content-Encoding header)"
        field = FieldError.of("Content-Encoding", encoding, allowed, message)
        raise ServiceError(415, message, [field])
    if declared is not None:
        maintype, subtype = _media_type(declared)
        if maintype == "application" and (subtype == "json" or subtype.endswith("+json")):
            return
    shown = "missing" if declared is None else f"{declared[:100]!r}"
    message = f"the Content-Type header is {shown}; the body must be {JSON_ALLOWED}"
    raise ServiceError(
        415, message, [FieldError.of("Content-Type", declared, JSON_ALLOWED, message)]
    )
