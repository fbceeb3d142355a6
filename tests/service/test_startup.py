"""`steadyscale serve` refuses what it cannot start with in one line, naming the option or the
variable, the value and what is allowed, and claims nothing (issue 32, items 11 and 12)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

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
