"""``steadyscale trace``: event records (CSV or Parquet) into a volume trace, on Spark."""

from __future__ import annotations

import argparse
from pathlib import Path

from simulator.cli.options import Commands, add_command, add_spark_options, spark_session
from simulator.model.event_log import check_input, detect_format, refuse_volume_trace
from simulator.spark.checks import check_spark


def add(commands: Commands) -> None:
    trace = add_command(
        commands,
        "trace",
        run,
        help="turn event records (CSV or Parquet, one row per event) into a volume trace",
        description=(
            "A Spark job: count the events per time bucket of --step seconds and write the "
            "timestamp,value CSV (events per second) that simulate --trace replays."
        ),
    )
    trace.add_argument("--input", required=True, metavar="PATH", help="file, directory or glob")
    trace.add_argument("--timestamp-column", required=True, metavar="NAME")
    trace.add_argument(
        "--timestamp-unit",
        choices=("s", "ms"),
        default="s",
        help="numeric timestamps: seconds or milliseconds since the epoch (%(default)s)",
    )
    trace.add_argument("--step", type=float, default=1.0, help="bucket seconds (%(default)s)")
    trace.add_argument("--format", choices=("csv", "parquet"), help="default: from the path")
    trace.add_argument("--out", required=True, metavar="FILE", help="the CSV to write")
    add_spark_options(trace)


def run(args: argparse.Namespace) -> int:
    # A missing input, a volume trace or an unknown format fails here, in one line, before
    # Spark starts.
    check_input(args.input)
    refuse_volume_trace(args.input)
    given_format = args.format or detect_format(args.input)
    check_spark(args.master)
    from simulator.spark.events import events_to_volume, write_trace

    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    spark = spark_session(args.master)
    volume = events_to_volume(
        spark,
        args.input,
        args.timestamp_column,
        step=args.step,
        input_format=given_format,
        unit=args.timestamp_unit,
    )
    rows = write_trace(volume, args.out)
    print(f"wrote {args.out} ({rows} buckets of {args.step:g} s)")
    return 0
