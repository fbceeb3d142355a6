"""``steadyscale compare``: steadyscale against the baselines on the queue model, on Spark."""

from __future__ import annotations

import argparse
from pathlib import Path

from simulator.cli import options
from simulator.cli.options import (
    Commands,
    add_command,
    add_list,
    add_spark_options,
    add_store_options,
)
from simulator.experiments.cells import workload_trend
from simulator.experiments.compare import (
    SEED_002_WORKLOADS,
    baselines,
    compare_cells,
)
from simulator.model.noise import DEFINITIONS
from simulator.model.queue import QueueConfig
from simulator.spark.checks import check_spark
from simulator.spark.store import claim_folder


def add(commands: Commands) -> None:
    compare = add_command(
        commands,
        "compare",
        run,
        help="steadyscale against HPA, DS2, Dhalion, Varga, rules, StreamCloud, ELYSIUM",
        description=(
            "Run steadyscale's configurations and the baseline policies on the queue model "
            "(capacity 50 tuples/s per instance, a pause after each scaling operation, backlog) "
            "for every workload, trace, SNR and seed, on Spark. Writes DIR/compare.csv (one row "
            "per run), DIR/cells.parquet, DIR/summary.csv, DIR/compare.md, "
            "DIR/compare_<workload>.png and a DIR/timeline_<workload>_snr<X>.png. A rerun into "
            "the same DIR skips the runs done."
        ),
    )
    default_workloads = " ".join(["paper", *SEED_002_WORKLOADS])
    add_list(compare, "--workload", metavar="NAME", help=f"default: {default_workloads}")
    add_list(
        compare,
        "--trace",
        metavar="CSV",
        help="timestamp,value traces replayed at one sample per second, scaled to 200-500 "
        "tuples/s (default: none)",
    )
    compare.add_argument("--trace-duration", type=float, default=None,
                         help="seconds of each trace (default: all of it)")  # fmt: skip
    add_list(compare, "--snr", metavar="X", type=float, help="SNRs (default: 1 5 10)")
    compare.add_argument(
        "--definition",
        choices=DEFINITIONS,
        default="power",
        help=f"(%(default)s) {options.definition_help()}",
    )
    compare.add_argument("--seeds", type=int, default=5, help="seeds 1..N (%(default)s)")
    compare.add_argument(
        "--pause",
        type=float,
        default=QueueConfig.pause,
        help="seconds without processing after an operation (%(default)s)",
    )
    compare.add_argument(
        "--delay",
        type=float,
        default=QueueConfig.delay,
        help="seconds from a decision to its effect (%(default)s)",
    )
    add_list(
        compare,
        "--policy",
        metavar="LABEL",
        help="policies by label (default: all of simulator.experiments.compare.baselines)",
    )
    add_store_options(compare, "out/compare")
    add_spark_options(compare)


def run(args: argparse.Namespace) -> int:
    seeds = options.seeds(args.seeds, 2, ": intervals need at least 2 seeds")
    hint = " (and --trace for recorded traces)"
    workloads = options.workloads(args.workload or ["paper", *SEED_002_WORKLOADS], hint)
    policies = baselines()
    if args.policy:
        unknown = [label for label in args.policy if label not in policies]
        if unknown:
            raise ValueError(f"--policy {unknown} is not allowed: choose from {list(policies)}")
        policies = {label: policies[label] for label in args.policy}
    traces = [Path(path) for path in args.trace or []]
    if args.trace_duration is not None:
        options.finite_at_least("--trace-duration", args.trace_duration, 1.0)
    for path in traces:
        # A missing or malformed trace, or one shorter than --trace-duration, fails now in one
        # line, not on a Spark worker. Traces are replayed at one sample per second.
        replayed = workload_trend("trace", 1, None, {"path": str(path)}).size
        if args.trace_duration is not None and args.trace_duration > replayed:
            raise ValueError(
                f"--trace-duration {args.trace_duration:g} is not allowed: {path} replays for "
                f"{replayed} s at one sample per second; give at most {replayed}, or leave it out"
            )
    check_spark(args.master)
    cells = compare_cells(
        workloads, options.snrs(args.snr or [1.0, 5.0, 10.0]), seeds, policies, traces,
        args.definition, trace_duration=args.trace_duration, pause=args.pause, delay=args.delay,
    )  # fmt: skip
    out = Path(args.out)
    claim_folder(out, cells, force=args.force)
    from simulator.experiments.compare_report import run_compare  # PySpark: an extra

    run_compare(cells, out, options.spark_session(args.master))
    print(f"wrote {out / 'compare.csv'} ({len(cells)} runs), summary.csv, compare.md and plots")
    return 0
