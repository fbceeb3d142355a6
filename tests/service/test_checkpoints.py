"""Checkpoints (issue 32, a faster write path): a stream's Scaler state is written every N
samples or T seconds, not with every batch, and a stream loaded between two checkpoints (a
crash, an eviction, another replica's write) replays the samples since, exactly.

Every test taking ``open_store`` runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from scaling import Scaler
from service.checkpoints import CheckpointPolicy
from service.errors import ReplayMismatch
from service.models import Sample, StreamConfig
from service.postgres import PostgresStorage
from service.storage import Storage
from service.store import Store
from service.streams import StreamService

TVD = {
    "filter": {"name": "tvd"},
    "policy": {"capacity": 50.0, "min_operators": 1, "max_operators": 100},
    "guards": [{"name": "hysteresis", "band": 0.02}],
    "operators": 4,
}
# The default filter and guard, and a job that reports its backlog and running count: the
# cost model, the restart measurement and the confidence guard all hold state.
DEFAULT = {"policy": {"capacity": 50.0, "min_operators": 1}, "operators": 4}


@pytest.fixture
def open_store(database_url: str | None, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """Opens the test's database, another instance each call (a restarted process, or
    another replica); all are closed at the end."""
    opened: list[Store] = []

    def open_one() -> Store:
        store: Store
        if database_url is None:
            store = Storage(tmp_path / "steadyscale.db")
        else:
            store = PostgresStorage(database_url)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


def service(store: Store, samples: int = 7, seconds: float = 3600.0) -> StreamService:
    return StreamService(
        store,
        retention=10_000,
        max_batch=1000,
        checkpoints=CheckpointPolicy(samples, seconds),
    )


def workload(count: int, seed: int = 3, reports: bool = False) -> list[Sample]:
    rng = np.random.default_rng(seed)
    level = np.repeat(rng.uniform(150.0, 450.0, count // 40 + 1), 40)[:count]
    volumes = np.clip(level + rng.normal(0.0, 50.0, count), 0.0, None)
    samples = []
    for t, volume in enumerate(volumes):
        extra: dict[str, Any] = {}
        if reports:
            extra = {"backlog": float(rng.uniform(0, 500)), "running": int(rng.integers(3, 9))}
        samples.append(Sample(t=float(t), volume=float(volume), **extra))
    return samples


def uninterrupted(config: dict[str, Any], samples: list[Sample]) -> tuple[list[Any], Scaler]:
    """What one Scaler fed every sample once, in order, decides, and the Scaler."""
    spec = {key: value for key, value in config.items() if key != "operators"}
    scaler = Scaler.from_spec(spec, config["operators"])
    decisions = [
        scaler.observe(s.volume, s.t, backlog=s.backlog, running=s.running, processed=s.processed)
        for s in samples
    ]
    return decisions, scaler


def test_the_state_is_written_every_n_samples_only(open_store: Callable[[], Store]) -> None:
    streams = service(open_store(), samples=5)
    streams.put("s", StreamConfig.model_validate(TVD))
    written = []
    for sample in workload(12):
        streams.post_samples("s", [sample])
        written.append(streams.storage.load("s")[1].t)
    # The checkpoint takes the 5th, 10th... sample; batches in between store only samples.
    assert written == [None] * 4 + [4.0] * 5 + [9.0] * 3
    # A batch that reaches N writes it, whatever its size.
    streams.post_samples("s", workload(20)[12:20])
    assert streams.storage.load("s")[1].t == 19.0


def test_the_state_is_written_once_t_seconds_have_passed(
    open_store: Callable[[], Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    streams = service(open_store(), samples=1000, seconds=60.0)
    streams.put("s", StreamConfig.model_validate(TVD))
    samples = workload(4)
    streams.post_samples("s", samples[:1])
    now[0] += 59.0
    streams.post_samples("s", samples[1:2])
    assert streams.storage.load("s")[1].t is None
    now[0] += 1.0
    streams.post_samples("s", samples[2:3])
    assert streams.storage.load("s")[1].t == 2.0
    # Loaded afresh, the stream knows when its checkpoint was written.
    again = service(open_store(), samples=1000, seconds=60.0)
    now[0] += 30.0
    again.post_samples("s", samples[3:4])
    assert again.storage.load("s")[1].t == 2.0


@pytest.mark.parametrize("config, reports", [(TVD, False), (DEFAULT, True)])
def test_a_crash_between_checkpoints_replays_exactly(
    open_store: Callable[[], Store], config: dict[str, Any], reports: bool
) -> None:
    """Batches of uneven sizes, the process 'restarted' (a fresh service on the database:
    nothing cached) at every other batch, most often between two checkpoints: every decision
    is the uninterrupted run's, and so is the Scaler's state in the end."""
    samples = workload(300, reports=reports)
    streams = service(open_store())
    streams.put("s", StreamConfig.model_validate(config))
    sizes = [1, 3, 2, 1, 9, 4, 1, 6, 2, 5, 1, 1, 8]
    start, answered, number = 0, [], 0
    while start < len(samples):
        batch = samples[start : start + sizes[number % len(sizes)]]
        answered += streams.post_samples("s", batch).decisions
        start += len(batch)
        number += 1
        if number % 2 == 0:
            streams = service(open_store())
    expected, scaler = uninterrupted(config, samples)
    assert answered == expected
    assert streams.storage.history("s", None, 1000) == expected
    loaded, fresh = service(open_store()).scalers.load(streams.storage, "s")
    assert fresh and 0 < loaded.pending < 7
    assert loaded.scaler.state_dict() == scaler.state_dict()


def test_replicas_alternating_batches_replay_each_other_s_samples(
    open_store: Callable[[], Store],
) -> None:
    """Two services on one database taking turns: each finds the other wrote since it cached
    the Scaler, reloads it from the checkpoint and the samples after it, and goes on."""
    replicas = [service(open_store()), service(open_store())]
    replicas[0].put("s", StreamConfig.model_validate(TVD))
    samples = workload(120)
    answered = []
    for number, start in enumerate(range(0, len(samples), 3)):
        answered += replicas[number % 2].post_samples("s", samples[start : start + 3]).decisions
    assert answered == uninterrupted(TVD, samples)[0]


def test_a_batch_after_a_load_that_replayed_samples_writes_the_checkpoint(
    open_store: Callable[[], Store],
) -> None:
    """Replicas taking turns at a stream (N far away): each reloads it, and writes the state
    with its batch, so that the next load replays the last batch only, not every sample since
    the stream began."""
    replicas = [service(open_store(), samples=1000), service(open_store(), samples=1000)]
    replicas[0].put("s", StreamConfig.model_validate(TVD))
    samples, answered, written, last = workload(60), [], [], []
    for number, start in enumerate(range(0, len(samples), 3)):
        replica = replicas[number % 2]
        answered += replica.post_samples("s", samples[start : start + 3]).decisions
        written.append(replica.storage.load("s")[1].t)
        last.append(samples[start + 2].t)
    assert written[0] is None  # the first batch replayed nothing
    # A load replays the batch since the other's checkpoint, and writes one; one that finds the
    # checkpoint current replays nothing, and writes none.
    assert all(written[k] in (last[k], last[k - 1]) for k in range(1, len(last)))
    assert written[1] == last[1] and written.count(None) == 1
    assert answered == uninterrupted(TVD, samples)[0]
    # One service that keeps the stream cached writes every N samples only.
    alone = service(open_store(), samples=1000)
    alone.put("t", StreamConfig.model_validate(TVD))
    for start in range(0, 30, 3):
        alone.post_samples("t", samples[start : start + 3])
    assert alone.storage.load("t")[1].t is None


def test_a_resent_batch_between_checkpoints_is_a_duplicate_after_a_restart(
    open_store: Callable[[], Store],
) -> None:
    samples = workload(10)
    streams = service(open_store())
    streams.put("s", StreamConfig.model_validate(TVD))
    streams.post_samples("s", samples[:3])
    again = service(open_store())
    retry = again.post_samples("s", samples[:3])
    assert (retry.accepted, retry.duplicates) == (0, 3)
    rest = again.post_samples("s", samples[3:]).decisions
    assert again.storage.history("s", None, 100) == uninterrupted(TVD, samples)[0]
    assert rest == uninterrupted(TVD, samples)[0][3:]


def test_checkpoints_keep_within_retention(open_store: Callable[[], Store]) -> None:
    store = open_store()
    streams = StreamService(
        store, retention=4, max_batch=4, checkpoints=CheckpointPolicy(100, 3600.0)
    )
    streams.put("s", StreamConfig.model_validate(TVD))
    samples = workload(30)
    for sample in samples:
        streams.post_samples("s", [sample])
    assert [d.t for d in store.history("s", None, 100)] == [26.0, 27.0, 28.0, 29.0]
    assert store.load("s")[1].t == 27.0  # every 4th sample
    assert (
        service(open_store()).post_samples("s", workload(31)[30:]).decisions
        == (uninterrupted(TVD, workload(31))[0][30:])
    )


def edited_after_the_checkpoint(
    open_store: Callable[[], Store], database_url: str | None, tmp_path: Path, change: str
) -> StreamService:
    """A service on a stream with samples stored after its checkpoint (at t=6), the one at
    t=7 edited in the database (``change``: the SET clause), opened afresh."""
    streams = service(open_store())
    streams.put("s", StreamConfig.model_validate(TVD))
    streams.post_samples("s", workload(10)[:7])  # a checkpoint at t=6
    streams.post_samples("s", workload(10)[7:9])  # stored after it
    edit = f"UPDATE decisions SET {change} WHERE stream = 's' AND t = 7.0"
    if database_url is None:
        with sqlite3.connect(tmp_path / "steadyscale.db") as db:
            db.execute(edit)
    else:
        with psycopg.connect(database_url) as pg:
            pg.execute(edit)
    return service(open_store())


def test_a_replay_that_decides_otherwise_keeps_the_stored_decisions_and_says_so(
    open_store: Callable[[], Store],
    database_url: str | None,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A stored decision that the Scaler, fed its sample again, does not make (here: edited in
    the database; in life, an upgrade that changed how a Scaler decides) stands as it was
    acknowledged: the stream is served on from the replayed Scaler, with a warning naming the
    stream and the sample, rather than refused for good."""
    again = edited_after_the_checkpoint(
        open_store, database_url, tmp_path, "operators = operators + 1"
    )
    with caplog.at_level(logging.WARNING, logger="steadyscale.replay"):
        again.post_samples("s", workload(10)[9:])
    assert (
        "'s'" in caplog.text and "t=7.0" in caplog.text and "stored decisions stand" in caplog.text
    )
    assert again.storage.get_stream("s").t == 9.0  # the new sample was taken


def test_a_replay_the_scaler_refuses_refuses_the_stream_and_stores_nothing(
    open_store: Callable[[], Store], database_url: str | None, tmp_path: Path
) -> None:
    """A stored sample the Scaler refuses (a volume edited to -1 in the database) cannot be
    replayed without dropping it: 500, naming the stream and the sample."""
    again = edited_after_the_checkpoint(open_store, database_url, tmp_path, "volume = -1")
    with pytest.raises(ReplayMismatch) as refused:
        again.post_samples("s", workload(10)[9:])
    assert refused.value.status_code == 500 and "t=7.0" in refused.value.detail
    assert again.storage.get_stream("s").t == 8.0
