"""From a job's own event records to the volume trace the simulator replays.

``steadyscale simulate --trace FILE`` replays a ``timestamp,value`` CSV of input volume
(``simulator.model.traces.trace_workload``). The volume a stream job sees is the number of events
it receives per second, and most jobs keep a record of every event they handle: their logs, a
Kafka topic dumped to Parquet, an audit table. ``events_to_volume`` is the Spark job that counts
those records per time bucket, and ``write_trace`` writes the counts as the CSV the simulator
reads, so that filters and guards can be tried on the job's own load before they scale it
(``steadyscale trace`` runs both from the command line).

Each input row is one event; only its timestamp column is read. A bucket of ``step`` seconds
starts at ``floor(seconds / step) * step`` seconds since the epoch, and its value is the number
of events in it divided by ``step``: events per second, whatever the bucket width.

>>> import tempfile
>>> from simulator.spark.session import spark_session
>>> spark = spark_session("local[1]")
>>> with tempfile.TemporaryDirectory() as folder:
...     log = Path(folder) / "requests.csv"
...     _ = log.write_text(
...         "time,user\\n"
...         "2014-07-01 00:00:00.2,ann\\n2014-07-01 00:00:00.7,bob\\n"
...         "2014-07-01 00:00:02.5,ann\\n"
...     )
...     volume = events_to_volume(spark, str(log), "time")
...     write_trace(volume, Path(folder) / "trace.csv")
...     print((Path(folder) / "trace.csv").read_text(), end="")
3
timestamp,value
2014-07-01 00:00:00,2.0
2014-07-01 00:00:01,0.0
2014-07-01 00:00:02,1.0
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    DataType,
    DateType,
    NumericType,
    StringType,
    TimestampNTZType,
    TimestampType,
)

from filters.base import check_choice, check_number
from simulator.model.event_log import FORMATS, detect_format
from simulator.model.traces import epoch_seconds

UNITS = {"s": 1.0, "ms": 1000.0}
"""Units of numeric timestamps: how many make a second."""

# Python's datetime (and so read_trace) covers the years 1 to 9999; a number beyond them is no
# timestamp, typically milliseconds read as seconds.
EARLIEST = -62_135_596_800.0
LATEST = 253_402_300_800.0

Moment = float | str | datetime


def events_to_volume(
    spark: SparkSession,
    path: str | os.PathLike[str],
    timestamp_column: str,
    step: float = 1.0,
    input_format: Literal["csv", "parquet"] | None = None,
    start: Moment | None = None,
    end: Moment | None = None,
    unit: Literal["s", "ms"] = "s",
    on_bad: Literal["error", "skip"] = "error",
    max_buckets: int = 10_000_000,
) -> DataFrame:
    """Events per second in every bucket of ``step`` seconds: a Spark job over event records.

    Parameters
    ----------
    spark
        The session to run on.
    path
        A file, a directory of part files (as Spark writes them) or a glob, anything
        ``spark.read`` takes, with one row per event.
    timestamp_column
        The column holding each event's time, one of

        * numbers (int, float or decimal columns, or numbers in CSV text): seconds since
          1970-01-01 UTC, or milliseconds with ``unit="ms"``;
        * ISO-8601 text, ``2014-07-01 00:00:00``, ``2014-07-01T00:00:00.25Z``,
          ``2014-07-01T02:00:00+02:00`` or a bare date; text without an offset counts as UTC;
        * Spark timestamps (Parquet), with or without a time zone; those without count as UTC,
          as do dates (midnight).

        A text column holds numbers or datetimes: the form more of its values take is the
        column's, and values of the other form are bad rows.
    step
        Bucket width in seconds, > 0. Fractions are fine; those that binary floating point
        cannot hold exactly (0.1) may put an event that falls on a bucket's start into the
        bucket before, so prefer 0.5, 0.25, ... or whole seconds.
    input_format
        ``"csv"`` (with a header row) or ``"parquet"``; by default from the ending of ``path``,
        or of the files inside a directory or matched by a glob.
    start, end
        The buckets to return: from the one containing ``start`` up to the last one starting
        before ``end``; events outside them are left out. Seconds since the epoch, ISO-8601
        text or ``datetime`` (naive ones count as UTC). By default from the first event's
        bucket to the last one's.
    unit
        ``"s"`` or ``"ms"``: the unit of numeric timestamps. Nothing is guessed: milliseconds
        read as seconds lie beyond the year 9999 and are reported as bad rows.
    on_bad
        Rows whose timestamp is null or not of the column's form: ``"error"`` (default) raises
        a ``ValueError`` with their number and an example, ``"skip"`` leaves them out.
    max_buckets
        A guard against a stray timestamp (a 0, a year 1970) that would stretch the series
        over decades of empty buckets: more buckets than this raise a ``ValueError``.

    Returns
    -------
    DataFrame
        Columns ``timestamp`` (bucket start, seconds since the epoch, double) and ``value``
        (events / ``step``, double), one row per bucket with no gaps (empty buckets are 0),
        sorted by ``timestamp``. It is lazy: this function runs one job to check the
        timestamps and find the range; the counting runs when the result is used.

    Raises ``ValueError`` for a missing column (listing those present), bad timestamps (with
    ``on_bad="error"``), no events in range, too many buckets or invalid arguments.
    """
    name = "events_to_volume"
    check_number(name, "step", step, minimum=0, exclusive_minimum=True)
    check_choice(name, "input_format", input_format, [None, *FORMATS])
    check_choice(name, "unit", unit, list(UNITS))
    check_choice(name, "on_bad", on_bad, ["error", "skip"])
    check_number(name, "max_buckets", max_buckets, minimum=1, integer=True)
    step = float(step)
    first = None if start is None else math.floor(_moment_seconds("start", start) / step)
    after = None if end is None else math.ceil(_moment_seconds("end", end) / step)
    if first is not None and after is not None and after <= first:
        raise ValueError(f"{name}: end={end!r} is not allowed: end must come after start={start!r}")

    events = _read(spark, str(path), input_format or detect_format(str(path)))
    if timestamp_column not in events.columns:
        raise ValueError(
            f"{name}: {path} has no column {timestamp_column!r}; its columns are {events.columns}"
        )
    raw = F.col(f"`{timestamp_column.replace('`', '``')}`")
    kind = events.schema[timestamp_column].dataType
    # Naive times are UTC: Spark fixes a plan's time zone when it is built, so the session's
    # own setting, restored afterwards, does not change the result.
    with _session_time_zone(spark, "UTC"):
        forms = _candidate_seconds(raw, kind, UNITS[unit])
        if forms is None:
            raise ValueError(
                f"{name}: column {timestamp_column!r} of {path} is {kind.simpleString()}; it "
                "must hold numbers, text (numbers or ISO-8601 datetimes), timestamps or dates"
            )
        checked = events.select(
            *(_valid(seconds).alias(form) for form, seconds in forms.items()),
            raw.cast("string").alias("raw"),
        )
    total, parsed = _summary(checked, list(forms), step, first, after)
    form = max(forms, key=lambda candidate: parsed[candidate].count)
    if form == "datetime" and unit != "s":
        raise ValueError(
            f"{name}: unit={unit!r} is not allowed: column {timestamp_column!r} holds datetimes, "
            "and unit only applies to numeric timestamps"
        )
    bad = total - parsed[form].count
    if bad and on_bad == "error":
        expected = (
            "an ISO-8601 datetime"
            if form == "datetime"
            else f"a number of {'seconds' if unit == 's' else 'milliseconds'} since the epoch "
            "within the years 1-9999"
        )
        raise ValueError(
            f"{name}: {bad} of {total} rows of {path} have a {timestamp_column!r} "
            f"that is null or not {expected}, e.g. {parsed[form].example!r}; fix them or "
            "pass on_bad='skip'"
        )
    lowest, highest = parsed[form].lowest, parsed[form].highest
    if first is None or after is None:
        if lowest is None or highest is None:
            raise ValueError(f"{name}: {path} holds no events{_range_text(start, end)}")
        first = lowest if first is None else first
        after = highest + 1 if after is None else after
    if after - first > max_buckets:
        raise ValueError(
            f"{name}: {after - first} buckets of {step:g} s from {_utc_text(first * step)} to "
            f"{_utc_text((after - 1) * step)} exceed max_buckets={max_buckets}; check for stray "
            "timestamps, pass start and end, a larger step or a larger max_buckets"
        )

    bucket = F.floor(F.col(form) / step)
    counts = (
        checked.where(F.col(form).isNotNull() & bucket.between(first, after - 1))
        .groupBy(bucket.alias("bucket"))
        .count()
    )
    return (
        spark.range(first, after)
        .withColumnRenamed("id", "bucket")
        .join(counts, "bucket", "left")
        .select(
            (F.col("bucket") * F.lit(step)).cast("double").alias("timestamp"),
            (F.coalesce(F.col("count"), F.lit(0)) / F.lit(step)).cast("double").alias("value"),
        )
        .orderBy("timestamp")
    )


def write_trace(df: DataFrame, path: str | os.PathLike[str]) -> int:
    """Write a volume series as the ``timestamp,value`` CSV that ``read_trace`` reads.

    ``df`` needs the columns ``timestamp`` (seconds since the epoch) and ``value``, as
    ``events_to_volume`` returns them. The rows are collected to the driver and written, sorted
    by time, to the single local file ``path`` (not a Spark directory of part files): that is
    one row per bucket, 86,400 a day at 1 s, small next to the events themselves. Timestamps
    are written as UTC ``YYYY-MM-DD HH:MM:SS``, with microseconds when any of them is not a
    whole second; values as Python writes floats, which read back exactly. Returns the number
    of rows. ``simulator.model.traces.read_trace`` needs at least 2.
    """
    missing = [column for column in ("timestamp", "value") if column not in df.columns]
    if missing:
        raise ValueError(
            f"write_trace: the DataFrame has no column(s) {missing}; its columns are {df.columns}"
        )
    rows = [
        (float(row["timestamp"]), float(row["value"]))
        for row in df.select("timestamp", "value").orderBy("timestamp").collect()
    ]
    whole = all(seconds.is_integer() for seconds, _ in rows)
    layout = "%Y-%m-%d %H:%M:%S" if whole else "%Y-%m-%d %H:%M:%S.%f"
    with Path(path).open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(["timestamp", "value"])
        for seconds, value in rows:
            stamp = datetime.fromtimestamp(seconds, UTC).strftime(layout)
            writer.writerow([stamp, repr(value)])
    return len(rows)


def _read(spark: SparkSession, path: str, input_format: str) -> DataFrame:
    if input_format == "csv":
        # No schema inference: every column stays text, so numbers and datetimes are told apart
        # by the same rules whatever the first rows look like.
        return spark.read.option("header", True).csv(path)
    return spark.read.parquet(path)


def _candidate_seconds(raw: Column, kind: DataType, per_second: float) -> dict[str, Column] | None:
    """Seconds since the epoch under each form the column may take, numbers first.

    Numbers are divided by ``per_second``, which rounds correctly; multiplying by 0.001 (not
    exact in binary) is one unit in the last place off for about one value in seven."""
    if isinstance(kind, NumericType):
        return {"number": raw.cast("double") / F.lit(per_second)}
    if isinstance(kind, TimestampType | TimestampNTZType | DateType):
        return {"datetime": F.unix_micros(raw.cast("timestamp")) / F.lit(1e6)}
    if isinstance(kind, StringType):
        return {
            "number": raw.try_cast("double") / F.lit(per_second),
            "datetime": F.unix_micros(F.try_to_timestamp(raw)) / F.lit(1e6),
        }
    return None


def _valid(seconds: Column) -> Column:
    """``seconds`` where it is a time Python can represent, else null (NaN and ±inf too)."""
    return F.when(seconds.between(EARLIEST, LATEST) & ~F.isnan(seconds), seconds)


@dataclass(frozen=True)
class _Parsed:
    """How a timestamp column reads under one form: the rows that parse, an example of one
    that does not, and the first and last bucket (index) with events in range."""

    count: int
    example: str | None
    lowest: int | None
    highest: int | None


def _summary(
    checked: DataFrame, forms: list[str], step: float, first: int | None, after: int | None
) -> tuple[int, dict[str, _Parsed]]:
    """The number of rows and how each form reads them, in one job."""
    aggregates = [F.count(F.lit(1)).alias("total")]
    for form in forms:
        seconds = F.col(form)
        bucket = F.floor(seconds / step)
        in_range = seconds.isNotNull()
        if first is not None:
            in_range &= bucket >= first
        if after is not None:
            in_range &= bucket < after
        aggregates += [
            F.count(seconds).alias(f"{form}_count"),
            # A struct, so that a null timestamp can be the example.
            F.first(F.when(seconds.isNull(), F.struct("raw")), ignorenulls=True).alias(
                f"{form}_example"
            ),
            F.min(F.when(in_range, bucket)).alias(f"{form}_lowest"),
            F.max(F.when(in_range, bucket)).alias(f"{form}_highest"),
        ]
    row = checked.agg(*aggregates).collect()[0]
    parsed = {
        form: _Parsed(
            count=row[f"{form}_count"],
            example=None if row[f"{form}_example"] is None else row[f"{form}_example"]["raw"],
            lowest=row[f"{form}_lowest"],
            highest=row[f"{form}_highest"],
        )
        for form in forms
    }
    return int(row["total"]), parsed


@contextmanager
def _session_time_zone(spark: SparkSession, zone: str) -> Iterator[None]:
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        yield
    finally:
        if previous is None:
            spark.conf.unset("spark.sql.session.timeZone")
        else:
            spark.conf.set("spark.sql.session.timeZone", previous)


def _moment_seconds(param: str, moment: Moment) -> float:
    """``start`` or ``end`` as seconds since the epoch; naive datetimes and text count as UTC."""
    if isinstance(moment, datetime):
        return epoch_seconds(moment.isoformat())
    if isinstance(moment, str):
        try:
            return epoch_seconds(moment)
        except ValueError:
            raise ValueError(
                f"events_to_volume: {param}={moment!r} is not allowed: {param} must be seconds "
                "since the epoch, an ISO-8601 datetime or a datetime"
            ) from None
    check_number("events_to_volume", param, moment, minimum=EARLIEST, maximum=LATEST)
    return float(moment)


def _range_text(start: Moment | None, end: Moment | None) -> str:
    """`` from start before end`` for the bounds given."""
    bounds = [
        f"{word} {moment!r}"
        for word, moment in (("from", start), ("before", end))
        if moment is not None
    ]
    return "".join(f" {bound}" for bound in bounds)


def _utc_text(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
