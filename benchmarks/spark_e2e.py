"""steadyscale against Spark's dynamic allocation on a running Structured Streaming job, and
how far the queue model is from it (issue 31).

    .venv/bin/python -u -m benchmarks.spark_e2e --out out/spark_e2e     # about 22 minutes
    .venv/bin/python -u -m benchmarks.spark_e2e --out out/e2e-short --duration 60

One real query (``benchmarks.e2e.job``) runs on ``local-cluster[6,1,1024]`` (six one-core
executors, each its own JVM) four times, on the same input (``benchmarks.e2e.workload``: two
days of ../shared/data/traces/nyc_taxi.csv squeezed into ``--duration`` seconds), each time
under one policy:

* ``steadyscale``: ``scaling.spark.autoscale`` with the default spec (the policy's capacity
  and bounds only);
* ``dynamic-allocation``: Spark's own (``job.dynamic_allocation``: shuffle tracking, idle
  timeout 60 s, backlog timeouts 1 s, Spark's defaults), in an application of its own;
* ``fixed-peak`` / ``fixed-mean``: the count the peak / the mean rate needs, held.

Before the runs it calibrates how long a row holds its task slot so that an executor handles
``--capacity`` rows/s (``benchmarks.e2e.calibration``) and times an executor's start. The
figures come from Spark's event log (``benchmarks.e2e.measure``); the queue model predicts the
same run (``benchmarks.e2e.sim``). Writes ``summary.csv``, ``timeline.png``, Spark's event
logs (``events/``) and every sample steadyscale took with the decision after it
(``decisions-steadyscale.jsonl``) under ``--out``; exits 1 if a run lost or doubled a row, 2 on
bad input.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.e2e.calibration import CannotCalibrate, calibrate
from benchmarks.e2e.job import (
    BATCH_SECONDS,
    DRAIN,
    EXECUTOR_SETTINGS,
    TRIGGER,
    QueryFailed,
    Run,
    dynamic_allocation,
    executors_running,
    resize,
    run_policy,
    warm_source,
    warm_up,
)
from benchmarks.e2e.measure import Measured, measure, read_event_log
from benchmarks.e2e.plot import plot_timeline
from benchmarks.e2e.sim import model_policy, predict
from benchmarks.e2e.workload import TRACE, needed, trace_schedule
from scaling.policy import LATENCY
from scaling.spark import UnsupportedCluster, check_resizable
from simulator.spark.session import local_cluster, wait_for

POLICIES = ("steadyscale", "dynamic-allocation", "fixed-peak", "fixed-mean")
COLUMNS = (
    "policy",
    "executor_seconds",
    "operations",
    "p50_latency_s",
    "p99_latency_s",
    "late_seconds",
    "rows_in",
    "rows_out",
    "predicted_executor_seconds",
    "predicted_late_seconds",
    "predicted_operations",
)
# Runs of a policy started before giving up: a query whose Python worker does not start in
# time (Spark waits 10 s, fixed; a loaded 2-core machine can take longer) is started again.
ATTEMPTS = 3
# Seconds to wait for the executors a session starts with.
START_TIMEOUT = 300.0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        da_conf = _checked(args)
    except (UnsupportedCluster, ValueError) as error:
        print(f"spark_e2e: {error}", file=sys.stderr)
        return 2
    schedule, described = trace_schedule(args.duration, args.capacity, args.executors, args.trace)
    counts = {
        "fixed-peak": needed(float(schedule.rates.max()), args.capacity, args.executors),
        "fixed-mean": needed(float(schedule.rates.mean()), args.capacity, args.executors),
    }
    initial = needed(float(schedule.rates[0]), args.capacity, args.executors)
    most = round(args.capacity * args.executors * BATCH_SECONDS)
    print(f"input: {described}", flush=True)
    print(
        f"{len(args.policies)} policies x {args.duration:g} s on {args.master}; capacity "
        f"{args.capacity:g} rows/s per executor, 1 to {args.executors} executors, latency target "
        f"{args.latency:g} s; fixed-peak {counts['fixed-peak']}, fixed-mean "
        f"{counts['fixed-mean']}, the others start at {initial}",
        flush=True,
    )
    events = args.out / "events"
    runs: dict[str, tuple[Run, Path]] = {}
    began = time.monotonic()
    folder = events / "resized"
    shutil.rmtree(events, ignore_errors=True)  # one event log per folder: this run's
    folder.mkdir(parents=True, exist_ok=True)
    config = EXECUTOR_SETTINGS | {"spark.eventLog.dir": str(folder.resolve())}
    with local_cluster(args.master, "steadyscale-e2e", config) as spark:
        if not wait_for(lambda: executors_running(spark) >= args.executors, START_TIMEOUT):
            print(f"spark_e2e: {executors_running(spark)} executors started", file=sys.stderr)
            return 1
        warm_up(spark, args.executors)
        resize(spark, 1)
        probed = time.time()
        registered = resize(spark, 2)
        print(f"executor start: 1 executor registered {registered:.1f} s after it was asked "
              "for", flush=True)  # fmt: skip
        hold_us = 1e6 / args.capacity
        if args.calibration > 0:
            # At the count the mean rate needs: the count the job runs at most of the time (a
            # task's cost beyond its hold is shared by fewer rows at fewer executors).
            calibrated = max(2, counts["fixed-mean"])
            resize(spark, calibrated)
            try:
                calibration = calibrate(spark, args.capacity, calibrated, args.calibration)
                calibration.check()
            except CannotCalibrate as error:
                print(f"spark_e2e: {error}", file=sys.stderr)
                return 2
            print(calibration.describe(), flush=True)
            hold_us = calibration.hold_us
        else:
            print(f"calibration: none (--calibration 0); {hold_us / 1000:.2f} ms per row")
        for policy in (p for p in args.policies if p != "dynamic-allocation"):
            resize(spark, counts.get(policy, initial))
            warm_source(spark, counts.get(policy, initial))
            print(f"{policy}: running ({time.monotonic() - began:.0f} s so far)", flush=True)
            spec = _spec(args) if policy == "steadyscale" else None
            run = _attempts(partial(run_policy, spark, policy, schedule, hold_us, most, spec))
            runs[policy] = (run, folder)
            if spec is not None:
                targets = ", ".join(f"{count} at {t:.0f} s" for t, count in run.decided)
                print(f"  steadyscale set: {targets or 'nothing'}; errors: {run.errors or 'none'}")
    if "dynamic-allocation" in args.policies:
        policy, folder = "dynamic-allocation", events / "dynamic"
        folder.mkdir(parents=True, exist_ok=True)
        config = EXECUTOR_SETTINGS | {"spark.eventLog.dir": str(folder.resolve())}
        config |= dynamic_allocation(args.executors, initial) | da_conf
        with local_cluster(args.master, "steadyscale-e2e-dynamic", config) as spark:
            wait_for(lambda: executors_running(spark) >= initial, START_TIMEOUT)
            # Like the executors of the runs above, which the calibration's reads started.
            warm_source(spark, initial)
            print(f"{policy}: running ({time.monotonic() - began:.0f} s so far)", flush=True)
            run = _attempts(partial(run_policy, spark, policy, schedule, hold_us, most, None))
            runs[policy] = (run, folder)

    resized = read_event_log(events / "resized")
    measured = {
        policy: measure(read_event_log(folder), run, schedule, args.latency)
        for policy, (run, folder) in runs.items()
    }
    # From registration to the end of the first task: the executors added during the runs, or
    # else the one the probe added (its first task waited for the calibration's first batch).
    startups = [s for figures in measured.values() for s in figures.startup]
    if not startups:
        added = min((at, name) for name, at, _ in resized.executors if at > probed)
        startups = [resized.first_task.get(added[1], added[0]) - added[0]]
    startup = float(np.median(startups))
    delay = registered + startup
    print(
        f"actuation delay for the model: {delay:.1f} s = registration {registered:.1f} s + "
        f"median {startup:.1f} s from registration to its first task's end ({len(startups)} "
        "executors)",
        flush=True,
    )
    rows = []
    for policy, figures in measured.items():
        row: dict[str, Any] = {"policy": policy, **_figures(figures)}
        if policy != "dynamic-allocation":
            # steadyscale decides once per batch: at each of the model's micro-batches' ends,
            # a trigger apart at least, the batches reading at most what Spark's do.
            stand_in = model_policy(
                policy, args.capacity, args.executors, args.latency,
                counts.get(policy, initial), TRIGGER,
            )  # fmt: skip
            start = counts.get(policy, initial)
            prediction = predict(
                stand_in, schedule, capacity=args.capacity, executors=args.executors,
                initial=start, delay=delay, latency=args.latency, batch=most,
            )  # fmt: skip
            row |= {key: prediction[key] for key in COLUMNS if key.startswith("predicted")}
        rows.append(row)
    _write(args.out / "summary.csv", rows)
    for policy, (run, _) in runs.items():  # steadyscale's samples and decisions, to explain
        if run.decisions:
            with (args.out / f"decisions-{policy}.jsonl").open("w", encoding="utf-8") as out:
                out.writelines(json.dumps(decision) + "\n" for decision in run.decisions)
    plot_timeline(args.out / "timeline.png", schedule, args.capacity, measured, args.latency)
    _print_table(rows, measured)
    print(f"wrote {args.out / 'summary.csv'} and {args.out / 'timeline.png'} "
          f"({time.monotonic() - began:.0f} s)")  # fmt: skip
    bad = [p for p, m in measured.items() if not (m.exactly_once and runs[p][0].drained)]
    if bad:
        print(f"spark_e2e: rows lost, doubled or not read in {bad}", file=sys.stderr)
        return 1
    return 0


def _attempts(start: Callable[[int], Run]) -> Run:
    """``start(attempt)`` until a run completes, ``ATTEMPTS`` at most."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return start(attempt)
        except QueryFailed as error:
            if attempt == ATTEMPTS:
                raise
            print(f"  {error}; starting it again", flush=True)
    raise AssertionError("unreachable")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out/spark_e2e"))
    parser.add_argument("--duration", type=float, default=240.0,
                        help="seconds of input per policy (default %(default)s)")  # fmt: skip
    parser.add_argument("--master", default="local-cluster[6,1,1024]")
    parser.add_argument("--executors", type=int, default=6, help="most executors")
    parser.add_argument("--capacity", type=float, default=100.0,
                        help="rows/s one executor handles (default %(default)s)")  # fmt: skip
    parser.add_argument("--latency", type=float, default=LATENCY,
                        help="latency target, s (default %(default)s, the policy's)")  # fmt: skip
    parser.add_argument("--calibration", type=float, default=45.0,
                        help="seconds of calibration; 0: none (default %(default)s)")  # fmt: skip
    parser.add_argument("--policies", nargs="+", choices=POLICIES, default=list(POLICIES))
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting of the dynamic-allocation run")  # fmt: skip
    return parser


