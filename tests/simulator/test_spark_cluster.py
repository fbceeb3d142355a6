"""A real cluster on this machine: a standalone master, two workers, two executor JVMs.

Its own module: one process has one SparkContext, so the shared local session is stopped first.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from simulator.experiment import Cell, run_cells
from simulator.spark import collect_rows, run_cells_spark, spark_session

CELLS = [
    Cell(config=spec["name"], filter_spec=spec, seed=seed, snr=1.0, duration=300.0)
    for spec in ({"name": "raw"}, {"name": "tvd", "lam_per_sigma": 10.0}, {"name": "ekf"})
    for seed in (1, 2)
]


@pytest.fixture(scope="module")
def cluster() -> Iterator[SparkSession]:
    running = SparkSession.getActiveSession()
    if running is not None:
        running.stop()
    session = spark_session("local-cluster[2,1,1024]", app_name="steadyscale-cluster-test")
    context = session.sparkContext
    # The workers keep each executor's logs under $SPARK_HOME/work/<application id>: there is
    # no setting for local-cluster workers, so remove them afterwards.
    logs = Path(context._jvm.System.getenv("SPARK_HOME")) / "work"
    application = context.applicationId
    try:
        yield session
    finally:
        session.stop()
        shutil.rmtree(logs / application, ignore_errors=True)
        if logs.is_dir() and not any(logs.iterdir()):
            logs.rmdir()


def _executors(session: SparkSession) -> int:
    # getExecutorMemoryStatus lists the block managers: the driver's and one per executor.
    return int(session.sparkContext._jsc.sc().getExecutorMemoryStatus().size()) - 1


def test_two_executor_jvms_give_the_serial_rows(cluster: SparkSession) -> None:
    deadline = time.monotonic() + 60.0
    while _executors(cluster) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _executors(cluster) == 2
    assert collect_rows(run_cells_spark(cluster, CELLS, tasks=2)) == run_cells(CELLS)
