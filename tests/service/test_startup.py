"""`steadyscale serve` refuses what it cannot start with in one line, naming the option or the
variable, the value and what is allowed, and claims nothing (issue 32, items 11 and 12)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.server import listen
from simulator.cli import main


@pytest.fixture
def taken() -> Iterator[int]:
    """A loopback port another process listens on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


def refusal(capfd: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["serve", *argv]) == 2
    out, err = capfd.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert "Traceback" not in err and "startup complete" not in err
    return err


@pytest.mark.parametrize(
    "option, variable", [("--port", "STEADYSCALE_PORT"), ("--grpc-port", "STEADYSCALE_GRPC_PORT")]
)
def test_a_port_in_use_is_one_line_naming_it(
    capfd: pytest.CaptureFixture[str], tmp_path: Path, taken: int, option: str, variable: str
) -> None:
    ports = ["--port", "0"] if option == "--grpc-port" else []
    err = refusal(capfd, "--data-dir", str(tmp_path), *ports, option, str(taken))
    assert f"127.0.0.1:{taken}" in err and option in err and variable in err
    assert "in use" in err


def test_settings_errors_are_one_line_naming_option_value_and_what_is_allowed(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    err = refusal(capfd, "--port", "99999", "--data-dir", str(tmp_path))
    assert err.startswith("steadyscale serve: error: --port=99999 is not allowed: ")
    assert "65535" in err and "pydantic" not in err
    monkeypatch.setenv("STEADYSCALE_MAX_BATCH", "-3")
    err = refusal(capfd, "--data-dir", str(tmp_path))
    assert (
        "STEADYSCALE_MAX_BATCH=-3 is not allowed: " in err and "greater than or equal to 1" in err
    )
    monkeypatch.delenv("STEADYSCALE_MAX_BATCH")
    monkeypatch.setenv("STEADYSCALE_DATABASE_URL", "mysql://user:hunter2@db/x")
    err = refusal(capfd, "--data-dir", str(tmp_path))
    assert "STEADYSCALE_DATABASE_URL is not allowed" in err and "hunter2" not in err


def test_connections_to_the_listening_socket_answer_without_waiting_for_delayed_acks() -> None:
    """The socket ``serve`` listens on says it is TCP, so asyncio sets TCP_NODELAY on every
    connection it accepts: without it, an answer's headers and body (two writes) waited for the
    client's delayed ACK, and every request took 40 ms more (found while benchmarking issue 32)."""

    async def nodelay_of_an_accepted_connection() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        with listen("127.0.0.1", 0, "--port") as sock:
            server = await asyncio.start_server(on_connection, sock=sock)
            async with server:
                _, writer = await asyncio.open_connection(*sock.getsockname())
                result = await asyncio.wait_for(accepted, 10.0)
                writer.close()
                return result

    assert asyncio.run(nodelay_of_an_accepted_connection()) != 0
