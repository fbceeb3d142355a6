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

from scaling.spark_listener import autoscale
from simulator.spark import spark_session
from simulator.stream_source import VolumeSource, parse_schedule


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
    args = parser.parse_args(argv)
    seconds = sum(duration for _, duration in parse_schedule(args.schedule))

    spark = spark_session(args.master, app_name="steadyscale-autoscale-demo",
                          config={"spark.executor.cores": "1"})  # fmt: skip
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
    rows = []
    started = time.monotonic()
    print(f"{'s':>5} {'rows/s':>8} {'target':>6} {'running':>7}")
    while time.monotonic() - started < seconds:
        time.sleep(1.0)
        progress = query.lastProgress or {}
        rate = float(progress.get("inputRowsPerSecond") or 0.0)
        row = {"t": round(time.monotonic() - started, 1), "rows_per_s": rate,
               "target": listener.target, "executors": adaptor.current()}  # fmt: skip
        rows.append(row)
        print(f"{row['t']:>5.0f} {rate:>8.1f} {row['target']!s:>6} {row['executors']:>7}")
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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [row["t"] for row in rows]
    figure, volume = plt.subplots(figsize=(9, 4))
    volume.plot(t, [row["rows_per_s"] for row in rows], color="0.6", label="input rows/s")
    volume.set_xlabel("seconds")
    volume.set_ylabel("input rows/s")
    executors = volume.twinx()
    executors.step(t, [row["executors"] for row in rows], where="post", color="C0",
                   label="executors running")  # fmt: skip
    targets = [float("nan") if row["target"] is None else row["target"] for row in rows]
    executors.step(t, targets, where="post", color="C1",
                   linestyle="--", label="target")  # fmt: skip
    executors.set_ylabel(f"executors (capacity {capacity:g} rows/s each)")
    figure.legend(loc="upper left")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
