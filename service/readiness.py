"""What ``/readyz`` tells anyone who asks: ready or not, and why as a reason code; no more.

``/readyz`` needs no token, like ``/healthz`` (issue 35): Kubernetes' ``httpGet`` probe cannot
send one from a Secret, and a platform expects to probe readiness without credentials. So its
answer names no stream, no file, no database address and no error text: 200
``{"status": "ready"}``, or 503 ``{"status": "not_ready", "reason": <code>}`` with
``Retry-After``. The reason codes (``Reason``):

* ``StorageUnavailable``: the database does not answer (PostgreSQL unreachable, the SQLite
  file locked past the busy timeout or unreadable), or, after a write failed, the probe's own
  write fails too (a full disk, a read-only database): the replica would refuse every batch;
* ``ShuttingDown``: the storage is closed, the service is stopping.

What the database said is logged (logger ``steadyscale.readiness``, a warning per failed
probe), for whoever reads the server's log.
"""

from __future__ import annotations

import logging
from typing import Literal

from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse

from service.models import Status
from service.store import StorageUnavailable, Store

log = logging.getLogger("steadyscale.readiness")

Reason = Literal["StorageUnavailable", "ShuttingDown"]


class NotReady(BaseModel):
    """Why the service is not ready, as a code: nothing else is said to an unknown caller."""

    status: Literal["not_ready"] = "not_ready"
    reason: Reason = Field(
        description="StorageUnavailable: the database does not answer, or does not take a "
        "write (a full disk); ShuttingDown: the service is stopping."
    )


async def readiness(storage: Store) -> JSONResponse:
    """200 ``Status`` when ``storage`` serves (its ``ping``), else 503 ``NotReady``."""
    try:
        await run_in_threadpool(storage.ping)
    except StorageUnavailable as error:
        return _not_ready("StorageUnavailable", error)
    except RuntimeError as error:
        return _not_ready("ShuttingDown", error)
    return JSONResponse(Status(status="ready").model_dump())


def _not_ready(reason: Reason, error: Exception) -> JSONResponse:
    log.warning("not ready (%s): %s", reason, error)
    return JSONResponse(NotReady(reason=reason).model_dump(), 503, headers={"Retry-After": "1"})
