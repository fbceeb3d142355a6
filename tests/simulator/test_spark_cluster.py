"""A real cluster on this machine: a standalone master, two workers, two executor JVMs.

Its own module: one process has one SparkContext, so the shared local session is stopped first.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from simulator.experiments.cells import Cell, run_cells
from simulator.experiments.spark_cells import run_grid
from simulator.spark.cells import collect_rows
from tests.spark_cluster import local_cluster, wait_for

CELLS = [
    Cell(config=spec["name"], filter_spec=spec, seed=seed, snr=1.0, duration=300.0)
    for spec in ({"name": "raw"}, {"name": "tvd", "lam_per_sigma": 10.0}, {"name": "ekf"})
    for seed in (1, 2)
]


@pytest.fixture(scope="module")
def cluster() -> Iterator[SparkSession]:
    with local_cluster("local-cluster[2,1,1024]", "steadyscale-cluster-test") as session:
        yield session


def _executors(session: SparkSession) -> int:
    # getExecutorMemoryStatus lists the block managers: the driver's and one per executor.
    return int(session.sparkContext._jsc.sc().getExecutorMemoryStatus().size()) - 1


def test_two_executor_jvms_give_the_serial_rows(cluster: SparkSession) -> None:
    assert wait_for(lambda: _executors(cluster) == 2, timeout=60.0)
    assert collect_rows(run_grid(cluster, CELLS, tasks=2)) == run_cells(CELLS)