def _checked(args: argparse.Namespace) -> dict[str, str]:
    """Refuse what cannot run, before any JVM starts; the dynamic-allocation run's settings."""
    check_resizable(args.master, {})
    cluster = re.fullmatch(r"local-cluster\[(\d+),\s*(\d+),\s*(\d+)\]", args.master)
    if cluster and int(cluster[1]) * int(cluster[2]) < args.executors:
        raise ValueError(
            f"--master {args.master} runs at most {int(cluster[1]) * int(cluster[2])} one-core "
            f"executors, --executors is {args.executors}: give local-cluster[{args.executors},1,"
            "1024] or fewer --executors"
        )
    if not (args.duration >= 10 and args.capacity > 0 and args.executors >= 2):
        raise ValueError("--duration must be >= 10 s, --capacity > 0 and --executors >= 2")
    conf = dict(item.partition("=")[::2] for item in args.conf)
    merged = dynamic_allocation(args.executors, 1) | conf
    tracking = merged["spark.dynamicAllocation.shuffleTracking.enabled"].lower() == "true"
    service = merged.get("spark.shuffle.service.enabled", "false").lower() == "true"
    if not (tracking or service):
        raise ValueError(
            "dynamic allocation without shuffle tracking or an external shuffle service cannot "
            "remove an executor safely and Spark refuses to start it: drop --conf "
            "spark.dynamicAllocation.shuffleTracking.enabled=false, or add --conf "
            "spark.shuffle.service.enabled=true with a shuffle service running"
        )
    if args.duration + DRAIN > 3600:
        raise ValueError("--duration must leave the run under an hour with its drain")
    return conf


