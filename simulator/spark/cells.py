"""Grids of cells on Spark, and their aggregation, with the same results as the serial code.

``run_cells_spark`` maps a pure function over a grid of cells in a Spark job and returns a
DataFrame with one row per cell: a ``cell`` column (the cell's index in the grid) and the
columns of the row schema (``row_schema``). ``collect_rows`` brings it back as the list of dicts
that running the function serially returns, equal value for value and type for type::

    spark = spark_session("local[*]")            # or local-cluster[2,1,1024], spark://host:7077
    rows = run_cells_spark(spark, cells, run_cell, schema)
    assert collect_rows(rows) == [run_cell(cell) for cell in cells]

The aggregations run in Spark, so they scale with the grid, and each equals its serial
counterpart of ``simulator.experiments.cells``: ``summarize_spark`` (``summarize``),
``pareto_spark`` (``pareto_front`` per group) and ``rank_by_cost`` (the cheapest configuration
first). Nothing here knows what a cell is: the experiments above give the function and schema.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)
from pyspark.sql.window import WindowSpec
from scipy import stats


def row_schema(
    columns: Sequence[str], strings: Sequence[str] = (), longs: Sequence[str] = ()
) -> StructType:
    """Schema of rows ``cell`` (int), then ``columns``: string, long or (any other) double."""

    def column_type(name: str) -> DataType:
        if name in strings:
            return StringType()
        return LongType() if name in longs else DoubleType()

    return StructType(
        [
            StructField("cell", IntegerType(), nullable=False),
            *(StructField(name, column_type(name), nullable=False) for name in columns),
        ]
    )


T = TypeVar("T")


# About 2 s of simulation per task: scheduling a task costs milliseconds, and progress shows.
CELLS_PER_TASK = 100


def run_cells_spark(
    spark: SparkSession,
    cells: Sequence[Any],
    run: Callable[[Any], Mapping[str, Any]],
    schema: StructType,
    tasks: int | None = None,
) -> DataFrame:
    """Run ``run`` (a picklable function of one cell returning its row) on every cell on
    Spark: a DataFrame of the rows (``schema``, from ``row_schema`` of the row's columns),
    cached.

    One Spark task runs a chunk of cells (one task per cell would spend more on scheduling
    than on simulating): ``tasks`` chunks, by default four per core
    (``4 * defaultParallelism``) or one per ``CELLS_PER_TASK`` cells if that is more, so that
    Spark's progress bar moves on long grids; never more chunks than cells. Chunk ``k`` gets cells
    ``k, k + tasks, k + 2 tasks, ...``: a grid lists the cells of one filter together, and
    filters differ in cost (EKF takes about four times as long as the others), so dealing them
    out balances the tasks. The cells run at the first action; the DataFrame is cached, so
    later aggregations do not run them again (``unpersist()`` it when done).
    """
    if tasks is not None and tasks < 1:
        raise ValueError(f"tasks must be a positive number of Spark tasks, got {tasks!r}")
    if not cells:
        return spark.createDataFrame([], schema)
    context = spark.sparkContext
    default = max(4 * context.defaultParallelism, math.ceil(len(cells) / CELLS_PER_TASK))
    chunks = _interleave(list(enumerate(cells)), tasks or default)
    rows = context.parallelize(chunks, len(chunks)).flatMap(
        partial(_run_chunk, run=run, schema=schema)
    )
    return spark.createDataFrame(rows, schema).cache()


def _interleave(items: Sequence[T], count: int) -> list[list[T]]:
    """``items`` dealt into at most ``count`` non-empty chunks: item ``i`` to chunk ``i % count``.

    >>> _interleave(list(range(7)), 3)
    [[0, 3, 6], [1, 4], [2, 5]]
    >>> _interleave([0, 1], 4)
    [[0], [1]]
    """
    count = min(count, len(items))
    return [list(items[start::count]) for start in range(count)]


def _run_chunk(
    chunk: Iterable[tuple[int, Any]],
    run: Callable[[Any], Mapping[str, Any]],
    schema: StructType,
) -> Iterator[tuple[Any, ...]]:
    fields = schema.fields[1:]
    for index, cell in chunk:
        row = run(cell)
        yield (index, *(_python_type(field.dataType)(row[field.name]) for field in fields))


def _python_type(data_type: DataType) -> Callable[[Any], Any]:
    if isinstance(data_type, StringType):
        return str
    return int if isinstance(data_type, LongType) else float


def collect_rows(rows: DataFrame) -> list[dict[str, Any]]:
    """The rows of ``run_cells_spark`` as ``run_cells`` returns them: in cell order, no ``cell``.

    Spark's long columns come back as ``int`` and its double columns as ``float``, the types of
    ``run_cell``'s values, so the lists compare equal.
    """
    collected = sorted(rows.collect(), key=lambda row: row["cell"])
    return [
        {name: value for name, value in row.asDict().items() if name != "cell"} for row in collected
    ]


def summarize_spark(
    rows: DataFrame,
    by: Sequence[str],
    metrics: Sequence[str],
    confidence: float = 0.95,
) -> DataFrame:
    """``simulator.experiments.cells.summarize`` in Spark: the same columns and values.

    Per group of ``by``: ``n``, the mean of each metric ``m`` under ``m`` and the half-width of
    its confidence interval under ``m_ci``, ``t_{(1+confidence)/2, n-1} * s / sqrt(n)`` with
    ``s`` the sample standard deviation (0 for a group of one row). Groups come in first-seen
    order (by their first ``cell``) when ``rows`` has a ``cell`` column, else sorted by ``by``.
    """
    aggregates = [F.count(F.lit(1)).alias("n")]
    for metric in metrics:
        aggregates.append(F.avg(metric).alias(metric))
        aggregates.append(F.stddev_samp(metric).alias(f"{metric}_sd"))
    ordered = "cell" in rows.columns
    if ordered:
        aggregates.append(F.min("cell").alias("first_cell"))
    quantile = F.udf(partial(_t_quantile, confidence=confidence), DoubleType(), useArrow=False)
    grouped = rows.groupBy(*by).agg(*aggregates).withColumn("t_quantile", quantile("n"))
    columns: list[Column | str] = [*by, "n"]
    for metric in metrics:
        half_width = F.col("t_quantile") * F.col(f"{metric}_sd") / F.sqrt("n")
        columns.append(metric)
        columns.append(F.when(F.col("n") > 1, half_width).otherwise(0.0).alias(f"{metric}_ci"))
    if ordered:
        return grouped.orderBy("first_cell").select(*columns)
    return grouped.select(*columns).orderBy(*by)


def _t_quantile(n: int, confidence: float) -> float:
    """Student's ``t`` quantile of ``(1 + confidence) / 2`` with ``n - 1`` degrees of freedom."""
    return float(stats.t.ppf((1.0 + confidence) / 2.0, n - 1)) if n > 1 else 0.0


def pareto_spark(
    summary: DataFrame, by: Sequence[str], x: str = "s_total", y: str = "p_total_trend"
) -> DataFrame:
    """The rows of each ``by`` group on its Pareto front: ``pareto_front`` per group, in Spark.

    Within a group ordered by ``(x, y)``, a row is kept when its ``y`` is below every ``y``
    before it. Rows tied on both ``x`` and ``y`` keep one, the first by the remaining columns
    (``pareto_front`` keeps the first in its input order). Sorted by ``by``, then ``x``.
    """
    rest = [name for name in summary.columns if name not in {x, y, *by}]
    before = _window(by, x, y, *rest).rowsBetween(Window.unboundedPreceding, -1)
    best = F.min(y).over(before)
    return (
        summary.withColumn("best_before", best)
        .where(F.col("best_before").isNull() | (F.col(y) < F.col("best_before")))
        .drop("best_before")
        .orderBy(*by, x, y)
    )


def rank_by_cost(summary: DataFrame, by: Sequence[str], metric: str = "cost") -> DataFrame:
    """``summary`` with a ``rank`` column per ``by`` group: 1 is the lowest ``metric``.

    Ties share a rank and the next rank skips (1, 1, 3): the rank is one more than the number of
    rows of the group that are strictly cheaper. Sorted by ``by``, then ``rank``.
    """
    return summary.withColumn("rank", F.rank().over(_window(by, metric))).orderBy(*by, "rank")


def _window(by: Sequence[str], *order: str) -> WindowSpec:
    return Window.partitionBy(*by).orderBy(*order)
