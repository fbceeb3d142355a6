"""FastAPI's own OpenTelemetry is off unless ``STEADYSCALE_TELEMETRY`` asks for it: off, a
request never asks OpenTelemetry for a provider (about 5 us each, issue 32); on, FastAPI traces
requests through whatever provider an OpenTelemetry SDK set up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# In a fresh interpreter: OpenTelemetry's global provider can be set once per process. The
# provider counts the tracers asked of it; the app serves a probe, a PUT and a POST.
_SCRIPT = """
import sys
from pathlib import Path
from fastapi.testclient import TestClient
from opentelemetry import trace
from service.app import create_app
from service.settings import Settings

asked = []

class Provider(trace.TracerProvider):
    def get_tracer(self, name, *args, **kwargs):
        asked.append(name)
        return trace.NoOpTracer()

trace.set_tracer_provider(Provider())
with TestClient(create_app(Settings(data_dir=Path(sys.argv[1])))) as client:
    assert client.get("/healthz").status_code == 200
    assert client.put("/v1/streams/s", json={"policy": {"capacity": 50}}).status_code == 201
    sample = {"samples": [{"t": 1, "volume": 100}]}
    assert client.post("/v1/streams/s/samples", json=sample).status_code == 200
print(len(asked))
"""


def tracers_asked(data_dir: Path, telemetry: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYSCALE_")}
    if telemetry is not None:
        env["STEADYSCALE_TELEMETRY"] = telemetry
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(data_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


@pytest.mark.parametrize("telemetry, asked", [(None, 0), ("false", 0), ("true", 1)])
def test_fastapi_asks_opentelemetry_for_a_tracer_only_when_telemetry_is_on(
    tmp_path: Path, telemetry: str | None, asked: int
) -> None:
    assert tracers_asked(tmp_path, telemetry) == asked
