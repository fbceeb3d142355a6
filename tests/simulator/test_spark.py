from __future__ import annotations

import itertools
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from simulator.experiments.cells import METRICS, Cell, CostModel, run_cells, summarize
from simulator.experiments.spark_cells import CELL_SCHEMA, run_grid
from simulator.output.pareto import pareto_front
from simulator.spark.cells import (
    collect_rows,
    pareto_spark,
    rank_by_cost,
    summarize_spark,
)
from simulator.spark.checks import SparkUnavailable, require_java
from simulator.spark.session import spark_session

FILTERS: dict[str, dict[str, Any]] = {
    "raw": {"name": "raw"},
    "moving_average": {"name": "moving_average", "w": 30},
    "tvd": {"name": "tvd", "lam_per_sigma": 10.0},
    "ekf": {"name": "ekf", "process_noise": 0.01},
    "moving_median": {"name": "moving_median", "w": 60},
}
GUARDS: dict[str, list[dict[str, Any]]] = {
    "": [],
    " + hysteresis": [{"name": "hysteresis", "band": 0.02}],
}
GRID = [
    Cell(
        config=label + guard_label,
        filter_spec=spec,
        guards=guards,
        workload=workload,
        seed=seed,
        snr=snr,
        definition=definition,
        duration=600.0,  # the equality does not depend on the length; the test's time does
    )
    for workload, definition, snr in itertools.product(
        ("paper", "step"), ("power", "amplitude"), (1.0, 5.0)
    )
    for (label, spec), (guard_label, guards) in itertools.product(FILTERS.items(), GUARDS.items())
    for seed in (1, 2, 3)
]
BY = ("workload", "definition", "snr", "config")


@pytest.fixture(scope="module")
def grid(spark: SparkSession) -> tuple[list[dict[str, Any]], DataFrame]:
    """The serial rows of ``GRID`` and its Spark DataFrame."""
    return run_cells(GRID), run_grid(spark, GRID)


def _fake_java(tmp_path: Path, version: str) -> Path:
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\" 2023-10-17' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    return home


def test_require_java_reads_the_version_of_java_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path, "21.0.2")))
    assert require_java() == 21


def test_require_java_rejects_an_old_java_and_says_how_to_fix_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _fake_java(tmp_path, "1.8.0_392")
    monkeypatch.setenv("JAVA_HOME", str(home))
    with pytest.raises(SparkUnavailable) as raised:
        require_java()
    message = str(raised.value)
    assert f"{home}/bin/java is Java 8, older than Java 17" in message
    assert "Java 17 or newer" in message
    assert "openjdk-17-jre-headless" in message and "JAVA_HOME" in message


def test_require_java_without_java_says_where_it_looked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "")
    with pytest.raises(SparkUnavailable, match="JAVA_HOME is not set and no java is on PATH"):
        require_java()
    monkeypatch.setenv("JAVA_HOME", "/nonexistent/jdk")
    with pytest.raises(
        SparkUnavailable, match="/nonexistent/jdk/bin/java is not an executable file"
    ):
        require_java()


def test_spark_session_checks_java_before_starting_spark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JAVA_HOME", str(_fake_java(tmp_path, "11.0.21")))
    with pytest.raises(SparkUnavailable, match="is Java 11"):
        spark_session("local[1]")


def test_spark_session_workers_run_this_interpreter(spark: SparkSession) -> None:
    def interpreter(_: object) -> str:
        return sys.executable

    executables = spark.sparkContext.parallelize(range(2), 2).map(interpreter).collect()
    assert executables == [sys.executable] * 2
    assert spark.conf.get("spark.ui.enabled") == "false"


def test_spark_rows_equal_serial_rows_exactly(
    grid: tuple[list[dict[str, Any]], DataFrame],
) -> None:
    serial, rows = grid
    assert rows.schema == CELL_SCHEMA
    assert collect_rows(rows) == serial
    spark_types = [{name: type(value) for name, value in row.items()} for row in collect_rows(rows)]
    assert spark_types == [{name: type(value) for name, value in row.items()} for row in serial]


def test_chunks_and_cost_model_do_not_change_the_rows(spark: SparkSession) -> None:
    cells = GRID[:7]
    prices = CostModel(per_operation=1.0, per_under_second=0.0)
    expected = run_cells(cells, prices)
    assert collect_rows(run_grid(spark, cells, prices, tasks=3)) == expected
    assert collect_rows(run_grid(spark, cells, prices, tasks=100)) == expected
    assert collect_rows(run_grid(spark, [])) == []
    with pytest.raises(ValueError, match="tasks"):
        run_grid(spark, cells, tasks=0)


def _assert_rows_close(
    actual: Sequence[dict[str, Any]], expected: Sequence[dict[str, Any]]
) -> None:
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        assert list(got) == list(want)
        for name, value in want.items():
            if isinstance(value, float):
                assert got[name] == pytest.approx(value, rel=1e-9, abs=1e-12), name
            else:
                assert got[name] == value, name


def _collect(frame: DataFrame) -> list[dict[str, Any]]:
    return [row.asDict() for row in frame.collect()]


