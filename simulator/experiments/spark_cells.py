"""The experiments' cells on Spark: ``run_cell`` mapped by ``simulator.spark.cells``.

``run_grid(spark, cells)`` equals ``run_cells(cells)`` row for row once collected
(``collect_rows``); ``CELL_SCHEMA`` is the schema of its rows. Imported only where Spark runs:
PySpark is an optional extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from pyspark.sql import DataFrame, SparkSession

from simulator.experiments.cells import ROW_COLUMNS, Cell, CostModel, run_cell
from simulator.spark.cells import row_schema, run_cells_spark

CELL_SCHEMA = row_schema(
    ROW_COLUMNS,
    strings=("config", "filter", "filter_spec", "guards", "workload", "definition"),
    longs=("seed", "s_up", "s_down", "s_total"),
)
"""Schema of ``run_grid``: ``cell`` (int), then ``ROW_COLUMNS`` as string, long or double."""


def run_grid(
    spark: SparkSession,
    cells: Sequence[Cell],
    cost_model: CostModel | None = None,
    tasks: int | None = None,
) -> DataFrame:
    """``run_cells`` on Spark: a cached DataFrame of the cells' rows (``CELL_SCHEMA``)."""
    return run_cells_spark(
        spark, cells, partial(run_cell, cost_model=cost_model), CELL_SCHEMA, tasks
    )
