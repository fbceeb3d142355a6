"""The executor interface the Spark adaptor implements, and an in-memory fake with it.

A scaling loop needs two things from a cluster: how many executors run now, and a way to ask
for a total. ``Executors`` is that interface; ``scaling.spark.adaptor.SparkExecutorAdaptor``
implements it on a live SparkContext and ``InMemoryExecutors`` in memory, so that everything
above it (``scaling.spark.listener``) is tested without a cluster.

>>> executors = InMemoryExecutors(current=2, max_executors=4)
>>> executors.resize(6), executors.current(), executors.history
(4, 4, [4])
"""

from __future__ import annotations

import threading
import time
from typing import Protocol, runtime_checkable

from filters.base import check_number


@runtime_checkable
class Executors(Protocol):
    """Executors of one application, resized by absolute targets."""

    min_executors: int
    max_executors: int | None

    def current(self) -> int:
        """Executors running now (the driver is not one)."""
        ...

    def resize(self, executors: int) -> int:
        """Ask for ``executors`` in total, brought into the bounds; return the target asked for.

        Absolute and idempotent: asking twice for the same total changes nothing. Scaling up
        returns before the new executors run; ``current()`` follows when they do.
        """
        ...


def check_bounds(owner: str, min_executors: int, max_executors: int | None) -> None:
    """``ValueError`` unless ``0 <= min_executors <= max_executors`` (``None``: no maximum)."""
    check_number(owner, "min_executors", min_executors, minimum=0, integer=True)
    if max_executors is not None:
        check_number(owner, "max_executors", max_executors, minimum=min_executors, integer=True)


def clamp(executors: int, min_executors: int, max_executors: int | None) -> int:
    """``executors`` brought into ``[min_executors, max_executors]``."""
    executors = max(min_executors, executors)
    return executors if max_executors is None else min(executors, max_executors)


class InMemoryExecutors:
    """Executors that exist only as a number: the fake for tests, with the real interface.

    ``resize`` takes effect at once, after sleeping ``latency`` seconds (a slow cluster
    manager). Every target asked for is appended to ``history``. Thread-safe.

    Parameters
    ----------
    current
        Executors running at the start, an integer >= 0.
    min_executors, max_executors
        Bounds every target is brought into (``max_executors=None``: no maximum).
    latency
        Seconds each ``resize`` call blocks, >= 0.
    """

    def __init__(
        self,
        current: int = 1,
        min_executors: int = 1,
        max_executors: int | None = None,
        latency: float = 0.0,
    ) -> None:
        check_number("InMemoryExecutors", "current", current, minimum=0, integer=True)
        check_bounds("InMemoryExecutors", min_executors, max_executors)
        check_number("InMemoryExecutors", "latency", latency, minimum=0)
        self.min_executors = int(min_executors)
        self.max_executors = None if max_executors is None else int(max_executors)
        self.latency = float(latency)
        self.history: list[int] = []
        self._current = int(current)
        self._lock = threading.Lock()

    def current(self) -> int:
        with self._lock:
            return self._current

    def resize(self, executors: int) -> int:
        check_number("InMemoryExecutors", "executors", executors, minimum=0, integer=True)
        target = clamp(int(executors), self.min_executors, self.max_executors)
        if self.latency:
            time.sleep(self.latency)
        with self._lock:
            self._current = target
            self.history.append(target)
        return target
