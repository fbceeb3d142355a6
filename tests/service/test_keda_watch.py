"""StreamWatch: how old a stream's last write is, on a clock the test moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.errors import StreamNotFound
from service.keda import StreamWatch
from service.models import Sample, StreamConfig
from service.storage import Storage
from service.streams import StreamService

CONFIG = StreamConfig.model_validate(
    {"filter": {"name": "raw"}, "policy": {"capacity": 50.0}, "operators": 2}
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def streams(tmp_path: Path) -> StreamService:
    return StreamService(Storage(tmp_path / "steadyscale.db"), retention=100, max_batch=100)


def test_age_counts_from_the_first_sight_of_each_write(streams: StreamService) -> None:
    clock = Clock()
    watch = StreamWatch(streams, clock)
    streams.put("orders", CONFIG)
    first = watch.read("orders")
    assert (first.operators, first.decided, first.age) == (2, False, 0.0)
    clock.now += 40.0
    assert watch.read("orders").age == 40.0
    streams.post_samples("orders", [Sample(t=0.0, volume=260.0)])
    clock.now += 5.0
    after = watch.read("orders")
    assert (after.operators, after.decided, after.age) == (6, True, 0.0)
    clock.now += 7.0
    assert watch.read("orders").age == 7.0
    # A retried batch changes nothing stored: it does not make the stream fresh.
    streams.post_samples("orders", [Sample(t=0.0, volume=260.0)])
    clock.now += 1.0
    assert watch.read("orders").age == 8.0


def test_refresh_notes_writes_between_calls(streams: StreamService) -> None:
    clock = Clock()
    watch = StreamWatch(streams, clock)
    streams.put("orders", CONFIG)
    watch.read("orders")
    clock.now += 30.0
    streams.post_samples("orders", [Sample(t=0.0, volume=90.0)])
    watch.refresh()  # the background poll sees the write at 30 s ...
    clock.now += 20.0
    assert watch.read("orders").age == 20.0  # ... so its age runs from then, not from now


def test_a_deleted_stream_is_not_found(streams: StreamService) -> None:
    watch = StreamWatch(streams, Clock())
    streams.put("orders", CONFIG)
    watch.read("orders")
    streams.delete("orders")
    with pytest.raises(StreamNotFound):
        watch.read("orders")
    watch.refresh()
