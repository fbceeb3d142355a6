"""One replica polls each stream at a time, on a real PostgreSQL (service.pull.lease)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from service.models import StreamConfig
from service.postgres import PostgresStorage, prepare_database
from service.pull.health import Health, SourceHealth
from service.pull.lease import Leases
from service.pull.poller import Poller
from service.streams import StreamService
from tests.service.pull.fake import FakePrometheus
from tests.service.pull.test_poller import SETTINGS, START, Clock


@pytest.fixture
def leases(postgres_url: str) -> Iterator[tuple[Leases, Leases]]:
    first, second = Leases(postgres_url), Leases(postgres_url)
    yield first, second
    first.close()
    second.close()


def test_a_lease_is_one_replicas_until_it_passes(leases: tuple[Leases, Leases]) -> None:
    first, second = leases
    assert first.take([("orders", 0.4)]) == {"orders"}  # held for 0.4 + 1 s
    assert second.take([("orders", 0.4)]) == set()
    assert first.take([("orders", 0.4)]) == {"orders"}  # renewed by its owner
    time.sleep(1.5)
    assert second.take([("orders", 0.4)]) == {"orders"}  # passed: taken over
    assert first.take([("orders", 0.4)]) == set()


def test_the_owner_shares_the_health_with_every_replica(leases: tuple[Leases, Leases]) -> None:
    first, second = leases
    first.take([("orders", 15.0)])
    state = SourceHealth(last_error="connection refused", failures=3, fallback=7)
    first.record("orders", state)
    second.record("orders", SourceHealth())  # not its lease: not written
    assert second.healths() == {"orders": state}


def test_two_pollers_with_leases_ask_prometheus_once_per_time(postgres_url: str) -> None:
    prepare_database(postgres_url)
    storage = PostgresStorage(postgres_url)
    streams = StreamService(storage, retention=1000, max_batch=100)
    config = {"filter": {"name": "raw"}, "policy": {"capacity": 50}}
    source = {"prometheus": {"volume": "v", "interval": 15}}
    streams.put("orders", StreamConfig.model_validate({**config, "source": source}))
    prometheus, clock = FakePrometheus({"v": lambda t: 120.0}), Clock(START)
    first_leases, second_leases = Leases(postgres_url), Leases(postgres_url)

    async def scenario() -> None:
        async with prometheus.client() as client:
            first = Poller(streams, SETTINGS, Health(), client, clock, leases=first_leases)
            second = Poller(streams, SETTINGS, Health(), client, clock, leases=second_leases)
            for now in (START + 1, START + 16, START + 31):
                clock.now = now
                await asyncio.gather(*await first.tick(), *await second.tick())

    try:
        asyncio.run(scenario())
        times = [d.t for d in streams.history("orders", None, 100)]
        assert times == [START, START + 15, START + 30]
        assert len(prometheus.requests) == 3  # one replica asked, once per evaluation time
    finally:
        first_leases.close()
        second_leases.close()
        storage.close()
