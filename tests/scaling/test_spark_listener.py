"""The listener without Spark: progress events built by hand, executors in memory."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from types import SimpleNamespace
from typing import Any

import pytest

from filters import make_filter
from scaling import Scaler, ThresholdPolicy
from scaling.spark import InMemoryExecutors, LocalDecider, RetryLater, Sample, ScalingListener
from tests.scaling.spark_events import SPEC, START, progress, reference, stamp, volumes


@pytest.fixture
def listener() -> Iterator[ScalingListener]:
    executors = InMemoryExecutors(current=1, max_executors=6)
    listener = ScalingListener(LocalDecider(Scaler.from_spec(SPEC, operators=1)), executors)
    yield listener
    listener.close()


def test_each_progress_event_is_a_sample_and_executors_follow_the_scaler(
    listener: ScalingListener,
) -> None:
    rates = volumes()
    for i, rate in enumerate(rates):
        listener.onQueryProgress(progress(START + i, rate))
        assert listener.wait_idle(5.0)  # one at a time: every decision is applied
    expected = reference(rates)
    assert listener.samples == len(rates)
    assert listener.executors.current() == expected[-1]
    changes = [count for i, count in enumerate(expected) if i == 0 or count != expected[i - 1]]
    assert [count for _, count in listener.targets] == changes
    assert listener.executors.history == changes  # type: ignore[attr-defined]


def test_a_slow_resize_never_holds_up_the_callback_and_the_backlog_is_decided_in_one_go() -> None:
    executors = InMemoryExecutors(current=1, max_executors=6, latency=1.0)
    decider = LocalDecider(Scaler.from_spec(SPEC, operators=1))
    listener = ScalingListener(decider, executors)
    rates = volumes()
    started = time.perf_counter()
    for i, rate in enumerate(rates):
        listener.onQueryProgress(progress(START + i, rate))
    callbacks = time.perf_counter() - started
    assert listener.wait_idle(30.0)
    listener.close()
    assert callbacks < 0.5  # 120 callbacks while resizes take a second each
    assert listener.samples == len(rates)  # every sample went through the filter, in order
    assert executors.current() == reference(rates)[-1]
    assert len(executors.history) < 10  # far fewer resizes than samples


def test_processed_rate_and_kafka_lag_go_with_the_sample(listener: ScalingListener) -> None:
    event = progress(START, 200.0)
    event.progress.processedRowsPerSecond = 180.0
    kafka = {"avgOffsetsBehindLatest": "1500.0", "maxOffsetsBehindLatest": "2000"}
    offsets = '{"orders": {"0": 10, "1": 12, "2": 9}}'
    event.progress.sources = [
        SimpleNamespace(metrics=kafka, endOffset=offsets),
        SimpleNamespace(metrics={}, endOffset="{}"),  # a source that reports no lag
    ]
    listener.onQueryProgress(event)
    assert listener.wait_idle(5.0)
    decider = listener.decider
    assert isinstance(decider, LocalDecider) and decider.last is not None
    # 1,500 behind on average over 3 partitions; running read from the executors (1).
    assert decider.last.previous == 1
    assert (decider.last.backlog, decider.last.processed, decider.last.running) == (
        4500.0,
        180.0,
        1,
    )


def test_it_follows_one_query_and_skips_what_is_not_a_sample(listener: ScalingListener) -> None:
    listener.onQueryProgress(progress(START, float("nan")))  # the first trigger has no rate
    listener.onQueryProgress(progress(START + 1, 120.0))  # follows q-1 from here
    listener.onQueryProgress(progress(START + 2, 900.0, query="q-2"))  # another query
    listener.onQueryProgress(progress(START + 1, 130.0))  # not after the last sample
    listener.onQueryIdle(SimpleNamespace(id="q-1", timestamp=stamp(START + 12)))  # no data: 0
    assert listener.wait_idle(5.0)
    decider = listener.decider
    assert isinstance(decider, LocalDecider) and decider.last is not None
    assert listener.samples == 2
    assert (decider.last.t, decider.last.volume) == (START + 12, 0.0)


def test_a_named_query_is_followed_by_name_or_id() -> None:
    for wanted in ("orders", "q-2"):
        decider = LocalDecider(Scaler(make_filter("raw"), ThresholdPolicy(capacity=100.0)))
        listener = ScalingListener(decider, InMemoryExecutors(), query=wanted)
        listener.onQueryProgress(progress(START, 500.0, query="q-1", name="clicks"))
        listener.onQueryProgress(progress(START + 1, 300.0, query="q-2", name="orders"))
        assert listener.wait_idle(5.0)
        listener.close()
        assert listener.samples == 1 and listener.target == 3


class Flaky:
    """A decider that asks to retry later ``failures`` times, then answers."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls: list[list[Sample]] = []

    def decide(self, samples: Sequence[Sample]) -> int:
        self.calls.append(list(samples))
        if len(self.calls) <= self.failures:
            raise RetryLater("the service is restarting")
        return len(samples)


