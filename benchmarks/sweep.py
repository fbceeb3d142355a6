"""The paper grid on Spark against the same cells serially, in one run.

Grid: 5 SNRs (0.5, 0.8, 1, 5, 10; ``power``) × the paper's 4 filters × 100 seeds × 1,500 s of
``paper_workload``: 2,000 simulations. Serial: ``simulator.experiments.cells.run_cells`` in
this process. Spark: ``simulator.experiments.spark_cells.run_grid`` on ``local[2]`` (the
machine's two cores), timed with and without starting the session. Both must give identical
rows.

Targets: Spark at least 1.5× faster than serial, and the whole grid under 2 minutes.

    .venv/bin/python -m benchmarks.sweep            # about 2 minutes
    .venv/bin/python -m benchmarks.sweep --quick    # 10 seeds, a smoke test
"""

from __future__ import annotations

import argparse
import time

from simulator.experiments.cells import run_cells
from simulator.experiments.paper_grid import paper_cells
from simulator.experiments.spark_cells import run_grid
from simulator.spark.cells import collect_rows
from simulator.spark.session import spark_session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 seeds instead of 100")
    parser.add_argument("--master", default="local[2]", help="Spark master (%(default)s)")
    args = parser.parse_args()
    seeds = range(1, 11 if args.quick else 101)
    cells = paper_cells(seeds, definitions=["power"])
    print(f"paper grid: {len(cells)} simulations of 1,500 samples ({len(seeds)} seeds)")

    started = time.perf_counter()
    spark = spark_session(args.master)
    spark.sparkContext.parallelize(range(8), 8).count()  # start the Python workers
    session = time.perf_counter() - started

    started = time.perf_counter()
    spark_rows = collect_rows(run_grid(spark, cells))
    on_spark = time.perf_counter() - started

    started = time.perf_counter()
    serial_rows = run_cells(cells)
    serial = time.perf_counter() - started

    same = spark_rows == serial_rows
    print(f"serial, one process:        {serial:7.1f} s")
    print(f"Spark {args.master}, job:      {on_spark:7.1f} s  -> {serial / on_spark:.2f}x serial")
    print(f"Spark session start:        {session:7.1f} s")
    print(f"Spark including the start:  {on_spark + session:7.1f} s  -> "
          f"{serial / (on_spark + session):.2f}x serial")  # fmt: skip
    print(f"identical rows: {same}")
    print(
        "targets: >= 1.5x serial: "
        f"{'met' if serial / on_spark >= 1.5 else 'NOT met'}; whole grid on Spark < 120 s: "
        f"{'met' if on_spark + session < 120 else 'NOT met'}"
    )
    spark.stop()
    if not same:
        raise SystemExit("Spark and serial rows differ")


if __name__ == "__main__":
    main()
