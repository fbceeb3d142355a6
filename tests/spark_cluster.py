"""A real Spark cluster on this machine for tests: ``local-cluster[workers,cores,memoryMB]``
(``simulator.spark.session.local_cluster``), and a poll that waits for what it starts."""

from __future__ import annotations

import time
from collections.abc import Callable

from simulator.spark.session import local_cluster

__all__ = ["local_cluster", "wait_for"]


def wait_for(condition: Callable[[], bool], timeout: float, poll: float = 0.5) -> bool:
    """Poll ``condition`` until it holds (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(poll)
    return True