def test_summarize_spark_equals_summarize_in_first_seen_order(
    grid: tuple[list[dict[str, Any]], DataFrame],
) -> None:
    serial, rows = grid
    _assert_rows_close(_collect(summarize_spark(rows, BY, METRICS)), summarize(serial, BY))
    confidence = 0.8
    _assert_rows_close(
        _collect(summarize_spark(rows, ("filter",), ("sigma", "cost"), confidence)),
        summarize(serial, ("filter",), ("sigma", "cost"), confidence),
    )


def test_summarize_spark_of_a_group_of_one_row(
    spark: SparkSession, grid: tuple[list[dict[str, Any]], DataFrame]
) -> None:
    serial, _ = grid
    rows = serial[:4]  # seeds 1, 2, 3 of one configuration, then the first of the next
    frame = spark.createDataFrame(
        [tuple(row.values()) for row in rows], StructType(CELL_SCHEMA.fields[1:])
    )
    summary = _collect(summarize_spark(frame, ("config",), METRICS))
    assert sorted(entry["n"] for entry in summary) == [1, 3]
    single = next(entry for entry in summary if entry["n"] == 1)
    assert all(single[f"{metric}_ci"] == 0.0 for metric in METRICS)
    by_config = {entry["config"]: entry for entry in summarize(rows, ("config",))}
    _assert_rows_close(summary, [by_config[entry["config"]] for entry in summary])


def _fronts(points: Sequence[dict[str, Any]], by: Sequence[str]) -> list[dict[str, Any]]:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for point in points:
        groups.setdefault(tuple(point[key] for key in by), []).append(point)
    return [dict(point) for key in sorted(groups) for point in pareto_front(groups[key])]


def test_pareto_spark_equals_pareto_front_per_group(
    grid: tuple[list[dict[str, Any]], DataFrame],
) -> None:
    serial, rows = grid
    by = BY[:3]
    summary = summarize(serial, BY)
    _assert_rows_close(
        _collect(pareto_spark(summarize_spark(rows, BY, METRICS), by)), _fronts(summary, by)
    )


POINTS = [
    # a group of one point
    {"group": "a", "config": "x", "s_total": 9, "p_total_trend": 1.0, "cost": 5.0},
    # ties: on x with a better y, on y with a larger x, and on both x and y
    {"group": "b", "config": "p", "s_total": 3, "p_total_trend": 4.0, "cost": 7.0},
    {"group": "b", "config": "q", "s_total": 3, "p_total_trend": 2.0, "cost": 7.0},
    {"group": "b", "config": "r", "s_total": 5, "p_total_trend": 2.0, "cost": 1.0},
    {"group": "b", "config": "s", "s_total": 1, "p_total_trend": 6.0, "cost": 9.0},
    {"group": "b", "config": "t", "s_total": 1, "p_total_trend": 6.0, "cost": 9.0},
    {"group": "b", "config": "u", "s_total": 4, "p_total_trend": 1.5, "cost": 2.0},
    {"group": "b", "config": "v", "s_total": 8, "p_total_trend": 0.5, "cost": 3.0},
]
POINTS_SCHEMA = "group string, config string, s_total long, p_total_trend double, cost double"


def test_pareto_spark_with_a_single_point_and_ties(spark: SparkSession) -> None:
    frame = spark.createDataFrame([tuple(point.values()) for point in POINTS], POINTS_SCHEMA)
    front = _collect(pareto_spark(frame, ("group",)))
    assert front == _fronts(POINTS, ("group",))
    assert [point["config"] for point in front] == ["x", "s", "q", "u", "v"]
    whole = _collect(pareto_spark(frame, ()))
    assert whole == [dict(point) for point in pareto_front(POINTS)]


def test_rank_by_cost_ranks_the_cheapest_first_and_ties_alike(spark: SparkSession) -> None:
    frame = spark.createDataFrame([tuple(point.values()) for point in POINTS], POINTS_SCHEMA)
    ranked = _collect(rank_by_cost(frame, ("group",)))
    expected = {
        (point["group"], point["config"]): 1
        + sum(
            other["group"] == point["group"] and other["cost"] < point["cost"] for other in POINTS
        )
        for point in POINTS
    }
    assert {(row["group"], row["config"]): row["rank"] for row in ranked} == expected
    assert [row["config"] for row in ranked][:4] == ["x", "r", "u", "v"]
    assert [row["rank"] for row in ranked] == [1, 1, 2, 3, 4, 4, 6, 6]


def test_rank_by_cost_of_a_summary(grid: tuple[list[dict[str, Any]], DataFrame]) -> None:
    serial, rows = grid
    by = BY[:3]
    summary = summarize(serial, BY)
    expected = {
        tuple(entry[key] for key in BY): 1
        + sum(
            other["cost"] < entry["cost"] and all(other[key] == entry[key] for key in by)
            for other in summary
        )
        for entry in summary
    }
    ranked = _collect(rank_by_cost(summarize_spark(rows, BY, METRICS), by))
    assert {tuple(row[key] for key in BY): row["rank"] for row in ranked} == expected
    order = [(*(row[key] for key in by), row["rank"]) for row in ranked]
    assert order == sorted(order)
