"""``steadyscale events``: a synthetic event log to try ``steadyscale trace`` on."""

from __future__ import annotations

import argparse
from datetime import datetime

from simulator.cli.options import Commands, add_command, require, workloads
from simulator.model.catalog import make_workload
from simulator.model.event_log import detect_format, write_events


def add(commands: Commands) -> None:
    events = add_command(
        commands,
        "events",
        run,
        help="write a synthetic event log (one row per event) to try `steadyscale trace` on",
        description=(
            "Write an event log (columns ts, user; CSV or Parquet by the ending of --out) whose "
            "events per second follow a workload: Poisson arrivals at the workload's volume, "
            "in the steadyscale trace example of the README."
        ),
    )
    events.add_argument("--workload", default="paper", help="a workload name (%(default)s)")
    events.add_argument("--duration", type=float, default=600.0, help="s (%(default)s)")
    events.add_argument("--seed", type=int, default=1, help="(%(default)s)")
    events.add_argument("--start", default="2026-01-01T00:00:00",
                        help="time of the first second, UTC (%(default)s)")  # fmt: skip
    events.add_argument("--out", required=True, metavar="FILE", help=".csv or .parquet")


def run(args: argparse.Namespace) -> int:
    detect_format(args.out)  # a wrong ending fails before the work
    if args.out.endswith(".parquet"):
        require("pyarrow")
    rates = make_workload(workloads([args.workload])[0], args.seed, args.duration)
    try:
        start = datetime.fromisoformat(args.start)
    except ValueError:
        raise ValueError(f"--start {args.start!r} is not an ISO-8601 datetime") from None
    count = write_events(args.out, rates, start, seed=args.seed)
    print(f"wrote {args.out} ({count:,} events over {rates.size:g} s of workload "
          f"{args.workload}, from {start.isoformat(' ')})")  # fmt: skip
    return 0
