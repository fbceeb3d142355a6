"""``steadyscale paper``: the paper's tables and figures, and the sweep beyond them, on Spark."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from simulator.cli import options
from simulator.cli.options import Commands, add_command, add_list, add_spark_options
from simulator.experiments.cells import Cell
from simulator.model.noise import DEFINITIONS
from simulator.spark.checks import check_spark


def add(commands: Commands) -> None:
    paper = add_command(
        commands,
        "paper",
        run,
        help="reproduce the paper's tables and figures, then sweep beyond them",
        description=(
            "Run raw thresholding, LS (moving average) at several windows, TVD at several "
            "weights, EKF, steadyscale's default and the oracle on the paper's workload at SNR "
            "0.5, 0.8, 1, 5 and 10 under both SNR definitions, over many seeds; then each "
            "filter's parameter grid with guards (Pareto fronts, cost ranking). Writes "
            "DIR/paper.md, DIR/paper.csv (summary), DIR/paper_runs.csv (one row per run), "
            "DIR/timeline_<definition>_snr<X>.png and, with the sweep, DIR/paper_sweep.csv, "
            "DIR/paper_sweep_runs.csv and DIR/pareto_<definition>.png."
        ),
    )
    paper.add_argument("--seeds", type=int, default=30, help="seeds per cell (%(default)s)")
    paper.add_argument(
        "--sweep-seeds",
        type=int,
        default=10,
        help="seeds per cell of the sweep, 0 to skip it (%(default)s)",
    )
    add_list(
        paper,
        "--definition",
        metavar="NAME",
        choices=DEFINITIONS,
        help="SNR definitions (default: power amplitude)",
    )
    paper.add_argument("--out", default="out/paper", metavar="DIR", help="default: %(default)s")
    add_spark_options(paper)


def run(args: argparse.Namespace) -> int:
    seeds = options.seeds(args.seeds, 2, ": confidence intervals need at least 2 seeds")
    if args.sweep_seeds != 0:
        options.seeds(args.sweep_seeds, 2, " (or 0 to skip the sweep)")
    command = f"steadyscale paper --seeds {args.seeds} --sweep-seeds {args.sweep_seeds}"
    if args.definition:
        command += f" --definition {' '.join(args.definition)}"
    check_spark(args.master)
    from simulator.experiments.paper import run_paper
    from simulator.experiments.paper_grid import DEFINITIONS as PAPER_DEFINITIONS
    from simulator.experiments.spark_cells import run_grid
    from simulator.spark.cells import collect_rows

    spark = options.spark_session(args.master)

    def runner(cells: Sequence[Cell]) -> list[dict[str, Any]]:
        results = run_grid(spark, cells)
        rows = collect_rows(results)
        results.unpersist()
        return rows

    paths = run_paper(
        Path(args.out),
        seeds=seeds,
        sweep_seeds=range(1, args.sweep_seeds + 1),
        definitions=args.definition or PAPER_DEFINITIONS,
        runner=runner,
        command=command,
    )
    for path in paths.values():
        print(f"wrote {path}")
    return 0
