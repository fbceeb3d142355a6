"""StreamService: batches applied exactly once, all or none, one at a time per stream."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from scaling import Decision, Scaler
from service.errors import (
    BatchTooLarge,
    InvalidInput,
    SampleConflict,
    StreamContended,
    StreamNotFound,
    Unavailable,
)
from service.metrics import Metrics
from service.models import Sample, StreamConfig
from service.postgres import PostgresStorage
from service.scalers import build_scaler
from service.storage import Storage
from service.store import StaleRevision
from service.streams import StreamBusy, StreamService

CONFIG: dict[str, Any] = {
    "filter": {"name": "tvd", "lam_per_sigma": 8.0},
    "policy": {"capacity": 50.0, "min_operators": 1, "max_operators": 20},
    "guards": [{"name": "stabilization", "window": 30.0}, {"name": "cooldown", "up": 5.0}],
    "operators": 3,
}


def config(**changes: Any) -> StreamConfig:
    return StreamConfig.model_validate({**CONFIG, **changes})


def noisy(n: int, seed: int = 3) -> list[Sample]:
    rng = np.random.default_rng(seed)
    trend = np.repeat(rng.uniform(100.0, 500.0, n // 40 + 1), 40)[:n]
    volumes = np.clip(trend + rng.normal(0.0, 60.0, n), 0.0, None)
    return [Sample(t=float(t), volume=float(v)) for t, v in enumerate(volumes)]


SAMPLES = noisy(30)


def uninterrupted(samples: list[Sample]) -> list[Decision]:
    scaler = build_scaler(config())
    return [scaler.observe(sample.volume, sample.t) for sample in samples]


def open_service(path: Path, **options: Any) -> StreamService:
    defaults: dict[str, Any] = {"retention": 10_000, "max_batch": 1000}
    return StreamService(Storage(path / "steadyscale.db"), **{**defaults, **options})


@pytest.fixture
def service(tmp_path: Path) -> Iterator[StreamService]:
    service = open_service(tmp_path)
    service.put("orders", config())
    yield service
    service.storage.close()


def post_in_batches(service: StreamService, samples: list[Sample], size: int) -> list[Decision]:
    out: list[Decision] = []
    for start in range(0, len(samples), size):
        out += service.post_samples("orders", samples[start : start + size]).decisions
    return out


def test_batches_decide_exactly_as_one_scaler_fed_sample_by_sample(
    service: StreamService,
) -> None:
    samples = noisy(300)
    assert post_in_batches(service, samples, 7) == uninterrupted(samples)
    assert service.storage.history("orders", None, 1000) == uninterrupted(samples)
    assert service.get("orders").operators == uninterrupted(samples)[-1].operators


@pytest.mark.parametrize(
    ("changes", "field", "value", "allowed"),
    [
        ({"filter": {"name": "tvd", "lam_per_sigma": -1.0}}, "filter.lam_per_sigma", -1.0, "> 0"),
        ({"filter": {"name": "kalman"}}, "filter.name", "kalman", "allowed names"),
        ({"filter": {"name": "ewma", "beta": 1}}, "filter.beta", 1, "allowed parameters"),
        (
            {"filter": {"name": "tvd", "lam": 1.0, "method": "mm"}},
            "filter.window",
            None,
            "needs a window from 2 to 10000",
        ),
        (
            {"policy": {"capacity": 50.0, "min_operators": 4, "max_operators": 2}},
            "policy.max_operators",
            2,
            ">= 4",
        ),
        ({"guards": [{"name": "hysteresis", "band": 1.5}]}, "guards[0].band", 1.5, "< 1"),
        ({"guards": [{"name": "cooldown"}, {"name": "nap"}]}, "guards[1].name", "nap", "allowed"),
        (
            {
                "filter": {
                    "name": "tvd",
                    "lam": 1.0,
                    "method": "mm",
                    "window": 5,
                    "iterations": 10**5,
                }
            },
            "filter.iterations",
            10**5,
            "<= 1000",
        ),
    ],
)
def test_a_bad_configuration_names_the_field_value_and_what_is_allowed(
    changes: dict[str, Any], field: str, value: Any, allowed: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        build_scaler(config(**changes))
    [error] = refused.value.errors
    assert (error.field, error.value) == (field, value)
    assert allowed in error.allowed and error.message.startswith(f"{field}=")


def test_every_bad_part_of_a_configuration_is_reported() -> None:
    bad = {
        "filter": {"name": "nope"},
        "policy": {"capacity": 50.0, "min_operators": 5, "max_operators": 2},
        "guards": [{"name": "x"}],
    }
    with pytest.raises(InvalidInput) as refused:
        build_scaler(config(**bad))
    fields = [error.field for error in refused.value.errors]
    assert fields == ["filter.name", "policy.max_operators", "guards[0].name"]


def test_a_retried_batch_is_acknowledged_and_not_applied_again(service: StreamService) -> None:
    samples = noisy(20)
    first = service.post_samples("orders", samples[:10])
    retry = service.post_samples("orders", samples[:10])
    assert (retry.accepted, retry.duplicates, retry.decisions) == (0, 10, [])
    assert retry.operators == first.operators
    overlapping = service.post_samples("orders", samples[5:20])
    assert (overlapping.accepted, overlapping.duplicates) == (10, 5)
    assert service.storage.history("orders", None, 100) == uninterrupted(samples)


@pytest.mark.parametrize(
    ("batch", "index", "why"),
    [
        ([(3.0, SAMPLES[3].volume), (4.0, 999.0)], 1, "a sample at this t was applied with"),
        ([(3.0, SAMPLES[3].volume), (4.5, 200.0)], 1, "no retained sample has this t"),
        ([(10.0, 1.0), (12.0, 5.0), (11.0, 5.0)], 2, "times must increase within a batch"),
        ([(10.0, 1.0), (10.0, 1.0)], 1, "times must increase within a batch"),
    ],
)
def test_a_conflicting_sample_refuses_the_whole_batch(
    service: StreamService, batch: list[tuple[float, float]], index: int, why: str
) -> None:
    samples = SAMPLES
    service.post_samples("orders", samples[:8])
    before = service.storage.load("orders")
    with pytest.raises(SampleConflict) as refused:
        service.post_samples("orders", [Sample(t=t, volume=v) for t, v in batch])
    assert why in refused.value.message
    assert refused.value.sample.index == index
    assert refused.value.sample.t == batch[index][0]
    assert service.storage.load("orders") == before
    # The refused batch left no trace: the stream goes on as if it had never come.
    service.post_samples("orders", samples[8:])
    assert service.storage.history("orders", None, 100) == uninterrupted(samples)


def test_too_large_batches_and_unknown_streams_are_refused(service: StreamService) -> None:
    with pytest.raises(BatchTooLarge):
        service.post_samples("orders", noisy(1001))
    with pytest.raises(StreamNotFound):
        service.post_samples("nowhere", noisy(1))
    with pytest.raises(StreamNotFound):
        service.latest("nowhere")
    assert service.storage.history("orders", None, 10) == []


def test_a_failed_commit_leaves_no_state_ahead_of_the_database(
    service: StreamService, monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = noisy(60)
    service.post_samples("orders", samples[:20])
    store = service.storage.append

    def failing(*args: Any, **kwargs: Any) -> str:
        raise OSError("disk full")

    monkeypatch.setattr(service.storage, "append", failing)
    with pytest.raises(OSError, match="disk full"):
        service.post_samples("orders", samples[20:40])
    monkeypatch.setattr(service.storage, "append", store)
    # The cached Scaler saw samples 20..39; had it been kept, these would be decided wrongly.
    service.post_samples("orders", samples[20:])
    assert service.storage.history("orders", None, 100) == uninterrupted(samples)


def test_a_new_service_on_the_same_file_continues_exactly(tmp_path: Path) -> None:
    samples = noisy(200)
    first = open_service(tmp_path)
    first.put("orders", config())
    post_in_batches(first, samples[:90], 30)
    first.storage.close()
    second = open_service(tmp_path)
    post_in_batches(second, samples[90:], 25)
    assert second.storage.history("orders", None, 1000) == uninterrupted(samples)
    second.storage.close()


def test_two_services_writing_one_file_in_turn_stay_exact(tmp_path: Path) -> None:
    # Like two processes on one data directory: each one's cached Scaler goes stale in turn.
    samples = noisy(120)
    one, two = open_service(tmp_path), open_service(tmp_path)
    one.put("orders", config())
    for number, start in enumerate(range(0, 120, 10)):
        (one if number % 2 else two).post_samples("orders", samples[start : start + 10])
    assert one.storage.history("orders", None, 1000) == uninterrupted(samples)
    one.storage.close()
    two.storage.close()


def test_replacing_a_stream_starts_it_afresh(service: StreamService) -> None:
    samples = noisy(40)
    service.post_samples("orders", samples[:20])
    stream, outcome = service.put("orders", config(), reset=True)
    assert outcome == "replaced" and (stream.t, stream.operators) == (None, 3)
    service.post_samples("orders", samples[20:])
    assert service.storage.history("orders", None, 100) == uninterrupted(samples[20:])


def test_retention_bounds_the_history(tmp_path: Path) -> None:
    service = open_service(tmp_path, retention=25)
    service.put("orders", config())
    samples = noisy(100)
    post_in_batches(service, samples, 10)
    kept = service.history("orders", None, 1000)
    assert kept == uninterrupted(samples)[-25:]
    service.storage.close()


def test_concurrent_batches_to_one_stream_apply_each_sample_once(service: StreamService) -> None:
    # Each thread sends its own samples in order; the threads race, so some samples arrive after
    # a later one and are refused. What was accepted must be exactly the stream's history.
    samples = noisy(240)
    workers = 6
    accepted: list[list[Sample]] = [[] for _ in range(workers)]
    refused = [0] * workers

    def send(worker: int) -> None:
        for sample in samples[worker::workers]:
            try:
                service.post_samples("orders", [sample])
            except SampleConflict:
                refused[worker] += 1
            else:
                accepted[worker].append(sample)

    threads = [threading.Thread(target=send, args=(worker,)) for worker in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    applied = sorted((s for batch in accepted for s in batch), key=lambda s: s.t)
    assert sum(len(batch) for batch in accepted) + sum(refused) == len(samples)
    history = service.storage.history("orders", None, 1000)
    assert [(d.t, d.volume) for d in history] == [(s.t, s.volume) for s in applied]
    assert history == uninterrupted(applied)


def test_a_held_stream_does_not_hold_up_another(service: StreamService) -> None:
    service.put("clicks", config())
    samples = noisy(4)
    done = threading.Event()

    def post_orders() -> None:
        service.post_samples("orders", samples[:2])
        done.set()

    with service.lock("orders"):
        waiting = threading.Thread(target=post_orders)
        waiting.start()
        assert service.post_samples("clicks", samples).accepted == 4
        with pytest.raises(StreamBusy):
            service.post_samples("orders", samples, wait=False)
        assert not done.wait(0.2)
    waiting.join(5)
    assert done.is_set()


def test_small_batches_run_on_the_loop_and_busy_streams_in_a_thread(tmp_path: Path) -> None:
    service = open_service(tmp_path, inline_batch=8)
    service.put("orders", config())
    service.put("clicks", config())
    samples = noisy(20)
    loop_thread: list[str] = []

    async def main() -> None:
        loop_thread.append(threading.current_thread().name)
        await service.post_samples_async("clicks", samples[:8])
        await service.post_samples_async("clicks", samples[8:])  # above inline_batch
        with service.lock("orders"):
            pending = asyncio.ensure_future(service.post_samples_async("orders", samples[:3]))
            await asyncio.sleep(0.1)
            assert not pending.done()  # waiting in a worker thread, not on the loop
        assert (await pending).accepted == 3

    asyncio.run(main())
    assert service.history("clicks", None, 100) == uninterrupted(samples)
    service.storage.close()


def series(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(metrics.render().decode())
        for sample in family.samples
    }


def test_metrics_follow_decisions_and_forget_deleted_streams(tmp_path: Path) -> None:
    metrics = Metrics()
    service = open_service(tmp_path, metrics=metrics)
    service.put("orders", config())
    decisions = post_in_batches(service, noisy(50), 10)
    found = series(metrics)
    orders = (("stream", "orders"),)
    assert found["steadyscale_desired_operators", orders] == decisions[-1].operators
    assert found["steadyscale_filtered_volume_tuples_per_second", orders] == decisions[-1].filtered
    for direction in ("up", "down"):
        count = sum(d.action == direction for d in decisions)
        labels = (("direction", direction), ("stream", "orders"))
        assert found["steadyscale_scaling_operations_total", labels] == count
    service.delete("orders")
    assert not any(("stream", "orders") in labels for _, labels in series(metrics))
    service.storage.close()


def test_metrics_are_restored_from_storage(tmp_path: Path) -> None:
    first = open_service(tmp_path)
    first.put("orders", config())
    last = post_in_batches(first, noisy(30), 30)[-1]
    first.storage.close()
    metrics = Metrics()
    open_service(tmp_path, metrics=metrics).storage.close()
    found = series(metrics)
    assert (
        found["steadyscale_filtered_volume_tuples_per_second", (("stream", "orders"),)]
        == last.filtered
    )
    assert (
        found["steadyscale_scaling_operations_total", (("direction", "up"), ("stream", "orders"))]
        == 0
    )


def test_the_scaler_spec_is_what_is_stored(service: StreamService) -> None:
    stream = service.get("orders")
    assert stream.spec == Scaler.from_spec(stream.spec).spec
    assert stream.spec["filter"]["lam_per_sigma"] == 8.0


def test_a_replica_never_answers_from_a_cached_scaler_behind_the_database(
    tmp_path: Path, database_url: str | None
) -> None:
    """Two services on one database, as two replicas: each sees what the other applied."""

    one, two = replica(tmp_path, database_url), replica(tmp_path, database_url)
    samples = noisy(90)
    expected = uninterrupted(samples)
    one.put("orders", config())
    one.post_samples("orders", samples[:30])  # one's Scaler is cached at t=29
    two.post_samples("orders", samples[30:60])
    # A resend of one's own batch: a duplicate, answered with the stream's count now.
    resent = one.post_samples("orders", samples[20:30])
    assert (resent.accepted, resent.duplicates) == (0, 10)
    assert resent.operators == expected[59].operators
    # A resend to the other replica of what two applied: a duplicate too.
    again = one.post_samples("orders", samples[30:60])
    assert (again.accepted, again.duplicates) == (0, 30)
    assert one.post_samples("orders", samples[60:]).decisions == expected[60:]
    assert one.history("orders", None, 1000) == expected
    for service in (one, two):
        service.storage.close()


def test_a_replica_never_refuses_a_batch_from_a_cached_scaler_behind_the_database(
    tmp_path: Path, database_url: str | None
) -> None:
    """A stream replaced through another replica starts afresh there: samples from t=0 are
    new for it, though this replica's cached Scaler had applied up to t=29."""
    storages = [
        Storage(tmp_path / "steadyscale.db") if database_url is None else PostgresStorage(url)
        for url in (database_url, database_url)
    ]
    one, two = (StreamService(storage, retention=10_000, max_batch=1000) for storage in storages)
    one.put("orders", config())
    one.post_samples("orders", SAMPLES)  # one's Scaler is cached at t=29
    two.put("orders", config(operators=5), reset=True)
    restarted = one.post_samples("orders", SAMPLES[:10])
    assert restarted.accepted == 10
    scaler = build_scaler(config(operators=5))
    assert restarted.decisions == [scaler.observe(s.volume, s.t) for s in SAMPLES[:10]]
    # A real conflict is still refused, once checked against the stored stream.
    with pytest.raises(SampleConflict):
        one.post_samples("orders", [Sample(t=3.0, volume=SAMPLES[3].volume + 1.0)])
    for storage in storages:
        storage.close()


