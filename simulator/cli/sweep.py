"""``steadyscale sweep``: any grid of workloads × SNRs × filters × guards × seeds, on Spark."""

from __future__ import annotations

import argparse
from pathlib import Path

from filters import make_filter
from scaling import make_guard
from simulator.cli import options
from simulator.cli.options import (
    Commands,
    add_command,
    add_list,
    add_spark_options,
    add_store_options,
)
from simulator.experiments.specs import expand_guard_sets
from simulator.experiments.sweep import filter_configs, grid_cells, run_sweep
from simulator.model.noise import DEFINITIONS
from simulator.spark.checks import check_spark
from simulator.spark.store import claim_folder


def add(commands: Commands) -> None:
    sweep = add_command(
        commands,
        "sweep",
        run,
        help="run a grid of simulations on Spark: workloads x SNRs x filters x guards x seeds",
        description=(
            "Run every combination of workloads, SNRs, SNR definitions, filter settings, guard "
            "sets and seeds as Spark jobs, then aggregate in Spark. Filter and guard specs take "
            "grids: tvd:lam_per_sigma=5|10|20 is three settings; a guard set joins guards with + "
            "(hysteresis:band=0.01+cooldown:down=60), none is no guard. Writes DIR/sweep.csv "
            "(one row per cell), DIR/cells.parquet, DIR/summary.csv, DIR/pareto.csv, "
            "DIR/sweep.md and DIR/pareto_<workload>_<definition>.png. A rerun into the same DIR "
            "skips the cells done."
        ),
    )
    add_list(sweep, "--workload", metavar="NAME", help="workloads (default: paper)")
    add_list(sweep, "--snr", metavar="X", type=float, help="SNRs (default: 0.5 0.8 1 5 10)")
    add_list(
        sweep,
        "--definition",
        metavar="NAME",
        choices=DEFINITIONS,
        help=f"SNR definitions (default: power); {options.definition_help()}",
    )
    add_list(
        sweep,
        "--filter",
        metavar="SPEC",
        help="filter specs with grids, or default (steadyscale's default) "
        f"(default: the paper's four: {' '.join(options.PAPER_RULE)})",
    )
    add_list(sweep, "--guards", metavar="SET", help="guard sets with grids (default: none)")
    sweep.add_argument("--seeds", type=int, default=10, help="seeds 1..N per cell (%(default)s)")
    sweep.add_argument(
        "--duration", type=float, default=options.DEFAULT_DURATION, help="s (%(default)g)"
    )
    sweep.add_argument("--capacity", type=float, default=50.0, help="tuples/s per operator (50)")
    add_store_options(sweep, "out/sweep")
    add_spark_options(sweep)


def run(args: argparse.Namespace) -> int:
    seeds = options.seeds(args.seeds, 1)
    guard_sets = [guards for text in args.guards or ["none"] for guards in expand_guard_sets(text)]
    configs = filter_configs(args.filter or options.PAPER_RULE, guard_sets, args.capacity)
    # Build one of each before starting Spark, so that a bad spec fails in a second.
    for spec, _, _ in configs.values():
        make_filter(dict(spec))
    for guards in guard_sets:
        for guard in guards:
            make_guard(guard)
    check_spark(args.master)
    cells = grid_cells(
        workloads=options.workloads(args.workload or ["paper"]),
        snrs=options.snrs(args.snr or [0.5, 0.8, 1.0, 5.0, 10.0]),
        definitions=args.definition or ["power"],
        configs=configs,
        seeds=seeds,
        duration=args.duration,
        capacity=args.capacity,
    )
    out = Path(args.out)
    claim_folder(out, cells, force=args.force)
    run_sweep(cells, out, options.spark_session(args.master))
    print(f"wrote {out / 'sweep.csv'} ({len(cells)} cells), summary.csv, pareto.csv, "
          "sweep.md and Pareto plots")  # fmt: skip
    return 0
