"""The poller against a fake Prometheus and a real StreamService on SQLite (service.pull.poller).

Each poll is one sample applied through ``StreamService.post_samples``: the tests read the
stream's history back and check it holds exactly the fake's values at the evaluation times,
each once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from scaling import Decision, Scaler
from service.models import Sample, StreamConfig
from service.pull.errors import PushRefused
from service.pull.health import Health
from service.pull.poller import Poller
from service.pull.runner import Pull
from service.pull.settings import PullSettings
from service.pull.spec import Fallback
from service.storage import Storage
from service.streams import StreamService
from tests.service.pull.fake import FakePrometheus

START = 1_700_000_100.0  # a multiple of 15
SETTINGS = PullSettings(prometheus_url="http://prometheus:9090", poll_delay=1.0)


def volume_at(t: float) -> float:
    return 100.0 + (t - START)  # known, changing: 100 tuples/s at START, +1 per second


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def streams(tmp_path: Path) -> Iterator[StreamService]:
    storage = Storage(tmp_path / "steadyscale.db")
    yield StreamService(storage, retention=1000, max_batch=100)
    storage.close()


def put(streams: StreamService, source: dict[str, object], stream_id: str = "orders") -> None:
    config = StreamConfig.model_validate(
        {"filter": {"name": "raw"}, "policy": {"capacity": 50}, "source": source}
    )
    streams.put(stream_id, config)


SOURCE = {"prometheus": {"volume": "sum(rate(x[1m]))", "backlog": "sum(lag)", "interval": 15}}


def fake() -> FakePrometheus:
    return FakePrometheus({"sum(rate(x[1m]))": volume_at, "sum(lag)": lambda t: 7.0})


async def run(poller: Poller, clock: Clock, times: list[float]) -> None:
    """Tick at each of ``times`` and wait for the polls each tick started."""
    for now in times:
        clock.now = now
        await asyncio.gather(*await poller.tick())


def test_each_evaluation_time_becomes_one_sample_of_the_queries_values(
    streams: StreamService,
) -> None:
    put(streams, SOURCE)
    prometheus, clock, health = fake(), Clock(START), Health()

    async def scenario() -> None:
        async with prometheus.client() as client:
            poller = Poller(streams, SETTINGS, health, client, clock)
            # 0.5 s after START the delay has not passed: START - 15 is polled; then START
            # (at +1.0), nothing new until START + 15 is 1 s old.
            await run(
                poller, clock, [START + 0.5, START + 1.0, START + 3, START + 15.9, START + 16]
            )

    asyncio.run(scenario())
    history = streams.history("orders", None, 100)
    assert [(d.t, d.volume, d.backlog) for d in history] == [
        (START - 15, volume_at(START - 15), 7.0),
        (START, volume_at(START), 7.0),
        (START + 15, volume_at(START + 15), 7.0),
    ]
    # The decisions are those of one Scaler fed the same samples.
    scaler = Scaler.from_spec({"filter": {"name": "raw"}, "policy": {"capacity": 50}})
    assert history == [scaler.observe(d.volume, d.t, backlog=d.backlog) for d in history]
    state = health.status("orders")
    assert state is not None and state.failures == 0 and state.last_success == START + 15


def test_two_pollers_on_one_database_apply_each_time_once(streams: StreamService) -> None:
    """Two replicas polling the same stream at the same times: every evaluation time is
    stored once, the second poller's sample is a duplicate."""
    put(streams, SOURCE)
    prometheus, clock = fake(), Clock(START)

    async def scenario() -> None:
        async with prometheus.client() as client:
            first = Poller(streams, SETTINGS, Health(), client, clock)
            second = Poller(streams, SETTINGS, Health(), client, clock)
            for now in (START + 1, START + 16, START + 31):
                clock.now = now
                started = await first.tick() + await second.tick()
                await asyncio.gather(*started)

    asyncio.run(scenario())
    times = [d.t for d in streams.history("orders", None, 100)]
    assert times == [START, START + 15, START + 30]
    # Without leases both may ask Prometheus for a time (the second skips a time it finds
    # stored already); one of them stored each.
    assert 2 * 3 <= len(prometheus.requests) <= 2 * 3 * 2


