"""benchmarks.spark_e2e: what it refuses, how it measures, and a small real run.

The small run (``spark`` marker) starts a ``local-cluster`` of two one-core executors and runs
the query under steadyscale for 12 s of input, without calibration; it checks the summary's
columns and that every row was written exactly once. Most of its time is Spark's: starting
the JVMs, an executor's start timed, a first read of the source on each executor.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.e2e.job import Run, Sink
from benchmarks.e2e.measure import Batch, EventLog, measure
from benchmarks.e2e.workload import Schedule, arrival_times
from benchmarks.spark_e2e import COLUMNS, main

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--master", "local[*]"], "local mode"),
        (
            ["--conf", "spark.dynamicAllocation.shuffleTracking.enabled=false"],
            "without shuffle tracking or an external shuffle service",
        ),
        (["--master", "local-cluster[2,1,1024]"], "runs at most 2 one-core executors"),
    ],
)
def test_what_cannot_run_is_refused_in_one_line_before_spark_starts(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1, err
    assert not any(tmp_path.iterdir())  # nothing started, nothing written


def test_a_run_is_measured_from_the_executors_and_batches_spark_logged() -> None:
    # 100 rows/s for 10 s: row k arrives at (k + 1) / 100 s.
    schedule = Schedule(np.full(5, 100.0), step=2.0)
    start = 1000.0
    log = EventLog(
        # Executor 1 from before the window to its end; 2 added at 4 s, removed at 6 s; 3 added
        # at 4.5 s (one operation with 2's addition) and kept past the end.
        executors=[("1", 900.0, 2000.0), ("2", 1004.0, 1006.0), ("3", 1004.5, 2000.0)],
        first_task={"2": 1005.0, "3": 1007.0},
        batches={
            "q": [
                Batch(started=1002.0, committed=1003.0, first=0, end=200),  # rows 0.01..2 s
                Batch(started=1003.0, committed=1014.5, first=200, end=1000),  # 2.01..10 s
                Batch(started=1014.5, committed=1015.0, first=1000, end=1000),  # empty
            ]
        },
    )
    run = Run("steadyscale", "q", start, start + schedule.duration, stopped=start + 20.0)
    run.sink.batches = {0: np.arange(200), 1: np.arange(200, 1000)}
    figures = measure(log, run, schedule, latency=10.0)
    assert figures.executor_seconds == pytest.approx(10.0 + 2.0 + 5.5)
    assert (figures.operations, figures.changes) == (2, 3)  # 2 and 3 added, then 2 removed
    assert figures.startup == [1.0, 2.5]
    # Batch 1 commits at 14.5 s: rows that arrived before 4.5 s waited over 10 s.
    assert figures.late_seconds == pytest.approx(4.5 - 2.01)
    assert figures.p50_latency_s == pytest.approx((3.0 - 0.01 + 14.5 - 2.01) / 2)
    assert (figures.rows_in, figures.rows_out, figures.exactly_once) == (1000, 1000, True)
    assert figures.steps[:3] == [(0.0, 1), (4.0, 2), (4.5, 3)]

    run.sink.batches[1] = np.concatenate([np.arange(200, 999), [5]])  # 999 lost, 5 doubled
    assert not measure(log, run, schedule, latency=10.0).exactly_once
    assert arrival_times(schedule, np.array([999, 1000])).tolist() == [10.0, float("inf")]


def test_a_retried_batch_replaces_what_it_delivered() -> None:
    sink = Sink()
    sink.batches[3] = np.arange(5)
    sink.batches[3] = np.arange(5)  # Spark ran batch 3 again: the sink holds it once
    assert sink.ids().tolist() == [0, 1, 2, 3, 4]


def daily_trace(path: Path) -> Path:
    """Two days of a daily cycle every 30 minutes, in the traces' format (``timestamp,value``):
    the run needs no file from outside the repository (CI's clone has none next to it)."""
    hours = np.arange(96) / 2.0
    values = 10_000.0 + 8_000.0 * np.sin(2.0 * np.pi * (hours - 6.0) / 24.0)
    lines = [f"2014-07-{1 + int(h // 24):02d} {int(h % 24):02d}:{int(h * 60) % 60:02d}:00,{v:.0f}"
             for h, v in zip(hours.tolist(), values.tolist(), strict=True)]  # fmt: skip
    path.write_text("timestamp,value\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.spark
def test_a_small_run_writes_the_summary_and_every_row_exactly_once(tmp_path: Path) -> None:
    command = [
        sys.executable, "-u", "-m", "benchmarks.spark_e2e", "--out", str(tmp_path),
        "--duration", "12", "--calibration", "0", "--executors", "2",
        "--master", "local-cluster[2,1,1024]", "--policies", "steadyscale",
        "--trace", str(daily_trace(tmp_path / "daily.csv")),
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with (tmp_path / "summary.csv").open(encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        rows = {row["policy"]: row for row in reader}
    assert set(rows) == {"steadyscale"}
    row = rows["steadyscale"]
    assert int(row["rows_in"]) == int(row["rows_out"]) > 0
    assert float(row["executor_seconds"]) > 0 and float(row["predicted_executor_seconds"]) > 0
    assert "| yes |" in done.stdout and "| NO |" not in done.stdout
    assert (tmp_path / "timeline.png").stat().st_size > 10_000
    # Every sample steadyscale's listener took, with the decision after it, to explain the run.
    lines = (tmp_path / "decisions-steadyscale.jsonl").read_text(encoding="utf-8").splitlines()
    decisions = [json.loads(line) for line in lines]
    assert decisions and all({"t", "volume", "operators", "code"} <= set(d) for d in decisions)
