from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from scaling.baselines import available_policies
from simulator.cli import main
from simulator.experiments.compare import (
    COMPARE_COLUMNS,
    MAX_OPERATORS,
    CompareCell,
    baselines,
    compare_cells,
    run_compare_cell,
)
from simulator.experiments.compare_report import (
    run_compare,
    standing_cells,
    standing_table,
    timeline_figure,
)


def short(cell: CompareCell) -> CompareCell:
    return dataclasses.replace(cell, duration=300.0)


def test_every_seed_systems_policy_is_compared_and_runs() -> None:
    policies = baselines()
    assert {spec["name"] for spec in policies.values()} == set(available_policies())
    cells = [short(cell) for cell in compare_cells(["cosine"], [5.0], [1], policies)]
    rows = [run_compare_cell(cell) for cell in cells]
    assert [row["policy"] for row in rows] == list(policies)
    for row in rows:
        assert set(row) == set(COMPARE_COLUMNS)
        assert row["s_total"] == row["s_up"] + row["s_down"]
        assert row["cost"] == 30 * row["s_total"] + row["operator_seconds"] + 5 * row["sla_seconds"]
        assert 300.0 <= row["operator_seconds"] <= 300.0 * MAX_OPERATORS


def test_a_row_depends_only_on_its_cell() -> None:
    cell = short(compare_cells(["paper"], [1.0], [3])[7])
    assert run_compare_cell(cell) == run_compare_cell(cell)
    assert run_compare_cell(cell) != run_compare_cell(dataclasses.replace(cell, seed=4))


def test_filtering_cuts_operations_and_backlog_of_the_raw_threshold() -> None:
    """What steadyscale is for: the raw threshold follows the noise, and pays each pause."""
    rows = {
        row["policy"]: row
        for row in map(run_compare_cell, compare_cells(["paper"], [1.0], [1]))
        if row["family"] == "steadyscale"
    }
    raw, tvd = rows["threshold (raw)"], rows["steadyscale tvd"]
    assert tvd["s_total"] < raw["s_total"] / 5
    assert tvd["backlog_max"] < raw["backlog_max"]


def test_the_steadyscale_row_is_the_default_told_the_backlog_and_running_count() -> None:
    spec = baselines()["steadyscale"]
    assert spec["filter"] is None and spec["reported"] is True
    cell = compare_cells(["step"], [10.0], [1], {"steadyscale": spec})[0]
    told = run_compare_cell(cell)
    blind = run_compare_cell(dataclasses.replace(cell, policy_spec={**spec, "reported": False}))
    # The step to 450 tuples/s leaves a backlog that only the told policy drains by planning
    # for it, so it spends less time over the SLA.
    assert told["sla_seconds"] < blind["sla_seconds"]
    assert json.loads(told["policy_spec"])["filter"] is None


def test_a_longer_pause_costs_more_time_over_the_sla() -> None:
    cell = compare_cells(["paper"], [5.0], [1], {"hpa": baselines()["hpa"]})[0]
    rows = [run_compare_cell(dataclasses.replace(cell, pause=p)) for p in (0.0, 30.0)]
    assert rows[0]["paused_seconds"] == 0.0 < rows[1]["paused_seconds"]
    assert rows[0]["sla_seconds"] < rows[1]["sla_seconds"]


def test_traces_are_labelled_by_file(tmp_path: Path) -> None:
    trace = tmp_path / "shop.csv"
    trace.write_text("timestamp,value\n" + "".join(f"{t},{10 + t % 7}\n" for t in range(400)))
    cells = compare_cells([], [10.0], [1], {"hpa": baselines()["hpa"]}, traces=[trace])
    assert [cell.workload_label for cell in cells] == ["trace:shop"]
    assert run_compare_cell(cells[0])["workload"] == "trace:shop"