def test_samples_are_kept_while_the_decider_asks_to_retry_later() -> None:
    flaky = Flaky(failures=2)
    listener = ScalingListener(flaky, InMemoryExecutors(max_executors=10))
    for i in range(3):
        listener.onQueryProgress(progress(START + i, 100.0))
        assert listener.wait_idle(5.0)
    listener.close()
    assert [len(call) for call in flaky.calls] == [1, 2, 3]  # resent with the newer ones
    assert listener.target == 3 and len(listener.errors) == 2
    assert "2 samples kept" in listener.errors[-1]


def test_a_failed_resize_is_reported_and_tried_again_at_the_next_decision() -> None:
    class Broken(InMemoryExecutors):
        fail = True

        def resize(self, executors: int) -> int:
            if self.fail:
                self.fail = False
                raise RuntimeError("the cluster manager is unreachable")
            return super().resize(executors)

    executors = Broken(max_executors=10)
    decider = LocalDecider(Scaler(make_filter("raw"), ThresholdPolicy(capacity=100.0)))
    listener = ScalingListener(decider, executors)
    for i, rate in enumerate((300.0, 290.0)):  # both need 3
        listener.onQueryProgress(progress(START + i, rate))
        assert listener.wait_idle(5.0)
    listener.close()
    assert "resize to 3 failed: the cluster manager is unreachable" in listener.errors[0]
    assert executors.history == [3] and listener.target == 3


def test_a_batch_starts_from_the_executors_actually_running() -> None:
    class Stuck(InMemoryExecutors):
        def resize(self, executors: int) -> int:
            return executors  # claims the target, but nothing changes (a quota, say)

    executors = Stuck(current=1, max_executors=6)
    decider = LocalDecider(Scaler.from_spec(SPEC, operators=1))
    listener = ScalingListener(decider, executors)
    for i in range(3):
        listener.onQueryProgress(progress(START + i, 250.0))
        assert listener.wait_idle(5.0)
    listener.close()
    assert decider.last is not None
    # Each decision starts from the 1 executor that runs, not from the 3 asked for before.
    assert (decider.last.running, decider.last.previous, decider.last.operators) == (1, 1, 3)


def test_a_source_reporting_its_latest_offset_is_behind_by_latest_less_end() -> None:
    from types import SimpleNamespace

    from scaling.spark.listener import _backlog

    volume = SimpleNamespace(metrics={}, endOffset='{"rows": 160}', latestOffset='{"rows": 300}')
    kafka = SimpleNamespace(  # without the lag metric, the offsets per partition
        metrics=None,
        endOffset='{"t": {"0": 100, "1": 50}}',
        latestOffset='{"t": {"0": 130, "1": 50, "2": 7}}',
    )
    assert _backlog([volume]) == 140.0 and _backlog([volume, kafka]) == 170.0
    # The lag metric, where given, is what counts; a source that says neither adds nothing.
    measured = SimpleNamespace(**{**vars(kafka), "metrics": {"avgOffsetsBehindLatest": "4.0"}})
    assert _backlog([measured]) == 8.0  # 4 x 2 partitions, not 30
    silent = SimpleNamespace(metrics={}, endOffset='{"rows": 9}', latestOffset=None)
    assert _backlog([silent]) is None and _backlog([silent, volume]) == 140.0
    caught_up = SimpleNamespace(metrics={}, endOffset='{"rows": 9}', latestOffset='{"rows": 9}')
    assert _backlog([caught_up]) == 0.0


