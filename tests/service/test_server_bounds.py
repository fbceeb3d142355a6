"""service/server.py's bounds on a connection (``BoundedProtocol``), against a real `steadyscale
serve` over TCP: request heads and bodies that never finish, and heads that never end."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from pathlib import Path

from tests.service.test_server import Server, healthz_seconds


def test_connections_that_never_finish_their_headers_or_bodies_are_closed(
    tmp_path: Path,
) -> None:
    """Item 11 (issue 14): partial headers, on fresh connections and on kept-alive ones, are
    cut off after the header timeout; complete requests are served. Item 6 (issue 32): so are
    bodies sent a byte at a time, after the body timeout."""
    env = {"STEADYSCALE_HEADER_TIMEOUT": "1", "STEADYSCALE_BODY_TIMEOUT": "1"}
    server = Server(tmp_path / "data", env=env)
    try:
        slow = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(50)]
        for connection in slow[:25]:
            connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        for connection in slow[25:]:
            connection.sendall(
                b"POST /v1/streams/s/samples HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
            )
        kept = socket.create_connection(("127.0.0.1", server.port))
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = b""
        while not answer.endswith(b'{"status":"ok"}'):
            answer += kept.recv(4096)
        assert b"200 OK" in answer
        kept.sendall(b"GET /healthz HTTP/1.1\r\n")
        time.sleep(2.5)
        for connection in [*slow, kept]:
            connection.settimeout(1.0)
            try:
                assert connection.recv(4096) == b""
            except ConnectionResetError:
                pass
            connection.close()
        assert healthz_seconds(server.url, 2) < 1.0
    finally:
        server.stop()


def test_a_request_head_that_never_ends_is_refused_without_being_kept(tmp_path: Path) -> None:
    """httptools keeps a request's line and headers however long they grow (h11 refused them
    past 16 KiB): a header that goes on for 64 MiB is answered 400 and cut off well before,
    and the server's memory does not grow by it."""
    server = Server(tmp_path / "data")
    try:
        rss = Path(f"/proc/{server.process.pid}/status")

        def resident_mib() -> float:
            return int(rss.read_text().split("VmRSS:")[1].split()[0]) / 1024

        before = resident_mib()
        endless = socket.create_connection(("127.0.0.1", server.port))
        endless.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Endless: ")
        sent = 0
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            while sent < 64 << 20:
                endless.sendall(b"a" * (64 << 10))
                sent += 64 << 10
        assert sent < 64 << 20, "the server took 64 MiB of one header"
        with contextlib.suppress(ConnectionResetError):  # the 400 may be lost to the reset
            answer = endless.recv(4096)
            assert answer == b"" or answer.startswith(b"HTTP/1.1 400")
        endless.close()
        assert resident_mib() - before < 16
        assert healthz_seconds(server.url, 2) < 1.0
    finally:
        server.stop()


def test_a_request_the_parser_refuses_gets_the_service_s_problem_body(tmp_path: Path) -> None:
    """httptools refuses a method that is not HTTP's before the app sees it; the 400 says so
    as every other error does: JSON naming the field, the value and what is allowed."""
    server = Server(tmp_path / "data")
    try:
        for request in (b"FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n", b"GET / HTTP/9\r\n\r\n"):
            connection = socket.create_connection(("127.0.0.1", server.port))
            connection.sendall(request)
            answer = b""
            with contextlib.suppress(ConnectionResetError):
                while chunk := connection.recv(65536):
                    answer += chunk
            connection.close()
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 400"), answer[:200]
            assert b"content-type: application/json" in head.lower()
            problem = json.loads(body)
            assert problem["status"] == 400 and problem["error"] == "Bad Request"
            [error] = problem["errors"]
            assert error["field"] == "request" and "HTTP/1.1" in error["allowed"]
        assert healthz_seconds(server.url, 2) < 1.0
    finally:
        server.stop()