def test_on_spark_the_rows_equal_the_serial_ones_and_a_rerun_runs_nothing(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policies = {label: baselines()[label] for label in ("steadyscale tvd", "ds2")}
    cells = [short(cell) for cell in compare_cells(["paper"], [1.0], [1, 2], policies)]
    summary = run_compare(cells, tmp_path, spark)
    with (tmp_path / "compare.csv").open(encoding="utf-8") as handle:
        written = list(csv.DictReader(handle))
    serial = [run_compare_cell(cell) for cell in cells]
    assert [row["policy"] for row in written] == [row["policy"] for row in serial]
    for stored, expected in zip(written, serial, strict=True):
        assert json.loads(stored["policy_spec"]) == json.loads(expected["policy_spec"])
        for metric in ("s_up", "s_down", "sla_seconds", "backlog_max", "cost"):
            assert float(stored[metric]) == pytest.approx(float(expected[metric]), rel=1e-12)
    assert [(row["policy"], row["n"]) for row in summary] == [("steadyscale tvd", 2), ("ds2", 2)]
    assert summary[1]["cost"] == pytest.approx((serial[2]["cost"] + serial[3]["cost"]) / 2)
    for name in ("summary.csv", "compare.md", "compare_paper.png", "timeline_paper_snr1.png"):
        assert (tmp_path / name).stat().st_size > 0
    capsys.readouterr()
    run_compare(cells, tmp_path, spark)
    assert "4 already in" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--policy", "hpa", "kubernetes"], "['kubernetes'] is not allowed"),
        (["--seeds", "1"], "--seeds=1"),
        (["--workload", "trace"], "--trace for recorded traces"),
        (["--trace", "missing.csv"], "missing.csv"),
    ],
)
def test_bad_options_fail_before_spark_starts(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", *argv]) == 2
    assert message in capsys.readouterr().err


def test_the_standing_table_prices_sla_seconds_and_names_who_wins() -> None:
    def row(policy: str, cost: float, sla: float, ci: float = 10.0) -> dict[str, object]:
        return {"workload": "paper", "snr": 1.0, "policy": policy, "cost": cost,
                "sla_seconds": sla, "cost_ci": ci}  # fmt: skip

    summary = [row("steadyscale", 1000.0, 20.0), row("hpa", 1005.0, 0.0), row("ds2", 1200.0, 1.0)]
    text = standing_table(summary)
    # At 5: steadyscale is cheapest. At 50: 1000 + 45 x 20 = 1900 against the HPA's 1005.
    assert "| paper | 1 | 1.000 (cheapest) | 1.891 (hpa) | 20 / 0 |" in text
    assert (
        "at 5 per SLA second `steadyscale` is the cheapest or within its interval in 1 of 1" in text
    )
    rows, wins = standing_cells(summary)
    assert wins == {5.0: 1, 50.0: 0}
    assert rows == [["paper", "1", "1.000 (cheapest)", "1.891 (hpa)", "20 / 0"]]


def test_the_interval_at_another_price_is_that_of_the_priced_cost_over_the_seeds() -> None:
    def run(policy: str, seed: int, cost: float, sla: float) -> dict[str, object]:
        return {"workload": "paper", "snr": 1.0, "policy": policy, "seed": seed, "cost": cost,
                "sla_seconds": sla}  # fmt: skip

    # ds2 is cheaper on average at 50 (1000 + 45 x 40 = 2800 against 2000 + 45 x 25 = 3125),
    # but its SLA seconds vary from seed to seed (0 and 80), so steadyscale is within its
    # interval at 50; at 5 ds2's cost varies by 20 only (interval 127), and it is not.
    runs = [run("ds2", 1, 990.0, 0.0), run("ds2", 2, 1010.0, 80.0)]
    runs += [run("steadyscale", 1, 1990.0, 25.0), run("steadyscale", 2, 2010.0, 25.0)]
    summary = [
        {**runs[0], "cost": 1000.0, "sla_seconds": 40.0, "cost_ci": 127.1},
        {**runs[2], "cost": 2000.0, "sla_seconds": 25.0, "cost_ci": 127.1},
    ]
    with_runs = standing_table(summary, runs=runs)
    assert "| paper | 1 | 2.000 (ds2) | 1.116 (within) |" in with_runs
    # Without the runs, the interval at 5 stands in at 50 too, and is far too narrow there.
    assert "| paper | 1 | 2.000 (ds2) | 1.116 (ds2) |" in standing_table(summary)


def test_a_trace_duration_longer_than_the_trace_is_one_line_before_spark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "short.csv"
    trace.write_text("timestamp,value\n" + "".join(f"{t},{300 + t % 7}\n" for t in range(100)))
    # It used to fail on a Spark worker: "Spark failed: An exception was thrown from the Python
    # worker", and only --verbose said why.
    argv = ["compare", "--trace", str(trace), "--trace-duration", "500", "--seeds", "2"]
    assert main([*argv, "--master", "spark://nowhere.invalid:7077"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "--trace-duration 500 is not allowed" in error and "at most 100" in error


def test_the_timelines_give_the_backlog_an_axis_of_its_own(tmp_path: Path) -> None:
    policies = {label: baselines()[label] for label in ("steadyscale", "hpa")}
    cells = [short(cell) for cell in compare_cells(["paper"], [1.0], [1], policies)]
    figure = timeline_figure(cells)
    assert len(figure.axes) == 4  # per policy: instances on the left, backlog on the right
    assert [axes.get_ylabel() for axes in figure.axes[:2]] == ["instances"] * 2
    backlogs = figure.axes[2:]
    assert [axes.get_ylabel() for axes in backlogs] == ["backlog (tuples)"] * 2
    assert all(len(axes.get_yticks()) >= 2 for axes in backlogs)
    assert [axes.get_title(loc="left") for axes in figure.axes[:2]] == ["steadyscale", "hpa"]