def test_the_volume_is_the_rate_read_plus_the_backlogs_growth(listener: ScalingListener) -> None:
    # A batch reads at most 60 rows/s (maxOffsetsPerTrigger) while 150 arrive: the backlog
    # grows by 90 rows/s, and the Scaler is fed the 150 that arrive, not the 60 read.
    def behind(t: float, rate: float, latest: int, end: int) -> Any:
        event = progress(t, rate)
        offsets = {"endOffset": f'{{"rows": {end}}}', "latestOffset": f'{{"rows": {latest}}}'}
        event.progress.sources = [SimpleNamespace(metrics={}, **offsets)]
        return event

    decider = listener.decider
    assert isinstance(decider, LocalDecider)
    fed = []
    for event in (
        behind(START, 60.0, latest=1000, end=600),  # no backlog before it: the rate read
        behind(START + 10, 60.0, latest=2500, end=1200),  # backlog 400 -> 1300 in 10 s
        progress(START + 20, 60.0),  # reports no backlog: the rate read
        behind(START + 30, 60.0, latest=4000, end=1800),  # no backlog before it
        behind(START + 31, 70.0, latest=4000, end=3000),  # drained 1200 in 1 s: none arrived
    ):
        listener.onQueryProgress(event)
        assert listener.wait_idle(5.0) and decider.last is not None
        fed.append(decider.last.volume)
    assert fed == [60.0, 150.0, 60.0, 60.0, 0.0]
    assert decider.last.backlog == 1000.0


def test_a_sample_is_dated_at_its_batchs_end_with_what_arrived_while_it_ran(
    listener: ScalingListener,
) -> None:
    # A batch planned at START + 10 with 126 rows beyond what it read, running 9 s while 350
    # rows/s arrive: its event comes at START + 19, when 126 + 9 x 350 rows wait. Measured on
    # real Spark: a query behind reported 126 waiting while 3,100 did (docs/benchmarks.md).
    def batch(t: float, rate: float, took_ms: int, latest: int, end: int) -> Any:
        event = progress(t, rate)
        offsets = {"endOffset": f'{{"rows": {end}}}', "latestOffset": f'{{"rows": {latest}}}'}
        event.progress.sources = [SimpleNamespace(metrics={}, **offsets)]
        event.progress.durationMs = {"triggerExecution": took_ms, "addBatch": took_ms - 50}
        return event

    decider = listener.decider
    assert isinstance(decider, LocalDecider)
    listener.onQueryProgress(batch(START, 100.0, 1000, latest=1000, end=1000))
    assert listener.wait_idle(5.0) and decider.last is not None
    assert (decider.last.t, decider.last.backlog) == (START + 1.0, 100.0)  # 0 + 1 s x 100
    # The lags are 10 s apart (the triggers' starts), not 18 s (the events'): 224 read a
    # second and the lag grew by 12.6 a second, so 236.6 arrive.
    listener.onQueryProgress(batch(START + 10, 224.0, 9000, latest=3366, end=3240))
    assert listener.wait_idle(5.0)
    assert decider.last.t == START + 19.0
    assert decider.last.volume == pytest.approx(236.6)
    assert decider.last.backlog == pytest.approx(126.0 + 9.0 * 236.6)
    # Spark's progress without durations: dated at the trigger's start, as before.
    listener.onQueryProgress(progress(START + 30, 50.0))
    assert listener.wait_idle(5.0) and decider.last.t == START + 30
