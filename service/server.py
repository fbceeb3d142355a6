"""Running the app under uvicorn, with the limits uvicorn leaves open.

The HTTP/1.1 parser is uvicorn's httptools protocol (llhttp, in C), not its h11 one (pure
Python): h11 parsed each request in about as many instructions as json and pydantic spent on a
100-sample body (docs/benchmarks.md, issue 32 session 19).

uvicorn closes idle keep-alive connections (``timeout_keep_alive``) but has no limit on how long
a client may take to send a request's headers: a client that opens connections and sends a few
bytes of headers now and then holds them open forever (slowloris). ``BoundedProtocol`` closes a
connection whose request headers are not complete ``header_timeout`` seconds after the
connection opened or its previous response ended, and one whose request body is not complete
``body_timeout`` seconds after its headers were (issue 32: 4,000 connections sending a byte of
body every 2 s were all held). httptools, unlike h11, also keeps whatever a request's head
grows to until it ends: ``BoundedProtocol`` answers 400 to a request line and headers larger
than h11's bound, ``max_head`` bytes. A request the parser refuses (a method that is not
HTTP's, a malformed line) or whose head is too large is answered as every other error, with
the service's problem body (``service.models.Problem``), not uvicorn's plain text.

``serve(app, settings)`` is what ``steadyscale serve`` runs.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn
from fastapi import FastAPI
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from service.models import FieldError, Problem
from service.settings import Settings


class BoundedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, closing connections that do not finish sending a
    request's headers within ``header_timeout`` seconds, or its body within ``body_timeout``
    seconds of its headers, and refusing a request whose line and headers pass ``max_head``
    bytes."""

    header_timeout = 10.0
    body_timeout = 20.0
    # h11's bound on an incomplete request head (h11.DEFAULT_MAX_INCOMPLETE_EVENT_SIZE), what
    # the service took before httptools. Counted per read, so a head is refused once it passes
    # this by at most one read (asyncio reads 256 KiB at most).
    max_head = 16 * 1024

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        # Where the client is: between requests or in a request's head (``_in_head``), or in
        # its body (``_in_body``); neither while a request waits for its answer.
        self._in_head = True
        self._in_body = False
        self._head_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._in_head and self._head_bytes > self.max_head and not self.transport.is_closing():
            self.send_400_response("Request line and headers too large.")
            return
        if self._in_body:
            if self._body_timer is None:
                self._body_timer = self.loop.call_later(self.body_timeout, self._body_too_slow)
        else:
            self._disarm_body_timer()

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._in_body = True
        self._head_bytes = 0
        self._disarm_header_timer()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._in_body = False
        self._in_head = True
        super().on_message_complete()

    def on_response_complete(self) -> None:
        self._disarm_body_timer()
        super().on_response_complete()
        if not self.transport.is_closing() and self._in_head:
            self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        self._disarm_body_timer()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """uvicorn's 400 for a request its parser refuses, with the service's problem body."""
        allowed = (
            "an HTTP/1.1 request: a method the API takes (GET, PUT, POST, DELETE, ...), a path "
            f"and headers of at most {self.max_head // 1024} KiB together, then a body of "
            "Content-Length bytes"
        )
        error = FieldError.of("request", None, allowed, f"{msg} Allowed: {allowed}")
        problem = Problem(status=400, error="Bad Request", detail=msg, errors=[error])
        body = problem.model_dump_json().encode()
        head = [b"HTTP/1.1 400 Bad Request\r\n"]
        for name, value in self.server_state.default_headers:
            head.append(name + b": " + value + b"\r\n")
        head.append(b"content-type: application/json\r\n")
        head.append(b"content-length: " + str(len(body)).encode("ascii") + b"\r\n")
        head.append(b"connection: close\r\n\r\n")
        self.transport.write(b"".join(head) + body)
        self.transport.close()

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _disarm_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_too_slow(self) -> None:
        self._body_timer = None
        if self._in_body and not self.transport.is_closing():
            self.transport.close()

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self._in_head and not self.transport.is_closing():
            self.transport.close()


def serve(app: FastAPI, settings: Settings, *, log_level: str = "info") -> None:
    """Run ``app`` under uvicorn on ``settings.host:settings.port`` until stopped, with the
    header timeout of ``settings.header_timeout``.

    Both ports are taken before anything starts: one that cannot be is an ``OSError`` of one
    line naming the port and its option, and nothing has claimed to have started.
    """
    if settings.grpc_port is not None:
        # The KEDA scaler binds it during start-up, where a failure is a page of traceback.
        listen(settings.host, settings.grpc_port, "--grpc-port, STEADYSCALE_GRPC_PORT").close()
    sock = listen(settings.host, settings.port, "--port, STEADYSCALE_PORT")
    timeouts = {"header_timeout": settings.header_timeout, "body_timeout": settings.body_timeout}
    protocol = type("Bounded", (BoundedProtocol,), timeouts)
    config = uvicorn.Config(
        app, log_level=log_level, http=protocol, timeout_keep_alive=5, lifespan="on"
    )
    with sock:
        uvicorn.Server(config).run(sockets=[sock])


def listen(host: str, port: int, option: str) -> socket.socket:
    """A socket bound to ``host:port`` (as uvicorn binds one), or ``OSError`` in one line
    naming the address and ``option``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not left 0: asyncio sets TCP_NODELAY only on connections whose socket
    # says TCP, and without it every answer (headers, then body: two writes) waited for the
    # client's delayed ACK, 40 ms on Linux (a 1-sample POST took 44 ms instead of 1).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port} ({option}): {error.strerror}") from None
    sock.set_inheritable(True)
    return sock