def test_failed_polls_store_nothing_hold_the_count_and_recover(streams: StreamService) -> None:
    put(streams, {**SOURCE, "fallback": {"failures": 2, "operators": 9}})
    prometheus, clock, health = fake(), Clock(START), Health()

    async def scenario() -> None:
        async with prometheus.client() as client:
            poller = Poller(streams, SETTINGS, health, client, clock)
            await run(poller, clock, [START + 1])
            prometheus.down = True
            await run(poller, clock, [START + 16, START + 17])  # one evaluation time: one failure
            state = health.status("orders")
            assert state is not None and state.failures == 1 and state.fallback is None
            assert state.last_error is not None and "cannot be reached" in state.last_error
            await run(poller, clock, [START + 31])
            state = health.status("orders")
            assert state is not None and state.failures == 2 and state.fallback == 9
            assert streams.latest("orders").t == START  # the last decision holds
            prometheus.down = False
            await run(poller, clock, [START + 46])

    asyncio.run(scenario())
    assert [d.t for d in streams.history("orders", None, 100)] == [START, START + 45]
    state = health.status("orders")
    assert state is not None and state.failures == 0 and state.fallback is None
    assert state.last_success == START + 45 and state.last_error_at == START + 30


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("NaN", "volume: the query's value is nan"),
        (-5.0, "volume=-5.0 is not allowed"),
    ],
)
def test_a_value_a_sample_cannot_hold_is_a_failed_poll(
    streams: StreamService, answer: object, why: str
) -> None:
    put(streams, {"prometheus": {"volume": "q"}})
    prometheus, clock, health = FakePrometheus({"q": lambda t: answer}), Clock(START), Health()

    async def scenario() -> None:
        async with prometheus.client() as client:
            await run(Poller(streams, SETTINGS, health, client, clock), clock, [START + 1])

    asyncio.run(scenario())
    assert streams.history("orders", None, 100) == []
    state = health.status("orders")
    assert state is not None and state.failures == 1 and why in (state.last_error or "")


def test_a_running_count_must_be_an_integer(streams: StreamService) -> None:
    put(streams, {"prometheus": {"volume": "v", "running": "r"}})
    answers = {"v": lambda t: 100.0, "r": lambda t: 2.5 if t < START + 10 else 3.0}
    prometheus, clock, health = FakePrometheus(answers), Clock(START), Health()

    async def scenario() -> None:
        async with prometheus.client() as client:
            await run(
                Poller(streams, SETTINGS, health, client, clock), clock, [START + 1, START + 16]
            )

    asyncio.run(scenario())
    state = health.status("orders")
    assert state is not None and state.last_error is not None and "running" in state.last_error
    assert [(d.t, d.running) for d in streams.history("orders", None, 100)] == [(START + 15, 3)]


def test_a_stream_with_a_source_takes_no_posted_samples(streams: StreamService) -> None:
    put(streams, SOURCE)
    with pytest.raises(PushRefused) as refused:
        streams.post_samples("orders", [Sample(t=1.0, volume=10.0)])
    assert refused.value.status_code == 409
    assert streams.history("orders", None, 10) == []


def test_a_deleted_stream_is_no_longer_polled(streams: StreamService) -> None:
    put(streams, SOURCE)
    prometheus, clock, health = fake(), Clock(START), Health()

    async def scenario() -> None:
        async with prometheus.client() as client:
            poller = Poller(streams, SETTINGS, health, client, clock)
            await run(poller, clock, [START + 1])
            streams.delete("orders")
            await run(poller, clock, [START + 16.5])

    asyncio.run(scenario())
    assert len(prometheus.requests) == 2  # volume and backlog once; nothing after the delete
    assert health.status("orders") is None


def test_the_fallback_count_replaces_the_decision_while_it_applies() -> None:
    health = Health()
    pull = Pull(SETTINGS, httpx.AsyncClient(), health)
    last = Decision(START, 300.0, 300.0, 5, 6, "up", "filtered 300.0 needs 6 > 5")
    fallback = Fallback(failures=2, operators=9)
    health.failed("orders", START + 15, "connection refused", fallback)
    assert pull.decision("orders", last) == last  # one failure: the last decision holds
    health.failed("orders", START + 30, "connection refused", fallback)
    replaced = pull.decision("orders", last)
    assert (replaced.t, replaced.previous, replaced.operators, replaced.action) == (
        START,
        6,
        9,
        "up",
    )
    assert replaced.reason.startswith("fallback: 2 consecutive failed polls")
    assert replaced.code == "Fallback"
    assert "connection refused" in replaced.reason
    health.succeeded("orders", START + 45)
    assert pull.decision("orders", last) == last