def _spec(args: argparse.Namespace) -> dict[str, Any]:
    """The default spec: capacity and bounds, nothing else (filter and guards left out)."""
    return {"policy": {"capacity": args.capacity, "min_operators": 1,
                       "max_operators": args.executors}}  # fmt: skip


def _figures(figures: Measured) -> dict[str, Any]:
    return {
        "executor_seconds": round(figures.executor_seconds, 1),
        "operations": figures.operations,
        "p50_latency_s": round(figures.p50_latency_s, 2),
        "p99_latency_s": round(figures.p99_latency_s, 2),
        "late_seconds": round(figures.late_seconds, 1),
        "rows_in": figures.rows_in,
        "rows_out": figures.rows_out,
    }


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, restval="")
        writer.writeheader()
        writer.writerows(
            {k: round(v, 1) if isinstance(v, float) else v for k, v in row.items()} for row in rows
        )


def _print_table(rows: list[dict[str, Any]], measured: dict[str, Measured]) -> None:
    """The summary as a markdown table, then measured over predicted."""
    print("\n| policy | executor-s | operations (executor events) | p50 s | p99 s | late s | "
          "rows in | rows out | once |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for row in rows:
        figures = measured[row["policy"]]
        print(
            f"| {row['policy']} | {row['executor_seconds']:,.0f} | {row['operations']} "
            f"({figures.changes}) | {row['p50_latency_s']:.1f} | {row['p99_latency_s']:.1f} | "
            f"{row['late_seconds']:.0f} | {row['rows_in']:,} | {row['rows_out']:,} | "
            f"{'yes' if figures.exactly_once else 'NO'} |"
        )
    print("\n| policy | executor-s measured / predicted | late s measured / predicted | "
          "operations measured / predicted |")  # fmt: skip
    print("|---|---:|---:|---:|")
    for row in rows:
        if "predicted_executor_seconds" not in row:
            continue
        pairs = [(row[key], row[f"predicted_{key}"]) for key in ("executor_seconds",
                 "late_seconds", "operations")]  # fmt: skip
        cells = [f"{real:,.0f} / {model:,.0f} = {_ratio(real, model)}" for real, model in pairs]
        print(f"| {row['policy']} | " + " | ".join(cells) + " |")


def _ratio(measured: float, predicted: float) -> str:
    if predicted == 0:
        return "-" if measured == 0 else "inf"
    return f"{measured / predicted:.2f}"


if __name__ == "__main__":
    sys.exit(main())
