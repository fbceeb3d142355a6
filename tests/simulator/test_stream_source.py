"""The streaming source's planning, without Spark (it runs on a cluster in
tests/scaling/test_spark_autoscale.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.spark import stream_source
from simulator.spark.stream_source import VolumeReader, parse_schedule, scheduled_rows


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(stream_source.time, "monotonic", clock)
    return clock


@pytest.mark.parametrize("text", ["100", "100:0", "-5:10", "fast:10", "100:10,,50:5"])
def test_a_bad_schedule_names_the_part_and_the_form(text: str) -> None:
    with pytest.raises(ValueError, match="write rate:seconds"):
        parse_schedule(text)


def test_the_schedule_integrates_and_its_last_rate_holds() -> None:
    schedule = parse_schedule("10:5,0:5,40:10")
    assert [scheduled_rows(schedule, t) for t in (0, 5, 7, 10, 20, 25)] == [
        0.0, 50.0, 50.0, 50.0, 450.0, 650.0,
    ]  # fmt: skip


def test_rows_fall_due_at_the_scheduled_rate(clock: Clock) -> None:
    reader = VolumeReader({"schedule": "100:10,300:10"})
    offsets = []
    for seconds in (1.0, 9.0, 5.0, 10.0):
        clock.now += seconds
        offsets.append(reader.latestOffset({"rows": 0}, None)["rows"])
    assert offsets == [100, 1000, 2500, 5500]


def test_the_control_file_sets_the_rate_from_now_on(clock: Clock, tmp_path: Path) -> None:
    control = tmp_path / "rate"
    control.write_text("50\n")
    reader = VolumeReader({"control": str(control), "schedule": "1000:10"})
    clock.now += 2.0
    assert reader.latestOffset({"rows": 0}, None) == {"rows": 100}
    control.write_text("200")
    clock.now += 1.5
    assert reader.latestOffset({"rows": 100}, None) == {"rows": 400}
    control.write_text("-1")
    with pytest.raises(ValueError, match="must be >= 0"):
        reader.latestOffset({"rows": 400}, None)


def test_a_restarted_query_continues_from_its_checkpoint(clock: Clock) -> None:
    reader = VolumeReader({"schedule": "10:100"})
    clock.now += 1.0
    assert reader.latestOffset({"rows": 5000}, None) == {"rows": 5000}
    clock.now += 1.0
    assert reader.latestOffset({"rows": 5000}, None) == {"rows": 5000}  # 20 due < 5000 read


def test_partitions_cover_each_row_once_and_read_yields_them() -> None:
    reader = VolumeReader({"schedule": "1:1", "partitions": "4"})
    parts = reader.partitions({"rows": 10}, {"rows": 21})
    assert [part.value for part in parts] == [(10, 13), (13, 16), (16, 19), (19, 21)]
    assert [row for part in parts for (row,) in reader.read(part)] == list(range(10, 21))
    assert reader.partitions({"rows": 7}, {"rows": 7}) == []


@pytest.mark.parametrize(
    ("options", "message"),
    [({}, "needs option schedule"), ({"schedule": "1:1", "partitions": "0"}, "partitions=0")],
)
def test_bad_options_are_refused(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        VolumeReader(options)


def test_a_batch_reads_at_most_max_rows_and_the_rest_is_reported_due(clock: Clock) -> None:
    from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

    reader = VolumeReader({"schedule": "100:60", "max_rows_per_batch": "80"})
    assert reader.getDefaultReadLimit() == ReadMaxRows(80)
    clock.now += 2.0  # 200 due
    assert reader.latestOffset({"rows": 0}, ReadMaxRows(80)) == {"rows": 80}
    assert reader.reportLatestOffset() == {"rows": 200}  # 120 behind
    clock.now += 1.0  # 300 due
    assert reader.latestOffset({"rows": 80}, ReadMaxRows(80)) == {"rows": 160}
    # A trigger that asks for everything (Trigger.AvailableNow) gets everything.
    assert reader.latestOffset({"rows": 160}, ReadAllAvailable()) == {"rows": 300}
    assert VolumeReader({"schedule": "1:1"}).getDefaultReadLimit() == ReadAllAvailable()


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_a_bad_row_limit_is_refused_naming_it(value: str) -> None:
    with pytest.raises(ValueError, match=f"max_rows_per_batch={value} are not allowed"):
        VolumeReader({"schedule": "1:1", "max_rows_per_batch": value})


def test_start_pins_the_schedule_to_the_wall_clock(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream_source.time, "time", lambda: 5000.0)
    reader = VolumeReader({"schedule": "100:60", "start": "5003"})  # second 0 is 3 s away
    clock.now += 2.0
    assert reader.latestOffset({"rows": 0}, None) == {"rows": 0}  # nothing due before it
    clock.now += 1.5
    assert reader.latestOffset({"rows": 0}, None) == {"rows": 50}


def test_a_task_holds_its_slot_per_row_without_burning_cpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(stream_source.time, "sleep", slept.append)
    reader = VolumeReader({"schedule": "1:1", "partitions": "2", "hold_us": "2500"})
    (first, second) = reader.partitions({"rows": 0}, {"rows": 7})
    assert [row for (row,) in reader.read(first)] == [0, 1, 2, 3]
    assert slept == [pytest.approx(0.01)]  # once per task: 4 rows x 2.5 ms
    with pytest.raises(ValueError, match="hold_us=-1.0"):
        VolumeReader({"schedule": "1:1", "hold_us": "-1"})
