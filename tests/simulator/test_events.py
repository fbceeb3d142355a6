"""events_to_volume and write_trace: known counts per bucket from every input form, the round trip
through read_trace, and the errors."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from simulator.model.traces import read_trace, trace_workload
from simulator.spark.events import events_to_volume, write_trace

BASE = 1_404_172_800.0  # 2014-07-01 00:00:00 UTC, a multiple of every step below
# Events per bucket, with empty buckets in the middle; at most 8, one per eighth of a bucket.
COUNTS = [3, 0, 5, 0, 0, 1, 8, 2]


def event_seconds(step: float, counts: list[int] = COUNTS, seed: int = 0) -> list[float]:
    """``counts[i]`` events in bucket ``i`` (the first on its start, the others at eighths of
    the bucket, all exact in binary), shuffled."""
    times = [
        BASE + index * step + step * eighth / 8
        for index, count in enumerate(counts)
        for eighth in range(count)
    ]
    random.Random(seed).shuffle(times)
    return times


def iso(seconds: float, style: int = 0) -> str:
    """Three ways of writing one instant: naive (UTC), with ``Z`` and with a +02:00 offset."""
    moment = datetime.fromtimestamp(seconds, UTC)
    if style == 0:
        return moment.strftime("%Y-%m-%d %H:%M:%S.%f")
    if style == 1:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return (moment + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S.%f+02:00")


def write_csv(path: Path, header: str, cells: list[str]) -> Path:
    path.write_text("\n".join([header, *(f"{cell},x" for cell in cells)]) + "\n")
    return path


def rows(volume: DataFrame) -> list[tuple[float, float]]:
    return [(row["timestamp"], row["value"]) for row in volume.collect()]


def expected(step: float, counts: list[int] = COUNTS) -> list[tuple[float, float]]:
    return [(BASE + index * step, count / step) for index, count in enumerate(counts)]


@pytest.mark.parametrize("step", [1.0, 10.0, 0.5])
def test_iso_csv_directory_counts_every_bucket(
    spark: SparkSession, tmp_path: Path, step: float
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    times = event_seconds(step)
    for part in range(3):
        cells = [
            iso(seconds, index % 3) for index, seconds in enumerate(times) if index % 3 == part
        ]
        write_csv(folder / f"part-{part}.csv", "time,user", cells)
    volume = events_to_volume(spark, folder, "time", step=step)
    assert volume.dtypes == [("timestamp", "double"), ("value", "double")]
    assert rows(volume) == expected(step)


@pytest.mark.parametrize("unit", ["s", "ms"])
def test_epoch_numbers_in_csv(
    spark: SparkSession, tmp_path: Path, unit: Literal["s", "ms"]
) -> None:
    per_second = 1000 if unit == "ms" else 1
    cells = [repr(seconds * per_second) for seconds in event_seconds(1.0)]
    path = write_csv(tmp_path / "events.csv", "epoch,user", cells)
    volume = events_to_volume(spark, path, "epoch", unit=unit)
    assert rows(volume) == expected(1.0)


@pytest.fixture(scope="module")
def parquet_events(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The events of ``event_seconds(10.0)`` as Parquet part files written by Spark, with the
    time as a timestamp, a timestamp without time zone and epoch milliseconds."""
    folder = tmp_path_factory.mktemp("parquet")
    text = folder / "events.csv"
    text.write_text("s,t\n" + "".join(f"{s!r},{iso(s)}\n" for s in event_seconds(10.0)))
    path = folder / "events.parquet"
    spark.read.option("header", True).csv(str(text)).select(
        F.timestamp_seconds(F.col("s").cast("double")).alias("at"),
        F.to_timestamp_ntz("t").alias("local"),
        (F.col("s").cast("double") * 1000).cast("long").alias("epoch_ms"),
    ).repartition(3).write.parquet(str(path))
    return path


@pytest.mark.parametrize(
    ("column", "unit"),
    [("at", "s"), ("local", "s"), ("epoch_ms", "ms")],
    ids=["timestamp", "timestamp_ntz", "long_ms"],
)
def test_parquet_columns(
    spark: SparkSession, parquet_events: Path, column: str, unit: Literal["s", "ms"]
) -> None:
    assert len(list(parquet_events.glob("part-*.parquet"))) == 3
    schema = dict(spark.read.parquet(str(parquet_events)).dtypes)
    assert schema == {"at": "timestamp", "local": "timestamp_ntz", "epoch_ms": "bigint"}
    volume = events_to_volume(spark, parquet_events, column, step=10.0, unit=unit)
    assert rows(volume) == expected(10.0)


