"""benchmarks.regimes: the default's standing among stored runs, and every cell's winners."""

from __future__ import annotations

from typing import Any

from benchmarks.regimes import quick
from benchmarks.standing import priced, standing


def run(
    policy: str, workload: str, seed: int, operator_seconds: float, sla: float
) -> dict[str, Any]:
    return {
        "policy": policy,
        "workload": workload,
        "snr": 5.0,
        "seed": seed,
        "operator_seconds": operator_seconds,
        "s_up": 1.0,
        "s_down": 1.0,
        "sla_seconds": sla,
    }


def test_the_standing_counts_cells_and_names_each_cells_winners() -> None:
    runs = []
    for seed in (1, 2, 3):
        # Cell a: the default is cheapest and keeps the HPA's SLA seconds.
        runs += [run("steadyscale", "a", seed, 1000.0, 0.0), run("hpa", "a", seed, 1500.0, 0.0)]
        # Cell b: cheaper "cheap" is late (wins at 5, not among the keepers; wins at 50 too).
        runs += [
            run("steadyscale", "b", seed, 1000.0, 2.0),
            run("hpa", "b", seed, 1400.0, 1.0),
            run("cheap", "b", seed, 600.0, 3.0),
        ]
    assert priced(runs[0], 50.0) == 1000.0 + 60.0
    winners: list[dict[str, Any]] = []
    counts = standing(runs, winners)
    assert counts["cells"] == 2 and counts["sla_ok"] == 1
    assert counts["sla_sum"] == 2.0 and counts["hpa_sla_sum"] == 1.0
    assert counts["at_50"] == 1  # cell b: cheap costs 810 at 50, the default 1,160
    assert counts["at_5_keepers"] == 1  # cell b: the default is not a keeper
    by_cell = {row["workload"]: row for row in winners}
    assert by_cell["a"]["cheapest_at_50"] == "steadyscale"
    assert by_cell["b"]["cheapest_at_50"] == "cheap" and by_cell["b"]["its_cost_at_50"] == 810
    assert by_cell["b"]["cheapest_keeper_at_5"] == "hpa"
    assert by_cell["b"]["sla_seconds"] == 2.0 and by_cell["b"]["hpa_sla_seconds"] == 1.0


def test_quick_keeps_the_synthetic_cells_of_the_seeds_asked() -> None:
    runs = [
        run("hpa", workload, seed, 1.0, 0.0)
        for workload in ("paper", "trace:x")
        for seed in (1, 3, 4)
    ]
    assert [(r["workload"], r["seed"]) for r in quick(runs)] == [("paper", 1), ("paper", 3)]
    assert [(r["workload"], r["seed"]) for r in quick(runs, (4, 5, 6))] == [("paper", 4)]
