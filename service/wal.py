"""The SQLite file's WAL checkpoints, run beside the commits rather than inside one.

In WAL mode a commit appends the pages it changed to the file's log (``-wal``); a checkpoint
copies them back into the database file, after which the log starts over. SQLite runs one in
the commit that takes the log past ``wal_autocheckpoint`` pages (1,000 by default), before that
commit returns, and with ``synchronous=NORMAL`` a checkpoint syncs both files: the batch whose
commit crossed the line waited for two fsyncs and the copy. On the development machine that
was a stall of about 35 ms every 80 or so 100-sample batches, 0.45 ms of every batch's wall
time on average, as much as the commit's own CPU (issue 32, session 18: docs/benchmarks.md).

``Checkpointer`` runs checkpoints in a thread of their own instead: a commit starts one when
none is running and the last began ``INTERVAL`` seconds ago or more, and goes on at once.
They are PASSIVE, like SQLite's own: they copy what no reader still needs, waiting for no
reader and no writer, and the GIL is free while SQLite copies and syncs. Each connection keeps
a commit's own checkpoint at ``BACKSTOP_PAGES``, so that the log stops growing there if these
fall behind (a long read holding old pages, a checkpoint that keeps failing).

A checkpoint moves committed pages, it never changes what is committed: a commit is as durable
before it as after it (the log survives the process; the next connection to open the file
reads it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

LOG = logging.getLogger("steadyscale.storage")

# Seconds from the start of one checkpoint to the earliest start of the next: at 100-sample
# batches a commit writes about 12 pages, about 2,000 a second from one client, so each
# copies a few hundred pages, and often all of the log, which then starts over.
INTERVAL = 0.1
# Pages of log (4 KiB each: 16 MiB) at which a commit checkpoints the file itself, as SQLite
# does at 1,000 when nothing else does.
BACKSTOP_PAGES = 4000


class Checkpointer:
    """Runs ``checkpoint`` in a thread of its own after commits (``committed``), one at a
    time, starting at most one every ``interval`` seconds."""

    def __init__(self, checkpoint: Callable[[], object], interval: float = INTERVAL) -> None:
        self._checkpoint = checkpoint
        self._interval = interval
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None
        self._next = 0.0  # time.monotonic() before which none starts
        self._closed = False

    def committed(self) -> None:
        """A commit ended: start a checkpoint unless one runs, or one began too recently."""
        now = time.monotonic()
        if now < self._next:  # most commits: no lock taken
            return
        with self._guard:
            running = self._thread is not None and self._thread.is_alive()
            if self._closed or running or now < self._next:
                return
            self._next = now + self._interval
            self._thread = threading.Thread(
                target=self._run, name="steadyscale-wal-checkpoint", daemon=True
            )
            self._thread.start()

    def wait(self) -> None:
        """Return once no checkpoint is running."""
        with self._guard:
            thread = self._thread
        if thread is not None:
            thread.join()

    def close(self) -> None:
        """Start no more checkpoints, and wait for the one running."""
        with self._guard:
            self._closed = True
        self.wait()

    def _run(self) -> None:
        try:
            self._checkpoint()
        except Exception as error:  # the next one tries again; commits checkpoint at the backstop
            LOG.debug("a WAL checkpoint failed: %s", error)