def test_naive_times_are_utc_whatever_the_session_time_zone(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = write_csv(tmp_path / "events.csv", "time,user", [iso(s) for s in event_seconds(1.0)])
    zone = spark.conf.get("spark.sql.session.timeZone")
    try:
        spark.conf.set("spark.sql.session.timeZone", "America/New_York")
        volume = events_to_volume(spark, path, "time")
        assert spark.conf.get("spark.sql.session.timeZone") == "America/New_York"
        spark.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")
        assert rows(volume) == expected(1.0)
    finally:
        spark.conf.set("spark.sql.session.timeZone", str(zone))


def test_start_and_end_pad_with_zeros_and_cut(spark: SparkSession, tmp_path: Path) -> None:
    path = write_csv(tmp_path / "events.csv", "time,user", [iso(s) for s in event_seconds(1.0)])
    padded = events_to_volume(
        spark, path, "time", start="2014-06-30 23:59:58", end=datetime(2014, 7, 1, 0, 0, 10)
    )
    assert rows(padded) == [
        (BASE - 2, 0.0),
        (BASE - 1, 0.0),
        *expected(1.0),
        (BASE + 8, 0.0),
        (BASE + 9, 0.0),
    ]
    # A start inside a bucket takes the whole bucket; end is exclusive.
    cut = events_to_volume(spark, path, "time", start=BASE + 2.5, end=BASE + 6)
    assert rows(cut) == expected(1.0)[2:6]


@pytest.mark.parametrize(
    ("step", "first_line"),
    [
        (1.0, "2014-07-01 00:00:00,3.0"),
        (10.0, "2014-07-01 00:00:00,0.3"),
        (0.5, "2014-07-01 00:00:00.000000,6.0"),
    ],
)
def test_write_trace_round_trips_through_read_trace(
    spark: SparkSession, tmp_path: Path, step: float, first_line: str
) -> None:
    path = write_csv(tmp_path / "events.csv", "time,user", [iso(s) for s in event_seconds(step)])
    trace = tmp_path / "trace.csv"
    assert write_trace(events_to_volume(spark, path, "time", step=step), trace) == len(COUNTS)
    assert trace.read_text().splitlines()[:2] == ["timestamp,value", first_line]
    seconds, values = read_trace(trace)
    assert seconds.tolist() == [index * step for index in range(len(COUNTS))]
    assert values.tolist() == [count / step for count in COUNTS]
    replayed = trace_workload(trace, step=step, low=None, high=None)
    assert replayed.tolist() == values.tolist()


def test_bad_rows_are_counted_and_shown_or_skipped(spark: SparkSession, tmp_path: Path) -> None:
    cells = ["garbage", "", "1404172800", *(iso(s) for s in event_seconds(1.0))]
    path = write_csv(tmp_path / "events.csv", "time,user", cells)
    total = len(cells)
    with pytest.raises(ValueError, match=rf"3 of {total} rows .* 'time' .* e\.g\. 'garbage'"):
        events_to_volume(spark, path, "time")
    assert rows(events_to_volume(spark, path, "time", on_bad="skip")) == expected(1.0)


def test_milliseconds_read_as_seconds_are_bad_rows(spark: SparkSession, tmp_path: Path) -> None:
    path = write_csv(tmp_path / "events.csv", "epoch,user", ["1404172800000", "1404172801000"])
    with pytest.raises(ValueError, match="2 of 2 rows .* seconds since the epoch within the years"):
        events_to_volume(spark, path, "epoch")


def test_unit_applies_to_numbers_only(spark: SparkSession, tmp_path: Path) -> None:
    path = write_csv(tmp_path / "events.csv", "time,user", ["2014-07-01 00:00:00"])
    with pytest.raises(ValueError, match="unit='ms' is not allowed: column 'time' holds datetimes"):
        events_to_volume(spark, path, "time", unit="ms")


def test_missing_column_lists_the_columns(spark: SparkSession, tmp_path: Path) -> None:
    path = write_csv(tmp_path / "events.csv", "time,user", ["2014-07-01 00:00:00"])
    with pytest.raises(ValueError, match=r"no column 'ts'; its columns are \['time', 'user'\]"):
        events_to_volume(spark, path, "ts")


def test_a_stray_timestamp_trips_max_buckets(spark: SparkSession, tmp_path: Path) -> None:
    path = write_csv(tmp_path / "events.csv", "epoch,user", ["0", "1404172800"])
    with pytest.raises(ValueError, match="from 1970-01-01 00:00:00.* exceed max_buckets=10000000"):
        events_to_volume(spark, path, "epoch")


def test_no_events_in_range(spark: SparkSession, tmp_path: Path) -> None:
    path = write_csv(tmp_path / "events.csv", "time,user", ["2014-07-01 00:00:00"])
    with pytest.raises(ValueError, match="holds no events from '2014-07-02'"):
        events_to_volume(spark, path, "time", start="2014-07-02")


@pytest.mark.parametrize("step", [0, -1.0, float("nan")])
def test_step_must_be_positive(spark: SparkSession, tmp_path: Path, step: float) -> None:
    with pytest.raises(ValueError, match="step must be a number > 0"):
        events_to_volume(spark, tmp_path / "events.csv", "time", step=step)


def test_input_format_from_the_path(spark: SparkSession, tmp_path: Path) -> None:
    events = tmp_path / "events.json"
    events.write_text("{}\n")
    with pytest.raises(
        ValueError, match=r"events\.json: .* csv \(\.csv .*\), parquet \(\.parquet\)"
    ):
        events_to_volume(spark, events, "time")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    write_csv(mixed / "a.csv", "time,user", ["2014-07-01 00:00:00"])
    (mixed / "b.parquet").write_bytes(b"")
    with pytest.raises(ValueError, match=r"both formats, \['csv', 'parquet'\]"):
        events_to_volume(spark, mixed, "time")
    # A glob of CSV files, and a CSV file whose name says nothing with input_format.
    write_csv(tmp_path / "day-1.csv", "time,user", ["2014-07-01 00:00:00"])
    write_csv(tmp_path / "day-2.csv", "time,user", ["2014-07-01 00:00:01"])
    plain = write_csv(tmp_path / "events.log", "time,user", ["2014-07-01 00:00:00"])
    assert rows(events_to_volume(spark, tmp_path / "day-*.csv", "time")) == [
        (BASE, 1.0),
        (BASE + 1, 1.0),
    ]
    assert rows(events_to_volume(spark, plain, "time", input_format="csv")) == [(BASE, 1.0)]
