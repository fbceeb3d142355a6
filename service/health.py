"""Liveness beyond "the process answers": the event loop keeps its timers, and a worker thread
takes work.

Issue 32: with every worker thread held by replays, each request that touches the database
waited for minutes while ``/healthz``, answered on the event loop alone, said 200, so no
liveness probe restarted the process. ``/healthz`` now also asks a worker thread to do nothing
and waits at most the setting ``health_timeout`` for it, and asks ``LoopWatch`` how far behind
its timers the event loop runs (work that holds the loop, or the GIL, shows there).
"""

from __future__ import annotations

import asyncio
import time
from types import TracebackType

# Seconds between two ticks of the watch: how soon a stall is seen, at a negligible cost.
TICK = 0.25


class LoopWatch:
    """How late the event loop runs a timer: a task that sleeps ``TICK`` seconds again and
    again and records how much later than asked it woke. Entered on the running loop."""

    def __init__(self) -> None:
        self.lag = 0.0
        self._due = time.monotonic() + TICK
        self._task: asyncio.Task[None] | None = None

    def __enter__(self) -> LoopWatch:
        self._task = asyncio.get_running_loop().create_task(self._tick())
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()

    def behind(self) -> float:
        """Seconds the loop runs behind: how late the last tick woke, or how overdue the next
        one is (the loop has been held since), whichever is more."""
        return max(self.lag, time.monotonic() - self._due)

    async def _tick(self) -> None:
        while True:
            self._due = time.monotonic() + TICK
            await asyncio.sleep(TICK)
            self.lag = max(0.0, time.monotonic() - self._due)