def test_replicas_racing_on_one_stream_apply_every_batch_once(
    tmp_path: Path, database_url: str | None
) -> None:
    """Two clients send the same batches, in order, each batch to either replica at random:
    every batch reaches both replicas about at once, so commits race and the losers redo."""

    replicas = [replica(tmp_path, database_url), replica(tmp_path, database_url)]
    replicas[0].put("orders", config())
    samples = noisy(400)
    batches = [samples[start : start + 4] for start in range(0, len(samples), 4)]
    applied = [0, 0]

    def client(seed: int) -> None:
        chance = np.random.default_rng(seed)
        for batch in batches:
            result = replicas[int(chance.integers(2))].post_samples("orders", batch)
            applied[seed] += result.accepted

    threads = [threading.Thread(target=client, args=(seed,)) for seed in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(applied) == len(samples)
    assert replicas[1].history("orders", None, 1000) == uninterrupted(samples)
    for service in replicas:
        service.storage.close()


def test_a_stream_that_keeps_changing_under_a_batch_is_503_and_stores_nothing(
    service: StreamService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every commit loses its compare-and-set, as if other replicas kept winning."""
    service.post_samples("orders", SAMPLES[:5])
    before = service.storage.load("orders")
    attempts = []

    def always_stale(stream_id: str, *args: Any, **kwargs: Any) -> str:
        attempts.append(stream_id)
        raise StaleRevision(stream_id)

    monkeypatch.setattr(service.storage, "append", always_stale)
    with pytest.raises(StreamContended) as refused:
        service.post_samples("orders", SAMPLES[5:10])
    assert refused.value.status_code == 503 and refused.value.headers == {"Retry-After": "1"}
    assert len(attempts) > 1
    monkeypatch.undo()
    assert service.storage.load("orders") == before
    assert service.post_samples("orders", SAMPLES[5:10]).accepted == 5


def test_a_connection_lost_while_committing_is_in_doubt_and_the_resend_is_a_duplicate(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit reaches PostgreSQL, its answer never comes back: the client hears 503 with
    the outcome unknown (not "nothing was stored"), and its resend is not applied again."""
    service = StreamService(PostgresStorage(postgres_url), retention=10_000, max_batch=1000)
    service.put("orders", config())
    service.post_samples("orders", SAMPLES[:5])
    commit, append = psycopg.Connection.commit, PostgresStorage.append

    def commit_then_lose_the_answer(connection: psycopg.Connection[Any]) -> None:
        commit(connection)
        monkeypatch.setattr(psycopg.Connection, "commit", commit)
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    def append_losing_its_commit(storage: PostgresStorage, *args: Any, **kwargs: Any) -> str:
        monkeypatch.setattr(psycopg.Connection, "commit", commit_then_lose_the_answer)
        return append(storage, *args, **kwargs)

    monkeypatch.setattr(PostgresStorage, "append", append_losing_its_commit)
    with pytest.raises(Unavailable, match="outcome is unknown") as refused:
        service.post_samples_or_503("orders", SAMPLES[5:10])
    assert refused.value.status_code == 503
    monkeypatch.undo()
    again = service.post_samples("orders", SAMPLES[5:10])
    assert (again.accepted, again.duplicates) == (0, 5)
    assert service.history("orders", None, 100) == uninterrupted(SAMPLES[:10])
    service.storage.close()


def replica(tmp_path: Path, database_url: str | None) -> StreamService:
    """A service on the test's database (SQLite file, or PostgreSQL at ``database_url``), as
    one replica of several."""
    if database_url is None:
        storage: Storage | PostgresStorage = Storage(tmp_path / "steadyscale.db")
    else:
        storage = PostgresStorage(database_url)
    return StreamService(storage, retention=10_000, max_batch=1000)
