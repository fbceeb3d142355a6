"""WAL checkpoints beside the commits: what they copy, how often, and what commits still do."""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from pathlib import Path

from scaling import Decision
from service.storage import Storage
from service.wal import BACKSTOP_PAGES, Checkpointer

SPEC = {"filter": {"name": "raw"}, "policy": {"capacity": 50.0}, "guards": []}


def batch(start: int, size: int = 100) -> list[Decision]:
    return [
        Decision(float(t), 100.0, 100.0, 2, 2, "none", f"sample {t} " + "x" * 200)
        for t in range(start, start + size)
    ]


def test_the_database_file_alone_holds_what_was_committed_once_a_checkpoint_ran(
    tmp_path: Path,
) -> None:
    storage = Storage(tmp_path / "live" / "steadyscale.db")
    storage.put_stream("s", SPEC, 1, {"t": None})
    for start in range(0, 3000, 100):
        revision = storage.get_stream("s").revision  # type: ignore[union-attr]
        storage.append("s", revision, batch(start), None, retention=10_000)
    time.sleep(0.15)  # past the interval: the next commit starts a checkpoint
    revision = storage.get_stream("s").revision  # type: ignore[union-attr]
    storage.append("s", revision, batch(3000), None, retention=10_000)
    storage._checkpoints.wait()
    # The file without its log, as an OS crash after the checkpoint's sync would leave it.
    alone = tmp_path / "alone" / "steadyscale.db"
    alone.parent.mkdir()
    shutil.copy(storage.path, alone)
    storage.close()
    with sqlite3.connect(alone) as db:
        assert db.execute("SELECT count(*) FROM decisions").fetchone() == (3100,)


def test_commits_checkpoint_only_at_the_backstop(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "steadyscale.db")
    with storage._connection() as db:
        assert db.execute("PRAGMA wal_autocheckpoint").fetchone() == (BACKSTOP_PAGES,)
    storage.close()


def test_one_checkpoint_at_a_time_and_none_sooner_than_the_interval() -> None:
    started: list[float] = []
    release = threading.Event()

    def checkpoint() -> None:
        started.append(time.monotonic())
        release.wait(5.0)

    checkpoints = Checkpointer(checkpoint, interval=0.3)
    checkpoints.committed()  # the first
    checkpoints.committed()  # the first still runs: none
    release.set()
    checkpoints.wait()
    checkpoints.committed()  # none runs, but the first began less than 0.3 s ago: none
    assert len(started) == 1
    time.sleep(0.35)
    checkpoints.committed()  # the second
    checkpoints.wait()
    assert len(started) == 2 and started[1] - started[0] >= 0.3
    checkpoints.close()
    time.sleep(0.35)
    checkpoints.committed()  # closed: no more
    assert len(started) == 2


def test_a_failing_checkpoint_is_left_to_the_next() -> None:
    calls: list[int] = []

    def checkpoint() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise sqlite3.OperationalError("disk I/O error")

    checkpoints = Checkpointer(checkpoint, interval=0.0)
    checkpoints.committed()
    checkpoints.wait()
    checkpoints.committed()
    checkpoints.wait()
    assert len(calls) == 2
