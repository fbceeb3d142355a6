from __future__ import annotations

import csv
from pathlib import Path

import pytest

from simulator.paper import (
    PAPER_FILTERS,
    RECOMMENDED,
    SNRS,
    SWEEP_FILTERS,
    SWEEP_GUARDS,
    config_label,
    goal_check,
    paired_table,
    paper_cells,
    run_paper,
    sweep_cells,
)


def test_paper_grid_covers_every_definition_snr_filter_and_seed() -> None:
    cells = paper_cells(seeds=range(3))
    assert len(cells) == 2 * len(SNRS) * len(PAPER_FILTERS) * 3
    assert {cell.definition for cell in cells} == {"power", "amplitude"}
    assert {cell.snr for cell in cells} == {0.5, 0.8, 1.0, 5.0, 10.0}
    assert {cell.filter_spec["name"] for cell in cells} == {"raw", "moving_average", "tvd", "ekf"}
    # One rule at every SNR: a filter's parameters never depend on the noise level.
    for name in PAPER_FILTERS:
        specs = {str(cell.filter_spec) for cell in cells if cell.filter_spec["name"] == name}
        assert len(specs) == 1


def test_sweep_contains_the_paper_configurations_so_the_goal_is_paired() -> None:
    configs = {cell.config for cell in sweep_cells(seeds=[1], snrs=[1.0])}
    for name, spec in PAPER_FILTERS.items():
        if name != "raw":
            assert config_label(spec) in configs
    expected = sum(len(grid) for grid in SWEEP_FILTERS.values()) * len(SWEEP_GUARDS)
    assert len(configs) == expected


def _row(config: str, s: float, p: float, cost: float = 0.0) -> dict[str, object]:
    return {"definition": "power", "snr": 1.0, "config": config, "s_total": s,
            "p_total_trend": p, "cost": cost}  # fmt: skip


def test_goal_check_needs_fewer_operations_than_the_best_and_no_worse_p() -> None:
    ma, tvd, ekf = (config_label(PAPER_FILTERS[n]) for n in ("moving_average", "tvd", "ekf"))
    rows = [
        _row(ma, 100, 500),
        _row(tvd, 60, 520),
        _row(ekf, 90, 480),
        _row("fewer ops, worse p", 40, 501, cost=1),
        _row("fewer ops, equal p", 50, 500, cost=3),
        _row("fewer ops, better p", 59, 450, cost=2),
        _row("as many ops as tvd", 60, 100, cost=0),
    ]
    check = goal_check(rows, "power", 1.0)
    assert check["paper_best"]["config"] == tvd
    assert check["moving_average"]["config"] == ma
    assert check["winner"]["config"] == "fewer ops, better p"  # cheapest qualifying
    assert goal_check(rows[:4], "power", 1.0)["winner"] is None


@pytest.fixture(scope="module")
def small_paper(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("paper")
    return run_paper(out, seeds=[1, 2, 3], sweep_seeds=[1, 2], definitions=["power"],
                     snrs=[1.0, 10.0])  # fmt: skip


def test_paper_csv_has_one_row_per_snr_and_filter(small_paper: dict[str, Path]) -> None:
    with small_paper["paper"].open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 * len(PAPER_FILTERS)
    for column in ("snr", "filter", "s_up", "s_down", "p_over", "p_under", "s_up_ci"):
        assert column in rows[0]
    by = {(float(r["snr"]), r["filter"]): r for r in rows}
    # The point of the paper: at SNR 1 TVD scales far less often than raw thresholding.
    assert float(by[1.0, "tvd"]["s_up"]) < 0.2 * float(by[1.0, "raw"]["s_up"])
    assert all(r["n"] == "3" for r in rows)


def test_paper_writes_report_and_figures(small_paper: dict[str, Path]) -> None:
    text = small_paper["report"].read_text()
    assert "### SNR 1 (power)" in text and "### SNR 10 (power)" in text
    assert "> 93 %" in text  # the claims table
    assert "reached" in text  # the goal check of the sweep
    pngs = [path for name, path in small_paper.items() if path.suffix == ".png"]
    assert len(pngs) == 3  # two timelines and one Pareto plot
    for path in pngs:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_paired_table_subtracts_seed_by_seed() -> None:
    ma, tvd = (config_label(PAPER_FILTERS[n]) for n in ("moving_average", "tvd"))
    spec, guards = RECOMMENDED["SNR ≥ 5"]
    mine = config_label(spec, guards)
    rows = []
    # Seeds differ a lot (workloads differ); the paired differences are exactly -10 and -5.
    for seed, level in ((1, 100.0), (2, 900.0), (3, 400.0)):
        for config, s, p in (
            (ma, level, level),
            (tvd, level + 10, level),
            (mine, level, level - 5),
        ):
            rows.append({"definition": "power", "snr": 10.0, "config": config, "seed": seed,
                         "s_total": s, "p_total_trend": p})  # fmt: skip
    table = paired_table(rows, ["power"], [10.0])
    assert "| -10 ± 0 | -5 ± 0 |" in table
    assert "moving_median" not in table  # only configurations that were run are listed
