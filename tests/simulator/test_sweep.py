from __future__ import annotations

import csv
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

import simulator.spark.cells
from simulator.cli import main
from simulator.experiments.cells import ROW_COLUMNS, run_cells, summarize
from simulator.experiments.specs import expand_guard_sets, expand_spec
from simulator.experiments.sweep import GROUPS, grid_cells, run_sweep
from simulator.output.pareto import pareto_front
from simulator.spark.store import cell_id, claim_folder


def small_grid(seeds: range = range(1, 4)) -> list[Any]:
    return grid_cells(
        workloads=["paper", "step"],
        snrs=[1.0, 10.0],
        definitions=["power"],
        filters=[*expand_spec("moving_average:w=10|60"), {"name": "tvd"}],
        guard_sets=[*expand_guard_sets("none"), *expand_guard_sets("hysteresis:band=0.02")],
        seeds=seeds,
        duration=300.0,
    )


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return list(csv.DictReader(handle))


def test_specs_expand_to_every_combination_of_their_alternatives() -> None:
    specs = expand_spec("ekf:process_noise=0.01|0.1,observation=linear|log")
    assert len(specs) == 4
    assert {"name": "ekf", "process_noise": 0.1, "observation": "log"} in specs
    assert expand_spec("raw") == [{"name": "raw"}]
    sets = expand_guard_sets("hysteresis:band=0.01|0.02+cooldown:down=30|60")
    assert len(sets) == 4 and all(len(guards) == 2 for guards in sets)
    with pytest.raises(ValueError, match="not of the form key=value"):
        expand_spec("tvd:lam_per_sigma")


def test_grid_is_the_full_product_in_a_fixed_order() -> None:
    cells = small_grid()
    assert len(cells) == 2 * 2 * 3 * 2 * 3
    assert len({cell_id(cell) for cell in cells}) == len(cells)
    assert [c.seed for c in cells[:3]] == [1, 2, 3]
    assert cells[0].workload == "paper" and cells[-1].workload == "step"


def test_sweep_writes_one_row_per_cell_equal_to_the_serial_run(
    spark: SparkSession, tmp_path: Path
) -> None:
    cells = small_grid()
    rows = run_sweep(cells, tmp_path, spark)
    serial = run_cells(cells)
    assert [{k: v for k, v in row.items() if k != "cell_id"} for row in rows] == serial

    written = read_csv(tmp_path / "sweep.csv")
    assert len(written) == len(cells)
    assert list(written[0]) == ["cell_id", *ROW_COLUMNS]
    assert [row["cell_id"] for row in written] == [cell_id(cell) for cell in cells]

    # Aggregation happened in Spark; it must agree with the serial summary and fronts.
    expected = {tuple(s[g] for g in GROUPS): s for s in summarize(serial, by=GROUPS)}
    summary = read_csv(tmp_path / "summary.csv")
    assert len(summary) == len(expected)
    for row in summary:
        key = (row["workload"], row["definition"], float(row["snr"]), row["config"], row["filter"])
        assert float(row["s_total"]) == pytest.approx(expected[key]["s_total"], rel=1e-9)
        assert float(row["p_total_trend_ci"]) == pytest.approx(
            expected[key]["p_total_trend_ci"], rel=1e-9
        )
    fronts = read_csv(tmp_path / "pareto.csv")
    for workload in ("paper", "step"):
        for snr in (1.0, 10.0):
            group = [s for k, s in expected.items() if k[0] == workload and k[2] == snr]
            front = {p["config"] for p in pareto_front(group)}
            assert front == {
                row["config"]
                for row in fronts
                if row["workload"] == workload and float(row["snr"]) == snr
            }
    assert "Pareto front" in (tmp_path / "sweep.md").read_text()
    assert (tmp_path / "pareto_paper_power.png").read_bytes()[:4] == b"\x89PNG"


def test_a_rerun_skips_the_cells_already_done(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = run_sweep(small_grid(range(1, 3)), tmp_path, spark)
    ran: list[int] = []
    real = simulator.spark.cells.run_cells_spark

    def counting(session: SparkSession, cells: Any, *args: Any, **kwargs: Any) -> Any:
        ran.append(len(cells))
        return real(session, cells, *args, **kwargs)

    monkeypatch.setattr(simulator.spark.cells, "run_cells_spark", counting)
    again = run_sweep(small_grid(range(1, 3)), tmp_path, spark)
    assert ran == [] and again == first
    grown = run_sweep(small_grid(range(1, 4)), tmp_path, spark)
    assert sum(ran) == len(small_grid(range(3, 4)))  # only the new seed's cells
    assert len(grown) == len(small_grid(range(1, 4)))
    stored = spark.read.parquet(str(tmp_path / "cells.parquet"))
    assert stored.count() == stored.select("cell_id").distinct().count() == len(grown)


def test_sweep_command_runs_a_grid(spark: SparkSession, tmp_path: Path) -> None:
    args = ["sweep", "--workload", "paper", "--snr", "1", "5", "--filter", "raw", "tvd",
            "--guards", "none", "hysteresis:band=0.02", "--seeds", "2", "--duration", "200",
            "--master", "local[2]", "--out", str(tmp_path)]  # fmt: skip
    assert main(args) == 0
    assert len(read_csv(tmp_path / "sweep.csv")) == 2 * 2 * 2 * 2


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--filter", "tvd:lam_per_sigma=-1", "lam_per_sigma=-1"),
        ("--guards", "hysteresis:band=2", "band=2"),
        ("--workload", "nope", "'nope' is not allowed"),
        ("--snr", "loud", "argument --snr: invalid float value: 'loud'"),
        ("--definition", "db", "argument --definition: invalid choice: 'db'"),
    ],
)
def test_bad_sweep_options_fail_before_spark_runs(
    option: str, value: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sweep", option, value, "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "cells.parquet").exists()


def test_a_folder_holds_one_grid_and_refuses_another_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claim_folder(tmp_path, small_grid(range(1, 3)))
    claim_folder(tmp_path, small_grid(range(1, 6)))  # more seeds: the same grid, resumed
    (tmp_path / "cells.parquet").mkdir()
    (tmp_path / "pareto_paper_power.png").write_bytes(b"old")
    (tmp_path / "notes.txt").write_text("mine")
    other = [dataclasses.replace(cell, snr=5.0) for cell in small_grid(range(1, 3))]
    with pytest.raises(ValueError, match="holds another grid .* pass --force"):
        claim_folder(tmp_path, other)
    # The command refuses before Spark starts, in one line.
    args = ["sweep", "--snr", "5", "--seeds", "2", "--out", str(tmp_path)]
    assert main(args) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "holds another grid" in error
    claim_folder(tmp_path, other, force=True)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["grid.json", "notes.txt"]
