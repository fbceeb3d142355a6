"""The service fuzzed from its own OpenAPI document with schemathesis (issue 14).

Every operation gets generated requests, valid and invalid (the examples, coverage and
fuzzing phases of ``schema.parametrize``), and every response goes through all of
schemathesis's checks: no 5xx, statuses and bodies as documented, invalid data refused,
valid data accepted, undocumented methods answered 405, and so on. The stateful phase follows
the document's links, PUT a stream -> POST its samples -> GET its decision, history and metric,
in generated sequences.

The run is bounded (``EXAMPLES`` per operation, ``STEPS`` stateful sequences) so that it fits
in the test suite; raise them (``STEADYSCALE_FUZZ_EXAMPLES``) for a longer hunt.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, settings
from schemathesis.config import SchemathesisConfig

from service.app import create_app
from service.settings import Settings
from tests.service.fuzz_hooks import SAMPLES, increasing_samples

EXAMPLES = int(os.environ.get("STEADYSCALE_FUZZ_EXAMPLES", "30"))
STEPS = int(os.environ.get("STEADYSCALE_FUZZ_SEQUENCES", "300"))

# The app is built when the module loads (schemathesis reads its document then); its data
# directory goes when the module's tests are done.
_DATA = Path(tempfile.mkdtemp(prefix="steadyscale-fuzz-"))


def _app() -> FastAPI:
    return create_app(Settings(data_dir=_DATA))


# Schema-valid requests that the service may still refuse, and why: a filter's or guard's
# parameters are checked by the filter or guard (ranges, and rules across fields such as
# max_operators >= min_operators), which JSON Schema does not express (422).
# Shared with benchmarks/service.py's longer run: what the stateful phase generates, and the
# statuses schema-valid configurations may get.
CONFIG = SchemathesisConfig.from_path(Path(__file__).with_name("schemathesis.toml"))

APP = _app()
schema = schemathesis.openapi.from_asgi("/openapi.json", APP, config=CONFIG)


@schema.hook
def map_body(context: Any, body: Any) -> Any:
    """Samples in increasing ``t`` (see ``fuzz_hooks``)."""
    return increasing_samples(body) if context.operation.label == SAMPLES else body


@pytest.fixture(scope="module", autouse=True)
def started() -> Iterator[None]:
    """The app's lifespan (storage opened) around every request of this module."""
    with TestClient(APP):
        yield
    shutil.rmtree(_DATA, ignore_errors=True)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_every_operation_answers_as_documented(case: Any) -> None:
    case.call_and_validate()


# Every sequence run: (operation, stream id, status, decisions in the answer) per step.
SEQUENCES: list[list[tuple[str, str | None, int, int]]] = []


class StatefulTest(schema.as_state_machine()):  # type: ignore[misc]
    """Each sequence starts from an empty service, so that a failing one replays exactly;
    its steps are noted in ``SEQUENCES``."""

    def setup(self) -> None:
        SEQUENCES.append([])
        with TestClient(APP) as client:
            while streams := client.get("/v1/streams").json()["streams"]:
                for stream in streams:
                    client.delete(f"/v1/streams/{stream['id']}")

    def after_call(self, response: Any, case: Any) -> None:
        super().after_call(response, case)
        body = response.json() if response.status_code == 200 else {}
        decided = len(body.get("decisions", [])) if isinstance(body, dict) else 0
        if isinstance(body, dict) and "operators" in body and "filtered" in body:
            decided = 1  # the latest decision
        stream_id = (case.path_parameters or {}).get("stream_id")
        SEQUENCES[-1].append((case.operation.label, stream_id, response.status_code, decided))


def _decided_through_links(steps: list[tuple[str, str | None, int, int]]) -> bool:
    """Whether the steps PUT a stream (201), POST it samples that were decided (200), then
    GET decisions of it back (200), in this order."""
    wanted = [
        ("PUT /v1/streams/{stream_id}", 201),
        ("POST /v1/streams/{stream_id}/samples", 200),
        ("GET", 200),
    ]
    for index, (label, stream_id, status, _) in enumerate(steps):
        if (label, status) != wanted[0]:
            continue
        found = 1
        for later, later_id, later_status, decided in steps[index + 1 :]:
            expected_label, expected_status = wanted[found]
            if later_id == stream_id and later.startswith(expected_label) and decided:
                found += later_status == expected_status
                if found == len(wanted):
                    return True
    return False


def test_sequences_of_linked_operations_answer_as_documented() -> None:
    StatefulTest.run(
        settings=settings(
            max_examples=STEPS,
            stateful_step_count=8,
            # No shrinking: schemathesis's choices between links learn as the run goes, so
            # a replay differs; the failing sequence is reported as found.
            phases=[Phase.explicit, Phase.reuse, Phase.generate],
            # The same sequences at every run: a regression test, not a lottery.
            derandomize=True,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
    )
    # The links were followed: a stream was created, took samples, and answered with them.
    statuses: dict[tuple[str, int], int] = {}
    for steps in SEQUENCES:
        for label, _, status, _ in steps:
            statuses[label, status] = statuses.get((label, status), 0) + 1
    assert any(_decided_through_links(steps) for steps in SEQUENCES), sorted(statuses.items())
