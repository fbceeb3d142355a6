"""Watch steadyscale resize a running Spark Structured Streaming job.

A query reads ``steadyscale-volume`` (rows at a rate that follows ``--schedule``) and writes
Parquet; ``autoscale`` attaches steadyscale to it, which resizes the executors from the
filtered input rate. Every second the script prints the input rate, the target and the
executors running, and at the end writes ``timeline.csv`` and ``timeline.png`` to ``--out``.

On one machine (a standalone cluster of 3 one-core workers inside this process's JVM)::

    .venv/bin/python examples/spark_autoscale.py --out out/autoscale

On a cluster, or deciding in a steadyscale service (``steadyscale serve``) instead::

    .venv/bin/python examples/spark_autoscale.py --master spark://head:7077 --max-executors 8
    .venv/bin/python examples/spark_autoscale.py --service http://127.0.0.1:8000 --stream demo

The rows cost ``--cost-us`` microseconds each, so a higher rate really needs more executors.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
from pathlib import Path

from scaling.spark import autoscale
from simulator.spark.session import spark_session
from simulator.spark.stream_source import VolumeSource, parse_schedule


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--master", default="local-cluster[3,1,1024]")
    parser.add_argument("--schedule", default="100:40,400:60,100:60",
                        help="rows/s:seconds,... (default %(default)s)")  # fmt: skip
    parser.add_argument("--capacity", type=float, default=150.0,
                        help="rows/s one executor handles (default %(default)s)")  # fmt: skip
    parser.add_argument("--max-executors", type=int, default=3)
    parser.add_argument("--cost-us", type=float, default=500.0)
    parser.add_argument("--service", help="URL of a steadyscale service (remote mode)")
    parser.add_argument("--stream", default="spark-autoscale-demo")
    parser.add_argument("--out", type=Path, default=Path("out/autoscale"))
    parser.add_argument("--verbose", action="store_true", help="Spark's own log and progress")
    args = parser.parse_args(argv)
    seconds = sum(duration for _, duration in parse_schedule(args.schedule))

    spark = spark_session(args.master, app_name="steadyscale-autoscale-demo",
                          config={"spark.executor.cores": "1"}, verbose=args.verbose)  # fmt: skip
    spec = {
        "filter": {"name": "moving_median", "w": 5},
        "policy": {"capacity": args.capacity, "min_operators": 1,
                   "max_operators": args.max_executors},
        "guards": [{"name": "cooldown", "down": 15.0}],
    }  # fmt: skip
    if args.service:
        listener = autoscale(spark, spec, service=args.service, stream=args.stream,
                             max_executors=args.max_executors, query="volume")  # fmt: skip
    else:
        listener = autoscale(spark, spec, query="volume")

    spark.dataSource.register(VolumeSource)
    work = Path(tempfile.mkdtemp(prefix="steadyscale-demo-"))
    query = (
        spark.readStream.format("steadyscale-volume")
        .option("schedule", args.schedule)
        .option("cost_us", str(args.cost_us))
        .load()
        .writeStream.queryName("volume")
        .format("parquet")
        .option("path", str(work / "rows"))
        .option("checkpointLocation", str(work / "checkpoint"))
        .trigger(processingTime="1 second")
        .start()
    )
    adaptor = listener.executors
    # The JVM, the executors and the first micro-batch take a while to start: the table starts
    # with the first batch that read rows, so its first line is the job at work.
    waited = time.monotonic()
    print("waiting for the first micro-batch ...", flush=True)
    while not (query.lastProgress or {}).get("inputRowsPerSecond"):
        if time.monotonic() - waited > 180:
            print("no micro-batch read rows within 180 s; is the cluster starting executors?")
            return 1
        time.sleep(0.2)
    print(f"first rows after {time.monotonic() - waited:.0f} s")
    rows = []
    started = time.monotonic()
    print(f"{'s':>5} {'rows/s':>8} {'target':>6} {'running':>7}")
    # One line per second on a fixed schedule (tick k at started + k), so seconds never skip
    # or repeat however long a line takes.
    for tick in range(1, int(seconds) + 1):
        time.sleep(max(0.0, started + tick - time.monotonic()))
        progress = query.lastProgress or {}
        rate = float(progress.get("inputRowsPerSecond") or 0.0)
        row = {"t": tick, "rows_per_s": rate, "target": listener.target,
               "executors": adaptor.current()}  # fmt: skip
        rows.append(row)
        target = "-" if row["target"] is None else row["target"]
        print(f"{tick:>5} {rate:>8.1f} {target!s:>6} {row['executors']:>7}", flush=True)
    query.stop()
    spark.streams.removeListener(listener)
    listener.close()
    written = spark.read.parquet(str(work / "rows")).count()
    end = json.loads(query.lastProgress["sources"][0]["endOffset"])["rows"]
    spark.stop()

    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "timeline.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    _plot(rows, args.capacity, args.out / "timeline.png")
    print(f"rows read {end}, rows written {written}; targets {list(listener.targets)}")
    print(f"wrote {args.out / 'timeline.csv'} and {args.out / 'timeline.png'}")
    if listener.errors:
        print("errors:", *listener.errors, sep="\n  ")
    return 0 if written == end and not listener.errors else 1


def _plot(rows: list[dict[str, float | None]], capacity: float, path: Path) -> None:
    """Input rate above, executors (running and target, whole numbers) below, one legend."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    t = [row["t"] for row in rows]
    figure = Figure(figsize=(10, 5.5), layout="constrained")
    volume, executors = figure.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    volume.plot(t, [row["rows_per_s"] for row in rows], color="0.45", label="input rows/s")
    volume.set_ylabel("input rows/s")
    executors.step(t, [row["executors"] for row in rows], where="post", color="C0",
                   label="executors running")  # fmt: skip
    targets = [float("nan") if row["target"] is None else row["target"] for row in rows]
    executors.step(t, targets, where="post", color="C1", linestyle="--",
                   label="target decided by steadyscale")  # fmt: skip
    executors.set_ylabel(f"executors\n({capacity:g} rows/s each)")
    executors.yaxis.set_major_locator(MaxNLocator(integer=True))
    decided = [target for target in targets if target == target]  # NaN: no decision yet
    executors.set_ylim(0, max([*decided, *(float(r["executors"] or 0) for r in rows)]) + 0.5)
    executors.set_xlabel("seconds since the first micro-batch that read rows")
    figure.legend(loc="outside lower center", ncols=3, frameon=False)
    figure.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
