from __future__ import annotations

import itertools

import numpy as np
import pytest

from filters import make_filter
from scaling import Scaler, ThresholdPolicy
from simulator import add_noise, paper_workload, simulate
from simulator.experiments.cells import (
    ROW_COLUMNS,
    Cell,
    CostModel,
    noise_seed,
    run_cell,
    run_cells,
    summarize,
)
from simulator.output.pareto import pareto_front

MA = {"name": "moving_average", "w": 30}


def test_a_row_is_the_simulation_of_its_cell() -> None:
    cell = Cell(config="ma", filter_spec=MA, seed=3, snr=5.0, definition="amplitude")
    row = run_cell(cell)
    trend = paper_workload(seed=3)
    noisy = add_noise(trend, 5.0, noise_seed(3), "amplitude")
    policy = ThresholdPolicy(capacity=50.0)
    scaler = Scaler(make_filter(MA), policy, operators=policy.needed(float(trend[0])))
    result = simulate(scaler, noisy, trend=trend)
    assert result.trend_metrics is not None
    assert set(row) == set(ROW_COLUMNS)
    assert {key: row[key] for key in result.metrics} == result.metrics
    assert row["p_over_trend"] == result.trend_metrics["p_over"]
    assert row["p_under_trend"] == result.trend_metrics["p_under"]
    assert row["s_total"] == row["s_up"] + row["s_down"]
    assert row["p_total_trend"] == row["p_over_trend"] + row["p_under_trend"]
    assert row["sigma"] == pytest.approx(trend.mean() / 5.0)


def test_cells_are_deterministic_and_seeds_matter() -> None:
    cells = [Cell(config="ma", filter_spec=MA, seed=seed, snr=1.0) for seed in (1, 1, 2)]
    first, again, other = run_cells(cells)
    assert first == again
    assert first != other
    assert noise_seed(1) != 1


def test_guards_of_a_cell_are_applied() -> None:
    plain = run_cell(Cell(config="ma", filter_spec=MA, seed=1, snr=1.0))
    guarded = run_cell(
        Cell(config="ma+h", filter_spec=MA, seed=1, snr=1.0, guards=[{"name": "hysteresis"}])
    )
    assert guarded["s_total"] < plain["s_total"]
    assert guarded["guards"] == '[{"name": "hysteresis"}]'


def test_progress_is_reported_per_cell() -> None:
    calls: list[int] = []
    cells = [Cell(config="raw", filter_spec={"name": "raw"}, seed=s, snr=10.0) for s in (1, 2)]
    run_cells(cells, progress=calls.append)
    assert calls == [1, 1]


def test_cost_model_prices_operations_time_and_shortfall() -> None:
    metrics = {"s_up": 3, "s_down": 2, "operator_seconds": 1000.0, "p_under_trend": 10.0}
    assert CostModel().cost(metrics) == 30 * 5 + 1000 + 5 * 10
    assert CostModel(per_operation=0.0, per_under_second=1.0).cost(metrics) == 1010.0


def test_summary_gives_mean_and_student_t_half_width() -> None:
    rows = [{"g": "a", "m": v} for v in (1.0, 2.0, 3.0, 4.0)] + [{"g": "b", "m": 7.0}]
    a, b = summarize(rows, by=("g",), metrics=("m",))
    # sd = 1.29099, t(0.975, 3) = 3.18245: 3.18245 * 1.29099 / 2
    assert a == {"g": "a", "n": 4, "m": 2.5, "m_ci": pytest.approx(2.05426, abs=1e-5)}
    assert b == {"g": "b", "n": 1, "m": 7.0, "m_ci": 0.0}


def test_confidence_intervals_cover_the_mean_95_percent_of_the_time() -> None:
    # With 5 samples a normal-quantile interval would cover only ~88 %; Student's t gives 95 %.
    rng = np.random.default_rng(0)
    rows = [{"trial": i, "m": v} for i in range(4000) for v in rng.normal(10.0, 3.0, 5)]
    summary = summarize(rows, by=("trial",), metrics=("m",))
    covered = np.mean([abs(s["m"] - 10.0) <= s["m_ci"] for s in summary])
    assert 0.94 <= covered <= 0.96


def test_pareto_front_matches_brute_force() -> None:
    rng = np.random.default_rng(5)
    points = [{"s_total": int(s), "p_total_trend": int(p)} for s, p in rng.integers(0, 30, (60, 2))]
    front = pareto_front(points)

    def dominated(p: dict[str, int]) -> bool:
        return any(
            q["s_total"] <= p["s_total"]
            and q["p_total_trend"] <= p["p_total_trend"]
            and (q["s_total"], q["p_total_trend"]) != (p["s_total"], p["p_total_trend"])
            for q in points
        )

    expected = {(p["s_total"], p["p_total_trend"]) for p in points if not dominated(p)}
    assert {(p["s_total"], p["p_total_trend"]) for p in front} == expected
    assert all(a["s_total"] < b["s_total"] for a, b in itertools.pairwise(front))


def test_bad_filter_in_a_cell_names_the_parameter() -> None:
    with pytest.raises(ValueError, match="w=0"):
        run_cell(Cell(config="bad", filter_spec={"name": "moving_average", "w": 0}, seed=1, snr=1))
