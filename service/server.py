"""Running the app under uvicorn, with the limits uvicorn leaves open.

uvicorn closes idle keep-alive connections (``timeout_keep_alive``) but has no limit on how long
a client may take to send a request's headers: a client that opens connections and sends a few
bytes of headers now and then holds them open forever (slowloris). ``HeaderTimeoutProtocol``
closes a connection whose request headers are not complete ``header_timeout`` seconds after the
connection opened or its previous response ended, and one whose request body is not complete
``body_timeout`` seconds after its headers were (issue 32: 4,000 connections sending a byte of
body every 2 s were all held).

``serve(app, settings)`` is what ``steadyscale serve`` runs.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import h11
import uvicorn
from fastapi import FastAPI
from uvicorn.protocols.http.h11_impl import H11Protocol

from service.settings import Settings

# The client's states while no request of it has begun: before the first, or after the last.
_WAITING = (h11.IDLE, h11.DONE)


class HeaderTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol, closing connections that do not finish sending a request's
    headers within ``header_timeout`` seconds, or its body within ``body_timeout`` seconds of
    its headers."""

    header_timeout = 10.0
    body_timeout = 20.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        state = self.conn.their_state
        if state is not h11.IDLE:
            # The request line and headers are in.
            self._disarm_header_timer()
        if state is h11.SEND_BODY:
            if self._body_timer is None:
                self._body_timer = self.loop.call_later(self.body_timeout, self._body_too_slow)
        else:
            self._disarm_body_timer()

    def on_response_complete(self) -> None:
        self._disarm_body_timer()
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state in _WAITING:
            self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        self._disarm_body_timer()
        super().connection_lost(exc)

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
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            self.transport.close()

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.conn.their_state in _WAITING and not self.transport.is_closing():
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
    protocol = type("HeaderTimeout", (HeaderTimeoutProtocol,), timeouts)
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
